#include "detectors/core/anomaly_tracker.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <tuple>

#include "detectors/core/hysteresis.h"
#include "detectors/core/state_check.h"

namespace fabricwatch::detect {
namespace {

constexpr MetricDesc kActive{
    "fabric_anomaly_active",
    "1 while a detector's finding is active (docs/design.md §5). Entity labels are those that "
    "apply "
    "to the finding: device+port (HCA port), netdev, priority (PFC), lane (optics), role (PFC "
    "storm source or victim; ECN np or rp), setting (config_drift).",
    MetricKind::kGauge,
    {"detector", "severity", "device", "port", "netdev", "priority", "lane", "role", "setting"}};
constexpr MetricDesc kValue{
    "fabric_anomaly_value",
    "The evidence value that triggered the active finding (pause ratio, flap count, ...; the "
    "detector's reason names it).",
    MetricKind::kGauge,
    {"detector", "severity", "device", "port", "netdev", "priority", "lane", "role", "setting"}};
constexpr MetricDesc kStarted{
    "fabric_anomaly_started_timestamp_seconds",
    "When the active finding was raised (Unix time; survives restarts through --state.file). "
    "time() minus it is the age of the state.",
    MetricKind::kGauge,
    {"detector", "severity", "device", "port", "netdev", "priority", "lane", "role", "setting"}};
constexpr MetricDesc kTransitions{
    "fabric_anomaly_transitions_total",
    "Findings raised (transition=raise) and cleared (transition=clear) per detector and "
    "severity since the agent started.",
    MetricKind::kCounter,
    {"detector", "severity", "transition"}};
constexpr MetricDesc kMetrics[] = {kActive, kValue, kStarted, kTransitions};

int SeverityRank(Severity severity) {
  return severity == Severity::kCritical ? 0 : severity == Severity::kWarning ? 1 : 2;
}

prometheus::ClientMetric Sample(const ActiveAnomaly& anomaly, double value) {
  prometheus::ClientMetric metric;
  metric.label.push_back({"detector", anomaly.detector});
  metric.label.push_back({"severity", std::string(SeverityName(anomaly.finding.severity))});
  for (const auto& [name, label_value] : anomaly.finding.entity) {
    metric.label.push_back({name, BoundLabelValue(label_value)});
  }
  metric.gauge.value = value;
  return metric;
}

prometheus::MetricFamily Family(const MetricDesc& desc) {
  prometheus::MetricFamily family;
  family.name = std::string(desc.name);
  family.help = std::string(desc.help);
  family.type = desc.kind == MetricKind::kCounter ? prometheus::MetricType::Counter
                                                  : prometheus::MetricType::Gauge;
  return family;
}

}  // namespace

std::span<const MetricDesc> AnomalyTracker::Metrics() { return kMetrics; }

std::string EntityText(const EntityLabels& entity) {
  std::string out;
  for (const auto& [name, value] : entity) {
    out += (out.empty() ? "" : " ") + name + "=" + value;
  }
  return out;
}

nlohmann::json FindingJson(const Finding& finding) {
  nlohmann::json entity = nlohmann::json::object();
  for (const auto& [name, value] : finding.entity) entity[name] = value;
  nlohmann::json evidence = nlohmann::json::object();
  for (const Evidence& e : finding.evidence) evidence[e.name] = e.value;
  // The entity is also kept as an ordered list: the contract order of the labels matters for
  // the identity and the exposition.
  nlohmann::json order = nlohmann::json::array();
  for (const auto& [name, value] : finding.entity) order.push_back(name);
  nlohmann::json log = nlohmann::json::array();
  for (const LogLine& line : finding.log) {
    log.push_back({{"time", EpochSeconds(line.time)}, {"text", line.text}});
  }
  return {{"severity", SeverityName(finding.severity)},
          {"log", log},
          {"peer", finding.peer},
          {"jobs", finding.jobs},
          {"entity", entity},
          {"entity_order", order},
          {"value", finding.value},
          {"evidence", evidence},
          {"reason", finding.reason},
          {"drain_eligible", finding.drain_eligible}};
}

Result<Finding> FindingFromJson(const nlohmann::json& json) {
  try {
    Finding finding;
    if (!ParseSeverity(json.at("severity").get<std::string>(), &finding.severity)) {
      return Error(StatusCode::kInvalidArgument, "unknown severity " + json.at("severity").dump());
    }
    const auto& entity = json.at("entity");
    for (const auto& name : json.at("entity_order")) {
      const std::string key = name.get<std::string>();
      finding.entity.emplace_back(key, entity.at(key).get<std::string>());
    }
    finding.value = json.at("value").get<double>();
    for (const auto& [name, value] : json.at("evidence").items()) {
      finding.evidence.push_back({name, value.get<double>()});
    }
    finding.reason = json.at("reason").get<std::string>();
    // "log" came with the kernel log watcher (issue 23): older state files have none.
    if (json.contains("log")) {
      for (const auto& line : json.at("log")) {
        if (finding.log.size() == kMaxLogLinesPerEvent) break;
        finding.log.push_back(
            {FromEpochSeconds(line.at("time").get<double>()), line.at("text").get<std::string>()});
      }
    }
    finding.drain_eligible = json.at("drain_eligible").get<bool>();
    // "peer" and "jobs" came with attribution (issue 24): older state files have neither.
    if (json.contains("peer")) finding.peer = json.at("peer").get<std::string>();
    if (json.contains("jobs")) finding.jobs = json.at("jobs").get<std::vector<std::string>>();
    return finding;
  } catch (const nlohmann::json::exception& e) {
    return Error(StatusCode::kInvalidArgument, std::string("malformed finding: ") + e.what());
  }
}

AnomalyTracker::AnomalyTracker(std::vector<std::string> detectors,
                               std::shared_ptr<spdlog::logger> logger,
                               std::chrono::milliseconds restore_grace)
    : logger_(std::move(logger)), restore_grace_(restore_grace) {
  for (const std::string& detector : detectors) {
    for (Severity severity : {Severity::kWarning, Severity::kCritical}) {
      for (const char* transition : {"raise", "clear"}) {
        transitions_[{detector, std::string(SeverityName(severity)), transition}] = 0;
      }
    }
  }
}

void AnomalyTracker::Subscribe(TransitionObserver observer) {
  std::lock_guard lock(observers_mutex_);
  observers_.push_back(std::move(observer));
}

std::string AnomalyTracker::Key(std::string_view detector, const Finding& finding) {
  std::string key(detector);
  key += '\x1f';
  key += SeverityName(finding.severity);
  for (const auto& [name, value] : finding.entity) {
    key += '\x1f' + name + '=' + value;
  }
  return key;
}

std::vector<AnomalyTransition> AnomalyTracker::Update(std::string_view detector, TimePoint now,
                                                      std::vector<Finding> findings) {
  std::vector<AnomalyTransition> transitions;
  {
    std::lock_guard lock(mutex_);
    std::map<std::string, Finding> current;
    for (Finding& finding : findings) {
      current.emplace(Key(detector, finding), std::move(finding));  // first one wins
    }
    // Clears: active before, not reported now (restored ones get their grace).
    for (auto it = active_.begin(); it != active_.end();) {
      ActiveAnomaly& anomaly = it->second;
      if (anomaly.detector != detector || current.contains(it->first)) {
        ++it;
        continue;
      }
      if (anomaly.restored && now - restored_at_ < restore_grace_) {
        ++it;
        continue;
      }
      transitions.push_back({anomaly.detector, false, now, anomaly.started, anomaly.finding});
      ++transitions_[{anomaly.detector, std::string(SeverityName(anomaly.finding.severity)),
                      "clear"}];
      it = active_.erase(it);
    }
    // Raises and updates.
    for (auto& [key, finding] : current) {
      auto it = active_.find(key);
      if (it != active_.end()) {
        it->second.finding = std::move(finding);
        it->second.updated = now;
        it->second.restored = false;
        continue;
      }
      ActiveAnomaly anomaly{std::string(detector), finding, now, now, false};
      transitions.push_back({anomaly.detector, true, now, now, finding});
      ++transitions_[{anomaly.detector, std::string(SeverityName(finding.severity)), "raise"}];
      active_.emplace(key, std::move(anomaly));
    }
  }
  Notify(transitions);
  return transitions;
}

void AnomalyTracker::Notify(const std::vector<AnomalyTransition>& transitions) {
  if (transitions.empty()) return;
  std::lock_guard lock(observers_mutex_);
  for (const AnomalyTransition& transition : transitions) {
    for (const TransitionObserver& observer : observers_) {
      try {
        observer(transition);
      } catch (const std::exception& e) {
        logger_->error("anomaly observer failed on {} {}: {}", transition.detector,
                       transition.raised ? "raise" : "clear", e.what());
      } catch (...) {
        logger_->error("anomaly observer failed on {} {}: unknown exception", transition.detector,
                       transition.raised ? "raise" : "clear");
      }
    }
  }
}

std::vector<ActiveAnomaly> AnomalyTracker::Active() const {
  std::vector<ActiveAnomaly> out;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, anomaly] : active_) out.push_back(anomaly);
  }
  std::stable_sort(out.begin(), out.end(), [](const ActiveAnomaly& a, const ActiveAnomaly& b) {
    return std::tuple(a.detector, SeverityRank(a.finding.severity), a.finding.entity) <
           std::tuple(b.detector, SeverityRank(b.finding.severity), b.finding.entity);
  });
  return out;
}

