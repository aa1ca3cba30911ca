#include "detectors/thermal_drift/thermal_drift.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/duration.h"
#include "collectors/ethtool/ethtool_metrics.h"
#include "collectors/optics/optics_metrics.h"
#include "detectors/core/counter.h"
#include "detectors/core/finding_merge.h"
#include "detectors/core/hysteresis.h"
#include "detectors/core/inputs.h"
#include "detectors/core/linear_trend.h"
#include "detectors/core/snapshot_lookup.h"
#include "detectors/core/state_check.h"
#include "detectors/thermal_drift/thermal_drift_metrics.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::duration;

constexpr std::string_view kName = "thermal_drift";

// Keys, defaults and the source of each default (docs/detection.md sections, [S..] references).
constexpr DetectorOptionSpec kOptions[] = {
    {"fallback-warning-celsius",
     "Warning threshold (°C) for a module that reports none or 0. §4.1/§8: commercial optics are "
     "rated 0-70 °C case [S31]; example TempHighWarning 70 [S30]",
     "70"},
    {"fallback-alarm-celsius",
     "Alarm threshold (°C) for a module that reports none or 0. §4.1/§8: example TempHighAlarm 75 "
     "[S30]",
     "75"},
    {"warning-for",
     "How long the temperature must stay at or above the high warning. §4.2/§8 (>= high-warn 2 "
     "min)",
     "2m"},
    {"alarm-for",
     "How long the temperature must stay at or above the high alarm. §4.2/§8 (>= high-alarm 1 min)",
     "1m"},
    {"clear-margin-celsius",
     "A finding clears below threshold minus this margin (hysteresis). Judgement, §4.2", "2"},
    {"clear-for",
     "How long the clear condition must hold before a finding clears. UFM PDR de-isolates after 5 "
     "min healthy [S21], §3.2",
     "5m"},
    {"slew-celsius",
     "Max minus min temperature within slew-window that raises a slew warning. UFM PDR >10 °C "
     "between 300 s samples [S21], §4.2/§8",
     "10"},
    {"slew-window", "Window of the slew check. UFM PDR 300 s sampling [S21], §4.2", "5m"},
    {"projection-lookback",
     "History of the long linear fit that projects the temperature. Judgement (DOM changes slowly, "
     "§4.2; predict_linear [S40], §5)",
     "30m"},
    {"projection-min-span",
     "History the long fit needs, and twice the short fit that must agree (a finished step is not "
     "extrapolated). Judgement, §5",
     "10m"},
    {"projection-horizon",
     "Warn when both fits reach the warning threshold within this time. Judgement, predict_linear "
     "pattern [S40], §5",
     "1h"},
    {"projection-margin-celsius",
     "Project only within this many °C below the warning threshold. Judgement, §4.2", "10"},
    {"projection-for", "How long the projection must hold before it warns. Judgement, §5", "1m"},
};

using thermal_drift::kEta;
using thermal_drift::kNetdev;
using thermal_drift::kSlew;
using thermal_drift::kSlope;
using thermal_drift::kThreshold;
// What thermal_drift reads (detectors/core/inputs.h).
constexpr MetricInput kInputs[] = {
    {optics::kTemperature, {"netdev"}},
    {optics::kPresent, {"netdev"}},
    {optics::kInfo, {"netdev", "serial"}},
    {optics::kLastRead, {"netdev"}},
    {optics::kTemperatureThreshold, {"netdev", "threshold"}},
    {ethtool::kModuleEvents, {"netdev", "event"}},
};
constexpr MetricDesc kMetrics[] = {kThreshold, kSlew, kSlope, kEta};

struct Module {
  Module(const ThermalDriftOptions& o)
      : warning(o.warning_for, o.clear_for),
        alarm(o.alarm_for, o.clear_for),
        slew(std::chrono::milliseconds(0), o.clear_for),
        projection(o.projection_for, o.clear_for),
        long_trend(o.projection_lookback, std::chrono::seconds(30)),
        short_trend(o.projection_min_span, std::chrono::seconds(30)) {}

