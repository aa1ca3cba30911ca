#pragma once
// PodNames: the name and namespace of the pods the jobs scan finds (issue 24, docs/design.md
// §5.10). The scan knows a pod by the UID in its cgroup path; the kubelet's GET /pods
// (collectors/jobs/kubelet_client.h) knows its name. The cache keeps the name of each UID the last
// scan found and forgets the others (a pod's UID never changes name: metadata.name and namespace
// are immutable). The kubelet is asked only when a scan found a UID with no name, and at most
// once per `min_interval` (60 s): on a busy node a pod that starts between two requests waits
// for the next one, and a failing kubelet is not hammered every 30 s. Until a name is known the
// pod is exported by its UID.
//
// Failures are logged once per outcome (a kubelet that keeps refusing says so once, not every
// scan) and again after the kubelet has answered in between; every request is counted by outcome.
//
// Thread-safety: none (the jobs collector's thread).

#include <spdlog/logger.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "collectors/jobs/kubelet_client.h"
#include "collectors/jobs/kubelet_pods_parse.h"

namespace fabricwatch::jobs {

class PodNames {
 public:
  // `get_pods` is one GET /pods (KubeletClient::GetPods in the agent, canned replies in tests).
  PodNames(std::function<jobs::KubeletReply()> get_pods, std::shared_ptr<spdlog::logger> logger,
           std::chrono::seconds min_interval = std::chrono::seconds(60))
      : get_pods_(std::move(get_pods)), logger_(std::move(logger)), min_interval_(min_interval) {}

  // After a scan that found the pods `uids` at `now`: forgets the names of other pods and asks the
  // kubelet when one of `uids` has no name and the last request is `min_interval` old.
  void Update(const std::set<std::string, std::less<>>& uids,
              std::chrono::system_clock::time_point now);

  // The name of pod `uid`, or null while unknown.
  const jobs::PodName* Find(std::string_view uid) const;

  // Requests so far that ended with `outcome`.
  uint64_t Requests(jobs::KubeletOutcome outcome) const {
    return requests_[static_cast<size_t>(outcome)];
  }
  // Items of the kubelet's last pod list skipped as malformed.
  size_t SkippedItems() const { return skipped_items_; }

 private:
  void Ask(const std::set<std::string, std::less<>>& uids);
  void Failed(const jobs::KubeletReply& reply);

  std::function<jobs::KubeletReply()> get_pods_;
  std::shared_ptr<spdlog::logger> logger_;
  std::chrono::seconds min_interval_;
  std::map<std::string, jobs::PodName, std::less<>> names_;
  std::optional<std::chrono::system_clock::time_point> last_request_;
  std::array<uint64_t, std::size(jobs::kKubeletOutcomes)> requests_{};
  std::set<jobs::KubeletOutcome> said_;  // failures logged since the last success
  size_t skipped_items_ = 0;
};

}  // namespace fabricwatch::jobs
