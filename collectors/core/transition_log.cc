#include "collectors/core/transition_log.h"

namespace fabricwatch {

void TransitionLog::Failed(const std::string& key, const Status& status) {
  failed_this_round_.insert(key);
  auto [it, inserted] = failing_.try_emplace(key, status.ToString());
  if (inserted) {
    logger_->warn("{}", status.ToString());
  } else {
    it->second = status.ToString();
    logger_->debug("still failing: {}", status.ToString());
  }
}

void TransitionLog::EndCollection() {
  for (auto it = failing_.begin(); it != failing_.end();) {
    if (!failed_this_round_.contains(it->first)) {
      logger_->info("{}: recovered (was {})", it->first, it->second);
      it = failing_.erase(it);
    } else {
      ++it;
    }
  }
  failed_this_round_.clear();
}

}  // namespace fabricwatch