  std::string serial;
  std::optional<TimePoint> read_time;
  double temperature = 0;
  double warning_threshold = 0;
  double alarm_threshold = 0;
  bool thresholds_from_module = false;
  HoldDown warning;
  HoldDown alarm;
  HoldDown slew;
  HoldDown projection;
  LinearTrend long_trend;
  LinearTrend short_trend;
  std::deque<std::pair<TimePoint, double>> recent;  // for slew
  double slew_value = 0;
  std::optional<double> slope;
  std::optional<double> eta;
};

struct HighTempEvents {
  HighTempEvents(const ThermalDriftOptions& o) : latch(std::chrono::milliseconds(0), o.clear_for) {}
  CounterTracker tracker;
  HoldDown latch;
  uint64_t last_delta = 0;
};

// " rising 0.25 °C/min, projected to reach 70.0 °C in 12 min": only the numbers the fits gave.
// The projection holds for projection-for after the fits stop answering, so the text says why it
// has no current time: the module already at or past the threshold, cooling or flat, or too few
// recent samples (a gap); a slope or time that was not computed never prints as 0.
std::string ProjectionText(const Module& m) {
  const std::string target = FormatFixed(m.warning_threshold) + " °C";
  if (m.temperature >= m.warning_threshold) {
    return " now at or above the " + target + " warning threshold";
  }
  if (m.slope && *m.slope <= 0) {
    return (*m.slope < 0 ? " falling " + FormatFixed(*m.slope * -60, 2) + " °C/min"
                         : std::string(" flat")) +
           ", no longer projected to reach " + target;
  }
  std::string text = m.slope ? " rising " + FormatFixed(*m.slope * 60, 2) + " °C/min" : " rising";
  text += ", projected to reach " + target;
  if (!m.eta) return text + " (no current projection: too few recent samples)";
  if (*m.eta < 60) return text + " in under 1 min";
  return text + " in " + FormatFixed(*m.eta / 60, 0) + " min";
}

class ThermalDriftDetector final : public Detector {
 public:
  explicit ThermalDriftDetector(ThermalDriftOptions options) : options_(options) {}

  std::string_view name() const override { return kName; }
  std::vector<std::string> inputs() const override { return InputCollectors(kInputs); }

  void Observe(const SnapshotView& snapshot) override {
    if (snapshot.From<optics::kCollector>()) ObserveOptics(snapshot);
    if (snapshot.From<ethtool::kCollector>()) ObserveEthtool(snapshot);
  }

  std::vector<Finding> Evaluate(TimePoint /*now*/) override {
    std::vector<Finding> signals;
    for (const auto& [netdev, m] : modules_) {
      const EntityLabels entity{{"netdev", netdev}};
      auto evidence = [&] {
        std::vector<Evidence> e{{"temperature_celsius", m.temperature},
                                {"warning_threshold_celsius", m.warning_threshold},
                                {"alarm_threshold_celsius", m.alarm_threshold}};
        return e;
      };
      const std::string source = m.thresholds_from_module ? "module" : "fallback";
      if (m.alarm.active()) {
        Finding f{Severity::kCritical,
                  entity,
                  m.temperature,
                  evidence(),
                  "module on " + netdev + " at " + FormatFixed(m.temperature) + " °C ≥ " + source +
                      " high alarm " + FormatFixed(m.alarm_threshold) + " °C",
                  true};
        signals.push_back(std::move(f));
      }
      if (m.warning.active()) {
        signals.push_back({Severity::kWarning, entity, m.temperature, evidence(),
                           "module on " + netdev + " at " + FormatFixed(m.temperature) + " °C ≥ " +
                               source + " high warning " + FormatFixed(m.warning_threshold) + " °C",
                           false});
      }
      if (m.projection.active()) {
        std::vector<Evidence> e = evidence();
        if (m.slope) e.push_back({"slope_celsius_per_second", *m.slope});
        if (m.eta) e.push_back({"projected_seconds_to_warning", *m.eta});
        signals.push_back({Severity::kWarning, entity, m.temperature, std::move(e),
                           "module on " + netdev + " at " + FormatFixed(m.temperature) + " °C" +
                               ProjectionText(m),
                           false});
      }
      if (m.slew.active()) {
        std::vector<Evidence> e = evidence();
        e.push_back({"slew_celsius", m.slew_value});
        signals.push_back({Severity::kWarning, entity, m.slew_value, std::move(e),
                           "module on " + netdev + " temperature changed " +
                               FormatFixed(m.slew_value) + " °C within " +
                               FormatDuration(options_.slew_window),
                           false});
      }
    }
    for (const auto& [netdev, events] : high_temp_) {
      if (!events.latch.active()) continue;
      signals.push_back({Severity::kCritical,
                         {{"netdev", netdev}},
                         static_cast<double>(events.last_delta),
                         {{"high_temp_events", static_cast<double>(events.last_delta)}},
                         "NIC driver counted a module over-temperature event (module_high_temp) "
                         "on " +
                             netdev,
                         true});
    }
    return MergeFindings(std::move(signals));
  }