std::vector<prometheus::MetricFamily> AnomalyTracker::Collect(
    std::chrono::system_clock::duration wall_offset) const {
  prometheus::MetricFamily active = Family(kActive);
  prometheus::MetricFamily value = Family(kValue);
  prometheus::MetricFamily started = Family(kStarted);
  prometheus::MetricFamily transitions = Family(kTransitions);
  for (const ActiveAnomaly& anomaly : Active()) {
    active.metric.push_back(Sample(anomaly, 1));
    value.metric.push_back(Sample(anomaly, anomaly.finding.value));
    started.metric.push_back(Sample(anomaly, EpochSeconds(anomaly.started + wall_offset)));
  }
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, count] : transitions_) {
      prometheus::ClientMetric metric;
      metric.label = {{"detector", std::get<0>(key)},
                      {"severity", std::get<1>(key)},
                      {"transition", std::get<2>(key)}};
      metric.counter.value = static_cast<double>(count);
      transitions.metric.push_back(std::move(metric));
    }
  }
  std::vector<prometheus::MetricFamily> out;
  for (auto* family : {&active, &value, &started, &transitions}) {
    // Empty families are left out, like the sink does: no HELP without samples.
    if (!family->metric.empty()) out.push_back(std::move(*family));
  }
  return out;
}

