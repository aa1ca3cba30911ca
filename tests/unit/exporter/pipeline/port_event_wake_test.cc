// Event-driven IB (issue 22 item 4): a libibverbs port event makes the rdma collector collect at
// once, so the detectors evaluate the new port state within 100 ms instead of at the next poll.
// The real pipeline — Scheduler, SnapshotStore, DetectorEngine on their own threads — with a
// fake rdma collector (no RDMA hardware here) and a real RdmaPortEventLog as the event source;
// the time from RdmaPortEventLog::Record() to the detector's evaluation is measured.
// Idle cost (issue 40 item 3): between events the collector's thread does not wake at all (its
// voluntary context switches, /proc/self/task/<tid>/status, are counted), and a collector whose
// source has a readiness fd collects when it is readable, else only at the slow fallback.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collectors/rdma/rdma_metrics.h"
#include "collectors/sys/unique_fd.h"
#include "collectors/sys/verbs_events.h"
#include "detectors/core/snapshot_lookup.h"
#include "exporter/pipeline/detector_engine.h"
#include "exporter/pipeline/scheduler.h"
#include "exporter/pipeline/self_metrics.h"
#include "exporter/pipeline/snapshot_store.h"

namespace fabricwatch::exporter {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

TEST(NextCollectionTest, events_collect_now_debounced_and_never_later_than_the_interval) {
  const Steady::time_point t0{std::chrono::seconds(100)};
  const Steady::time_point next = t0 + milliseconds(1000);
  // No event: the interval.
  EXPECT_EQ(NextCollection(next, false, t0, milliseconds(100)), next);
  // An event 500 ms after the last collection: now (the gap has passed).
  EXPECT_LE(NextCollection(next, true, t0, milliseconds(100)), t0 + milliseconds(500));
  // An event 30 ms after it: at the end of the 100 ms gap, not before.
  EXPECT_EQ(NextCollection(next, true, t0, milliseconds(100)), t0 + milliseconds(100));
  // The interval comes first anyway.
  EXPECT_EQ(NextCollection(t0 + milliseconds(50), true, t0, milliseconds(100)),
            t0 + milliseconds(50));
}

// The port state the fake rdma collector reports (fabric_rdma_port_state of mlx5_0/1).
std::atomic<int> g_port_state{4};
std::atomic<int> g_collections{0};

class FakeRdma final : public Collector {
 public:
  Status Collect(MetricSink& sink) override {
    ++g_collections;
    sink.Add(rdma::kPortState, {{"device", "mlx5_0"}, {"port", "1"}}, g_port_state.load());
    return Status::Ok();
  }
};

// Records when it first observes each new port state.
class StateWatcher final : public detect::Detector {
 public:
  std::string_view name() const override { return "state_watcher"; }
  std::vector<std::string> inputs() const override { return {std::string(rdma::kCollector)}; }
  void Observe(const detect::SnapshotView& s) override {
    auto state = detect::FindValue<rdma::kPortState>(s.families, {{"device", "mlx5_0"}});
    if (state) pending_ = static_cast<int>(*state);
  }
  std::vector<detect::Finding> Evaluate(detect::TimePoint) override {
    const auto now = Steady::now();
    std::lock_guard lock(mutex);
    if (pending_ != last_) seen.emplace_back(pending_, now);
    last_ = pending_;
    return {};
  }
  std::mutex mutex;
  std::vector<std::pair<int, Steady::time_point>> seen;  // (state, when evaluated)

