#include "collectors/core/transition_log.h"

#include <cerrno>

namespace fabricwatch {

void TransitionLog::Failed(const std::string& key, const Status& status) {
  // Out of descriptors, every open fails for a while whatever the file: one state, one key.
  const bool file_limit = status.sys_errno() == EMFILE || status.sys_errno() == ENFILE;
  const std::string& state_key = file_limit ? failing_key_.assign(kFileLimitKey) : key;
  failed_this_round_.insert(state_key);
  auto it = failing_.find(state_key);
  if (it != failing_.end()) {
    if (!file_limit) it->second.message = status.ToString();
    logger_->debug("still failing: {}", status.ToString());
    return;
  }
  std::string text = file_limit ? "the open-file limit is reached, files are skipped until "
                                  "descriptors are free: " +
                                      status.ToString()
                                : status.ToString();
  const bool announce = warnings_this_round_ < kMaxLinesPerCollection;
  if (announce) {
    ++warnings_this_round_;
    logger_->warn("{}", text);
  } else {
    ++warnings_suppressed_;
    logger_->debug("{}", text);
  }
  failing_.emplace(state_key, Failing{std::move(text), announce});
}

void TransitionLog::Keep(std::string_view key) {
  for (const auto& [failing, state] : failing_) {
    if (failing.starts_with(key) && (failing.size() == key.size() || failing[key.size()] == '/')) {
      failed_this_round_.insert(failing);
    }
  }
}

void TransitionLog::EndCollection() {
  size_t recoveries = 0;
  size_t recoveries_suppressed = 0;
  for (auto it = failing_.begin(); it != failing_.end();) {
    if (failed_this_round_.contains(it->first)) {
      ++it;
      continue;
    }
    if (!it->second.announced) {
      logger_->debug("{}: recovered (was {})", it->first, it->second.message);
    } else if (recoveries < kMaxLinesPerCollection) {
      ++recoveries;
      logger_->info("{}: recovered (was {})", it->first, it->second.message);
    } else {
      ++recoveries_suppressed;
      logger_->debug("{}: recovered (was {})", it->first, it->second.message);
    }
    it = failing_.erase(it);
  }
  if (warnings_suppressed_ > 0) {
    logger_->warn(
        "{} more failures started in this collection, not logged one by one (debug "
        "level has them; fabricwatch_collector_errors_total counts them)",
        warnings_suppressed_);
  }
  if (recoveries_suppressed > 0) {
    logger_->info("{} more failures recovered in this collection", recoveries_suppressed);
  }
  failed_this_round_.clear();
  warnings_this_round_ = 0;
  warnings_suppressed_ = 0;
}

}  // namespace fabricwatch
