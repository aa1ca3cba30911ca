// Hysteresis helpers, option parsing, the registry and the anomaly tracker.
#include <gtest/gtest.h>

#include <limits>
#include <prometheus/text_serializer.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <tuple>

#include "detectors/core/anomaly_tracker.h"
#include "detectors/core/hysteresis.h"
#include "detectors/core/options.h"
#include "detectors/registry.h"
#include "detectors/core/state_check.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
const TimePoint kT0 = TimePoint(seconds(1'700'000'000));

TEST(HoldDownTest, raises_after_hold_and_clears_after_restoration) {
  HoldDown hold(seconds(3), seconds(10));
  EXPECT_FALSE(hold.Update(true, false, kT0, kT0 + seconds(1)));
  EXPECT_FALSE(hold.Update(true, false, kT0 + seconds(1), kT0 + seconds(2)));
  EXPECT_TRUE(hold.Update(true, false, kT0 + seconds(2), kT0 + seconds(3)));
  // A sample in the hysteresis band neither clears nor continues a streak.
  EXPECT_TRUE(hold.Update(false, false, kT0 + seconds(3), kT0 + seconds(4)));
  for (int i = 4; i < 13; ++i) {
    EXPECT_TRUE(hold.Update(false, true, kT0 + seconds(i), kT0 + seconds(i + 1))) << i;
  }
  EXPECT_FALSE(hold.Update(false, true, kT0 + seconds(13), kT0 + seconds(14)));
}

TEST(HoldDownTest, interrupted_streak_starts_over) {
  HoldDown hold(seconds(3), seconds(1));
  hold.Update(true, false, kT0, kT0 + seconds(2));
  hold.Interrupt();
  EXPECT_FALSE(hold.Update(true, false, kT0 + seconds(2), kT0 + seconds(4)));
  EXPECT_TRUE(hold.Update(true, false, kT0 + seconds(4), kT0 + seconds(5)));
}

TEST(DecayingPenaltyTest, halves_per_half_life_and_caps) {
  DecayingPenalty penalty(seconds(60), 3000);
  penalty.Add(1000, kT0);
  penalty.Add(1000, kT0);
  EXPECT_DOUBLE_EQ(penalty.At(kT0), 2000);
  EXPECT_NEAR(penalty.At(kT0 + seconds(60)), 1000, 1e-9);
  penalty.Add(1000, kT0 + seconds(60));
  penalty.Add(5000, kT0 + seconds(60));
  EXPECT_DOUBLE_EQ(penalty.At(kT0 + seconds(60)), 3000) << "capped at the ceiling";
  // An older event is decayed to the newest update time (order-independent).
  DecayingPenalty a(seconds(60), 1e9), b(seconds(60), 1e9);
  a.Add(1000, kT0);
  a.Add(1000, kT0 + seconds(60));
  b.Add(1000, kT0 + seconds(60));
  b.Add(1000, kT0);
  EXPECT_NEAR(a.At(kT0 + seconds(90)), b.At(kT0 + seconds(90)), 1e-9);
  b.Remove(1000, kT0);
  EXPECT_NEAR(b.At(kT0 + seconds(60)), 1000, 1e-9);
}

TEST(EventWindowTest, counts_prunes_and_round_trips) {
  EventWindow window;
  for (int i : {1, 2, 3, 8}) window.Add(kT0 + seconds(i));
  EXPECT_EQ(window.CountAfter(kT0 + seconds(2)), 2u);
  EventWindow copy;
  StateLoadCheck check(kT0 + seconds(8));
  copy.Load(window.Save(), check);
  EXPECT_EQ(copy.CountAfter(kT0), 4u);
  window.Prune(kT0 + seconds(3));
  EXPECT_EQ(window.times().size(), 1u);
}

constexpr DetectorOptionSpec kSpecs[] = {{"window", "a window", "10s"},
                                         {"ratio", "a ratio", "0.5"},
                                         {"count", "a count", "5"},
                                         {"on", "a flag", "true"}};

TEST(OptionReaderTest, defaults_values_and_errors) {
  DetectorOptions options{{"window", "250ms"}, {"ratio", "0.99"}};
  auto reader = OptionReader::Make("x", options, kSpecs);
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->Duration("window"), milliseconds(250));
  EXPECT_DOUBLE_EQ(reader->Number("ratio", 0, 1), 0.99);
  EXPECT_EQ(reader->Count("count", 1, 10), 5u);
  EXPECT_TRUE(reader->Bool("on"));
  EXPECT_TRUE(reader->status().ok());

  auto unknown = OptionReader::Make("x", {{"windw", "1s"}}, kSpecs);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("unknown option \"windw\""), std::string::npos);
  EXPECT_NE(unknown.error().message().find("known: window, ratio, count, on"), std::string::npos);

  DetectorOptions bad{{"ratio", "1.5"}, {"window", "soon"}};
  auto bad_reader = OptionReader::Make("x", bad, kSpecs);
  ASSERT_TRUE(bad_reader);
  bad_reader->Number("ratio", 0, 1);
  bad_reader->Duration("window");
  EXPECT_EQ(bad_reader->status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_reader->status().message().find("ratio=\"1.5\""), std::string::npos)
      << bad_reader->status().message();
}

