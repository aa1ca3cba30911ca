#include "exporter/pipeline/scheduler.h"

#include <gtest/gtest.h>
#include <prometheus/metric_family.h>
#include <prometheus/metric_type.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/null_sink.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "collectors/core/collector.h"
#include "base/metric_sink.h"
#include "exporter/pipeline/self_metrics.h"
#include "exporter/pipeline/snapshot_store.h"

namespace fabricwatch::exporter {
namespace {

using std::chrono::milliseconds;
using SysClock = std::chrono::system_clock;

constexpr MetricDesc kFakeValue{"fake_value", "A value from the fake collector.",
                                MetricKind::kGauge, {"source"}};

// What the fake collector does on each call; shared with the test, which keeps a handle after
// the collector moved into the scheduler.
struct FakeBehaviour {
  std::mutex mutex;
  Status status;
  int partial_errors = 0;
  bool add_sample = true;
  bool throw_exception = false;
  bool throw_non_standard = false;
  std::atomic<int> calls{0};
  // A collection that blocks until released, like a read of a FIFO: Collect() waits on
  // `unblocked` while `block` is set, on a mutex of its own.
  std::mutex block_mutex;
  std::condition_variable unblocked;
  bool block = false;
  std::atomic<bool> blocking{false};

  void Set(Status s) {
    std::lock_guard lock(mutex);
    status = std::move(s);
  }
  void Release() {
    {
      std::lock_guard lock(block_mutex);
      block = false;
    }
    unblocked.notify_all();
  }
};

class FakeCollector final : public Collector {
 public:
  explicit FakeCollector(std::shared_ptr<FakeBehaviour> behaviour)
      : behaviour_(std::move(behaviour)) {}

  Status Collect(MetricSink& sink) override {
    const int call = ++behaviour_->calls;
    {
      std::unique_lock block(behaviour_->block_mutex);
      behaviour_->blocking = behaviour_->block;
      behaviour_->unblocked.wait(block, [&] { return !behaviour_->block; });
      behaviour_->blocking = false;
    }
    std::lock_guard lock(behaviour_->mutex);
    if (behaviour_->throw_exception) throw std::runtime_error("boom");
    if (behaviour_->throw_non_standard) throw 42;
    if (behaviour_->add_sample) sink.Add(kFakeValue, {{"source", "fake"}}, call);
    for (int i = 0; i < behaviour_->partial_errors; ++i) {
      sink.RecordError(Status(StatusCode::kNotFound, "device " + std::to_string(i)));
    }
    return behaviour_->status;
  }

 private:
  std::shared_ptr<FakeBehaviour> behaviour_;
};

class FakeClock final : public Clock {
 public:
  explicit FakeClock(SysClock::time_point now) : now_(now) {}
  SysClock::time_point Now() const override { return now_; }