 private:
  int pending_ = 4, last_ = 4;
};

TEST(PortEventWakeTest, a_verbs_port_event_is_evaluated_within_100ms_not_at_the_next_poll) {
  SystemClock clock;
  sys::RdmaPortEventLog log;
  auto watcher_owned = std::make_unique<StateWatcher>();
  StateWatcher* watcher = watcher_owned.get();
  std::vector<std::unique_ptr<detect::Detector>> detectors;
  detectors.push_back(std::move(watcher_owned));
  auto logger =
      std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  DetectorEngine engine(std::move(detectors), clock, nullptr, std::nullopt, logger);
  SnapshotStore store;
  store.SetPublishListener([&](const std::shared_ptr<const Snapshot>& s) { engine.Submit(s); });
  // A 10 s interval: anything seen within the test's 100 ms came from an event.
  std::vector<ScheduledCollector> collectors;
  collectors.push_back({"rdma", milliseconds(10000), std::make_unique<FakeRdma>(), logger});
  auto signal = std::make_shared<WakeSignal>();
  log.AddListener([signal] { signal->Notify(); });
  collectors.back().wake.signal = signal;
  SelfMetrics self({{"rdma", milliseconds(10000)}});
  Scheduler scheduler(std::move(collectors), store, self, clock);
  engine.Start();
  scheduler.Start();
  std::this_thread::sleep_for(milliseconds(300));  // the first collection is done

  std::vector<double> latencies_ms;
  for (int i = 0; i < 6; ++i) {
    const int state = i % 2 == 0 ? 1 : 4;  // DOWN, ACTIVE, ...
    g_port_state = state;
    const auto event_time = Steady::now();
    log.Record(
        {std::chrono::system_clock::now(), "mlx5_0", 1, state == 1 ? "port_err" : "port_active"});
    std::optional<Steady::time_point> evaluated;
    while (!evaluated && Steady::now() - event_time < milliseconds(2000)) {
      std::this_thread::sleep_for(milliseconds(1));
      std::lock_guard lock(watcher->mutex);
      for (const auto& [s, when] : watcher->seen) {
        if (s == state && when >= event_time) evaluated = when;
      }
    }
    ASSERT_TRUE(evaluated) << "event " << i << " never evaluated";
    latencies_ms.push_back(
        std::chrono::duration<double, std::milli>(*evaluated - event_time).count());
    std::this_thread::sleep_for(milliseconds(150));  // past the debounce gap
  }
  scheduler.Stop();
  engine.Stop();
  std::sort(latencies_ms.begin(), latencies_ms.end());
  std::string all;
  for (double ms : latencies_ms) all += std::to_string(ms) + " ";
  std::printf(
      "[ latency ] verbs port event -> detector evaluation: min %.2f ms, median %.2f ms, "
      "max %.2f ms (all: %s)\n",
      latencies_ms.front(), latencies_ms[latencies_ms.size() / 2], latencies_ms.back(),
      all.c_str());
  ::testing::Test::RecordProperty("event_to_evaluation_max_ms",
                                  std::to_string(latencies_ms.back()));
  EXPECT_LT(latencies_ms[latencies_ms.size() / 2], 100) << all;
  // The bound is 100 ms; a loaded CI runner may stall one thread now and then.
  EXPECT_LT(latencies_ms.back(), 500) << all;
  // One collection at the start and one per event (the 10 s interval never came).
  EXPECT_EQ(g_collections.load(), 7) << all;
}

TEST(PortEventWakeTest, a_burst_of_events_gives_one_collection_now_and_one_after_the_gap) {
  SystemClock clock;
  sys::RdmaPortEventLog log;
  auto logger =
      std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  SnapshotStore store;
  std::vector<ScheduledCollector> collectors;
  collectors.push_back({"rdma", milliseconds(10000), std::make_unique<FakeRdma>(), logger});
  auto signal = std::make_shared<WakeSignal>();
  log.AddListener([signal] { signal->Notify(); });
  collectors.back().wake.signal = signal;
  SelfMetrics self({{"rdma", milliseconds(10000)}});
  Scheduler scheduler(std::move(collectors), store, self, clock);
  g_collections = 0;
  scheduler.Start();
  std::this_thread::sleep_for(milliseconds(200));
  const int before = g_collections.load();
  for (int i = 0; i < 20; ++i) {
    // Transitions (a repeated port_err is no event: RdmaPortEventLog::Record).
    log.Record({std::chrono::system_clock::now(), "mlx5_0", 1, i % 2 ? "port_active" : "port_err"});
    std::this_thread::sleep_for(milliseconds(2));
  }
  std::this_thread::sleep_for(milliseconds(400));
  scheduler.Stop();
  // 20 events in ~40 ms: debounced to 2 collections (3 if the machine stalled mid-burst).
  EXPECT_GE(g_collections.load() - before, 2);
  EXPECT_LE(g_collections.load() - before, 3);
}

// The voluntary context switches of thread `tid` of this process so far: each time it blocked.
uint64_t VoluntarySwitches(pid_t tid) {
  std::ifstream status("/proc/self/task/" + std::to_string(tid) + "/status");
  std::string key;
  uint64_t value = 0;
  while (status >> key) {
    if (key == "voluntary_ctxt_switches:" && status >> value) return value;
  }
  ADD_FAILURE() << "no voluntary_ctxt_switches for thread " << tid;
  return 0;
}

// Counts its collections and remembers its thread. With `ready` set, its readiness fd is that
// pipe's read end, drained by each collection, and it reports a backlog `backlog` times.
class CountingCollector final : public Collector {
 public:
  explicit CountingCollector(int ready = -1) : ready_(ready) {}
  Status Collect(MetricSink&) override {
    tid = static_cast<pid_t>(::syscall(SYS_gettid));
    if (ready_ >= 0) {
      char buffer[64];
      while (::read(ready_, buffer, sizeof(buffer)) > 0) {
      }
    }
    {
      std::lock_guard lock(mutex);
      starts.push_back(Steady::now());
    }
    ++collections;
    return Status::Ok();
  }
  CollectorReadiness Readiness() override {
    if (ready_ < 0) return {};
    return {.fd = ready_, .backlog = backlog.load() > 0 && backlog-- > 0, .event_driven = true};
  }
  // Waits up to `timeout` for `n` collections in all.
  bool WaitFor(int n, milliseconds timeout = milliseconds(1000)) const {
    const auto until = Steady::now() + timeout;
    while (collections.load() < n && Steady::now() < until) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    return collections.load() >= n;
  }
  Steady::time_point Start(size_t i) {
    std::lock_guard lock(mutex);
    return starts.at(i);
  }

