#pragma once
// SnapshotStore: the latest immutable snapshot of every collector.
//
// A collector's thread publishes a new Snapshot after each collection (a shared_ptr swap); the
// HTTP threads render whatever is latest, so a scrape never waits for a device. Detectors keep
// whatever history they need themselves: the publish listener hands every snapshot to the
// detector engine (exporter/pipeline/detector_engine.h).
//
// Thread-safety: all methods may be called concurrently.

#include <prometheus/metric_family.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/log_events.h"

namespace fabricwatch::exporter {

struct Snapshot {
  std::string collector;
  std::chrono::system_clock::time_point time;  // when the collection started
  std::vector<prometheus::MetricFamily> families;
  std::vector<LogEvent> log_events;  // collector `kmsg` only (base/log_events.h)
};

class SnapshotStore {
 public:
  SnapshotStore() = default;

  // Called after every Publish(), on the publishing collector's thread (the detector engine
  // queues the snapshot and returns). Set before collection starts.
  using PublishListener = std::function<void(const std::shared_ptr<const Snapshot>&)>;
  void SetPublishListener(PublishListener listener) { listener_ = std::move(listener); }

  void Publish(std::shared_ptr<const Snapshot> snapshot);
  std::shared_ptr<const Snapshot> Latest(std::string_view collector) const;
  std::vector<std::shared_ptr<const Snapshot>> AllLatest() const;

 private:
  PublishListener listener_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const Snapshot>, std::less<>> latest_;
};

}  // namespace fabricwatch::exporter
