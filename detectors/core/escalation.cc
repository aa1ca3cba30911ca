#include "detectors/core/escalation.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <set>

#include "base/duration.h"
#include "detectors/core/anomaly_tracker.h"
#include "detectors/core/hysteresis.h"
#include "detectors/registry.h"
#include "detectors/core/state_check.h"

namespace fabricwatch::detect {
namespace {

// Raise times shown in the evidence and the reason.
constexpr size_t kShownRaises = 10;

constexpr MetricDesc kEscalated{
    "fabricwatch_findings_escalated_total",
    "Warnings escalated to a critical finding because the same entity raised them "
    "escalation-count times within escalation-window (README \"Detectors\").",
    MetricKind::kCounter,
    {"detector"}};
constexpr MetricDesc kMetrics[] = {kEscalated};

std::string UtcText(TimePoint t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

std::span<const MetricDesc> Escalation::Metrics() { return kMetrics; }

bool EscalatedDrainEligible(std::string_view detector, const EntityLabels& entity) {
  for (const auto& [name, value] : entity) {
    if (name == "role" && value == "victim") return false;  // the fix is elsewhere
  }
  // An escalated critical follows the detector's own criticals (README "Detectors"), as its
  // declaration says (declaration.h DetectorDeclaration::criticals_drain).
  const DetectorInfo* info = FindDetector(detector);
  return info != nullptr && info->declaration.criticals_drain;
}

Finding Escalation::Escalated(std::string_view detector, const History& h) const {
  Finding f = h.last_warning;
  f.severity = Severity::kCritical;
  f.drain_eligible = EscalatedDrainEligible(detector, f.entity);
  f.value = static_cast<double>(h.raises.size());
  f.evidence.push_back({"escalation_warnings", static_cast<double>(h.raises.size())});
  f.evidence.push_back(
      {"escalation_window_seconds", std::chrono::duration<double>(options_.window).count()});
  const size_t first = h.raises.size() > kShownRaises ? h.raises.size() - kShownRaises : 0;
  std::string times;
  for (size_t i = first; i < h.raises.size(); ++i) {
    f.evidence.push_back({fmt::format("escalation_raise_{}_timestamp_seconds", i - first + 1),
                          EpochSeconds(h.raises[i])});
    times += (times.empty() ? "" : ", ") + UtcText(h.raises[i]);
  }
  f.reason = fmt::format(
      "{}: warning raised {} times within {} (at {}; escalation-count {}), escalated to "
      "critical; last warning: {}",
      EntityText(f.entity), h.raises.size(), FormatDuration(options_.window), times, options_.count,
      h.last_warning.reason);
  return f;
}

void Escalation::Apply(std::string_view detector, TimePoint now, std::vector<Finding>& findings) {
  if (options_.count == 0) return;
  auto [it, inserted] = histories_.try_emplace(std::string(detector));
  std::map<std::string, History>& histories = it->second;
  std::set<std::string> criticals;
  std::map<std::string, size_t> warnings;  // entity -> index in findings
  for (size_t i = 0; i < findings.size(); ++i) {
    const std::string key = EntityText(findings[i].entity);
    if (findings[i].severity == Severity::kCritical) criticals.insert(key);
    if (findings[i].severity == Severity::kWarning) warnings.emplace(key, i);
  }
  for (const auto& [key, index] : warnings) {
    History& h = histories[key];
    h.last_warning = findings[index];
    if (h.warning_active) continue;
    h.warning_active = true;
    h.raises.push_back(now);
    while (!h.escalated && !h.raises.empty() && now - h.raises.front() > options_.window) {
      h.raises.pop_front();
    }
    if (!h.escalated && h.raises.size() >= options_.count) {
      h.escalated = true;
      ++started_[std::string(detector)];
    }
  }
  for (auto h = histories.begin(); h != histories.end();) {
    History& history = h->second;
    // Restored warnings get the grace to be confirmed before their absence counts.
    if (!warnings.contains(h->first) && now >= restored_until_) history.warning_active = false;
    // Older raises leave the window; an escalation keeps at least the `count` that started it.
    while (!history.raises.empty() && now - history.raises.front() > options_.window &&
           (!history.escalated || history.raises.size() > options_.count)) {
      history.raises.pop_front();
    }
    if (history.escalated && !history.warning_active &&
        (history.raises.empty() || now - history.raises.back() >= options_.window)) {
      history.escalated = false;
    }
    if (!history.escalated && !history.warning_active && history.raises.empty()) {
      h = histories.erase(h);
      continue;
    }
    if (history.escalated && !criticals.contains(h->first)) {
      auto w = warnings.find(h->first);
      if (w != warnings.end()) {
        findings[w->second] = Escalated(detector, history);
      } else {
        findings.push_back(Escalated(detector, history));
      }
    }
    ++h;
  }
}

nlohmann::json Escalation::SaveState() const {
  nlohmann::json out = {{"version", 1}, {"detectors", nlohmann::json::object()}};
  for (const auto& [detector, histories] : histories_) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [key, h] : histories) {
      nlohmann::json raises = nlohmann::json::array();
      for (TimePoint t : h.raises) raises.push_back(EpochSeconds(t));
      list.push_back({{"warning", FindingJson(h.last_warning)},
                      {"raises", raises},
                      {"warning_active", h.warning_active},
                      {"escalated", h.escalated}});
    }
    if (!list.empty()) out["detectors"][detector] = std::move(list);
  }
  return out;
}

Status Escalation::LoadState(const nlohmann::json& state, StateLoadCheck& check) {
  std::map<std::string, std::map<std::string, History>, std::less<>> loaded;
  try {
    if (state.at("version").get<int>() != 1) {
      return Status(StatusCode::kInvalidArgument, "escalation: unknown version");
    }
    for (const auto& [detector, list] : state.at("detectors").items()) {
      for (const auto& entry : list) {
        auto warning = FindingFromJson(entry.at("warning"));
        if (!warning) return warning.error().WithContext("escalation");
        History h;
        h.last_warning = std::move(*warning);
        for (const auto& t : entry.at("raises")) {
          if (auto raise = check.Past(t)) h.raises.push_back(*raise);
        }
        std::sort(h.raises.begin(), h.raises.end());
        h.warning_active = entry.at("warning_active").get<bool>();
        h.escalated = entry.at("escalated").get<bool>() && !h.raises.empty();
        loaded[detector][EntityText(h.last_warning.entity)] = std::move(h);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::kInvalidArgument, std::string("escalation: ") + e.what());
  }
  histories_ = std::move(loaded);
  restored_until_ = check.now() + options_.restore_grace;
  return Status::Ok();
}

void Escalation::Export(MetricSink& sink) const {
  for (const auto& [detector, count] : started_) {
    sink.Add(kEscalated, {{"detector", detector}}, static_cast<double>(count));
  }
}

}  // namespace fabricwatch::detect
