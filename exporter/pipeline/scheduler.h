#pragma once
// Scheduler: each collector samples on its own interval, on its own thread, into an immutable
// snapshot (node_exporter's collector/collector.go execute(), but on a timer: detectors need a
// steady sub-scrape cadence). It times every collection, classifies OK / no data / error, feeds
// the self-metrics, publishes the snapshot and logs only the transitions of a collector's state.
// A slow collector delays only itself; one whose collection runs for more than kStaleIntervals
// intervals is reported stale by the self-metrics while it runs. Stop() returns within its
// budget whatever a collector is doing: a thread blocked in a system call is left running and
// reported, and the caller must then leave without destroying the scheduler.
// Between collections a collector's thread sleeps in ppoll() until its next collection is due:
// on an eventfd that Stop() and its event source notify (WakeSignal), and for a collector its
// source wakes (Collector::Readiness) on the source's descriptor too. Nothing wakes it to look
// (issue 40 item 3: an idle agent's wake-ups are its collections).

#include <spdlog/logger.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collectors/core/collector.h"
#include "collectors/sys/unique_fd.h"
#include "exporter/pipeline/self_metrics.h"
#include "exporter/pipeline/snapshot_store.h"

namespace fabricwatch::exporter {

// A wake-up of a collector's thread by an event source, without polling (issue 40 item 3): the
// source calls Notify() (RdmaPortEventLog::AddListener, the agent's raised-finding observer) and
// the waiting thread, blocked in ppoll() on the signal's eventfd, collects. The sequence says
// whether anything was notified since the thread last looked, so a notification that lands while
// a collection runs is not lost. Thread-safe; Notify() takes no lock and allocates nothing.
class WakeSignal {
 public:
  WakeSignal();
  WakeSignal(const WakeSignal&) = delete;
  WakeSignal& operator=(const WakeSignal&) = delete;

  // An event happened: the waiting collector collects (debounced by EventWake::min_gap).
  void Notify();
  // Wakes the waiting thread without an event (Stop()).
  void Interrupt();
  // Notifications so far.
  uint64_t sequence() const { return sequence_.load(std::memory_order_acquire); }
  // The eventfd to poll() for POLLIN, or -1 when none could be made (EMFILE): the waiter then
  // looks every kUnsignalledPoll.
  int fd() const { return fd_.get(); }
  // Reads the eventfd's count, so that it stops being readable.
  void Drain();
  static constexpr std::chrono::milliseconds kUnsignalledPoll{50};

 private:
  std::atomic<uint64_t> sequence_{0};
  sys::UniqueFd fd_;
};

// Kernel events that make a collector collect at once instead of at its next interval (issue 22
// item 4): the rdma collector on a libibverbs port event (port error, port active, LID/SM
// change), so link_flap and link_degraded see the new port state within 100 ms, as a netdev's
// carrier change reaches link_flap through rtnetlink. The source notifies `signal`; the
// collector collects at most once per `min_gap` (debounce: a burst of events gives one
// collection now and one at most `min_gap` later with the rest). Between events its thread
// sleeps until its interval: nothing polls.
struct EventWake {
  std::shared_ptr<WakeSignal> signal;  // null: the interval alone
  std::chrono::milliseconds min_gap{100};
};

// How often a collector that its source wakes (Collector::Readiness(), event_driven) collects
// when nothing happens, so that its self-metrics and timestamps stay fresh: its interval is then
// its debounce, and fabricwatch_collector_interval_seconds shows this (the
// FabricwatchCollectorStale alert judges its age against it).
inline constexpr std::chrono::milliseconds kEventDrivenFallback{std::chrono::seconds(60)};

struct ScheduledCollector {
  std::string name;
  std::chrono::milliseconds interval;
  std::unique_ptr<Collector> collector;
  std::shared_ptr<spdlog::logger> logger;
  EventWake wake = {};
};

// When a collector waiting for `next` (its interval) should collect, given the event wake: now
// if events are pending and the last collection started at least `min_gap` ago, else at
// last_start + min_gap, else `next`. Pure, for the tests' simulated time.
std::chrono::steady_clock::time_point NextCollection(
    std::chrono::steady_clock::time_point next, bool events_pending,
    std::chrono::steady_clock::time_point last_start, std::chrono::milliseconds min_gap);

// What a collector's thread keeps from one collection to the next so that a steady-state
// collection allocates nothing (docs/design.md §8): the sink with its indexes, and the last few
// snapshots it published. A snapshot is immutable while anyone reads it; once the store has
// replaced it and no scrape or detector holds it any more, its memory (families, label
// strings, the Snapshot itself) carries the next collection.
class CollectionBuffers {
 public:
  MetricSink& sink() { return sink_; }
  // A published snapshot that only these buffers still hold, the oldest first, or a new one.
  std::shared_ptr<Snapshot> TakeSnapshot();
  // Remembers a snapshot about to be published, for a later TakeSnapshot().
  void Keep(std::shared_ptr<Snapshot> snapshot);

 private:
  // The store holds the latest snapshot; the one before is free in the steady state (the
  // detector engine and a render let go of it within milliseconds). When it is not, the
  // collection takes a new snapshot rather than keep more memory per collector.
  static constexpr size_t kKept = 2;
  MetricSink sink_;
  std::array<std::shared_ptr<Snapshot>, kKept> kept_;  // in the order they were published
};

// Runs one collection: never throws, whatever the collector does.
struct CollectionOutcome {
  CollectorRun run;
  std::shared_ptr<Snapshot> snapshot;
  std::vector<Status> errors;  // the first partial errors, for --config.check
};
// `buffers`, when given, are the collector's buffers from its previous collections: the
// collection reuses their memory, and the new snapshot is kept in them.
CollectionOutcome CollectOnce(ScheduledCollector& collector, const Clock& clock,
                              CollectionBuffers* buffers = nullptr);

class Scheduler {
 public:
  Scheduler(std::vector<ScheduledCollector> collectors, SnapshotStore& store,
            SelfMetrics& self_metrics, const Clock& clock);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void Start();
  // Asks every collector to stop and waits up to `budget` for their threads. True when all of
  // them ended. False when a collection is still running (stuck in a read or a device): it is
  // logged with its collector's name, its thread is left running, and a later Stop() (or the
  // destructor) waits for it without a bound. A caller that got false leaves the process
  // without destroying the scheduler (main() std::_Exit()s after the state file is saved).
  bool Stop(std::chrono::milliseconds budget = std::chrono::milliseconds::max());

 private:
  void Run(ScheduledCollector& collector, std::stop_token stop);
  // Waits until the collector is due (its interval, a notification, its source readable, or a
  // stop); true when it is, false on stop. `early`: due ahead of `next`.
  struct WaitState;
  bool Wait(const ScheduledCollector& collector, WaitState& state, const std::stop_token& stop);

  std::vector<ScheduledCollector> collectors_;
  SnapshotStore& store_;
  SelfMetrics& self_metrics_;
  const Clock& clock_;
  std::vector<std::jthread> threads_;  // index-aligned with collectors_ while running
  std::mutex exit_mutex_;
  std::condition_variable exited_;
  std::vector<bool> ended_;  // by collector index, guarded by exit_mutex_
};

}  // namespace fabricwatch::exporter
