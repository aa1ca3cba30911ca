#include "collectors/jobs/pod_names.h"

#include <algorithm>
#include <utility>

namespace fabricwatch::jobs {

void PodNames::Update(const std::set<std::string, std::less<>>& uids,
                      std::chrono::system_clock::time_point now) {
  std::erase_if(names_, [&](const auto& entry) { return !uids.contains(entry.first); });
  const bool unnamed = std::any_of(uids.begin(), uids.end(),
                                   [&](const std::string& uid) { return !names_.contains(uid); });
  if (!unnamed) return;
  // The clock is the collector's wall clock: a step back (NTP) must not stop the requests, so a
  // request older than `now` by less than nothing counts as due.
  if (last_request_ && now >= *last_request_ && now - *last_request_ < min_interval_) return;
  last_request_ = now;
  Ask(uids);
}

const jobs::PodName* PodNames::Find(std::string_view uid) const {
  auto it = names_.find(uid);
  return it == names_.end() ? nullptr : &it->second;
}

void PodNames::Ask(const std::set<std::string, std::less<>>& uids) {
  jobs::KubeletReply reply = get_pods_();
  if (reply.outcome == jobs::KubeletOutcome::kSuccess) {
    auto list = jobs::ParsePodList(reply.body, &uids);
    if (!list) {
      Failed(jobs::KubeletReply{jobs::KubeletOutcome::kMalformed, list.error(), {}});
      return;
    }
    ++requests_[static_cast<size_t>(jobs::KubeletOutcome::kSuccess)];
    if (!said_.empty()) logger_->info("the kubelet answers again: pods are named");
    said_.clear();
    skipped_items_ = list->skipped;
    if (list->skipped > 0) {
      logger_->debug("kubelet pod list: {} of {} items skipped as malformed", list->skipped,
                     list->items);
    }
    for (auto& [uid, name] : list->by_uid) names_.insert_or_assign(uid, std::move(name));
    const size_t unnamed = std::count_if(
        uids.begin(), uids.end(), [&](const std::string& uid) { return !names_.contains(uid); });
    // A pod that has just ended, or started after the kubelet answered: asked again later.
    if (unnamed > 0) logger_->debug("{} pods not in the kubelet's list yet", unnamed);
    return;
  }
  Failed(reply);
}

void PodNames::Failed(const jobs::KubeletReply& reply) {
  ++requests_[static_cast<size_t>(reply.outcome)];
  if (said_.insert(reply.outcome).second) {
    logger_->warn("pods are exported by UID, without name and namespace: {}",
                  reply.status.ToString());
  } else {
    logger_->debug("kubelet: {}", reply.status.ToString());
  }
}

}  // namespace fabricwatch::jobs