 private:
  SysClock::time_point now_;
};

const SysClock::time_point kT0 = SysClock::time_point(std::chrono::seconds(1'700'000'000));

std::shared_ptr<spdlog::logger> NullLogger() {
  return std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_st>());
}

ScheduledCollector MakeScheduled(const std::shared_ptr<FakeBehaviour>& behaviour,
                                 milliseconds interval = milliseconds(20),
                                 std::string name = "fake") {
  return ScheduledCollector{std::move(name), interval,
                            std::make_unique<FakeCollector>(behaviour), NullLogger()};
}

// Polls `condition` every few milliseconds for up to `limit`.
template <typename F>
bool WaitFor(F condition, milliseconds limit = milliseconds(2000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return condition();
}

const prometheus::MetricFamily* FindFamily(const std::vector<prometheus::MetricFamily>& families,
                                           std::string_view name) {
  for (const auto& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

double Value(const prometheus::MetricFamily& family, std::string_view collector);

// ---------------------------------------------------------------- CollectOnce

TEST(CollectOnceTest, classifies_outcomes) {
  struct Case {
    std::string_view what;
    Status status;
  };
  const Case cases[] = {
      {"ok", Status::Ok()},
      {"no data", Status(StatusCode::kNoData, "no devices")},
      {"error", Status(StatusCode::kPermissionDenied, "open /sys/x: Permission denied", 13)},
  };
  const FakeClock clock(kT0);
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.what));
    auto behaviour = std::make_shared<FakeBehaviour>();
    behaviour->Set(c.status);
    ScheduledCollector collector = MakeScheduled(behaviour);
    CollectionOutcome outcome = CollectOnce(collector, clock);
    EXPECT_EQ(behaviour->calls.load(), 1);
    EXPECT_EQ(outcome.run.status, c.status);
    EXPECT_EQ(outcome.run.time, kT0);
    EXPECT_GE(outcome.run.duration_seconds, 0);
    EXPECT_EQ(outcome.run.partial_errors, 0u);
    EXPECT_EQ(outcome.run.series, 1u);
    ASSERT_NE(outcome.snapshot, nullptr);
    EXPECT_EQ(outcome.snapshot->collector, "fake");
    EXPECT_EQ(outcome.snapshot->time, kT0);
    ASSERT_EQ(outcome.snapshot->families.size(), 1u);
    EXPECT_EQ(outcome.snapshot->families[0].name, "fake_value");
    EXPECT_TRUE(outcome.errors.empty());
  }
}

TEST(CollectOnceTest, counts_partial_errors) {
  auto behaviour = std::make_shared<FakeBehaviour>();
  behaviour->partial_errors = 3;
  ScheduledCollector collector = MakeScheduled(behaviour);
  CollectionOutcome outcome = CollectOnce(collector, FakeClock(kT0));
  EXPECT_TRUE(outcome.run.status.ok());
  EXPECT_EQ(outcome.run.partial_errors, 3u);
  ASSERT_EQ(outcome.errors.size(), 3u);
  EXPECT_EQ(outcome.errors[0].message(), "device 0");
  EXPECT_EQ(outcome.errors[2].message(), "device 2");
  EXPECT_EQ(outcome.run.series, 1u);
}

TEST(CollectOnceTest, exception_becomes_internal_error) {
  auto behaviour = std::make_shared<FakeBehaviour>();
  behaviour->throw_exception = true;
  ScheduledCollector collector = MakeScheduled(behaviour);
  CollectionOutcome outcome;
  ASSERT_NO_THROW(outcome = CollectOnce(collector, FakeClock(kT0)));
  EXPECT_EQ(outcome.run.status.code(), StatusCode::kInternal);
  EXPECT_NE(outcome.run.status.message().find("boom"), std::string::npos)
      << outcome.run.status.message();
  ASSERT_NE(outcome.snapshot, nullptr);
  EXPECT_TRUE(outcome.snapshot->families.empty());
  EXPECT_EQ(outcome.run.series, 0u);
}

TEST(CollectOnceTest, non_standard_exception_becomes_internal_error) {
  auto behaviour = std::make_shared<FakeBehaviour>();
  behaviour->throw_non_standard = true;
  ScheduledCollector collector = MakeScheduled(behaviour);
  CollectionOutcome outcome;
  ASSERT_NO_THROW(outcome = CollectOnce(collector, FakeClock(kT0)));
  EXPECT_EQ(outcome.run.status.code(), StatusCode::kInternal);
}

TEST(CollectOnceTest, buffers_reuse_a_snapshot_only_once_nobody_else_holds_it) {
  auto behaviour = std::make_shared<FakeBehaviour>();
  ScheduledCollector collector = MakeScheduled(behaviour);
  const FakeClock clock(kT0);
  CollectionBuffers buffers;
  const auto value_of = [](const Snapshot& snapshot) {
    return snapshot.families.at(0).metric.at(0).gauge.value;
  };
  // Snapshots still read (the store, a scrape, the detector engine): each collection needs a
  // new one, and none of those being read changes.
  std::vector<std::shared_ptr<const Snapshot>> readers;
  for (int i = 1; i <= 3; ++i) {
    readers.push_back(CollectOnce(collector, clock, &buffers).snapshot);
  }
  for (size_t i = 0; i < readers.size(); ++i) EXPECT_DOUBLE_EQ(value_of(*readers[i]), i + 1.0);
  EXPECT_NE(readers[0], readers[1]);
  EXPECT_NE(readers[1], readers[2]);

  // The buffers keep the last two; once the older of them is let go, the next collection is
  // written into it, in place.
  const Snapshot* released = readers[1].get();
  const void* series_storage = readers[1]->families[0].metric.data();
  readers.erase(readers.begin() + 1);
  CollectionOutcome outcome = CollectOnce(collector, clock, &buffers);
  EXPECT_EQ(outcome.snapshot.get(), released);
  EXPECT_EQ(outcome.snapshot->families[0].metric.data(), series_storage);
  EXPECT_DOUBLE_EQ(value_of(*outcome.snapshot), 4);
  EXPECT_EQ(outcome.snapshot->collector, "fake");
  EXPECT_DOUBLE_EQ(value_of(*readers[0]), 1);
  EXPECT_DOUBLE_EQ(value_of(*readers[1]), 3);

  // Nobody else holds any: the collections alternate between the two kept snapshots.
  readers.clear();
  const Snapshot* previous = outcome.snapshot.get();
  outcome = {};
  const Snapshot* a = CollectOnce(collector, clock, &buffers).snapshot.get();
  const Snapshot* b = CollectOnce(collector, clock, &buffers).snapshot.get();
  EXPECT_NE(a, previous);
  EXPECT_EQ(b, previous);
}

// ---------------------------------------------------------------- Scheduler

TEST(SchedulerTest, runs_collectors_repeatedly_and_publishes) {
  auto behaviour = std::make_shared<FakeBehaviour>();
  std::vector<ScheduledCollector> collectors;
  collectors.push_back(MakeScheduled(behaviour));
  SnapshotStore store;
  SelfMetrics self_metrics({{"fake", milliseconds(20)}});
  const FakeClock clock(kT0);
  Scheduler scheduler(std::move(collectors), store, self_metrics, clock);
  scheduler.Start();
  ASSERT_TRUE(WaitFor([&] { return behaviour->calls.load() >= 3; }))
      << "calls: " << behaviour->calls.load();
  ASSERT_TRUE(WaitFor([&] { return self_metrics.Collectors().at("fake").has_run; }));
  scheduler.Stop();

  auto latest = store.Latest("fake");
  ASSERT_NE(latest, nullptr);
  EXPECT_EQ(latest->time, kT0);
  const auto* family = FindFamily(latest->families, "fake_value");
  ASSERT_NE(family, nullptr);
  ASSERT_EQ(family->metric.size(), 1u);
  EXPECT_GE(family->metric[0].gauge.value, 1);

  const CollectorHealth health = self_metrics.Collectors().at("fake");
  EXPECT_TRUE(health.success);
  EXPECT_EQ(health.errors_total, 0u);
  EXPECT_EQ(health.series, 1u);
  EXPECT_DOUBLE_EQ(health.last_sample_timestamp, 1'700'000'000.0);
}

TEST(SchedulerTest, stop_ends_collection) {
  auto behaviour = std::make_shared<FakeBehaviour>();
  auto other = std::make_shared<FakeBehaviour>();
  std::vector<ScheduledCollector> collectors;
  collectors.push_back(MakeScheduled(behaviour, milliseconds(20), "fake"));
  collectors.push_back(MakeScheduled(other, milliseconds(10), "other"));
  SnapshotStore store;
  SelfMetrics self_metrics({{"fake", milliseconds(20)}, {"other", milliseconds(10)}});
  const FakeClock clock(kT0);
  Scheduler scheduler(std::move(collectors), store, self_metrics, clock);
  scheduler.Start();
  ASSERT_TRUE(WaitFor([&] { return behaviour->calls.load() >= 1 && other->calls.load() >= 1; }));
  scheduler.Stop();
  const int calls = behaviour->calls.load();
  const int other_calls = other->calls.load();
  std::this_thread::sleep_for(milliseconds(60));  // several intervals
  EXPECT_EQ(behaviour->calls.load(), calls);
  EXPECT_EQ(other->calls.load(), other_calls);
  EXPECT_NE(store.Latest("other"), nullptr);
  scheduler.Stop();  // idempotent
}

TEST(SchedulerTest, failing_collector_publishes_empty_snapshot_and_counts_errors) {
  auto behaviour = std::make_shared<FakeBehaviour>();
  behaviour->Set(Status(StatusCode::kUnavailable, "device busy"));
  behaviour->add_sample = false;
  std::vector<ScheduledCollector> collectors;
  collectors.push_back(MakeScheduled(behaviour));
  SnapshotStore store;
  SelfMetrics self_metrics({{"fake", milliseconds(20)}});
  const FakeClock clock(kT0);
  Scheduler scheduler(std::move(collectors), store, self_metrics, clock);
  scheduler.Start();
  ASSERT_TRUE(WaitFor([&] { return self_metrics.Collectors().at("fake").errors_total >= 2; }));
  scheduler.Stop();
  const CollectorHealth health = self_metrics.Collectors().at("fake");
  EXPECT_FALSE(health.success);
  EXPECT_EQ(health.last_status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(health.errors_total, static_cast<uint64_t>(behaviour->calls.load()));
  auto latest = store.Latest("fake");
  ASSERT_NE(latest, nullptr);
  EXPECT_TRUE(latest->families.empty());
}

TEST(SchedulerTest, throwing_collector_keeps_running) {
  auto behaviour = std::make_shared<FakeBehaviour>();
  behaviour->throw_exception = true;
  std::vector<ScheduledCollector> collectors;
  collectors.push_back(MakeScheduled(behaviour));
  SnapshotStore store;
  SelfMetrics self_metrics({{"fake", milliseconds(20)}});
  const FakeClock clock(kT0);
  Scheduler scheduler(std::move(collectors), store, self_metrics, clock);
  scheduler.Start();
  ASSERT_TRUE(WaitFor([&] { return behaviour->calls.load() >= 2; }));
  scheduler.Stop();
  const CollectorHealth health = self_metrics.Collectors().at("fake");
  EXPECT_FALSE(health.success);
  EXPECT_EQ(health.last_status.code(), StatusCode::kInternal);
  EXPECT_GE(health.errors_total, 1u);
}

TEST(SchedulerTest, destructor_stops_threads) {
  auto behaviour = std::make_shared<FakeBehaviour>();
  SnapshotStore store;
  SelfMetrics self_metrics({{"fake", milliseconds(20)}});
  const FakeClock clock(kT0);
  {
    std::vector<ScheduledCollector> collectors;
    collectors.push_back(MakeScheduled(behaviour));
    Scheduler scheduler(std::move(collectors), store, self_metrics, clock);
    scheduler.Start();
    ASSERT_TRUE(WaitFor([&] { return behaviour->calls.load() >= 1; }));
  }
  const int calls = behaviour->calls.load();
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(behaviour->calls.load(), calls);
}

TEST(SchedulerTest, stuck_collection_is_reported_stale_and_stop_returns_within_its_budget) {
  // The collector blocks in its first collection, as one reading a FIFO did before opens were
  // made non-blocking (issue 19): nothing the scheduler does can wake it.
  auto behaviour = std::make_shared<FakeBehaviour>();
  behaviour->block = true;
  auto other = std::make_shared<FakeBehaviour>();
  std::vector<ScheduledCollector> collectors;
  collectors.push_back(MakeScheduled(behaviour, milliseconds(10), "stuck"));
  // Long enough that a loaded machine never makes its microsecond collection look stuck.
  collectors.push_back(MakeScheduled(other, milliseconds(60'000), "other"));
  SnapshotStore store;
  SelfMetrics self_metrics({{"stuck", milliseconds(10)}, {"other", milliseconds(60'000)}});
  const FakeClock clock(kT0);
  Scheduler scheduler(std::move(collectors), store, self_metrics, clock);
  scheduler.Start();

  // Stale and failing once it has run for more than kStaleIntervals intervals; the other
  // collector is not.
  ASSERT_TRUE(WaitFor([&] { return self_metrics.Collectors().at("stuck").stale; }));
  ASSERT_TRUE(WaitFor([&] { return self_metrics.Collectors().at("other").has_run; }));
  const CollectorHealth stuck = self_metrics.Collectors().at("stuck");
  EXPECT_TRUE(behaviour->blocking.load());
  EXPECT_FALSE(stuck.success);
  EXPECT_EQ(stuck.last_status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(stuck.last_status.message().find("stale"), std::string::npos)
      << stuck.last_status.message();
  const CollectorHealth healthy = self_metrics.Collectors().at("other");
  EXPECT_FALSE(healthy.stale);
  EXPECT_TRUE(healthy.success);
  const auto families = self_metrics.Collect();
  const auto* stale = FindFamily(families, "fabricwatch_collector_stale");
  ASSERT_NE(stale, nullptr);
  EXPECT_EQ(Value(*stale, "stuck"), 1);
  EXPECT_EQ(Value(*stale, "other"), 0);
  const auto* success = FindFamily(families, "fabricwatch_collector_success");
  ASSERT_NE(success, nullptr);
  EXPECT_EQ(Value(*success, "stuck"), 0);

  // Stop gives up on the stuck thread after its budget (the test would hang, not fail, if it
  // joined it) and says so; the other collector has stopped.
  EXPECT_FALSE(scheduler.Stop(milliseconds(50)));
  const int other_calls = other->calls.load();

  // Released, the collection ends; a second Stop() waits for it, and the collector is fresh.
  behaviour->Release();
  EXPECT_TRUE(scheduler.Stop());
  EXPECT_EQ(other->calls.load(), other_calls);
  const CollectorHealth after = self_metrics.Collectors().at("stuck");
  EXPECT_FALSE(after.stale);
  EXPECT_TRUE(after.success);
  EXPECT_EQ(behaviour->calls.load(), 1);
}

TEST(SchedulerTest, stop_within_budget_returns_true) {
  auto behaviour = std::make_shared<FakeBehaviour>();
  std::vector<ScheduledCollector> collectors;
  collectors.push_back(MakeScheduled(behaviour));
  SnapshotStore store;
  SelfMetrics self_metrics({{"fake", milliseconds(20)}});
  const FakeClock clock(kT0);
  Scheduler scheduler(std::move(collectors), store, self_metrics, clock);
  scheduler.Start();
  ASSERT_TRUE(WaitFor([&] { return behaviour->calls.load() >= 1; }));
  // A generous budget: the threads only wait on their stop token.
  EXPECT_TRUE(scheduler.Stop(milliseconds(10'000)));
  EXPECT_TRUE(scheduler.Stop(milliseconds(0)));  // nothing left to stop
}

// ---------------------------------------------------------------- SelfMetrics

CollectorRun MakeRun(Status status, SysClock::time_point time, size_t partial_errors = 0,
                 size_t series = 0) {
  CollectorRun run;
  run.status = std::move(status);
  run.time = time;
  run.duration_seconds = 0.25;
  run.partial_errors = partial_errors;
  run.series = series;
  return run;
}

TEST(SelfMetricsTest, record_run_updates_health) {
  SelfMetrics self({{"netdev", milliseconds(1000)}});
  {
    const CollectorHealth h = self.Collectors().at("netdev");
    EXPECT_FALSE(h.has_run);
    EXPECT_FALSE(h.success);
    EXPECT_EQ(h.interval, milliseconds(1000));
    EXPECT_EQ(h.errors_total, 0u);
    EXPECT_EQ(h.last_sample_timestamp, 0);
  }
  struct Step {
    std::string_view what;
    CollectorRun run;
    bool success;
    uint64_t errors_total;
  };
  const Step steps[] = {
      {"ok", MakeRun(Status::Ok(), kT0, 0, 12), true, 0},
      {"failure", MakeRun(Status(StatusCode::kUnavailable, "busy"), kT0 + std::chrono::seconds(1)),
       false, 1},
      {"no data", MakeRun(Status(StatusCode::kNoData, "absent"), kT0 + std::chrono::seconds(2)),
       false, 1},
      {"ok with partial errors", MakeRun(Status::Ok(), kT0 + std::chrono::seconds(3), 2, 10), true,
       3},
      {"failure with partial errors",
       MakeRun(Status(StatusCode::kInternal, "x"), kT0 + std::chrono::seconds(4), 1), false, 5},
  };
  for (const Step& step : steps) {
    SCOPED_TRACE(std::string(step.what));
    self.RecordRun("netdev", step.run);
    const CollectorHealth h = self.Collectors().at("netdev");
    EXPECT_TRUE(h.has_run);
    EXPECT_EQ(h.success, step.success);
    EXPECT_EQ(h.errors_total, step.errors_total);
    EXPECT_EQ(h.last_status, step.run.status);
    EXPECT_DOUBLE_EQ(h.duration_seconds, 0.25);
    EXPECT_EQ(h.series, step.run.series);
    EXPECT_DOUBLE_EQ(h.last_sample_timestamp,
                     std::chrono::duration<double>(step.run.time.time_since_epoch()).count());
    EXPECT_EQ(h.interval, milliseconds(1000));  // unchanged by runs
  }
}

TEST(SelfMetricsTest, a_collection_running_past_its_stale_bound_is_stale_until_it_ends) {
  SelfMetrics self({{"optics", milliseconds(1000)}});
  self.RecordRun("optics", MakeRun(Status::Ok(), kT0, 0, 4));
  // Started kStaleIntervals intervals and more ago, still running.
  self.RecordStart("optics",
                   std::chrono::steady_clock::now() - (kStaleIntervals + 1) * milliseconds(1000));
  CollectorHealth h = self.Collectors().at("optics");
  EXPECT_TRUE(h.stale);
  EXPECT_FALSE(h.success);
  EXPECT_EQ(h.last_status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(h.last_status.message().find("more than 3 intervals"), std::string::npos)
      << h.last_status.message();
  EXPECT_EQ(h.series, 4u);  // what is served is still the last snapshot
  EXPECT_EQ(h.errors_total, 0u);

  // It ends: fresh again.
  self.RecordRun("optics", MakeRun(Status::Ok(), kT0 + std::chrono::seconds(5), 0, 4));
  h = self.Collectors().at("optics");
  EXPECT_FALSE(h.stale);
  EXPECT_TRUE(h.success);

  // A collection that started just now is running, not stale.
  self.RecordStart("optics", std::chrono::steady_clock::now());
  h = self.Collectors().at("optics");
  EXPECT_FALSE(h.stale);
  EXPECT_TRUE(h.success);
}

double Value(const prometheus::MetricFamily& family, std::string_view collector) {
  for (const auto& metric : family.metric) {
    for (const auto& label : metric.label) {
      if (label.name == "collector" && label.value == collector) {
        return family.type == prometheus::MetricType::Counter ? metric.counter.value
                                                              : metric.gauge.value;
      }
    }
  }
  ADD_FAILURE() << "no sample for collector " << collector << " in " << family.name;
  return -1;
}

TEST(SelfMetricsTest, collect_preinitialises_collectors_that_never_ran) {
  SelfMetrics self({{"netdev", milliseconds(1000)}, {"infiniband", milliseconds(250)}});
  self.RecordRun("netdev", MakeRun(Status::Ok(), kT0, 1, 7));
  const auto families = self.Collect();

  const auto* build = FindFamily(families, "fabricwatch_build_info");
  ASSERT_NE(build, nullptr);
  EXPECT_EQ(build->type, prometheus::MetricType::Gauge);
  ASSERT_EQ(build->metric.size(), 1u);
  EXPECT_EQ(build->metric[0].gauge.value, 1);
  ASSERT_EQ(build->metric[0].label.size(), 3u);
  EXPECT_EQ(build->metric[0].label[0].name, "version");
  EXPECT_EQ(build->metric[0].label[1].name, "revision");
  EXPECT_EQ(build->metric[0].label[2].name, "compiler");

  struct Expectation {
    std::string_view family;
    prometheus::MetricType type;
    double netdev;
    double infiniband;
  };
  const Expectation expectations[] = {
      {"fabricwatch_collector_success", prometheus::MetricType::Gauge, 1, 0},
      {"fabricwatch_collector_errors_total", prometheus::MetricType::Counter, 1, 0},
      {"fabricwatch_collector_last_sample_timestamp_seconds", prometheus::MetricType::Gauge,
       1'700'000'000.0, 0},
      {"fabricwatch_collector_interval_seconds", prometheus::MetricType::Gauge, 1, 0.25},
      {"fabricwatch_collector_series", prometheus::MetricType::Gauge, 7, 0},
      {"fabricwatch_collector_duration_seconds", prometheus::MetricType::Gauge, 0.25, 0},
  };
  for (const Expectation& e : expectations) {
    SCOPED_TRACE(std::string(e.family));
    const auto* family = FindFamily(families, e.family);
    ASSERT_NE(family, nullptr);
    EXPECT_EQ(family->type, e.type);
    EXPECT_EQ(family->metric.size(), 2u);
    EXPECT_DOUBLE_EQ(Value(*family, "netdev"), e.netdev);
    EXPECT_DOUBLE_EQ(Value(*family, "infiniband"), e.infiniband);
  }

  for (std::string_view name : {"process_cpu_seconds_total", "process_resident_memory_bytes",
                                "process_virtual_memory_bytes", "process_open_fds",
                                "process_max_fds", "process_start_time_seconds"}) {
    SCOPED_TRACE(std::string(name));
    const auto* family = FindFamily(families, name);
    ASSERT_NE(family, nullptr);
    ASSERT_EQ(family->metric.size(), 1u);
    EXPECT_TRUE(family->metric[0].label.empty());
  }
  const auto* rss = FindFamily(families, "process_resident_memory_bytes");
  ASSERT_NE(rss, nullptr);
  EXPECT_GT(rss->metric[0].gauge.value, 0);
}

TEST(SelfMetricsTest, self_metric_descs_are_valid) {
  const auto descs = SelfMetricDescs();
  ASSERT_FALSE(descs.empty());
  for (const MetricDesc& desc : descs) {
    SCOPED_TRACE(std::string(desc.name));
    const Status status = ValidateDesc(desc);
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
}

TEST(ReadProcessStatsTest, plausible_values) {
  auto stats = ReadProcessStats();
  ASSERT_TRUE(stats.has_value()) << stats.error().ToString();
  EXPECT_GT(stats->resident_bytes, 0);
  EXPECT_GT(stats->virtual_bytes, stats->resident_bytes);
  EXPECT_GE(stats->open_fds, 3);  // stdin, stdout, stderr
  EXPECT_GE(stats->max_fds, stats->open_fds);
  EXPECT_GE(stats->cpu_seconds, 0);
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(stats->start_time_seconds, now + 1);
  EXPECT_GT(stats->start_time_seconds, now - 86400);
}

}  // namespace
}  // namespace fabricwatch::exporter
