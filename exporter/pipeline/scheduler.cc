#include "exporter/pipeline/scheduler.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <utility>

namespace fabricwatch::exporter {

std::shared_ptr<Snapshot> CollectionBuffers::TakeSnapshot() {
  for (std::shared_ptr<Snapshot>& kept : kept_) {
    if (kept != nullptr && kept.use_count() == 1) {
      // The reader that dropped the last other reference did so with a release; this acquire
      // orders its reads before the writes of the next collection.
      std::atomic_thread_fence(std::memory_order_acquire);
      return std::exchange(kept, nullptr);
    }
  }
  return std::make_shared<Snapshot>();
}

void CollectionBuffers::Keep(std::shared_ptr<Snapshot> snapshot) {
  // In place of the slot TakeSnapshot() emptied, else of the oldest (still read elsewhere: that
  // reader frees it); the newest goes last.
  auto slot = std::find(kept_.begin(), kept_.end(), nullptr);
  if (slot == kept_.end()) slot = kept_.begin();
  std::rotate(slot, slot + 1, kept_.end());
  kept_.back() = std::move(snapshot);
}

CollectionOutcome CollectOnce(ScheduledCollector& collector, const Clock& clock,
                              CollectionBuffers* buffers) {
  CollectionOutcome outcome;
  MetricSink one_off_sink;
  MetricSink& sink = buffers != nullptr ? buffers->sink() : one_off_sink;
  std::shared_ptr<Snapshot> snapshot =
      buffers != nullptr ? buffers->TakeSnapshot() : std::make_shared<Snapshot>();
  sink.Reset(std::move(snapshot->families));
  const auto taken_at = clock.Now();
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
  snapshot->collector.assign(collector.name);
  snapshot->time = taken_at;
  snapshot->families = sink.TakeFamilies();
  snapshot->log_events = sink.TakeLogEvents();
  outcome.run.series = sink.sample_count();
  outcome.run.partial_errors = sink.error_count();
  outcome.errors = sink.errors();
  outcome.run.status = std::move(status);
  outcome.run.time = taken_at;
  outcome.run.duration_seconds = elapsed.count();
  if (buffers != nullptr) buffers->Keep(snapshot);
  outcome.snapshot = std::move(snapshot);
  return outcome;
}

std::chrono::steady_clock::time_point NextCollection(
    std::chrono::steady_clock::time_point next, bool events_pending,
    std::chrono::steady_clock::time_point last_start, std::chrono::milliseconds min_gap) {
  if (!events_pending) return next;
  return std::min(next, last_start + min_gap);
}

Scheduler::Scheduler(std::vector<ScheduledCollector> collectors, SnapshotStore& store,
                     SelfMetrics& self_metrics, const Clock& clock)
    : collectors_(std::move(collectors)),
      store_(store),
      self_metrics_(self_metrics),
      clock_(clock) {}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::Start() {
  {
    std::lock_guard lock(exit_mutex_);
    ended_.assign(collectors_.size(), false);
  }
  for (size_t i = 0; i < collectors_.size(); ++i) {
    threads_.emplace_back([this, i](std::stop_token stop) {
      Run(collectors_[i], stop);
      std::lock_guard lock(exit_mutex_);
      ended_[i] = true;
      exited_.notify_all();
    });
  }
}

bool Scheduler::Stop(std::chrono::milliseconds budget) {
  for (std::jthread& thread : threads_) thread.request_stop();
  const auto all_ended = [&] {
    return std::find(ended_.begin(), ended_.end(), false) == ended_.end();
  };
  bool ended;
  {
    std::unique_lock lock(exit_mutex_);
    if (budget == std::chrono::milliseconds::max()) {
      exited_.wait(lock, all_ended);
    } else {
      exited_.wait_for(lock, budget, all_ended);
    }
    ended = all_ended();
    if (!ended) {
      for (size_t i = 0; i < ended_.size(); ++i) {
        if (ended_[i]) continue;
        // The thread is blocked where no stop token reaches (a read of a FIFO or a hung
        // device): joining it could take forever.
        collectors_[i].logger->warn(
            "collector did not stop within {} ms: its collection is stuck, left running",
            budget.count());
      }
    }
  }
  if (!ended) return false;
  for (std::jthread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
  return true;
}

void Scheduler::Run(ScheduledCollector& collector, std::stop_token stop) {
  std::mutex mutex;
  std::condition_variable_any wake;
  auto next = std::chrono::steady_clock::now();
  StatusCode last_code = StatusCode::kOk;
  bool first = true;
  bool overran_stale = false;  // the last collection took more than kStaleIntervals intervals
  CollectionBuffers buffers;
  const bool event_wake = static_cast<bool>(collector.wake.count);
  uint64_t events_seen = event_wake ? collector.wake.count() : 0;
  bool early = false;  // the coming collection was woken by events, ahead of `next`
  while (!stop.stop_requested()) {
    const auto last_start = std::chrono::steady_clock::now();
    if (event_wake) events_seen = collector.wake.count();  // this collection sees them all
    self_metrics_.RecordStart(collector.name, std::chrono::steady_clock::now());
    CollectionOutcome outcome = CollectOnce(collector, clock_, &buffers);
    const Status& status = outcome.run.status;
    // A failed collection publishes nothing new: the previous snapshot would be stale data
    // presented as fresh, so an empty one replaces it; success=0 tells why.
    store_.Publish(std::move(outcome.snapshot));
    // The snapshot keeps the agent's time (the detectors'); its age is shown in wall time.
    outcome.run.time = clock_.ToWall(outcome.run.time);
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

    // An early collection leaves the interval's cadence as it was.
    if (!std::exchange(early, false)) next += collector.interval;
    const auto now = std::chrono::steady_clock::now();
    // Once when a collection is so slow that it was reported stale, once when they are back
    // on time (the self-metrics showed it while it ran).
    const bool stale = outcome.run.duration_seconds >
                       kStaleIntervals * std::chrono::duration<double>(collector.interval).count();
    if (stale && !std::exchange(overran_stale, true)) {
      collector.logger->warn(
          "collection took {:.1f}s, more than {} intervals: it was reported "
          "stale meanwhile",
          outcome.run.duration_seconds, kStaleIntervals);
    } else if (!stale && std::exchange(overran_stale, false)) {
      collector.logger->info("collection within {} intervals again ({:.3f}s)", kStaleIntervals,
                             outcome.run.duration_seconds);
    }
    if (next < now) {
      // Overran its interval: skip the missed ticks instead of running back to back.
      collector.logger->debug("collection took {:.3f}s, longer than the interval",
                              outcome.run.duration_seconds);
      next = now + collector.interval;
    }
    std::unique_lock lock(mutex);
    if (!event_wake) {
      wake.wait_until(lock, stop, next, [] { return false; });
      continue;
    }
    // Poll the event count while waiting; collect early when it grew (debounced).
    while (!stop.stop_requested()) {
      const bool pending = collector.wake.count() != events_seen;
      const auto due = NextCollection(next, pending, last_start, collector.wake.min_gap);
      const auto now_wait = std::chrono::steady_clock::now();
      if (due <= now_wait) {
        early = due < next;
        break;
      }
      wake.wait_until(lock, stop, std::min(due, now_wait + collector.wake.poll),
                      [] { return false; });
    }
  }
}

}  // namespace fabricwatch::exporter
