// Scenario tests (issue 8): every fault scenario shipped in tools/fabricsim/scenarios/ runs through
// the simulator, the real collectors at their default intervals, the real detectors with their
// default options, the anomaly tracker and the state file (tests/testing/sim_pipeline.h), on
// simulated time. Each fault must be detected by the expected detector with the expected
// severity, entity and drain eligibility within the bound, measured from the injection
// time the simulator reports; the maintenance and healthy scenarios must raise nothing for hours;
// a restart through the state file keeps active anomalies and optical baselines; a corrupt state
// file is ignored with a warning. What each scenario must raise, and why its bound is what it is,
// is the scenario file's `expect:` block (tools/fabricsim/scenario.h); the cases are the files
// that have one.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "detectors/core/anomaly_tracker.h"
#include "tests/testing/sim_pipeline.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::testing {
namespace {

namespace fs = std::filesystem;
using detect::AnomalyTransition;
using detect::Severity;

sim::Scenario LoadShipped(const std::string& name) {
  auto scenario = sim::LoadScenario(SourcePath("tools/fabricsim/scenarios/" + name + ".yaml"));
  EXPECT_TRUE(scenario) << scenario.error().ToString();
  return scenario ? *scenario : sim::Scenario{};
}

std::unique_ptr<SimPipeline> MakePipeline(sim::Scenario scenario, const TempDir& dir,
                                          PipelineOptions options = {}) {
  auto pipeline = SimPipeline::Create(std::move(scenario), dir.Path("root"), std::move(options));
  EXPECT_TRUE(pipeline) << pipeline.error().ToString();
  return pipeline ? std::move(*pipeline) : nullptr;
}

std::string Describe(const SimPipeline& p, const AnomalyTransition& t) {
  return std::string(t.raised ? "raise " : "clear ") + t.detector + " " +
         std::string(detect::SeverityName(t.finding.severity)) + " {" +
         detect::EntityText(t.finding.entity) + "} at t=" + std::to_string(p.SimSeconds(t.time)) +
         ": " + t.finding.reason;
}

std::string AllTransitions(const SimPipeline& p) {
  std::string out;
  for (const auto& t : p.transitions()) out += "  " + Describe(p, t) + "\n";
  return out.empty() ? "  (none)\n" : out;
}

PipelineOptions StateAt(const std::string& path) {
  PipelineOptions options;
  options.state_file = path;
  return options;
}

// The raises of `detector` at `severity` whose entity is exactly `entity`.
std::vector<AnomalyTransition> Raises(const SimPipeline& p, const std::string& detector,
                                      Severity severity, const detect::EntityLabels& entity) {
  std::vector<AnomalyTransition> out;
  for (const auto& t : p.transitions()) {
    if (t.raised && t.detector == detector && t.finding.severity == severity &&
        t.finding.entity == entity) {
      out.push_back(t);
    }
  }
  return out;
}

const sim::Injection* FirstStart(const SimPipeline& p, const std::string& fault) {
  for (const auto& i : p.injections()) {
    if (i.event == "start" && i.fault == fault) return &i;
  }
  return nullptr;
}

// Reports a measured detection time to the test XML and to stdout, for the lead's table.
void Report(const std::string& scenario, const std::string& what, double seconds) {
  ::testing::Test::RecordProperty(scenario + "_detection_seconds", std::to_string(seconds));
  std::printf("[ detection ] %-18s %-58s %6.1f s after the injection start\n", scenario.c_str(),
              what.c_str(), seconds);
}

// ------------------------------------------------------------------ the shipped expectations

// A shipped scenario with an `expect:` block (tools/fabricsim/scenario.h): the test cases come
// from the scenario files, so a new detector's scenario adds data, not C++.
struct ShippedCase {
  std::string name;  // the file's stem, the test's name
  sim::Scenario scenario;
  const sim::ScenarioExpectation& expect() const { return *scenario.expect; }
};

void PrintTo(const ShippedCase& c, std::ostream* os) { *os << c.name; }

// The shipped scenarios whose expectation `pick` takes, by name. A file that does not load is
// left out here and fails ShippedScenarios.every_file_loads.
std::vector<ShippedCase> Shipped(const std::function<bool(const sim::ScenarioExpectation&)>& pick) {
  std::vector<ShippedCase> out;
  for (const auto& entry : fs::directory_iterator(SourcePath("tools/fabricsim/scenarios"))) {
    if (entry.path().extension() != ".yaml") continue;
    auto scenario = sim::LoadScenario(entry.path().string());
    if (!scenario || !scenario->expect || !pick(*scenario->expect)) continue;
    out.push_back({entry.path().stem().string(), std::move(*scenario)});
  }
  std::sort(out.begin(), out.end(),
            [](const ShippedCase& a, const ShippedCase& b) { return a.name < b.name; });
  return out;
}

std::string CaseName(const ::testing::TestParamInfo<ShippedCase>& info) { return info.param.name; }

Severity SeverityOf(const std::string& name) {
  Severity severity = Severity::kInfo;
  EXPECT_TRUE(detect::ParseSeverity(name, &severity)) << name;
  return severity;
}

TEST(ShippedScenarios, every_file_loads) {
  size_t with_expectations = 0;
  for (const auto& entry : fs::directory_iterator(SourcePath("tools/fabricsim/scenarios"))) {
    if (entry.path().extension() != ".yaml") continue;
    auto scenario = sim::LoadScenario(entry.path().string());
    ASSERT_TRUE(scenario) << scenario.error().ToString();
    if (scenario->expect) ++with_expectations;
  }
  EXPECT_GT(with_expectations, 0u);
}

// ------------------------------------------------------------------ faults are detected

// The named checks of `at_raise:` (sim::ExpectationChecks()), of the simulator's state at the
// matched raise.
using RaiseCheck =
    std::function<void(SimPipeline&, const AnomalyTransition&, const sim::Injection&)>;

// A warning BEFORE the module's high-warning threshold is reached (module_temp_ramp).
void ModuleBelowHighWarning(SimPipeline& p, const AnomalyTransition& t, const sim::Injection& in) {
  const sim::ModuleState* m = p.sim().Module(in.netdev);
  ASSERT_NE(m, nullptr);
  std::printf(
      "[ detection ] %-18s temperature at the warning %.2f °C, module high warning %.1f °C\n",
      in.fault.c_str(), m->temperature_c, m->temperature.high_warning);
  ::testing::Test::RecordProperty(in.fault + "_celsius_at_warning",
                                  std::to_string(m->temperature_c));
  EXPECT_LT(m->temperature_c, m->temperature.high_warning) << Describe(p, t);
}

RaiseCheck CheckNamed(std::string_view name) {
  if (name == "module_below_high_warning") return ModuleBelowHighWarning;
  return nullptr;
}

TEST(ShippedScenarios, every_named_check_is_implemented) {
  for (std::string_view name : sim::ExpectationChecks()) {
    EXPECT_NE(CheckNamed(name), nullptr) << name;
  }
}

detect::EntityLabels Resolve(detect::EntityLabels entity, const sim::Injection& in) {
  for (auto& [k, v] : entity) {
    if (v == "$netdev") v = in.netdev;
    if (v == "$device") v = in.device;
  }
  return entity;
}

// `not_before:` (link_flap_hard: the 5th down): the raise comes after it, and is reported.
void CheckNotBefore(const ShippedCase& c, SimPipeline& p, const AnomalyTransition& t,
                    const sim::Injection& in) {
  if (!c.expect().not_before_s) return;
  const double after = p.SimSeconds(t.time) - (in.sim_time + *c.expect().not_before_s);
  ::testing::Test::RecordProperty(c.name + "_seconds_after_not_before", std::to_string(after));
  std::printf("[ detection ] %-18s %s %.1f s after not_before (+%.0f s)\n", c.name.c_str(),
              c.expect().severity.c_str(), after, *c.expect().not_before_s);
  EXPECT_GE(after, 0) << Describe(p, t);
}

class FaultScenarioTest : public ::testing::TestWithParam<ShippedCase> {};

TEST_P(FaultScenarioTest, is_detected_with_the_expected_finding_within_the_bound) {
  const ShippedCase& c = GetParam();
  const sim::ScenarioExpectation& e = c.expect();
  const Severity severity = SeverityOf(e.severity);
  const RaiseCheck check = CheckNamed(e.at_raise);
  TempDir dir;
  auto p = MakePipeline(c.scenario, dir);
  ASSERT_NE(p, nullptr);
  std::optional<AnomalyTransition> raise;
  // 1 s steps: the first matching raise is found at the step it happens, so the simulator's
  // state at that instant can be compared (module_temp_ramp).
  while (p->now() < e.run_s && !raise) {
    ASSERT_TRUE(p->Step(p->now() + 1).ok());
    const sim::Injection* in = FirstStart(*p, e.fault);
    if (in == nullptr) continue;
    auto raises = Raises(*p, e.detector, severity, Resolve(e.entity, *in));
    if (!raises.empty()) raise = raises.front();
    if (raise && check) check(*p, *raise, *in);
  }
  const sim::Injection* in = FirstStart(*p, e.fault);
  ASSERT_NE(in, nullptr) << "the simulator never started " << e.fault;
  ASSERT_TRUE(raise) << "no " << e.detector << " " << e.severity << " {"
                     << detect::EntityText(Resolve(e.entity, *in)) << "} within " << e.run_s
                     << " s; transitions:\n"
                     << AllTransitions(*p);
  EXPECT_EQ(raise->finding.drain_eligible, e.drain_eligible) << Describe(*p, *raise);
  const double delay = p->SimSeconds(raise->time) - in->sim_time;
  Report(c.name,
         e.detector + " " + e.severity + " {" + detect::EntityText(raise->finding.entity) + "}",
         delay);
  EXPECT_GE(delay, 0) << Describe(*p, *raise);
  EXPECT_LE(delay, e.within_s) << e.within_reason << "\n" << Describe(*p, *raise);
  CheckNotBefore(c, *p, *raise, *in);
  // Nothing but the expected detector spoke.
  for (const auto& t : p->transitions()) {
    EXPECT_EQ(t.detector, e.detector) << "unexpected: " << Describe(*p, t);
  }
  if (e.one_finding) {
    // The rest of the run (1 s steps) raises nothing on another entity (a severity change of
    // the expected one is the same finding) and one drain at most. The IPoIB netdev of an IB
    // port and the PMA counters of a RoCE port are the same fault seen again.
    // Resolved first: running on appends to injections(), which `in` points into.
    const detect::EntityLabels entity = Resolve(e.entity, *in);
    ASSERT_TRUE(p->RunUntil(e.run_s).ok());
    size_t drain_raises = 0;
    for (const auto& t : p->transitions()) {
      EXPECT_EQ(t.detector, e.detector) << "unexpected: " << Describe(*p, t);
      if (!t.raised) continue;
      EXPECT_EQ(t.finding.entity, entity) << "a second finding for one fault: " << Describe(*p, t);
      if (t.finding.drain_eligible) ++drain_raises;
    }
    EXPECT_EQ(drain_raises, e.drain_eligible ? 1u : 0u) << AllTransitions(*p);
  }
  EXPECT_EQ(p->collector_errors(), 0u) << p->collector_error_text();
}

// Every shipped scenario with a finding in its `expect:` block; the bounds and the reasons for
// them are in the scenario files.
INSTANTIATE_TEST_SUITE_P(Shipped, FaultScenarioTest,
                         ::testing::ValuesIn(Shipped([](const sim::ScenarioExpectation& e) {
                           return !e.quiet;
                         })),
                         CaseName);

// ------------------------------------------------------------------ nothing on healthy traffic

struct QuietCase {
  std::string name;
  sim::Scenario scenario;
  // A documented finding that is not a fault (the scenario's `allow:`).
  std::optional<sim::AllowedFinding> allow;
};

void PrintTo(const QuietCase& c, std::ostream* os) { *os << c.name; }

// Healthy traffic only, and every shipped scenario that expects `quiet: true`.
std::vector<QuietCase> QuietCases() {
  std::vector<QuietCase> out;
  QuietCase healthy{"healthy", {}, std::nullopt};
  healthy.scenario.source = "healthy";
  healthy.scenario.preset = "hgx-roce";
  healthy.scenario.duration_s = 120;
  out.push_back(std::move(healthy));
  for (auto& c : Shipped([](const sim::ScenarioExpectation& e) { return e.quiet; })) {
    auto allow = c.expect().allow;
    out.push_back({c.name, std::move(c.scenario), std::move(allow)});
  }
  return out;
}

class QuietScenarioTest : public ::testing::TestWithParam<QuietCase> {};

// Several simulated hours: the scenario itself (and 60 s after it) at 1 s steps, as the agent
// samples; afterwards 20 s steps to keep the binary fast — the collectors then run once per
// step, and every detector computes over the measured Δt, so only the time resolution of the
// healthy tail is coarser (no fault is active there; the slow windows — 6 h slow flapping,
// 1 h symbol errors, 30 min drift and projections — still see hours of samples).
TEST_P(QuietScenarioTest, raises_nothing_for_hours) {
  const QuietCase& c = GetParam();
  TempDir dir;
  const double fault_part = c.scenario.duration_s + 60;
  auto p = MakePipeline(c.scenario, dir);
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->RunUntil(fault_part).ok());
  ASSERT_TRUE(p->RunUntil(3 * 3600, 20).ok());
  size_t raises = 0;
  for (const auto& t : p->transitions()) {
    if (!t.raised) continue;
    if (c.allow && t.finding.severity == SeverityOf(c.allow->severity) &&
        t.detector == c.allow->detector) {
      EXPECT_FALSE(t.finding.drain_eligible);
      continue;
    }
    ++raises;
  }
  EXPECT_EQ(raises, 0u) << "transitions:\n" << AllTransitions(*p);
  EXPECT_EQ(p->collector_errors(), 0u) << p->collector_error_text();
}

