#pragma once
// TransitionHistory: the anomaly raises and clears of the last hour, for the status page (issue
// 25 item 5: "the last transitions, an hour's history, with times"). The tracker keeps only the
// active set and the transition counters (detectors/core/anomaly_tracker.h), and the log line of
// each transition goes to the journal, so the page keeps its own short, bounded record: at most
// `capacity` transitions, and none older than `window` when read. A flapping port that raises
// and clears every few seconds fills the capacity with its own transitions; the oldest go first,
// which is what an on-call wants to see anyway.
//
// Thread-safety: Record() (the engine thread, as a tracker observer) and Recent() (HTTP threads)
// may run concurrently.

#include <chrono>
#include <cstddef>
#include <deque>
#include <mutex>
#include <vector>

#include "detectors/core/detector.h"

namespace fabricwatch::exporter {

class TransitionHistory {
 public:
  static constexpr size_t kDefaultCapacity = 256;
  static constexpr std::chrono::hours kDefaultWindow{1};

  explicit TransitionHistory(size_t capacity = kDefaultCapacity,
                             std::chrono::seconds window = kDefaultWindow)
      : capacity_(capacity), window_(window) {}

  // A tracker observer (AnomalyTracker::Subscribe): keeps a copy of the transition.
  void Record(const detect::AnomalyTransition& transition);

  // The transitions of the window before `now`, newest first.
  std::vector<detect::AnomalyTransition> Recent(detect::TimePoint now) const;

 private:
  const size_t capacity_;
  const std::chrono::seconds window_;
  mutable std::mutex mutex_;
  std::deque<detect::AnomalyTransition> transitions_;  // oldest first
};

}  // namespace fabricwatch::exporter