// Every bad value is an error naming the key and the value (merged from ber_growth's former
// reader tests: the cases its options hit).
TEST(OptionReaderTest, bad_values_name_the_key) {
  for (const auto& [key, value, fragment] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"window", "12 parsecs", "a positive duration"},
           {"window", "0s", "a positive duration"},
           {"ratio", "2", "a number in"},
           {"ratio", "abc", "a number in"},
           {"ratio", "nan", "a number in"},
           {"count", "0", "an integer in"},
           {"on", "yes", "true or false"}}) {
    auto reader = OptionReader::Make("x", {{key, value}}, kSpecs);
    ASSERT_TRUE(reader);
    reader->Duration("window");
    reader->Number("ratio", 0, 1);
    reader->Count("count", 1, 10);
    reader->Bool("on");
    const std::string message = reader->status().message();
    EXPECT_EQ(reader->status().code(), StatusCode::kInvalidArgument) << key << "=" << value;
    EXPECT_NE(message.find(key + "=\"" + value + "\""), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
  // Zero is a valid duration where the caller allows it (a hold of 0 = raise at once).
  auto zero = OptionReader::Make("x", {{"window", "0s"}}, kSpecs);
  ASSERT_TRUE(zero);
  EXPECT_EQ(zero->Duration("window", /*allow_zero=*/true), milliseconds(0));
  EXPECT_TRUE(zero->status().ok());
}

TEST(DetectorRegistryTest, every_detector_builds_with_defaults_and_documents_itself) {
  ASSERT_FALSE(DetectorRegistry().empty());
  std::set<std::string_view> names;
  for (const DetectorInfo& info : DetectorRegistry()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_FALSE(info.description.empty()) << info.name;
    auto detector = info.factory({});
    ASSERT_TRUE(detector) << info.name << ": " << detector.error().message();
    EXPECT_EQ((*detector)->name(), info.name);
    for (const DetectorOptionSpec& option : info.options) {
      EXPECT_FALSE(option.default_value.empty()) << info.name << "." << option.key;
      EXPECT_FALSE(option.help.empty()) << info.name << "." << option.key;
      for (char c : option.key) EXPECT_TRUE(islower(c) || isdigit(c) || c == '-') << option.key;
    }
    for (const MetricDesc& desc : info.metrics) {
      EXPECT_TRUE(ValidateDesc(desc).ok()) << desc.name;
      EXPECT_TRUE(desc.name.starts_with("fabric_")) << desc.name;
    }
    auto typo = info.factory({{"no-such-option", "1"}});
    ASSERT_FALSE(typo) << info.name;
    EXPECT_NE(typo.error().message().find("no-such-option"), std::string::npos);
  }
  EXPECT_EQ(FindDetector("link_flap")->name, "link_flap");
  EXPECT_EQ(FindDetector("nope"), nullptr);
}

// Config validation checks a detector's options without building it (issue 36): each detector's
// Validate<Name>DetectorOptions answers what its factory answers, message for message.
TEST(DetectorRegistryTest, validation_agrees_with_the_factory_without_building) {
  for (const DetectorInfo& info : DetectorRegistry()) {
    SCOPED_TRACE(std::string(info.name));
    ASSERT_NE(info.validate, nullptr);
    EXPECT_TRUE(ValidateDetectorOptions(info, {}).ok());
    std::vector<DetectorOptions> bad = {{{"no-such-option", "1"}}};
    for (const DetectorOptionSpec& option : info.options) {
      bad.push_back({{std::string(option.key), "not-a-value"}});
    }
    for (const DetectorOptions& options : bad) {
      const Status validated = ValidateDetectorOptions(info, options);
      auto built = info.factory(options);
      EXPECT_EQ(validated.ok(), built.has_value()) << options.begin()->first;
      if (!built) {
        EXPECT_EQ(validated, built.error());
      }
    }
  }
  // The cross-option rules too, and link_degraded's shape file, which is read but not applied.
  const DetectorInfo& pfc = *FindDetector("pfc_storm");
  const Status hysteresis =
      ValidateDetectorOptions(pfc, {{"storm-ratio", "0.2"}, {"clear-ratio", "0.3"}});
  EXPECT_NE(hysteresis.message().find("clear-ratio (0.3) must be below storm-ratio (0.2)"),
            std::string::npos)
      << hysteresis.message();
  const Status missing = ValidateDetectorOptions(*FindDetector("link_degraded"),
                                                 {{"shape-file", "/nonexistent/shape.yaml"}});
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("detector link_degraded: "), std::string::npos)
      << missing.message();
}

