#pragma once
// The agent's own metrics: build info, per-collector health (pre-initialised for every enabled
// collector so alerts never meet an absent series), and standard process metrics.
//
// Thread-safety: RecordRun() from collector threads and Collect()/Collectors() from HTTP threads
// may run concurrently.

#include <prometheus/metric_family.h>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/metric_sink.h"
#include "base/status.h"

namespace fabricwatch::exporter {

struct CollectorRun {
  Status status;
  std::chrono::system_clock::time_point time;
  double duration_seconds = 0;
  size_t partial_errors = 0;
  size_t series = 0;
};

// A collection still running after this many of its collector's intervals is stuck (a read
// blocked in the kernel, a hung device): the collector is reported stale and failing until the
// collection ends. Three intervals, as the FabricwatchCollectorStale alert allows.
inline constexpr int kStaleIntervals = 3;

struct CollectorHealth {
  std::chrono::milliseconds interval{0};
  bool has_run = false;
  // False while stale, whatever the last finished collection said.
  bool success = false;
  // A collection has run for more than kStaleIntervals intervals: the data served is that old.
  bool stale = false;
  // The last finished collection's status; while stale, a kDeadlineExceeded status that says
  // how long the running collection has taken.
  Status last_status;
  double duration_seconds = 0;
  uint64_t errors_total = 0;
  double last_sample_timestamp = 0;
  size_t series = 0;
};

class SelfMetrics {
 public:
  // The enabled collectors and their intervals, in display order.
  explicit SelfMetrics(
      const std::vector<std::pair<std::string, std::chrono::milliseconds>>& collectors);

  // A collection of `collector` starts now (the scheduler calls it before each collection).
  void RecordStart(const std::string& collector, std::chrono::steady_clock::time_point start);
  // The collection ended.
  void RecordRun(const std::string& collector, const CollectorRun& run);
  // The collector's timer now runs every `interval`: a collector its source wakes
  // (kEventDrivenFallback, scheduler.h) is judged stale against that, not its debounce.
  void SetInterval(const std::string& collector, std::chrono::milliseconds interval);
  // Every collector's health as of now: a collection running for more than kStaleIntervals
  // intervals makes its collector stale and unsuccessful.
  std::map<std::string, CollectorHealth> Collectors() const;
  // fabricwatch_* and process_* families, ready to render.
  std::vector<prometheus::MetricFamily> Collect() const;

 private:
  struct State {
    CollectorHealth health;
    // When the running collection started; nullopt between collections.
    std::optional<std::chrono::steady_clock::time_point> running_since;
  };
  mutable std::mutex mutex_;
  std::map<std::string, State> collectors_;
};

// The descriptors of the agent's own metrics, for the metric reference.
std::span<const MetricDesc> SelfMetricDescs();

// Reads /proc/self (the real one, never the replay root): CPU seconds, RSS, virtual memory,
// open and maximum fds, start time.
struct ProcessStats {
  double cpu_seconds = 0;
  double resident_bytes = 0;
  double virtual_bytes = 0;
  double open_fds = 0;
  double max_fds = 0;
  double start_time_seconds = 0;
};
Result<ProcessStats> ReadProcessStats();

}  // namespace fabricwatch::exporter