INSTANTIATE_TEST_SUITE_P(Shipped, QuietScenarioTest, ::testing::ValuesIn(QuietCases()),
                         [](const auto& info) { return info.param.name; });

// ------------------------------------------------------------------ restarts

class RestartTest : public ::testing::TestWithParam<ShippedCase> {};

// The scenario's `restart: {at, until}`: restarted through the state file while the expected
// finding is active, the fault still active at `until`.
TEST_P(RestartTest, the_active_anomaly_survives_without_a_second_raise) {
  const ShippedCase& c = GetParam();
  const sim::ScenarioExpectation& e = c.expect();
  const Severity severity = SeverityOf(e.severity);
  const double restart_at = e.restart->at_s;
  TempDir dir;
  auto p = MakePipeline(c.scenario, dir, StateAt(dir.Path("state.json")));
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->RunUntil(restart_at).ok());
  const sim::Injection* in = FirstStart(*p, e.fault);
  ASSERT_NE(in, nullptr);
  const detect::EntityLabels entity = Resolve(e.entity, *in);
  ASSERT_EQ(Raises(*p, e.detector, severity, entity).size(), 1u) << AllTransitions(*p);
  const auto started = Raises(*p, e.detector, severity, entity).front().time;

  p->Restart();
  ASSERT_TRUE(p->RunUntil(e.restart->until_s).ok());
  EXPECT_EQ(Raises(*p, e.detector, severity, entity).size(), 1u) << AllTransitions(*p);
  bool active = false;
  for (const auto& a : p->engine().tracker().Active()) {
    if (a.detector == e.detector && a.finding.severity == severity && a.finding.entity == entity) {
      active = true;
      EXPECT_EQ(a.started, started) << "the start time survives the restart";
      EXPECT_FALSE(a.restored) << "the detector confirmed it after the restart";
    }
  }
  EXPECT_TRUE(active) << AllTransitions(*p);
  for (const auto& t : p->transitions()) {
    if (t.detector == e.detector && t.finding.entity == entity) {
      EXPECT_TRUE(p->SimSeconds(t.time) < restart_at || !t.raised || t.finding.severity != severity)
          << Describe(*p, t);
    }
  }
  EXPECT_EQ(p->log().find("ignoring"), std::string::npos) << p->log();
}