Finding MakeFinding(Severity severity, std::string netdev, double value) {
  Finding f;
  f.severity = severity;
  f.entity = {{"netdev", std::move(netdev)}};
  f.value = value;
  f.evidence = {{"pause_ratio", value}};
  f.reason = "test";
  f.drain_eligible = severity == Severity::kCritical;
  return f;
}

std::string Render(const std::vector<prometheus::MetricFamily>& families) {
  return prometheus::TextSerializer().Serialize(families);
}

class TrackerTest : public ::testing::Test {
 protected:
  std::ostringstream log_text;
  std::shared_ptr<spdlog::logger> logger = std::make_shared<spdlog::logger>(
      "anomalies", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text));
};

TEST_F(TrackerTest, raise_update_clear_with_metrics_observers_and_one_log_line_each) {
  AnomalyTracker tracker({"pfc_storm"}, logger);
  std::vector<AnomalyTransition> seen;
  tracker.Subscribe([&](const AnomalyTransition& t) { seen.push_back(t); });
  tracker.Subscribe([](const AnomalyTransition&) { throw std::runtime_error("hook broke"); });
  tracker.Subscribe(LogTransitions(logger));

  auto raised = tracker.Update("pfc_storm", kT0, {MakeFinding(Severity::kCritical, "eth0", 1)});
  ASSERT_EQ(raised.size(), 1u);
  EXPECT_TRUE(raised[0].raised);
  // Same finding again with a new value: no transition, value updated, start kept.
  EXPECT_TRUE(
      tracker
          .Update("pfc_storm", kT0 + seconds(1), {MakeFinding(Severity::kCritical, "eth0", 0.995)})
          .empty());
  const std::string text = Render(tracker.Collect());
  EXPECT_NE(text.find("fabric_anomaly_active{detector=\"pfc_storm\",severity=\"critical\","
                      "netdev=\"eth0\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fabric_anomaly_value{detector=\"pfc_storm\",severity=\"critical\","
                      "netdev=\"eth0\"} 0.995"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fabric_anomaly_started_timestamp_seconds{detector=\"pfc_storm\","
                      "severity=\"critical\",netdev=\"eth0\"} 1700000000"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fabric_anomaly_transitions_total{detector=\"pfc_storm\",severity="
                      "\"critical\",transition=\"raise\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("fabric_anomaly_transitions_total{detector=\"pfc_storm\",severity="
                      "\"warning\",transition=\"raise\"} 0"),
            std::string::npos)
      << "pre-initialised";

  auto cleared = tracker.Update("pfc_storm", kT0 + seconds(5), {});
  ASSERT_EQ(cleared.size(), 1u);
  EXPECT_FALSE(cleared[0].raised);
  EXPECT_EQ(cleared[0].started, kT0);
  EXPECT_DOUBLE_EQ(cleared[0].finding.value, 0.995);
  EXPECT_TRUE(tracker.Active().empty());
  EXPECT_EQ(Render(tracker.Collect()).find("fabric_anomaly_active"), std::string::npos);
  ASSERT_EQ(seen.size(), 2u);
  logger->flush();
  const std::string log = log_text.str();
  EXPECT_NE(log.find("anomaly raised detector=pfc_storm severity=critical netdev=eth0"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("anomaly cleared detector=pfc_storm"), std::string::npos) << log;
  EXPECT_NE(log.find("hook broke"), std::string::npos) << "a throwing observer is logged";
  size_t lines = std::count(log.begin(), log.end(), '\n');
  EXPECT_EQ(lines, 4u) << "two transitions + two observer errors, nothing per tick:\n" << log;
}

TEST_F(TrackerTest, severity_change_is_a_clear_and_a_raise_and_detectors_are_separate) {
  AnomalyTracker tracker({"a", "b"}, logger);
  tracker.Update("a", kT0, {MakeFinding(Severity::kWarning, "eth0", 1)});
  tracker.Update("b", kT0, {MakeFinding(Severity::kWarning, "eth0", 1)});
  auto t = tracker.Update("a", kT0 + seconds(1), {MakeFinding(Severity::kCritical, "eth0", 2)});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_FALSE(t[0].raised);
  EXPECT_TRUE(t[1].raised);
  EXPECT_EQ(tracker.Active().size(), 2u) << "b's finding is untouched by a's update";
}

TEST_F(TrackerTest, restored_anomalies_keep_start_time_and_get_a_grace_period) {
  AnomalyTracker before({"a"}, logger);
  before.Update(
      "a", kT0,
      {MakeFinding(Severity::kCritical, "eth0", 1), MakeFinding(Severity::kWarning, "eth1", 1)});
  const nlohmann::json saved = before.SaveState();

  AnomalyTracker after({"a"}, logger, seconds(30));
  StateLoadCheck check(kT0 + seconds(100));
  ASSERT_TRUE(after.LoadState(saved, check).ok());
  EXPECT_EQ(after.Active().size(), 2u);
  // eth0 is reported again: no raise; eth1 is not, but within the grace it stays.
  auto t = after.Update("a", kT0 + seconds(101), {MakeFinding(Severity::kCritical, "eth0", 1)});
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(after.Active()[0].started, kT0);
  t = after.Update("a", kT0 + seconds(131), {MakeFinding(Severity::kCritical, "eth0", 1)});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_FALSE(t[0].raised);
  EXPECT_EQ(t[0].finding.entity[0].second, "eth1");
  EXPECT_FALSE(after.LoadState(nlohmann::json::object(), check).ok());
  EXPECT_FALSE(after.LoadState(nlohmann::json::parse(R"([{"severity":"bad"}])"), check).ok());
}

// An anomaly that started after the clock's now (a state file from the future) is dropped and
// counted; one with a non-finite value too (issue 19).
TEST_F(TrackerTest, restored_anomalies_from_the_future_are_dropped) {
  AnomalyTracker before({"a"}, logger);
  before.Update("a", kT0 + seconds(100), {MakeFinding(Severity::kCritical, "eth0", 1)});
  before.Update(
      "a", kT0,
      {MakeFinding(Severity::kCritical, "eth0", 1), MakeFinding(Severity::kWarning, "eth1", 1)});
  nlohmann::json saved = before.SaveState();
  ASSERT_EQ(saved.size(), 2u);
  saved[0]["started"] = EpochSeconds(kT0 + seconds(100));  // ahead of the clock below
  saved[1]["value"] = std::numeric_limits<double>::infinity();
  AnomalyTracker after({"a"}, logger);
  StateLoadCheck check(kT0 + seconds(10));
  ASSERT_TRUE(after.LoadState(saved, check).ok());
  EXPECT_TRUE(after.Active().empty());
  EXPECT_EQ(check.dropped().at("future_timestamp"), 1u);
  EXPECT_EQ(check.dropped().at("out_of_range"), 1u);
}

TEST(StateLoadCheckTest, bounds) {
  StateLoadCheck check(kT0);
  EXPECT_EQ(check.Past(EpochSeconds(kT0)), kT0);
  EXPECT_FALSE(check.Past(EpochSeconds(kT0) + 1));
  EXPECT_FALSE(check.Past(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_FALSE(check.Past(1e300));
  EXPECT_FALSE(check.Past(-1));
  EXPECT_FALSE(check.Past("1800000000"));
  EXPECT_EQ(check.Until(EpochSeconds(kT0) + 5, seconds(10)), kT0 + seconds(5));
  EXPECT_FALSE(check.Until(EpochSeconds(kT0) + 11, seconds(10)));
  EXPECT_EQ(check.Number(12000.0, 0, 12000), 12000.0);
  EXPECT_FALSE(check.Number(std::numeric_limits<double>::infinity(), 0, 12000));
  EXPECT_FALSE(check.Number(-1.0, 0, 12000));
  EXPECT_EQ(check.Count(3, 10), 3u);
  EXPECT_FALSE(check.Count(-3, 10));
  EXPECT_FALSE(check.Count(2.5, 10));
  EXPECT_EQ(check.dropped().at("future_timestamp"), 2u);
  EXPECT_EQ(check.dropped().at("invalid_timestamp"), 4u);
  EXPECT_EQ(check.dropped().at("out_of_range"), 4u);
  EXPECT_EQ(check.total_dropped(), 10u);
}

}  // namespace
}  // namespace fabricwatch::detect
