// The detector engine end to end in-process: snapshots in, anomaly metrics and state out, and a
// restart in the middle of a PFC storm through the state file.
#include "exporter/pipeline/detector_engine.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "collectors/ethtool/ethtool_metrics.h"
#include "detectors/core/hysteresis.h"
#include "detectors/pfc_storm/pfc_storm.h"
#include "tests/testing/families.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::exporter {
namespace {

using std::chrono::seconds;

class FakeClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override { return now; }
  std::chrono::system_clock::duration WallOffset() const override { return offset; }
  std::chrono::system_clock::time_point now{seconds(1'700'000'000)};
  // The wall clock minus `now`: an AgentClock's measured steps (base/agent_clock.h).
  std::chrono::system_clock::duration offset{};
};

class DetectorEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("fw-engine-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<DetectorEngine> MakeEngine(const std::string& boot = "boot-1") {
    std::vector<std::unique_ptr<detect::Detector>> detectors;
    detectors.push_back(std::move(*detect::MakePfcStormDetector({})));
    return std::make_unique<DetectorEngine>(std::move(detectors), clock, nullptr,
                                            detect::StateFile((dir_ / "state.json").string(), boot),
                                            logger);
  }
  void Storm(DetectorEngine& engine, int seconds_of_storm) {
    for (int i = 0; i < seconds_of_storm; ++i) {
      clock.now += seconds(1);
      tx_pause += 1.0;
      testing::Families f;
      for (const char* dir : {"rx", "tx"}) {
        f.Counter(ethtool::kPfcPauseDuration,
                  {{"netdev", "eth0"}, {"priority", "3"}, {"direction", dir}},
                  dir[0] == 't' ? tx_pause : 0);
        f.Counter(ethtool::kPrioBytes, {{"netdev", "eth0"}, {"priority", "3"}, {"direction", dir}},
                  1000);
      }
      auto snapshot = std::make_shared<Snapshot>();
      snapshot->collector = "ethtool";
      snapshot->time = clock.now;
      snapshot->families = f.families();
      engine.Submit(snapshot);
      engine.RunOnce();
    }
  }
  std::string Text(const DetectorEngine& engine) { return testing::Exposition(engine.Collect()); }

  FakeClock clock;
  double tx_pause = 0;
  std::filesystem::path dir_;
  std::ostringstream log_text;
  std::shared_ptr<spdlog::logger> logger = std::make_shared<spdlog::logger>(
      "detectors", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text));
};

const char* kActive =
    "fabric_anomaly_active{detector=\"pfc_storm\",severity=\"critical\",netdev=\"eth0\","
    "priority=\"3\",role=\"source\"} 1";

TEST_F(DetectorEngineTest, holds_only_snapshots_a_detector_reads) {
  auto engine = MakeEngine();  // pfc_storm reads ethtool
  // kmsg: read by neither pfc_storm nor the node model (detectors/core/node_model.h).
  auto kmsg = std::make_shared<Snapshot>();
  kmsg->collector = "kmsg";
  engine->Submit(kmsg);
  EXPECT_EQ(kmsg.use_count(), 1) << "a snapshot no detector reads is not queued";
  auto ethtool = std::make_shared<Snapshot>();
  ethtool->collector = "ethtool";
  engine->Submit(ethtool);
  EXPECT_EQ(ethtool.use_count(), 2) << "queued for pfc_storm";
  engine->RunOnce();
  EXPECT_EQ(ethtool.use_count(), 1) << "released once processed";
}

