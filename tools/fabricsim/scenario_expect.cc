// The `expect:` block of a scenario (scenario.h): what its fault must raise, checked here so that
// a typo in a scenario file is an error naming the file and the key, not a test that silently
// asserts less.

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "base/yaml_reader.h"
#include "tools/fabricsim/scenario_yaml.h"

namespace fabricwatch::sim {
namespace {

using scenario_yaml::Seconds;

constexpr std::array<std::string_view, 1> kChecks = {"module_below_high_warning"};

// detectors/core/detector.h Severity, by SeverityName (the simulator does not link detectors).
constexpr std::array<std::string_view, 3> kSeverities = {"info", "warning", "critical"};

// The keys of a fault scenario's block; the first seven are required.
constexpr std::array<std::string_view, 13> kFindingKeys = {
    "detector",   "severity",    "entity",   "drain_eligible", "within",  "within_reason", "run",
    "not_before", "one_finding", "at_raise", "fault",          "restart", "quiet"};
constexpr size_t kRequiredFindingKeys = 7;

template <size_t N>
std::string Joined(const std::array<std::string_view, N>& names) {
  std::string out;
  for (std::string_view name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

Result<std::string> Text(const YamlValue& value) {
  if (!value.IsScalar() || value.Scalar()->empty()) return Error(value.Fail("expected text"));
  return *value.Scalar();
}

Result<std::string> SeverityText(const YamlValue& value) {
  auto text = Text(value);
  if (!text) return Error(text.error());
  if (std::find(kSeverities.begin(), kSeverities.end(), *text) == kSeverities.end()) {
    return Error(
        value.Fail("unknown severity \"" + *text + "\" (known: " + Joined(kSeverities) + ")"));
  }
  return *text;
}

// `{label: value, ...}` in contract order (Entries() keeps the file's order).
Result<std::vector<std::pair<std::string, std::string>>> Entity(const YamlValue& value) {
  if (!value.IsMap() || value.size() == 0) {
    return Error(value.Fail("expected a mapping of labels to values"));
  }
  auto entries = value.Entries();
  if (!entries) return Error(entries.error());
  std::vector<std::pair<std::string, std::string>> entity;
  for (const YamlEntry& entry : *entries) {
    auto text = Text(entry.value);
    if (!text) return Error(text.error());
    entity.emplace_back(entry.key, *text);
  }
  return entity;
}

Result<AllowedFinding> Allow(const YamlValue& value) {
  if (!value.IsMap()) return Error(value.Fail("expected {detector:, severity:}"));
  static constexpr std::string_view kKeys[] = {"detector", "severity"};
  if (Status s = value.CheckKeys(kKeys); !s.ok()) return Error(s);
  const YamlValue detector = value.Get("detector");
  const YamlValue severity = value.Get("severity");
  if (!detector.present() || !severity.present()) {
    return Error(value.Fail("needs detector: and severity:"));
  }
  auto detector_text = Text(detector);
  if (!detector_text) return Error(detector_text.error());
  auto severity_text = SeverityText(severity);
  if (!severity_text) return Error(severity_text.error());
  return AllowedFinding{*detector_text, *severity_text};
}

Result<ExpectedRestart> Restart(const YamlValue& value) {
  const YamlValue at_value = value.Get("at");
  const YamlValue until_value = value.Get("until");
  if (!value.IsMap() || !at_value.present() || !until_value.present() || value.size() != 2) {
    return Error(value.Fail("expected {at:, until:}"));
  }
  auto at = Seconds(at_value);
  if (!at) return Error(at.error());
  auto until = Seconds(until_value);
  if (!until) return Error(until.error());
  if (*at >= *until) return Error(value.Fail("at: must come before until:"));
  return ExpectedRestart{*at, *until};
}

// A `quiet: true` block: nothing but `allow:` beside it.
Result<ScenarioExpectation> Quiet(const std::vector<YamlEntry>& entries) {
  ScenarioExpectation expect;
  expect.quiet = true;
  for (const YamlEntry& entry : entries) {
    if (entry.key == "quiet") continue;
    if (entry.key != "allow") {
      return Error(entry.key_node.Fail("a quiet scenario expects nothing but allow: findings"));
    }
    auto allow = Allow(entry.value);
    if (!allow) return Error(allow.error());
    expect.allow = std::move(*allow);
  }
  return expect;
}

// One key of a fault scenario's block into `expect`.
Status FindingKey(const YamlEntry& entry, ScenarioExpectation& expect) {
  const std::string& key = entry.key;
  const YamlValue& value = entry.value;
  auto text = [&](std::string& out) -> Status {
    auto t = key == "severity" ? SeverityText(value) : Text(value);
    if (!t) return t.error();
    out = *t;
    return Status::Ok();
  };
  auto flag = [&](bool& out) -> Status {
    auto b = value.Bool();
    if (!b) return b.error();
    out = *b;
    return Status::Ok();
  };
  auto seconds = [&](double& out) -> Status {
    auto s = Seconds(value);
    if (!s) return s.error();
    out = *s;
    return Status::Ok();
  };
  if (key == "detector") return text(expect.detector);
  if (key == "severity") return text(expect.severity);
  if (key == "within_reason") return text(expect.within_reason);
  if (key == "fault") return text(expect.fault);
  if (key == "drain_eligible") return flag(expect.drain_eligible);
  if (key == "one_finding") return flag(expect.one_finding);
  if (key == "within") return seconds(expect.within_s);
  if (key == "run") return seconds(expect.run_s);
  if (key == "not_before") return seconds(expect.not_before_s.emplace());
  if (key == "entity") {
    auto entity = Entity(value);
    if (!entity) return entity.error();
    expect.entity = std::move(*entity);
    return Status::Ok();
  }
  if (key == "at_raise") {
    if (Status s = text(expect.at_raise); !s.ok()) return s;
    if (std::find(kChecks.begin(), kChecks.end(), expect.at_raise) == kChecks.end()) {
      return value.Fail("unknown check \"" + expect.at_raise + "\" (known: " + Joined(kChecks) +
                        ")");
    }
    return Status::Ok();
  }
  if (key == "restart") {
    auto restart = Restart(value);
    if (!restart) return restart.error();
    expect.restart = *restart;
    return Status::Ok();
  }
  // quiet: false is a fault scenario.
  bool quiet = false;
  return flag(quiet);
}

// The block as a whole: every required key, a fault the scenario injects, bounds that fit.
Status CheckFinding(const YamlValue& node, const std::vector<ScenarioEvent>& events,
                    ScenarioExpectation& expect) {
  for (size_t i = 0; i < kRequiredFindingKeys; ++i) {
    if (!node.Get(kFindingKeys[i]).present()) {
      return node.Fail("missing expect." + std::string(kFindingKeys[i]));
    }
  }
  if (expect.fault.empty()) {
    if (events.empty()) return node.Fail("the scenario has no events");
    expect.fault = events.front().fault;
  } else if (std::none_of(events.begin(), events.end(),
                          [&](const ScenarioEvent& ev) { return ev.fault == expect.fault; })) {
    return node.Get("fault").Fail("no event of the scenario injects \"" + expect.fault + "\"");
  }
  if (expect.within_s <= 0 || expect.run_s < expect.within_s) {
    return node.Fail("within: must be positive and no longer than run:");
  }
  if (expect.not_before_s && *expect.not_before_s > expect.within_s) {
    return node.Get("not_before").Fail("after within:");
  }
  return Status::Ok();
}

}  // namespace

std::span<const std::string_view> ExpectationChecks() { return kChecks; }

namespace scenario_yaml {

Result<ScenarioExpectation> ParseExpectation(const YamlValue& node,
                                             const std::vector<ScenarioEvent>& events) {
  if (!node.IsMap()) return Error(node.Fail("expected a mapping"));
  auto entries = node.Entries();
  if (!entries) return Error(entries.error());
  if (const YamlValue quiet = node.Get("quiet"); quiet.present()) {
    auto is_quiet = quiet.Bool();
    if (!is_quiet) return Error(is_quiet.error());
    if (*is_quiet) return Quiet(*entries);
  }
  for (const YamlEntry& entry : *entries) {
    if (entry.key == "allow") {
      return Error(entry.key_node.Fail("only a quiet: true scenario allows findings"));
    }
  }
  if (Status s = node.CheckKeys(kFindingKeys); !s.ok()) return Error(s);
  ScenarioExpectation expect;
  for (const YamlEntry& entry : *entries) {
    if (Status s = FindingKey(entry, expect); !s.ok()) return Error(s);
  }
  if (Status s = CheckFinding(node, events, expect); !s.ok()) return Error(s);
  return expect;
}

}  // namespace scenario_yaml
}  // namespace fabricwatch::sim