  void Export(MetricSink& sink) const override {
    for (const auto& [netdev, m] : modules_) {
      if (!m.read_time) continue;
      sink.Add(kThreshold, {{"netdev", netdev}, {"level", "warning"}}, m.warning_threshold);
      sink.Add(kThreshold, {{"netdev", netdev}, {"level", "alarm"}}, m.alarm_threshold);
      sink.Add(kSlew, {{"netdev", netdev}}, m.slew_value);
      if (m.slope) sink.Add(kSlope, {{"netdev", netdev}}, *m.slope);
      if (m.eta) sink.Add(kEta, {{"netdev", netdev}}, *m.eta);
    }
  }

 private:
  void ObserveOptics(const SnapshotView& snapshot) {
    const Families& families = snapshot.families;
    std::set<std::string> seen;
    ForEachSample(families, optics::kTemperature,
                  [&](const prometheus::ClientMetric& metric, double value) {
                    const std::string name(Label<optics::kTemperature>(metric, "netdev"));
                    // No netdev, no module a finding could name; NaN is no temperature.
                    if (name.empty() || !std::isfinite(value)) return;
                    const auto present = FindValue<optics::kPresent>(families, {{"netdev", name}});
                    if (present && *present == 0) return;  // empty cage: maintenance
                    seen.insert(name);
                    ObserveModule(families, name, value, snapshot.time);
                  });
    // A module that stopped reporting (unplugged, port gone): its history is no longer valid.
    std::erase_if(modules_, [&](const auto& entry) { return !seen.contains(entry.first); });
  }

  void ObserveModule(const Families& families, const std::string& netdev, double temperature,
                     TimePoint snapshot_time) {
    std::string serial;
    ForEachSample(families, optics::kInfo, [&](const prometheus::ClientMetric& metric, double) {
      if (Label<optics::kInfo>(metric, "netdev") == netdev) {
        serial = Label<optics::kInfo>(metric, "serial");
      }
    });
    TimePoint time = snapshot_time;
    if (auto read = FindValue<optics::kLastRead>(families, {{"netdev", netdev}})) {
      time = TimePoint(std::chrono::duration_cast<TimePoint::duration>(duration<double>(*read)));
    }
    auto it = modules_.find(netdev);
    if (it != modules_.end() && it->second.serial != serial) {
      modules_.erase(it);  // a module swap: the new module starts with no history
      it = modules_.end();
    }
    if (it == modules_.end()) it = modules_.emplace(netdev, Module(options_)).first;
    Module& m = it->second;
    m.serial = serial;
    if (m.read_time && time <= *m.read_time) return;  // the same DOM read re-exported
    m.read_time = time;
    m.temperature = temperature;

    const auto warn = FindValue<optics::kTemperatureThreshold>(
        families, {{"netdev", netdev}, {"threshold", "high_warning"}});
    const auto alarm = FindValue<optics::kTemperatureThreshold>(
        families, {{"netdev", netdev}, {"threshold", "high_alarm"}});
    // Unprogrammed modules report 0 (or nonsense ordering): use the §4.1 fallback then.
    m.thresholds_from_module =
        warn && alarm && *warn > 0 && *alarm >= *warn && std::isfinite(*alarm);
    m.warning_threshold = m.thresholds_from_module ? *warn : options_.fallback_warning_celsius;
    m.alarm_threshold = m.thresholds_from_module ? *alarm : options_.fallback_alarm_celsius;

    const double margin = options_.clear_margin_celsius;
    m.alarm.Update(temperature >= m.alarm_threshold, temperature < m.alarm_threshold - margin,
                   time);
    m.warning.Update(temperature >= m.warning_threshold, temperature < m.warning_threshold - margin,
                     time);

    m.recent.emplace_back(time, temperature);
    while (time - m.recent.front().first > options_.slew_window) m.recent.pop_front();
    auto [lo, hi] =
        std::minmax_element(m.recent.begin(), m.recent.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; });
    m.slew_value = hi->second - lo->second;
    m.slew.Update(m.slew_value > options_.slew_celsius,
                  m.slew_value < options_.slew_celsius - margin, time);

