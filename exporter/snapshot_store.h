#pragma once
// SnapshotStore: the latest immutable snapshot of every collector, plus a short history of the
// series the detectors watch.
//
// A collector's thread publishes a new Snapshot after each collection (a shared_ptr swap); the
// HTTP threads render whatever is latest, so a scrape never waits for a device. Detectors read
// History() for the families they declared with Watch() — a fixed-depth ring of (time, value)
// per series. Series that disappear from their collector's snapshot (a removed device) are
// dropped from the history with it.
//
// Thread-safety: all methods may be called concurrently.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/metric_family.h>

namespace fabricwatch::exporter {

struct Snapshot {
  std::string collector;
  std::chrono::system_clock::time_point time;  // when the collection started
  std::vector<prometheus::MetricFamily> families;
};

struct HistoryPoint {
  std::chrono::system_clock::time_point time;
  double value;
};

class SnapshotStore {
 public:
  explicit SnapshotStore(size_t history_samples) : depth_(history_samples) {}

  // Register a family whose series keep history. Call before collection starts.
  void Watch(std::string family);

  // Called after every Publish(), on the publishing collector's thread (the detector engine
  // queues the snapshot and returns). Set before collection starts.
  using PublishListener = std::function<void(const std::shared_ptr<const Snapshot>&)>;
  void SetPublishListener(PublishListener listener) { listener_ = std::move(listener); }

  void Publish(std::shared_ptr<const Snapshot> snapshot);
  std::shared_ptr<const Snapshot> Latest(std::string_view collector) const;
  std::vector<std::shared_ptr<const Snapshot>> AllLatest() const;

  // Oldest first. `labels` as name/value pairs in the order the collector emits them.
  std::vector<HistoryPoint> History(
      std::string_view family,
      const std::vector<std::pair<std::string, std::string>>& labels) const;
  size_t tracked_series() const;

 private:
  struct Ring {
    std::vector<HistoryPoint> points;
    size_t next = 0;
    bool full = false;
  };
  static std::string SeriesKey(std::string_view family,
                               const std::vector<prometheus::ClientMetric::Label>& labels);

  size_t depth_;
  PublishListener listener_;
  mutable std::mutex mutex_;
  std::set<std::string, std::less<>> watched_;
  std::map<std::string, std::shared_ptr<const Snapshot>, std::less<>> latest_;
  std::map<std::string, Ring, std::less<>> history_;
  std::map<std::string, std::set<std::string>, std::less<>> series_of_collector_;
};

}  // namespace fabricwatch::exporter