INSTANTIATE_TEST_SUITE_P(Shipped, RestartTest,
                         ::testing::ValuesIn(Shipped([](const sim::ScenarioExpectation& e) {
                           return e.restart.has_value();
                         })),
                         CaseName);

// The optical baselines (keyed by module serial) are in the state file and come back: the
// detector state saved after the restart still holds every module's baseline, with at least
// the readings it had before.
TEST(StateFileRestartTest, optical_baselines_survive) {
  TempDir dir;
  sim::Scenario healthy;
  healthy.source = "healthy";
  healthy.preset = "roce-small";
  healthy.duration_s = 600;
  const std::string state_path = dir.Path("state.json");
  auto p = MakePipeline(healthy, dir, StateAt(state_path));
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->RunUntil(600, 5).ok());
  p->engine().SaveState();
  const auto before = nlohmann::json::parse(ReadTextFile(state_path));
  const auto& modules = before["detectors"]["optical_drift"]["modules"];
  ASSERT_TRUE(modules.is_object()) << before.dump(2);
  // roce-small: two QSFP28 and one SFP28, each with a baseline.
  EXPECT_EQ(modules.size(), 3u) << modules.dump(2);

  p->Restart();
  ASSERT_TRUE(p->Step(605).ok());
  p->engine().SaveState();
  const auto after = nlohmann::json::parse(ReadTextFile(state_path));
  const auto& restored = after["detectors"]["optical_drift"]["modules"];
  for (const auto& [serial, module] : modules.items()) {
    ASSERT_TRUE(restored.contains(serial)) << serial << " lost: " << restored.dump(2);
    EXPECT_EQ(restored[serial]["netdev"], module["netdev"]);
    for (const auto& [lane, state] : module["lanes"].items()) {
      ASSERT_TRUE(restored[serial]["lanes"].contains(lane)) << serial << " lane " << lane;
      // The rx baseline goes on from where it was (same start, at least as many readings,
      // the same mean within a reading's noise), not a fresh one.
      const auto& was = state["rx_dbm"];
      const auto& now = restored[serial]["lanes"][lane]["rx_dbm"];
      ASSERT_TRUE(was.is_object() && now.is_object()) << serial << " lane " << lane;
      EXPECT_EQ(now["first"], was["first"]) << serial << " lane " << lane;
      EXPECT_GE(now["samples"].get<double>(), was["samples"].get<double>());
      EXPECT_NEAR(now["mean"].get<double>(), was["mean"].get<double>(), 0.1);
    }
  }
  EXPECT_EQ(p->log().find("ignoring"), std::string::npos) << p->log();
}