    m.long_trend.Add(time, temperature);
    m.short_trend.Add(time, temperature);
    const auto long_fit = m.long_trend.Evaluate(6, options_.projection_min_span);
    const auto short_fit = m.short_trend.Evaluate(4, options_.projection_min_span / 2);
    m.slope = long_fit ? std::optional<double>(long_fit->slope_per_second) : std::nullopt;
    m.eta = long_fit ? long_fit->SecondsToReach(m.warning_threshold) : std::nullopt;
    const auto short_eta =
        short_fit ? short_fit->SecondsToReach(m.warning_threshold) : std::nullopt;
    const double horizon = Seconds(options_.projection_horizon);
    const bool near = temperature >= m.warning_threshold - options_.projection_margin_celsius;
    const bool projected = near && temperature < m.warning_threshold && m.eta &&
                           *m.eta <= horizon && short_eta && *short_eta <= horizon;
    // Clears once neither fit reaches the threshold within 1.5 × the horizon, or the module
    // cooled out of the projection band (the level latches take over above the threshold).
    const bool receded =
        !m.eta || *m.eta > 1.5 * horizon || !short_eta || *short_eta > 1.5 * horizon ||
        temperature < m.warning_threshold - options_.projection_margin_celsius - margin;
    m.projection.Update(projected, receded, time);
  }

  void ObserveEthtool(const SnapshotView& snapshot) {
    std::set<std::string> seen;
    ForEachSample(snapshot.families, ethtool::kModuleEvents,
                  [&](const prometheus::ClientMetric& metric, double value) {
                    if (Label<ethtool::kModuleEvents>(metric, "event") != "high_temp") return;
                    const std::string name(Label<ethtool::kModuleEvents>(metric, "netdev"));
                    if (name.empty() || !(value >= 0)) return;
                    seen.insert(name);
                    auto it = high_temp_.try_emplace(name, options_).first;
                    CounterStep step =
                        it->second.tracker.Update(static_cast<uint64_t>(value), snapshot.time);
                    // A reset's "delta since reset" is trusted only from a 64-bit counter that
                    // went back to a small value; an over-temperature is rare enough that any
                    // valid increment counts.
                    const bool event = step.valid && step.delta > 0;
                    if (event) it->second.last_delta = step.delta;
                    it->second.latch.Update(event, step.valid && step.delta == 0, snapshot.time);
                  });
    std::erase_if(high_temp_, [&](const auto& entry) { return !seen.contains(entry.first); });
  }

  // The state file (issue 22 item 6): each module's temperature trends, keyed by netdev and
  // serial, so a restart in the middle of a slow warming keeps its projection.
  static nlohmann::json TrendJson(const LinearTrend& trend) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& [t, v] : trend.Points()) {
      out.push_back({std::chrono::duration<double>(t.time_since_epoch()).count(), v});
    }
    return out;
  }
  static bool RestoreTrend(const nlohmann::json& json, LinearTrend& trend, StateLoadCheck& check) {
    if (!json.is_array()) return false;
    std::vector<std::pair<TimePoint, double>> points;
    for (const auto& point : json) {
      if (!point.is_array() || point.size() != 2) return false;
      auto t = check.Past(point[0]);
      auto v = check.Number(point[1], -100, 300);  // °C a module can report
      if (t && v) points.emplace_back(*t, *v);
    }
    trend.Restore(points);
    return true;
  }

 public:
  nlohmann::json SaveState() const override {
    nlohmann::json modules = nlohmann::json::object();
    for (const auto& [netdev, m] : modules_) {
      modules[netdev] = {{"serial", m.serial},
                         {"long", TrendJson(m.long_trend)},
                         {"short", TrendJson(m.short_trend)}};
    }
    return {{"version", 1}, {"modules", modules}};
  }

  Status LoadState(const nlohmann::json& state, StateLoadCheck& check) override {
    auto bad = [](const std::string& what) {
      return Status(StatusCode::kInvalidArgument, "detector thermal_drift: state: " + what);
    };
    if (!state.is_object()) return bad("not an object");
    if (state.empty()) return Status::Ok();  // nothing saved yet
    if (state.value("version", 0) != 1) return bad("unsupported version");
    const auto modules = state.find("modules");
    if (modules == state.end() || !modules->is_object()) return bad("missing modules");
    for (const auto& [netdev, j] : modules->items()) {
      Module m(options_);
      if (!j.is_object() || !j.contains("serial") || !j["serial"].is_string() ||
          !RestoreTrend(j.value("long", nlohmann::json()), m.long_trend, check) ||
          !RestoreTrend(j.value("short", nlohmann::json()), m.short_trend, check)) {
        return bad("module on " + netdev + ": malformed");
      }
      m.serial = j["serial"].get<std::string>();
      modules_.insert_or_assign(netdev, std::move(m));
    }
    return Status::Ok();
  }

 private:
  ThermalDriftOptions options_;
  std::map<std::string, Module> modules_;
  std::map<std::string, HighTempEvents> high_temp_;
};

}  // namespace

