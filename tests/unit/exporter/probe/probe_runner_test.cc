// The agent's probe runner (issue 37 part 3): its policy as a pure function (disabled, jobs on
// the device, the per-port min_interval cache), the expected rate, and the runner's one thread
// with a fake prober: one probe at a time, answers, metrics. No timing assertions: the fake holds
// a probe until the test releases it.
#include "exporter/probe/probe_runner.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "exporter/logging.h"
#include "tests/testing/fake_port_prober.h"
#include "tests/unit/exporter/remediation/hook_test_support.h"

namespace fabricwatch::probe {
namespace {

using exporter::hook_testing::FakeClock;
using exporter::hook_testing::kT0;
using std::chrono::minutes;
using std::chrono::seconds;
using testing::FakePortProber;
using testing::OkMeasurement;

const PortRef kPort{"mlx5_0", 1};

ProbeConfig Enabled() {
  ProbeConfig config;
  config.enabled = true;
  config.min_interval = std::chrono::seconds(600);
  return config;
}

ProbeReport Measured(ProbeTime time) {
  ProbeReport report;
  report.port = kPort;
  report.measurement = OkMeasurement(40e9);
  report.verdict = ProbeVerdict::kHealthy;
  report.time = time;
  return report;
}

// ---------------------------------------------------------------------------------------------
// DecideProbe

TEST(ProbePolicyTest, DisabledRefuses) {
  ProbeConfig config;  // the default: off
  const ProbeDecision d = DecideProbe(config, kPort, kT0, nullptr, std::nullopt);
  EXPECT_EQ(d.action, ProbeAction::kRefuse);
  EXPECT_EQ(d.refused, "disabled");
  EXPECT_NE(d.detail.find("mlx5_0/1"), std::string::npos) << d.detail;
}

TEST(ProbePolicyTest, JobsOnTheDeviceRefuseUnlessAllowed) {
  ProbeConfig config = Enabled();
  const std::optional<std::vector<std::string>> jobs = std::vector<std::string>{"slurm:1234"};
  ProbeDecision d = DecideProbe(config, kPort, kT0, nullptr, jobs);
  EXPECT_EQ(d.action, ProbeAction::kRefuse);
  EXPECT_EQ(d.refused, "jobs_running");
  EXPECT_NE(d.detail.find("slurm:1234"), std::string::npos) << d.detail;
  // No job, or the jobs collector has not said: nobody is known to be hurt.
  EXPECT_EQ(DecideProbe(config, kPort, kT0, nullptr, std::vector<std::string>{}).action,
            ProbeAction::kMeasure);
  EXPECT_EQ(DecideProbe(config, kPort, kT0, nullptr, std::nullopt).action, ProbeAction::kMeasure);
  config.allow_with_jobs = true;
  EXPECT_EQ(DecideProbe(config, kPort, kT0, nullptr, jobs).action, ProbeAction::kMeasure);
}

TEST(ProbePolicyTest, InsideMinIntervalTheLastResultAnswers) {
  const ProbeConfig config = Enabled();
  const ProbeReport last = Measured(kT0);
  EXPECT_EQ(DecideProbe(config, kPort, kT0 + minutes(9), &last, std::nullopt).action,
            ProbeAction::kCached);
  // Even while jobs run now: a cached answer moves no traffic.
  EXPECT_EQ(DecideProbe(config, kPort, kT0 + minutes(9), &last, std::vector<std::string>{"slurm:1"})
                .action,
            ProbeAction::kCached);
  EXPECT_EQ(DecideProbe(config, kPort, kT0 + minutes(10), &last, std::nullopt).action,
            ProbeAction::kMeasure);
  // A refusal is no result: it never answers a later request.
  ProbeReport refused = last;
  refused.refused = "jobs_running";
  EXPECT_EQ(DecideProbe(config, kPort, kT0 + minutes(1), &refused, std::nullopt).action,
            ProbeAction::kMeasure);
}

// Second review of issue 37: an unavailable result (another probe held the lock, a set-up or
// spawn error, no result) is never reused: the next request measures.
TEST(ProbePolicyTest, AnUnavailableResultIsNeverReused) {
  const ProbeConfig config = Enabled();
  ProbeReport unavailable = Measured(kT0);
  unavailable.measurement = testing::FailedMeasurement(ProbeOutcome::kSetupError, "locked");
  unavailable.verdict = ProbeVerdict::kUnavailable;
  EXPECT_EQ(DecideProbe(config, kPort, kT0 + minutes(1), &unavailable, std::nullopt).action,
            ProbeAction::kMeasure);
  for (ProbeVerdict verdict :
       {ProbeVerdict::kHealthy, ProbeVerdict::kDegraded, ProbeVerdict::kFailed}) {
    ProbeReport usable = Measured(kT0);
    usable.verdict = verdict;
    EXPECT_EQ(DecideProbe(config, kPort, kT0 + minutes(1), &usable, std::nullopt).action,
              ProbeAction::kCached);
  }
}

TEST(ProbePolicyTest, ExpectedRateIsTheShapeElseTheReportedRate) {
  EXPECT_DOUBLE_EQ(ExpectedProbeRate(400.0, 25e9), 400e9);         // manifest or learned: 400 Gb/s
  EXPECT_DOUBLE_EQ(ExpectedProbeRate(std::nullopt, 25e9), 200e9);  // reported 200 Gb/s
  EXPECT_DOUBLE_EQ(ExpectedProbeRate(0.0, 25e9), 200e9);
  EXPECT_DOUBLE_EQ(ExpectedProbeRate(std::nullopt, std::nullopt), 0);
}

TEST(ProbePolicyTest, PortText) {
  EXPECT_EQ(ParsePortText("mlx5_0/1"), (PortRef{"mlx5_0", 1}));
  EXPECT_EQ(PortText({"mlx5_1", 2}), "mlx5_1/2");
  for (const char* bad :
       {"mlx5_0", "mlx5_0/", "/1", "mlx5_0/0", "mlx5_0/256", "mlx5_0/1x", "mlx 5/1", "mlx5_0/-1"}) {
    EXPECT_FALSE(ParsePortText(bad)) << bad;
  }
}

TEST(ProbePolicyTest, EvidenceCarriesTheValuesWhenDataMoved) {
  ProbeReport report = Measured(kT0);
  report.verdict = ProbeVerdict::kDegraded;
  std::map<std::string, double> evidence;
  for (const ProbeEvidenceValue& e : ProbeEvidence(report)) evidence[std::string(e.name)] = e.value;
  EXPECT_DOUBLE_EQ(evidence["probe_bandwidth_bytes_per_second"], 40e9);
  EXPECT_DOUBLE_EQ(evidence["probe_latency_seconds"], 2.5e-6);
  EXPECT_DOUBLE_EQ(evidence["probe_verdict"], 1);
  report.measurement = testing::FailedMeasurement(ProbeOutcome::kPortDown, "port down");
  report.verdict = ProbeVerdict::kFailed;
  ASSERT_EQ(ProbeEvidence(report).size(), 1u);
  EXPECT_DOUBLE_EQ(ProbeEvidence(report)[0].value, 2);
}

// ---------------------------------------------------------------------------------------------
// ProbeRunner

class ProbeRunnerTest : public ::testing::Test {
 protected:
  std::unique_ptr<ProbeRunner> Make(ProbeConfig config, JobsOnDevice jobs = {},
                                    ExpectedRate rate = {}) {
    return std::make_unique<ProbeRunner>(std::move(config), std::make_unique<FakePortProber>(fake_),
                                         clock_, exporter::GetLogger("probe"), std::move(jobs),
                                         std::move(rate));
  }
  // Requests and waits for the answer.
  ProbeReport Ask(ProbeRunner& runner, const PortRef& port) {
    std::optional<ProbeReport> got;
    runner.Request(port, "test", [&](const ProbeReport& r) { got = r; });
    EXPECT_TRUE(runner.WaitIdle(std::chrono::seconds(30)));
    EXPECT_TRUE(got);
    return got.value_or(ProbeReport{});
  }
  std::map<std::string, double> Exported(const ProbeRunner& runner) {
    MetricSink sink;
    runner.Export(sink);
    std::map<std::string, double> out;
    for (const auto& family : sink.TakeFamilies()) {
      for (const auto& metric : family.metric) {
        std::string key = family.name + "{";
        for (const auto& label : metric.label) key += label.name + "=" + label.value + ",";
        out[key + "}"] = family.type == prometheus::MetricType::Counter ? metric.counter.value
                                                                        : metric.gauge.value;
      }
    }
    return out;
  }

