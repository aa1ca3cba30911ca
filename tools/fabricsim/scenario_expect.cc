// The `expect:` block of a scenario (scenario.h): what its fault must raise, checked here so that
// a typo in a scenario file is an error naming the file and the key, not a test that silently
// asserts less.

#include <algorithm>
#include <array>
#include <set>

#include "collectors/core/yaml_checks.h"
#include "tools/fabricsim/scenario_yaml.h"

namespace fabricwatch::sim {
namespace {

using scenario_yaml::Bad;
using scenario_yaml::Seconds;

constexpr std::array<std::string_view, 1> kChecks = {"module_below_high_warning"};

// detectors/core/detector.h Severity, by SeverityName (the simulator does not link detectors).
constexpr std::array<std::string_view, 3> kSeverities = {"info", "warning", "critical"};

// The keys of a fault scenario's block; the first seven are required.
constexpr std::array<std::string_view, 13> kFindingKeys = {
    "detector",   "severity",    "entity",   "drain_eligible", "within",  "within_reason", "run",
    "not_before", "one_finding", "at_raise", "fault",          "restart", "quiet"};
constexpr size_t kRequiredFindingKeys = 7;

std::string Key(std::string_view key) { return "expect." + std::string(key); }

template <size_t N>
std::string Joined(const std::array<std::string_view, N>& names) {
  std::string out;
  for (std::string_view name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

Result<std::string> Text(std::string_view source, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar() || node.Scalar().empty()) {
    return Error(Bad(source, node, key + ": expected text"));
  }
  return node.Scalar();
}

Result<std::string> SeverityText(std::string_view source, const YAML::Node& node,
                                 const std::string& key) {
  auto text = Text(source, node, key);
  if (!text) return Error(text.error());
  if (std::find(kSeverities.begin(), kSeverities.end(), *text) == kSeverities.end()) {
    return Error(
        Bad(source, node,
            key + ": unknown severity \"" + *text + "\" (known: " + Joined(kSeverities) + ")"));
  }
  return *text;
}

// `{label: value, ...}` in contract order (yaml-cpp keeps a mapping's order).
Result<std::vector<std::pair<std::string, std::string>>> Entity(std::string_view source,
                                                                const YAML::Node& node) {
  if (!node.IsMap() || node.size() == 0) {
    return Error(Bad(source, node, "expect.entity: expected a mapping of labels to values"));
  }
  std::vector<std::pair<std::string, std::string>> entity;
  for (const auto& kv : node) {
    const std::string label = kv.first.Scalar();
    auto value = Text(source, kv.second, Key("entity." + label));
    if (!value) return Error(value.error());
    entity.emplace_back(label, *value);
  }
  return entity;
}

Result<AllowedFinding> Allow(std::string_view source, const YAML::Node& node) {
  if (!node.IsMap()) {
    return Error(Bad(source, node, "expect.allow: expected {detector:, severity:}"));
  }
  AllowedFinding allow;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    if (key == "detector") {
      auto text = Text(source, kv.second, Key("allow.detector"));
      if (!text) return Error(text.error());
      allow.detector = *text;
    } else if (key == "severity") {
      auto text = SeverityText(source, kv.second, Key("allow.severity"));
      if (!text) return Error(text.error());
      allow.severity = *text;
    } else {
      return Error(Bad(source, kv.first, "unknown key \"" + Key("allow." + key) + "\""));
    }
  }
  if (allow.detector.empty() || allow.severity.empty()) {
    return Error(Bad(source, node, "expect.allow: needs detector: and severity:"));
  }
  return allow;
}

Result<ExpectedRestart> Restart(std::string_view source, const YAML::Node& node) {
  if (!node.IsMap() || !node["at"] || !node["until"] || node.size() != 2) {
    return Error(Bad(source, node, "expect.restart: expected {at:, until:}"));
  }
  auto at = Seconds(source, node["at"], "expect.restart.at");
  if (!at) return Error(at.error());
  auto until = Seconds(source, node["until"], "expect.restart.until");
  if (!until) return Error(until.error());
  if (*at >= *until) {
    return Error(Bad(source, node, "expect.restart: at: must come before until:"));
  }
  return ExpectedRestart{*at, *until};
}

// A `quiet: true` block: nothing but `allow:` beside it.
Result<ScenarioExpectation> Quiet(std::string_view source, const YAML::Node& node) {
  ScenarioExpectation expect;
  expect.quiet = true;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    if (key == "quiet") continue;
    if (key != "allow") {
      return Error(Bad(source, kv.first,
                       Key(key) + ": a quiet scenario expects nothing but allow: findings"));
    }
    auto allow = Allow(source, kv.second);
    if (!allow) return Error(allow.error());
    expect.allow = std::move(*allow);
  }
  return expect;
}

// One key of a fault scenario's block into `expect`.
Status FindingKey(std::string_view source, const std::string& key, const YAML::Node& value,
                  ScenarioExpectation& expect) {
  auto text = [&](std::string& out) -> Status {
    auto t =
        key == "severity" ? SeverityText(source, value, Key(key)) : Text(source, value, Key(key));
    if (!t) return t.error();
    out = *t;
    return Status::Ok();
  };
  auto flag = [&](bool& out) -> Status {
    auto b = StrictBool(value, std::string(source), Key(key));
    if (!b) return b.error();
    out = *b;
    return Status::Ok();
  };
  auto seconds = [&](double& out) -> Status {
    auto s = Seconds(source, value, Key(key).c_str());
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
    auto entity = Entity(source, value);
    if (!entity) return entity.error();
    expect.entity = std::move(*entity);
    return Status::Ok();
  }
  if (key == "at_raise") {
    if (Status s = text(expect.at_raise); !s.ok()) return s;
    if (std::find(kChecks.begin(), kChecks.end(), expect.at_raise) == kChecks.end()) {
      return Bad(source, value,
                 Key(key) + ": unknown check \"" + expect.at_raise +
                     "\" (known: " + Joined(kChecks) + ")");
    }
    return Status::Ok();
  }
  if (key == "restart") {
    auto restart = Restart(source, value);
    if (!restart) return restart.error();
    expect.restart = *restart;
    return Status::Ok();
  }
  // quiet: false is a fault scenario.
  bool quiet = false;
  if (Status s = flag(quiet); !s.ok()) return s;
  return Status::Ok();
}

// The block as a whole: every required key, a fault the scenario injects, bounds that fit.
Status CheckFinding(std::string_view source, const YAML::Node& node,
                    const std::set<std::string, std::less<>>& seen,
                    const std::vector<ScenarioEvent>& events, ScenarioExpectation& expect) {
  for (size_t i = 0; i < kRequiredFindingKeys; ++i) {
    if (!seen.contains(kFindingKeys[i])) {
      return Bad(source, node, "expect: missing " + Key(kFindingKeys[i]));
    }
  }
  if (expect.fault.empty()) {
    if (events.empty()) return Bad(source, node, "expect: the scenario has no events");
    expect.fault = events.front().fault;
  } else if (std::none_of(events.begin(), events.end(),
                          [&](const ScenarioEvent& ev) { return ev.fault == expect.fault; })) {
    return Bad(source, node["fault"],
               "expect.fault: no event of the scenario injects \"" + expect.fault + "\"");
  }
  if (expect.within_s <= 0 || expect.run_s < expect.within_s) {
    return Bad(source, node, "expect: within: must be positive and no longer than run:");
  }
  if (expect.not_before_s && *expect.not_before_s > expect.within_s) {
    return Bad(source, node["not_before"], "expect.not_before: after within:");
  }
  return Status::Ok();
}

}  // namespace

