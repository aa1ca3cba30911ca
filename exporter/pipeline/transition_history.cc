#include "exporter/pipeline/transition_history.h"

namespace fabricwatch::exporter {

void TransitionHistory::Record(const detect::AnomalyTransition& transition) {
  std::lock_guard lock(mutex_);
  transitions_.push_back(transition);
  while (transitions_.size() > capacity_) transitions_.pop_front();
}

std::vector<detect::AnomalyTransition> TransitionHistory::Recent(detect::TimePoint now) const {
  const detect::TimePoint oldest = now - window_;
  std::lock_guard lock(mutex_);
  std::vector<detect::AnomalyTransition> out;
  for (auto it = transitions_.rbegin(); it != transitions_.rend() && it->time >= oldest; ++it) {
    out.push_back(*it);
  }
  return out;
}

}  // namespace fabricwatch::exporter