nlohmann::json AnomalyTracker::SaveState() const {
  nlohmann::json out = nlohmann::json::array();
  for (const ActiveAnomaly& anomaly : Active()) {
    nlohmann::json entry = FindingJson(anomaly.finding);
    entry["detector"] = anomaly.detector;
    entry["started"] = EpochSeconds(anomaly.started);
    out.push_back(std::move(entry));
  }
  return out;
}

Status AnomalyTracker::LoadState(const nlohmann::json& state, StateLoadCheck& check) {
  const TimePoint now = check.now();
  if (!state.is_array()) {
    return Status(StatusCode::kInvalidArgument, "anomalies: expected an array");
  }
  std::map<std::string, ActiveAnomaly> restored;
  for (const auto& entry : state) {
    auto finding = FindingFromJson(entry);
    if (!finding) return finding.error().WithContext("anomalies");
    if (!std::isfinite(finding->value)) {
      check.Drop(StateLoadCheck::kOutOfRange);
      continue;
    }
    ActiveAnomaly anomaly;
    try {
      anomaly.detector = entry.at("detector").get<std::string>();
      auto started = check.Past(entry.at("started"));
      if (!started) continue;
      anomaly.started = *started;
    } catch (const nlohmann::json::exception& e) {
      return Status(StatusCode::kInvalidArgument, std::string("anomalies: ") + e.what());
    }
    anomaly.finding = std::move(*finding);
    anomaly.updated = now;
    anomaly.restored = true;
    restored.emplace(Key(anomaly.detector, anomaly.finding), std::move(anomaly));
  }
  std::lock_guard lock(mutex_);
  restored_at_ = now;
  for (auto& [key, anomaly] : restored) active_.emplace(key, std::move(anomaly));
  return Status::Ok();
}

TransitionObserver LogTransitions(std::shared_ptr<spdlog::logger> logger) {
  return [logger = std::move(logger)](const AnomalyTransition& t) {
    const std::string entity = EntityText(t.finding.entity);
    const auto level = t.raised ? spdlog::level::warn : spdlog::level::info;
    logger->log(level,
                "anomaly {} detector={} severity={} {} value={} drain_eligible={} "
                "active_seconds={:.3f} reason=\"{}\"",
                t.raised ? "raised" : "cleared", t.detector, SeverityName(t.finding.severity),
                entity, t.finding.value, t.finding.drain_eligible, Seconds(t.time - t.started),
                t.finding.reason);
  };
}

}  // namespace fabricwatch::detect