std::span<const std::string_view> ExpectationChecks() { return kChecks; }

namespace scenario_yaml {

Result<ScenarioExpectation> ParseExpectation(std::string_view source, const YAML::Node& node,
                                             const std::vector<ScenarioEvent>& events) {
  if (!node.IsMap()) return Error(Bad(source, node, "expect: expected a mapping"));
  try {
    if (node["quiet"]) {
      auto quiet = StrictBool(node["quiet"], std::string(source), "expect.quiet");
      if (!quiet) return Error(quiet.error());
      if (*quiet) return Quiet(source, node);
    }
    ScenarioExpectation expect;
    std::set<std::string, std::less<>> seen;
    for (const auto& kv : node) {
      const std::string key = kv.first.Scalar();
      if (key == "allow") {
        return Error(
            Bad(source, kv.first, "expect.allow: only a quiet: true scenario allows findings"));
      }
      if (std::find(kFindingKeys.begin(), kFindingKeys.end(), key) == kFindingKeys.end()) {
        return Error(Bad(source, kv.first,
                         "unknown key \"" + Key(key) + "\" (known: " + Joined(kFindingKeys) + ")"));
      }
      if (Status s = FindingKey(source, key, kv.second, expect); !s.ok()) return Error(s);
      seen.insert(key);
    }
    if (Status s = CheckFinding(source, node, seen, events, expect); !s.ok()) return Error(s);
    return expect;
  } catch (const YAML::Exception& e) {
    return Error(
        StatusCode::kInvalidArgument,
        std::string(source) + ":" + std::to_string(e.mark.line + 1) + ": expect: " + e.msg);
  }
}

}  // namespace scenario_yaml
}  // namespace fabricwatch::sim