Result<ThermalDriftOptions> ParseThermalDriftOptions(const DetectorOptions& options) {
  ThermalDriftOptions o;
  auto reader = OptionReader::Make(kName, options, kOptions);
  if (!reader) return Error(reader.error());
  o.fallback_warning_celsius = reader->Number("fallback-warning-celsius", -40, 150);
  o.fallback_alarm_celsius = reader->Number("fallback-alarm-celsius", -40, 150);
  o.warning_for = reader->Duration("warning-for", true);
  o.alarm_for = reader->Duration("alarm-for", true);
  o.clear_margin_celsius = reader->Number("clear-margin-celsius", 0, 50);
  o.clear_for = reader->Duration("clear-for", true);
  o.slew_celsius = reader->Number("slew-celsius", 0.1, 200);
  o.slew_window = reader->Duration("slew-window");
  o.projection_lookback = reader->Duration("projection-lookback");
  o.projection_min_span = reader->Duration("projection-min-span");
  o.projection_horizon = reader->Duration("projection-horizon");
  o.projection_margin_celsius = reader->Number("projection-margin-celsius", 0, 200);
  o.projection_for = reader->Duration("projection-for", true);
  if (!reader->status().ok()) return Error(reader->status());
  if (o.fallback_alarm_celsius < o.fallback_warning_celsius) {
    return Error(StatusCode::kInvalidArgument,
                 "detector thermal_drift: option fallback-alarm-celsius must be ≥ "
                 "fallback-warning-celsius");
  }
  if (o.projection_min_span > o.projection_lookback) {
    return Error(StatusCode::kInvalidArgument,
                 "detector thermal_drift: option projection-min-span must not exceed "
                 "projection-lookback");
  }
  return o;
}

std::span<const DetectorOptionSpec> ThermalDriftDetectorOptions() { return kOptions; }
std::span<const MetricDesc> ThermalDriftDetectorMetrics() { return kMetrics; }
std::span<const MetricInput> ThermalDriftDetectorInputs() { return kInputs; }

Status ValidateThermalDriftDetectorOptions(const DetectorOptions& options) {
  return StatusOf(ParseThermalDriftOptions(options));
}

Result<std::unique_ptr<Detector>> MakeThermalDriftDetector(const DetectorOptions& options) {
  Result<ThermalDriftOptions> parsed = ParseThermalDriftOptions(options);
  if (!parsed) return Error(parsed.error());
  return std::unique_ptr<Detector>(new ThermalDriftDetector(*parsed));
}

}  // namespace fabricwatch::detect