  std::shared_ptr<FakePortProber::State> fake_ = std::make_shared<FakePortProber::State>();
  FakeClock clock_;
};

TEST_F(ProbeRunnerTest, MeasuresClassifiesAndExports) {
  // Expected 400 Gb/s, half of it is the line: 150 Gb/s is degraded.
  auto runner = Make(Enabled(), {}, [](const PortRef&) { return 400e9; });
  runner->Start();
  fake_->Set(kPort, OkMeasurement(150e9 / 8));
  const ProbeReport report = Ask(*runner, kPort);
  EXPECT_TRUE(report.measured());
  EXPECT_FALSE(report.cached);
  EXPECT_EQ(report.verdict, ProbeVerdict::kDegraded);
  EXPECT_DOUBLE_EQ(report.expected_bits_per_second, 400e9);
  auto metrics = Exported(*runner);
  EXPECT_DOUBLE_EQ(metrics["fabricwatch_probe_bandwidth_bytes_per_second{device=mlx5_0,port=1,}"],
                   150e9 / 8);
  // Two gauges, no quantile label: "max" is no quantile (review of issue 37).
  EXPECT_DOUBLE_EQ(metrics["fabricwatch_probe_latency_seconds{device=mlx5_0,port=1,}"], 2.5e-6);
  EXPECT_DOUBLE_EQ(metrics["fabricwatch_probe_latency_max_seconds{device=mlx5_0,port=1,}"], 9e-6);
  for (const auto& [key, value] : metrics) EXPECT_EQ(key.find("quantile"), std::string::npos);
  EXPECT_DOUBLE_EQ(metrics["fabricwatch_probe_verdict{device=mlx5_0,port=1,verdict=degraded,}"], 1);
  EXPECT_DOUBLE_EQ(metrics["fabricwatch_probe_verdict{device=mlx5_0,port=1,verdict=healthy,}"], 0);
  EXPECT_DOUBLE_EQ(metrics["fabricwatch_probe_runs_total{result=ok,}"], 1);
  EXPECT_DOUBLE_EQ(metrics["fabricwatch_probe_refused_total{reason=jobs_running,}"], 0);
  EXPECT_EQ(metrics.count("fabricwatch_probe_last_timestamp_seconds{device=mlx5_0,port=1,}"), 1u);
}

TEST_F(ProbeRunnerTest, RateLimitAnswersFromTheLastResult) {
  auto runner = Make(Enabled());
  runner->Start();
  EXPECT_FALSE(Ask(*runner, kPort).cached);
  clock_.Set(kT0 + minutes(5));
  const ProbeReport again = Ask(*runner, kPort);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.verdict, ProbeVerdict::kHealthy);
  EXPECT_EQ(fake_->calls(), 1u);  // the port was probed once
  clock_.Set(kT0 + minutes(11));
  EXPECT_FALSE(Ask(*runner, kPort).cached);
  EXPECT_EQ(fake_->calls(), 2u);
  EXPECT_DOUBLE_EQ(Exported(*runner)["fabricwatch_probe_runs_total{result=cached,}"], 1);
}

TEST_F(ProbeRunnerTest, JobsOnTheDeviceRefuseAndAreCounted) {
  auto runner = Make(Enabled(), [](const std::string& device) {
    return std::optional<std::vector<std::string>>(
        device == "mlx5_0" ? std::vector<std::string>{"slurm:77"} : std::vector<std::string>{});
  });
  runner->Start();
  const ProbeReport refused = Ask(*runner, kPort);
  EXPECT_EQ(refused.refused, "jobs_running");
  EXPECT_EQ(fake_->calls(), 0u);
  EXPECT_TRUE(Ask(*runner, {"mlx5_1", 1}).measured());  // another device, no job
  EXPECT_DOUBLE_EQ(Exported(*runner)["fabricwatch_probe_refused_total{reason=jobs_running,}"], 1);
}

// The pair path's traffic crosses the partner's device: a job there refuses the probe too.
TEST_F(ProbeRunnerTest, JobsOnThePartnersDeviceRefuseThePairPath) {
  ProbeConfig config = Enabled();
  config.partners[kPort] = PortRef{"mlx5_1", 1};
  auto runner = Make(config, [](const std::string& device) {
    return std::optional<std::vector<std::string>>(
        device == "mlx5_1" ? std::vector<std::string>{"slurm:88"} : std::vector<std::string>{});
  });
  runner->Start();
  const ProbeReport refused = Ask(*runner, kPort);
  EXPECT_EQ(refused.refused, "jobs_running");
  EXPECT_NE(refused.detail.find("slurm:88"), std::string::npos) << refused.detail;
  EXPECT_NE(refused.detail.find("mlx5_0 or mlx5_1"), std::string::npos) << refused.detail;
  EXPECT_EQ(fake_->calls(), 0u);
  // mlx5_1/1 itself has no partner: loopback on mlx5_1, where the job runs: refused as well;
  // mlx5_2/1 (loopback, no job) is measured.
  EXPECT_EQ(Ask(*runner, {"mlx5_1", 1}).refused, "jobs_running");
  EXPECT_TRUE(Ask(*runner, {"mlx5_2", 1}).measured());
}

TEST_F(ProbeRunnerTest, DisabledRefuses) {
  auto runner = Make(ProbeConfig{});
  runner->Start();
  EXPECT_EQ(Ask(*runner, kPort).refused, "disabled");
  EXPECT_EQ(fake_->calls(), 0u);
}

TEST_F(ProbeRunnerTest, OneProbeAtATimeAndAWaitingPortIsProbedOnce) {
  ProbeConfig config = Enabled();
  config.partners[{"mlx5_2", 1}] = PortRef{"mlx5_3", 1};
  auto runner = Make(config);
  runner->Start();
  fake_->hold = true;
  std::mutex mutex;
  std::vector<std::string> answered;
  auto record = [&](const ProbeReport& r) {
    std::lock_guard lock(mutex);
    answered.push_back(PortText(r.port));
  };
  runner->Request(kPort, "first", record);
  ASSERT_TRUE(fake_->WaitStarted(1));
  // While mlx5_0/1 is measured, three more requests arrive: two for the same port.
  runner->Request({"mlx5_2", 1}, "second", record);
  runner->Request({"mlx5_2", 1}, "third", record);
  runner->Request({"mlx5_1", 1}, "fourth", record);
  EXPECT_EQ(fake_->calls(), 1u);
  fake_->Release();
  ASSERT_TRUE(runner->WaitIdle(std::chrono::seconds(30)));
  EXPECT_EQ(fake_->max_in_flight, 1);
  ASSERT_EQ(fake_->calls(), 3u);  // mlx5_2/1 once for both
  EXPECT_EQ(fake_->targets[1].port, (PortRef{"mlx5_2", 1}));
  EXPECT_EQ(fake_->targets[1].partner, (PortRef{"mlx5_3", 1}));  // the pair path
  EXPECT_FALSE(fake_->targets[0].partner);                       // loopback
  EXPECT_EQ(answered, (std::vector<std::string>{"mlx5_0/1", "mlx5_2/1", "mlx5_2/1", "mlx5_1/1"}));
}

TEST_F(ProbeRunnerTest, AnUnavailableResultIsMeasuredAgainNotCached) {
  auto runner = Make(Enabled());
  runner->Start();
  fake_->Set(kPort, testing::FailedMeasurement(ProbeOutcome::kSetupError, "another probe runs"));
  const ProbeReport first = Ask(*runner, kPort);
  EXPECT_EQ(first.verdict, ProbeVerdict::kUnavailable);
  ASSERT_TRUE(runner->Last(kPort));  // shown and exported all the same
  EXPECT_EQ(runner->Last(kPort)->verdict, ProbeVerdict::kUnavailable);
  clock_.Set(kT0 + minutes(1));
  fake_->Set(kPort, OkMeasurement(40e9));
  const ProbeReport second = Ask(*runner, kPort);
  EXPECT_FALSE(second.cached);
  EXPECT_EQ(second.verdict, ProbeVerdict::kHealthy);
  EXPECT_EQ(fake_->calls(), 2u);
  // A usable result is reused; a later unavailable one ends that reuse.
  clock_.Set(kT0 + minutes(2));
  EXPECT_TRUE(Ask(*runner, kPort).cached);
  EXPECT_DOUBLE_EQ(Exported(*runner)["fabricwatch_probe_runs_total{result=cached,}"], 1);
}

// A request's `started` callback runs when the runner takes its port from the queue, before the
// answer; Stop() answers what is still queued "stopped", once per request (second review).
TEST_F(ProbeRunnerTest, StartedIsCalledAtTheStartAndStopAnswersTheQueue) {
  auto runner = Make(Enabled());
  runner->Start();
  fake_->hold = true;
  std::mutex mutex;
  std::vector<std::string> events;
  auto answer = [&](std::string who) {
    return [&, who](const ProbeReport& r) {
      std::lock_guard lock(mutex);
      events.push_back(who + ":" + (r.refused.empty() ? "measured" : r.refused));
    };
  };
  auto started = [&](std::string who) {
    return [&, who] {
      std::lock_guard lock(mutex);
      events.push_back(who + ":started");
    };
  };
  runner->Request(kPort, "a", answer("a"), started("a"));
  ASSERT_TRUE(fake_->WaitStarted(1));
  runner->Request({"mlx5_1", 1}, "b", answer("b"), started("b"));
  runner->Request({"mlx5_1", 1}, "c", answer("c"), started("c"));  // joins b
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(events, std::vector<std::string>{"a:started"});
  }
  std::thread stopper([&] { runner->Stop(); });
  // Stop() takes the queue (and counts it) before it waits for the running probe.
  for (int i = 0; i < 1000; ++i) {
    if (Exported(*runner)["fabricwatch_probe_refused_total{reason=stopped,}"] == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_DOUBLE_EQ(Exported(*runner)["fabricwatch_probe_refused_total{reason=stopped,}"], 2);
  fake_->Release();
  stopper.join();
  std::lock_guard lock(mutex);
  EXPECT_EQ(events, (std::vector<std::string>{"a:started", "a:stopped", "b:stopped", "c:stopped"}));
  EXPECT_EQ(fake_->calls(), 1u);
}

TEST_F(ProbeRunnerTest, NotRunningRefusesAtOnce) {
  auto runner = Make(Enabled());  // never started
  std::optional<ProbeReport> got;
  runner->Request(kPort, "test", [&](const ProbeReport& r) { got = r; });
  ASSERT_TRUE(got);
  EXPECT_EQ(got->refused, "stopped");
}

}  // namespace
}  // namespace fabricwatch::probe