TEST_F(DetectorEngineTest, restart_mid_storm_keeps_the_anomaly_and_its_start_time) {
  auto engine = MakeEngine();
  engine->LoadState();  // missing file: info only
  Storm(*engine, 5);
  std::string text = Text(*engine);
  ASSERT_NE(text.find(kActive), std::string::npos) << text;
  EXPECT_NE(text.find("fabric_pfc_pause_ratio{netdev=\"eth0\",priority=\"3\",direction=\"tx\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("fabricwatch_detector_evaluation_duration_seconds{detector=\"pfc_storm\"}"),
            std::string::npos);
  const auto started = engine->tracker().Active().at(0).started;
  engine->SaveState();
  engine.reset();

  clock.now += seconds(20);  // the agent was down for 20 s
  auto restarted = MakeEngine();
  restarted->LoadState();
  int raises = 0;
  restarted->tracker().Subscribe([&](const detect::AnomalyTransition& t) { raises += t.raised; });
  Storm(*restarted, 3);
  text = Text(*restarted);
  EXPECT_NE(text.find(kActive), std::string::npos) << text;
  ASSERT_EQ(restarted->tracker().Active().size(), 1u);
  EXPECT_EQ(restarted->tracker().Active()[0].started, started) << "start time survives";
  EXPECT_EQ(raises, 0) << "no second raise (no second hook run) after the restart";
  EXPECT_NE(text.find("fabricwatch_state_file_errors_total{operation=\"load\"} 0"),
            std::string::npos);
}

TEST_F(DetectorEngineTest, corrupt_state_file_is_ignored_with_a_warning) {
  std::ofstream(dir_ / "state.json") << "{\"format\": \"fabricwatch-st";
  auto engine = MakeEngine();
  engine->LoadState();
  logger->flush();
  EXPECT_NE(log_text.str().find("ignoring the state file"), std::string::npos) << log_text.str();
  EXPECT_NE(Text(*engine).find("fabricwatch_state_file_errors_total{operation=\"load\"} 1"),
            std::string::npos);
  Storm(*engine, 5);  // still works
  EXPECT_NE(Text(*engine).find(kActive), std::string::npos);
  engine->SaveState();
  EXPECT_TRUE(detect::StateFile((dir_ / "state.json").string(), "boot-1").Load())
      << "the next save replaces the corrupt file";
}

// A state file from the future (the clock stepped back, a file copied from another node): the
// storm and the anomaly it held are dropped, counted in fabricwatch_state_entries_dropped_total
// and logged, never restored as active (issue 19).
TEST_F(DetectorEngineTest, state_from_the_future_is_dropped_and_counted) {
  auto engine = MakeEngine();
  Storm(*engine, 5);
  ASSERT_EQ(engine->tracker().Active().size(), 1u);
  engine->SaveState();
  engine.reset();

  clock.now -= std::chrono::hours(1);  // the clock stepped back an hour
  auto restarted = MakeEngine();
  restarted->LoadState();
  logger->flush();
  EXPECT_TRUE(restarted->tracker().Active().empty()) << "an anomaly that started in the future";
  const std::string text = Text(*restarted);
  // The storm's start (pfc_storm) and the anomaly's start (tracker).
  EXPECT_NE(text.find("fabricwatch_state_entries_dropped_total{reason=\"future_timestamp\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fabricwatch_state_entries_dropped_total{reason=\"out_of_range\"} 0"),
            std::string::npos);
  EXPECT_NE(log_text.str().find("dropped 2 value(s) that cannot be true (future_timestamp=2)"),
            std::string::npos)
      << log_text.str();
  int raises = 0;
  restarted->tracker().Subscribe([&](const detect::AnomalyTransition& t) { raises += t.raised; });
  Storm(*restarted, 1);
  EXPECT_EQ(raises, 0) << "one sample of pause frames is no storm without the stored one";
}

const char* kStartedMetric =
    "fabric_anomaly_started_timestamp_seconds{detector=\"pfc_storm\",severity=\"critical\","
    "netdev=\"eth0\",priority=\"3\",role=\"source\"} ";

double StartedSeconds(const std::string& text) {
  const size_t at = text.find(kStartedMetric);
  return at == std::string::npos ? -1 : std::stod(text.substr(at + std::strlen(kStartedMetric)));
}

// Issue 39 item 7: the wall clock steps back an hour while a finding is active. Detection time
// (the clock's Now()) goes on; the engine logs and counts the step, and the started timestamp is
// shown in wall time.
TEST_F(DetectorEngineTest, a_wall_clock_step_is_logged_counted_and_rebases_the_start_shown) {
  auto engine = MakeEngine();
  Storm(*engine, 5);
  ASSERT_EQ(engine->tracker().Active().size(), 1u);
  const double started = detect::EpochSeconds(engine->tracker().Active()[0].started);
  EXPECT_DOUBLE_EQ(StartedSeconds(Text(*engine)), started);
  EXPECT_NE(Text(*engine).find("fabricwatch_clock_steps_total 0"), std::string::npos);

  clock.offset = -std::chrono::hours(1);
  Storm(*engine, 1);
  logger->flush();
  const std::string text = Text(*engine);
  EXPECT_NE(text.find(kActive), std::string::npos) << "the storm goes on";
  EXPECT_DOUBLE_EQ(StartedSeconds(text), started - 3600) << text;
  EXPECT_NE(text.find("fabricwatch_clock_steps_total 1"), std::string::npos) << text;
  EXPECT_NE(text.find("fabricwatch_clock_wall_offset_seconds -3600"), std::string::npos) << text;
  EXPECT_NE(log_text.str().find("the wall clock stepped back by 3600.000s"), std::string::npos)
      << log_text.str();
  Storm(*engine, 1);
  EXPECT_NE(Text(*engine).find("fabricwatch_clock_steps_total 1"), std::string::npos)
      << "counted once";
}

// The state saved after the step keeps the agent's times and the offset ("_clock"); the next
// agent, whose clock starts at the (now true) wall time, restores the anomaly at its true start
// instead of dropping it as "from the future".
TEST_F(DetectorEngineTest, state_saved_after_a_step_back_is_restored_in_wall_time) {
  auto engine = MakeEngine();
  Storm(*engine, 5);
  ASSERT_EQ(engine->tracker().Active().size(), 1u);
  const auto started = engine->tracker().Active()[0].started;
  clock.offset = -std::chrono::hours(1);
  Storm(*engine, 1);
  engine->SaveState();
  engine.reset();
  auto saved = detect::StateFile((dir_ / "state.json").string(), "boot-1").Load();
  ASSERT_TRUE(saved);
  EXPECT_EQ(saved->saved, clock.now - std::chrono::hours(1)) << "`saved` is wall time";
  EXPECT_EQ(saved->detectors.at("_clock").at("wall_offset_seconds").get<double>(), -3600);

  clock.now -= std::chrono::hours(1);  // a new agent starts on the true wall clock
  clock.offset = {};
  auto restarted = MakeEngine();
  restarted->LoadState();
  ASSERT_EQ(restarted->tracker().Active().size(), 1u) << Text(*restarted);
  EXPECT_EQ(restarted->tracker().Active()[0].started, started - std::chrono::hours(1));
  EXPECT_NE(Text(*restarted)
                .find("fabricwatch_state_entries_dropped_total{reason=\"future_timestamp\"} 0"),
            std::string::npos);
  int raises = 0;
  restarted->tracker().Subscribe([&](const detect::AnomalyTransition& t) { raises += t.raised; });
  Storm(*restarted, 1);
  EXPECT_EQ(raises, 0) << "the storm's history came back with it";
}

}  // namespace
}  // namespace fabricwatch::exporter

namespace fabricwatch::exporter {
namespace {

// EngineOptions::annotate (issue 37): what the agent knows of a finding's port from outside the
// snapshots (the active probe's last result) joins the finding after attribution, every
// evaluation.
TEST_F(DetectorEngineTest, annotate_adds_to_every_finding) {
  std::vector<std::unique_ptr<detect::Detector>> detectors;
  detectors.push_back(std::move(*detect::MakePfcStormDetector({})));
  EngineOptions options;
  int calls = 0;
  options.annotate = [&calls](detect::Finding& finding) {
    ++calls;
    finding.evidence.push_back({"probe_verdict", 1});
  };
  DetectorEngine engine(std::move(detectors), clock, nullptr, std::nullopt, logger, options);
  Storm(engine, 5);
  ASSERT_EQ(engine.tracker().Active().size(), 1u);
  const auto& evidence = engine.tracker().Active()[0].finding.evidence;
  EXPECT_TRUE(std::any_of(evidence.begin(), evidence.end(),
                          [](const detect::Evidence& e) { return e.name == "probe_verdict"; }));
  EXPECT_GT(calls, 0);
}

}  // namespace
}  // namespace fabricwatch::exporter