  std::atomic<int> collections{0};
  std::atomic<int> backlog{0};
  std::atomic<pid_t> tid{0};
  std::mutex mutex;
  std::vector<Steady::time_point> starts;

 private:
  int ready_;
};

std::shared_ptr<spdlog::logger> NullLogger() {
  return std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
}

TEST(WakeSignalTest, the_thread_sleeps_between_notifications_and_collects_on_each) {
  SystemClock clock;
  SnapshotStore store;
  auto owned = std::make_unique<CountingCollector>();
  CountingCollector* fake = owned.get();
  std::vector<ScheduledCollector> collectors;
  collectors.push_back({"jobs", milliseconds(10000), std::move(owned), NullLogger()});
  auto signal = std::make_shared<WakeSignal>();
  ASSERT_GE(signal->fd(), 0);
  collectors.back().wake.signal = signal;
  SelfMetrics self({{"jobs", milliseconds(10000)}});
  Scheduler scheduler(std::move(collectors), store, self, clock);
  scheduler.Start();
  ASSERT_TRUE(fake->WaitFor(1));
  std::this_thread::sleep_for(milliseconds(50));  // it has published and gone to sleep
  const pid_t tid = fake->tid;
  // No event for 400 ms: not one wake-up (the 10 ms poll this replaced woke it 40 times).
  const uint64_t idle_before = VoluntarySwitches(tid);
  std::this_thread::sleep_for(milliseconds(400));
  EXPECT_EQ(VoluntarySwitches(tid), idle_before);
  EXPECT_EQ(fake->collections.load(), 1);
  // Each notification: one collection at once (the last one is past the 100 ms gap).
  for (int i = 0; i < 3; ++i) {
    const auto notified = Steady::now();
    signal->Notify();
    ASSERT_TRUE(fake->WaitFor(2 + i)) << "notification " << i << " collected nothing";
    EXPECT_LT(fake->Start(1 + i) - notified, milliseconds(50));
    std::this_thread::sleep_for(milliseconds(150));
  }
  EXPECT_EQ(fake->collections.load(), 4);
  // Stop() reaches the sleeping thread through the same eventfd, at once.
  const auto stop_start = Steady::now();
  EXPECT_TRUE(scheduler.Stop(milliseconds(1000)));
  EXPECT_LT(Steady::now() - stop_start, milliseconds(200));
}

TEST(WakeSignalTest, a_readable_source_wakes_its_collector_once_per_interval_else_the_fallback) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC), 0);
  const sys::UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  const auto write_one = [&] { ASSERT_EQ(::write(write_end.get(), "x", 1), 1); };
  SystemClock clock;
  SnapshotStore store;
  auto owned = std::make_unique<CountingCollector>(read_end.get());
  CountingCollector* fake = owned.get();
  const milliseconds interval(200);  // the debounce of an event-driven collector
  std::vector<ScheduledCollector> collectors;
  collectors.push_back({"kmsg", interval, std::move(owned), NullLogger()});
  SelfMetrics self({{"kmsg", interval}});
  Scheduler scheduler(std::move(collectors), store, self, clock);
  scheduler.Start();
  ASSERT_TRUE(fake->WaitFor(1));
  std::this_thread::sleep_for(milliseconds(50));
  // Nothing readable: no collection at the 200 ms interval, no wake-up; the timer is the
  // fallback, and the self-metrics judge staleness against it.
  const uint64_t idle_before = VoluntarySwitches(fake->tid);
  std::this_thread::sleep_for(milliseconds(600));
  EXPECT_EQ(VoluntarySwitches(fake->tid), idle_before);
  EXPECT_EQ(fake->collections.load(), 1);
  EXPECT_EQ(self.Collectors().at("kmsg").interval, kEventDrivenFallback);

  // Readable 650 ms after the last collection: collected at once.
  auto written = Steady::now();
  write_one();
  ASSERT_TRUE(fake->WaitFor(2));
  EXPECT_LT(fake->Start(1) - written, milliseconds(50));
  // Two more writes within the interval: one collection, when the interval since the last one
  // has passed (not before; a flood costs one collection per interval).
  write_one();
  write_one();
  ASSERT_TRUE(fake->WaitFor(3));
  EXPECT_GE(fake->Start(2) - fake->Start(1), interval);
  EXPECT_LT(fake->Start(2) - fake->Start(1), interval + milliseconds(100));
  std::this_thread::sleep_for(milliseconds(400));
  EXPECT_EQ(fake->collections.load(), 3);

  // A collection that leaves data unread (its backlog) is followed by another one interval
  // later, without a write, until it has read everything.
  fake->backlog = 2;
  written = Steady::now();
  write_one();
  ASSERT_TRUE(fake->WaitFor(6, milliseconds(1500)));
  EXPECT_GE(fake->Start(5) - fake->Start(3), 2 * interval);
  std::this_thread::sleep_for(milliseconds(400));
  EXPECT_EQ(fake->collections.load(), 6);
  EXPECT_TRUE(scheduler.Stop(milliseconds(1000)));
}

}  // namespace
}  // namespace fabricwatch::exporter
