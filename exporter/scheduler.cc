#include "exporter/scheduler.h"

#include <condition_variable>
#include <exception>
#include <mutex>

namespace fabricwatch::exporter {

CollectionOutcome CollectOnce(ScheduledCollector& collector, const Clock& clock, SinkShape* shape) {
  CollectionOutcome outcome;
  MetricSink sink = shape != nullptr ? MetricSink(*shape) : MetricSink();
  const auto wall_start = clock.Now();
  const auto start = std::chrono::steady_clock::now();
  Status status;
  try {
    status = collector.collector->Collect(sink);
  } catch (const std::exception& e) {
    status = Status(StatusCode::kInternal, std::string("collector threw: ") + e.what());
  } catch (...) {
    status = Status(StatusCode::kInternal, "collector threw a non-standard exception");
  }
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  outcome.snapshot = std::make_shared<Snapshot>();
  outcome.snapshot->collector = collector.name;
  outcome.snapshot->time = wall_start;
  outcome.run.series = sink.sample_count();
  outcome.run.partial_errors = sink.error_count();
  outcome.errors = sink.errors();
  if (shape != nullptr) sink.SaveShape(*shape);
  outcome.snapshot->families = sink.TakeFamilies();
  outcome.run.status = std::move(status);
  outcome.run.time = wall_start;
  outcome.run.duration_seconds = elapsed.count();
  return outcome;
}

Scheduler::Scheduler(std::vector<ScheduledCollector> collectors, SnapshotStore& store,
                     SelfMetrics& self_metrics, const Clock& clock)
    : collectors_(std::move(collectors)),
      store_(store),
      self_metrics_(self_metrics),
      clock_(clock) {}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::Start() {
  for (ScheduledCollector& collector : collectors_) {
    threads_.emplace_back([this, &collector](std::stop_token stop) { Run(collector, stop); });
  }
}

void Scheduler::Stop() {
  for (std::jthread& thread : threads_) thread.request_stop();
  for (std::jthread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
}

void Scheduler::Run(ScheduledCollector& collector, std::stop_token stop) {
  std::mutex mutex;
  std::condition_variable_any wake;
  auto next = std::chrono::steady_clock::now();
  StatusCode last_code = StatusCode::kOk;
  bool first = true;
  SinkShape shape;  // of the last collection: the next sink reserves its vectors from it
  while (!stop.stop_requested()) {
    CollectionOutcome outcome = CollectOnce(collector, clock_, &shape);
    const Status& status = outcome.run.status;
    // A failed collection publishes nothing new: the previous snapshot would be stale data
    // presented as fresh, so an empty one replaces it; success=0 tells why.
    store_.Publish(std::move(outcome.snapshot));
    self_metrics_.RecordRun(collector.name, outcome.run);

    if (first || status.code() != last_code) {
      if (status.ok()) {
        if (!first) collector.logger->info("collector recovered");
      } else if (status.no_data()) {
        collector.logger->debug("no data: {}", status.message());
      } else {
        collector.logger->warn("collection failed: {}", status.ToString());
      }
    } else if (!status.ok() && !status.no_data()) {
      collector.logger->debug("collection still failing: {}", status.ToString());
    }
    first = false;
    last_code = status.code();

    next += collector.interval;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) {
      // Overran its interval: skip the missed ticks instead of running back to back.
      collector.logger->debug("collection took {:.3f}s, longer than the interval",
                              outcome.run.duration_seconds);
      next = now + collector.interval;
    }
    std::unique_lock lock(mutex);
    wake.wait_until(lock, stop, next, [] { return false; });
  }
}

}  // namespace fabricwatch::exporter
