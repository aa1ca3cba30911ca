#pragma once
// Scheduler: each collector samples on its own interval, on its own thread, into an immutable
// snapshot (node_exporter's collector/collector.go execute(), but on a timer: detectors need a
// steady sub-scrape cadence). It times every collection, classifies OK / no data / error, feeds
// the self-metrics, publishes the snapshot and logs only the transitions of a collector's state.
// A slow collector delays only itself. Stop() returns within one poll of the stop token.

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>

#include "collectors/core/collector.h"
#include "exporter/self_metrics.h"
#include "exporter/snapshot_store.h"

namespace fabricwatch::exporter {

struct ScheduledCollector {
  std::string name;
  std::chrono::milliseconds interval;
  std::unique_ptr<Collector> collector;
  std::shared_ptr<spdlog::logger> logger;
};

// Runs one collection: never throws, whatever the collector does.
struct CollectionOutcome {
  CollectorRun run;
  std::shared_ptr<Snapshot> snapshot;
  std::vector<Status> errors;  // the first partial errors, for --config.check
};
// `shape`, when given, is the shape of the collector's previous collection: the sink is sized
// from it and it is updated for the next one (MetricSink's SinkShape).
CollectionOutcome CollectOnce(ScheduledCollector& collector, const Clock& clock,
                              SinkShape* shape = nullptr);

class Scheduler {
 public:
  Scheduler(std::vector<ScheduledCollector> collectors, SnapshotStore& store,
            SelfMetrics& self_metrics, const Clock& clock);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void Start();
  void Stop();

 private:
  void Run(ScheduledCollector& collector, std::stop_token stop);

  std::vector<ScheduledCollector> collectors_;
  SnapshotStore& store_;
  SelfMetrics& self_metrics_;
  const Clock& clock_;
  std::vector<std::jthread> threads_;
};

}  // namespace fabricwatch::exporter
