// Event-driven IB (issue 22 item 4): a libibverbs port event makes the rdma collector collect at
// once, so the detectors evaluate the new port state within 100 ms instead of at the next poll.
// The real pipeline — Scheduler, SnapshotStore, DetectorEngine on their own threads — with a
// fake rdma collector (no RDMA hardware here) and a real RdmaPortEventLog as the event source;
// the time from RdmaPortEventLog::Record() to the detector's evaluation is measured.
#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "collectors/rdma/rdma_metrics.h"
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
  std::vector<std::string> inputs() const override { return {"rdma"}; }
  void Observe(const detect::SnapshotView& s) override {
    auto state = detect::FindValue(s.families, rdma::kPortState, {{"device", "mlx5_0"}});
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
  collectors.back().wake.count = [&log] {
    uint64_t total = 0;
    for (const auto& [key, count] : log.Counts()) total += count;
    return total;
  };
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
  collectors.back().wake.count = [&log] {
    uint64_t total = 0;
    for (const auto& [key, count] : log.Counts()) total += count;
    return total;
  };
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

}  // namespace
}  // namespace fabricwatch::exporter