// A corrupt state file is ignored with a warning and counted; detection works as on a first
// start (the storm is raised once, on time).
TEST(StateFileRestartTest, a_corrupt_state_file_is_ignored_with_a_warning) {
  TempDir dir;
  const std::string state_path = dir.Path("state.json");
  {
    std::ofstream out(state_path);
    out << "{\"format\": \"fabricwatch-state\", \"version\": 1, \"detectors\": {tru";
  }
  auto p = MakePipeline(LoadShipped("pfc_storm_source"), dir, StateAt(state_path));
  ASSERT_NE(p, nullptr);
  EXPECT_NE(p->log().find("warning ignoring the state file"), std::string::npos) << p->log();
  bool counted = false;
  for (const auto& family : p->engine().Collect()) {
    if (family.name != "fabricwatch_state_file_errors_total") continue;
    for (const auto& m : family.metric) {
      if (m.label.size() == 1 && m.label[0].value == "load") {
        counted = true;
        EXPECT_EQ(m.counter.value, 1);
      }
    }
  }
  EXPECT_TRUE(counted);
  ASSERT_TRUE(p->RunUntil(40).ok());
  const sim::Injection* in = FirstStart(*p, "pfc_storm_source");
  ASSERT_NE(in, nullptr);
  const auto raises = Raises(*p, "pfc_storm", Severity::kCritical,
                             {{"netdev", in->netdev}, {"priority", "3"}, {"role", "source"}});
  ASSERT_EQ(raises.size(), 1u) << AllTransitions(*p);
  EXPECT_LE(p->SimSeconds(raises[0].time) - in->sim_time, 3 + 1);
  // The file is replaced by a valid one at the next save.
  p->engine().SaveState();
  EXPECT_NO_THROW(nlohmann::json::parse(ReadTextFile(state_path)));
}

}  // namespace
}  // namespace fabricwatch::testing
