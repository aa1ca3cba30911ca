#include "detectors/optical_drift/optical_drift.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collectors/optics/optics_metrics.h"
#include "detectors/core/finding_merge.h"
#include "detectors/core/hysteresis.h"
#include "detectors/core/inputs.h"
#include "detectors/core/snapshot_lookup.h"
#include "detectors/core/state_check.h"
#include "detectors/optical_drift/optical_drift_metrics.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::duration;

constexpr std::string_view kName = "optical_drift";

// Keys, defaults and the source of each default (docs/detection.md sections, [S..] references).
constexpr DetectorOptionSpec kOptions[] = {
    {"threshold-warning-for",
     "How long rx power must stay below the module's low warning (or bias above its high warning). "
     "§4.2 [S30]",
     "5m"},
    {"threshold-alarm-for",
     "How long rx power must stay below the module's low alarm (or bias above its high alarm). "
     "§4.2 [S30]",
     "1m"},
    {"rx-drift-warning-db",
     "Drop of rx power below the module's baseline (dB) that warns. Judgement anchored to the ~3 "
     "dB reserved margin [S35b], §4.2/§8",
     "2"},
    {"rx-drift-critical-db",
     "Drop of rx power below the baseline (dB) that is critical. ~3 dB reserved margin [S35b], "
     "§4.2/§8",
     "3"},
    {"rx-drift-clear-db", "An rx drift finding clears below this drop (dB). Judgement, §4.2", "1"},
    {"rx-drift-for", "How long an rx drift must hold. §4.2/§8", "30m"},
    {"baseline-time-constant", "Time constant of the per-module EWMA baseline. §8 EWMA-7d baseline",
     "7d"},
    {"baseline-warmup",
     "Readings a baseline needs before it is compared against. Judgement (the §4.2 drift window)",
     "30m"},
    {"bias-warning-ratio",
     "Laser bias above (1 + this) x the same-temperature baseline warns. Judgement from the 30 % "
     "end-of-life example [S36] and temperature-aware limits [S34], §4.2",
     "0.2"},
    {"bias-critical-ratio",
     "Laser bias above (1 + this) x the baseline is critical. 30 % drive-current end-of-life "
     "[S36], §4.2",
     "0.3"},
    {"bias-clear-ratio",
     "A bias drift finding clears below (1 + this) x the baseline. Judgement, §4.2", "0.1"},
    {"bias-for", "How long a bias drift must hold. Judgement, like the rx drift, §4.2", "30m"},
    {"bias-bin-celsius",
     "Width of the temperature bins bias baselines are kept in (bias depends on temperature). §4.1 "
     "[S33][S34], §4.2",
     "5"},
    {"bias-min-samples",
     "Readings a bias bin needs before it is a baseline (10 min at the 30 s DOM cadence). "
     "Judgement, §4.2",
     "20"},
    {"clear-for",
     "How long the clear condition must hold before a finding clears. UFM PDR 5 min de-isolation "
     "[S21], §3.2",
     "5m"},
    {"baseline-retention",
     "Baselines of modules not seen for this long are dropped from the state. Judgement, §4.2",
     "30d"},
};
constexpr int kStateVersion = 1;

using optical_drift::kBiasRatio;
using optical_drift::kLane;
using optical_drift::kRxBaseline;
using optical_drift::kRxRatio;
// What optical_drift reads (detectors/core/inputs.h).
constexpr MetricInput kInputs[] = {
    {optics::kInfo, {"netdev", "serial"}},
    {optics::kPresent, {"netdev"}},
    {optics::kLastRead, {"netdev"}},
    {optics::kRxPowerThreshold, {"netdev", "threshold"}},
    {optics::kBiasThreshold, {"netdev", "threshold"}},
    {optics::kTemperature, {"netdev"}},
    {optics::kRxPower, {"netdev", "lane"}},
    {optics::kRxLos, {"netdev", "lane"}},
    {optics::kBias, {"netdev", "lane"}},
};
constexpr MetricDesc kMetrics[] = {kRxBaseline, kRxRatio, kBiasRatio};

double Dbm(double watts) { return 10 * std::log10(watts * 1000); }
double Watts(double dbm) { return std::pow(10, dbm / 10) / 1000; }

// The module's programmed threshold `which` of Family (SFF-8636/CMIS thresholds), or nullopt when
// it has none or reads 0, which means unprogrammed.
template <const auto& Family>
std::optional<double> Threshold(const Families& families, std::string_view netdev,
                                std::string_view which) {
  auto value = FindValue<Family>(families, {{"netdev", netdev}, {"threshold", which}});
  return value && *value > 0 ? value : std::nullopt;
}
// A running mean that becomes an EWMA with time constant tau once 1/n is below the EWMA's
// weight: no start-up bias, day-scale memory afterwards (docs/detection.md §5 EWMA row).
struct Baseline {
  double mean = 0;
  double samples = 0;
  double first = 0;  // unix seconds of the first reading
  double last = 0;   // unix seconds of the last reading

  void Add(double value, double time, double tau_seconds) {
    if (samples == 0) {
      mean = value;
      samples = 1;
      first = last = time;
      return;
    }
    const double dt = std::max(0.0, time - last);
    const double ewma = 1 - std::exp(-dt / tau_seconds);
    samples += 1;
    const double weight = std::max(1.0 / samples, ewma);
    mean += weight * (value - mean);
    last = time;
  }
  nlohmann::json ToJson() const {
    return {{"mean", mean}, {"samples", samples}, {"first", first}, {"last", last}};
  }
  static std::optional<Baseline> FromJson(const nlohmann::json& j) {
    if (!j.is_object()) return std::nullopt;
    Baseline b;
    for (auto [key, field] : {std::pair{"mean", &b.mean}, std::pair{"samples", &b.samples},
                              std::pair{"first", &b.first}, std::pair{"last", &b.last}}) {
      auto it = j.find(key);
      if (it == j.end() || !it->is_number() || !std::isfinite(it->get<double>())) {
        return std::nullopt;
      }
      *field = it->get<double>();
    }
    if (b.samples < 1) return std::nullopt;
    return b;
  }
};

struct LaneBaseline {
  Baseline rx_dbm;
  std::map<int, Baseline> bias;  // by temperature bin
};

struct ModuleBaseline {
  std::string netdev;
  double last_seen = 0;
  std::map<std::string, LaneBaseline> lanes;
};

struct LaneState {
  LaneState(const OpticalDriftOptions& o)
      : rx_low_warning(o.threshold_warning_for, o.clear_for),
        rx_low_alarm(o.threshold_alarm_for, o.clear_for),
        bias_high_warning(o.threshold_warning_for, o.clear_for),
        bias_high_alarm(o.threshold_alarm_for, o.clear_for),
        rx_drift_warning(o.rx_drift_for, o.clear_for),
        rx_drift_critical(o.rx_drift_for, o.clear_for),
        bias_drift_warning(o.bias_for, o.clear_for),
        bias_drift_critical(o.bias_for, o.clear_for) {}
  HoldDown rx_low_warning, rx_low_alarm, bias_high_warning, bias_high_alarm;
  HoldDown rx_drift_warning, rx_drift_critical, bias_drift_warning, bias_drift_critical;
  std::optional<double> rx_watts, bias_amperes, rx_drop_db, bias_ratio, baseline_watts;
  double rx_low_warning_w = 0, rx_low_alarm_w = 0, bias_high_warning_a = 0, bias_high_alarm_a = 0;
  bool seen = false;
};

struct ModuleState {
  std::string serial;
  std::optional<TimePoint> read_time;
  std::map<std::string, LaneState> lanes;
};

class OpticalDriftDetector final : public Detector {
 public:
  explicit OpticalDriftDetector(OpticalDriftOptions options) : options_(options) {}
  std::string_view name() const override { return kName; }
  std::vector<std::string> inputs() const override { return InputCollectors(kInputs); }

  void Observe(const SnapshotView& snapshot) override {
    if (!snapshot.From<optics::kCollector>()) return;
    const Families& families = snapshot.families;
    std::map<std::string, std::string> serials;  // netdev → serial
    ForEachSample(families, optics::kInfo, [&](const prometheus::ClientMetric& m, double) {
      const std::string_view netdev = Label<optics::kInfo>(m, "netdev");
      // No netdev names no module a finding could name.
      if (!netdev.empty()) serials[std::string(netdev)] = Label<optics::kInfo>(m, "serial");
    });
    std::set<std::string> seen;
    for (const auto& [netdev, serial_label] : serials) {
      const auto present = FindValue<optics::kPresent>(families, {{"netdev", netdev}});
      if (present && *present == 0) continue;
      seen.insert(netdev);
      // Modules without a serial get a netdev-scoped key: a baseline still, just not portable.
      const std::string serial = serial_label.empty() ? "netdev:" + netdev : serial_label;
      ObserveModule(families, netdev, serial, snapshot.time);
    }
    std::erase_if(modules_, [&](const auto& entry) { return !seen.contains(entry.first); });
    const double now = EpochSeconds(snapshot.time);
    const double retention = duration<double>(options_.baseline_retention).count();
    std::erase_if(baselines_,
                  [&](const auto& entry) { return now - entry.second.last_seen > retention; });
  }

  std::vector<Finding> Evaluate(TimePoint /*now*/) override {
    std::vector<Finding> signals;
    for (const auto& [netdev, module] : modules_) {
      for (const auto& [lane, s] : module.lanes) {
        const EntityLabels entity{{"netdev", netdev}, {"lane", lane}};
        const std::string where = netdev + " lane " + lane;
        const double rx = s.rx_watts.value_or(0);
        const double rx_dbm = rx > 0 ? Dbm(rx) : -40;
        auto rx_evidence = [&] {
          std::vector<Evidence> e{{"rx_power_watts", rx}};
          if (s.baseline_watts) e.push_back({"rx_power_baseline_watts", *s.baseline_watts});
          if (s.rx_drop_db) e.push_back({"rx_power_drop_decibels", *s.rx_drop_db});
          return e;
        };
        auto bias_evidence = [&] {
          std::vector<Evidence> e{{"tx_bias_amperes", s.bias_amperes.value_or(0)}};
          if (s.bias_ratio) e.push_back({"tx_bias_baseline_ratio", *s.bias_ratio});
          return e;
        };
        if (s.rx_low_alarm.active()) {
          signals.push_back({Severity::kCritical, entity, rx, rx_evidence(),
                             where + " rx power " + FormatFixed(rx_dbm, 1) + " dBm below the module's " +
                                 "low alarm " + FormatFixed(Dbm(s.rx_low_alarm_w), 1) + " dBm",
                             true});
        }
        if (s.bias_high_alarm.active()) {
          signals.push_back({Severity::kCritical, entity, s.bias_amperes.value_or(0),
                             bias_evidence(),
                             where + " laser bias " + FormatFixed(s.bias_amperes.value_or(0) * 1e3, 2) +
                                 " mA at or above the module's high alarm " +
                                 FormatFixed(s.bias_high_alarm_a * 1e3, 2) + " mA",
                             true});
        }
        if (s.rx_drift_critical.active() || s.rx_drift_warning.active()) {
          const Severity sev =
              s.rx_drift_critical.active() ? Severity::kCritical : Severity::kWarning;
          signals.push_back({sev, entity, s.rx_drop_db.value_or(0), rx_evidence(),
                             where + " rx power " + FormatFixed(rx_dbm, 1) + " dBm, " +
                                 FormatFixed(s.rx_drop_db.value_or(0), 1) +
                                 " dB below the module's baseline",
                             false});
        }
        if (s.bias_drift_critical.active() || s.bias_drift_warning.active()) {
          const Severity sev =
              s.bias_drift_critical.active() ? Severity::kCritical : Severity::kWarning;
          signals.push_back({sev, entity, s.bias_ratio.value_or(0), bias_evidence(),
                             where + " laser bias " +
                                 FormatFixed((s.bias_ratio.value_or(1) - 1) * 100, 0) +
                                 " % above its baseline at the same temperature",
                             false});
        }
        if (s.rx_low_warning.active()) {
          signals.push_back({Severity::kWarning, entity, rx, rx_evidence(),
                             where + " rx power " + FormatFixed(rx_dbm, 1) + " dBm below the module's " +
                                 "low warning " + FormatFixed(Dbm(s.rx_low_warning_w), 1) + " dBm",
                             false});
        }
        if (s.bias_high_warning.active()) {
          signals.push_back({Severity::kWarning, entity, s.bias_amperes.value_or(0),
                             bias_evidence(),
                             where + " laser bias at or above the module's high warning " +
                                 FormatFixed(s.bias_high_warning_a * 1e3, 2) + " mA",
                             false});
        }
      }
    }
    return MergeFindings(std::move(signals));
  }

  void Export(MetricSink& sink) const override {
    for (const auto& [netdev, module] : modules_) {
      for (const auto& [lane, s] : module.lanes) {
        const LabelPair labels[] = {{"netdev", netdev}, {"lane", lane}};
        if (s.baseline_watts) {
          sink.Add(kRxBaseline, labels, *s.baseline_watts);
          if (s.rx_watts) sink.Add(kRxRatio, labels, *s.rx_watts / *s.baseline_watts);
        }
        if (s.bias_ratio) sink.Add(kBiasRatio, labels, *s.bias_ratio);
      }
    }
  }

  nlohmann::json SaveState() const override {
    nlohmann::json modules = nlohmann::json::object();
    for (const auto& [serial, b] : baselines_) {
      nlohmann::json lanes = nlohmann::json::object();
      for (const auto& [lane, lb] : b.lanes) {
        nlohmann::json bias = nlohmann::json::object();
        for (const auto& [bin, baseline] : lb.bias) bias[std::to_string(bin)] = baseline.ToJson();
        nlohmann::json j = {{"bias", bias}};
        if (lb.rx_dbm.samples > 0) j["rx_dbm"] = lb.rx_dbm.ToJson();
        lanes[lane] = j;
      }
      modules[serial] = {{"netdev", b.netdev}, {"last_seen", b.last_seen}, {"lanes", lanes}};
    }
    return {{"version", kStateVersion}, {"modules", modules}};
  }

  Status LoadState(const nlohmann::json& state, StateLoadCheck& check) override {
    auto bad = [](const std::string& what) {
      return Status(StatusCode::kInvalidArgument, "detector optical_drift: state: " + what);
    };
    if (!state.is_object()) return bad("not an object");
    if (state.empty()) return Status::Ok();  // nothing saved yet
    if (state.value("version", 0) != kStateVersion) return bad("unsupported version");
    auto modules = state.find("modules");
    if (modules == state.end() || !modules->is_object()) return bad("missing modules");
    std::map<std::string, ModuleBaseline> loaded;
    for (const auto& [serial, m] : modules->items()) {
      const std::string where = "module " + serial;
      if (!m.is_object() || !m.contains("netdev") || !m["netdev"].is_string() ||
          !m.contains("last_seen") || !m["last_seen"].is_number() || !m.contains("lanes") ||
          !m["lanes"].is_object()) {
        return bad(where + ": malformed");
      }
      // A module last seen in the future is dropped whole (detectors/core/state_check.h): its
      // baselines' ages would be negative.
      if (!check.Past(m["last_seen"])) continue;
      ModuleBaseline b;
      b.netdev = m["netdev"].get<std::string>();
      b.last_seen = m["last_seen"].get<double>();
      for (const auto& [lane, l] : m["lanes"].items()) {
        LaneBaseline lb;
        if (!l.is_object()) return bad(where + " lane " + lane + ": malformed");
        if (l.contains("rx_dbm")) {
          auto rx = Baseline::FromJson(l["rx_dbm"]);
          if (!rx) return bad(where + " lane " + lane + ": malformed rx_dbm");
          if (Plausible(*rx, check)) lb.rx_dbm = *rx;
        }
        if (l.contains("bias")) {
          if (!l["bias"].is_object()) return bad(where + " lane " + lane + ": malformed bias");
          for (const auto& [bin, value] : l["bias"].items()) {
            auto baseline = Baseline::FromJson(value);
            char* end = nullptr;
            const long parsed = std::strtol(bin.c_str(), &end, 10);
            if (!baseline || end == bin.c_str() || *end != '\0') {
              return bad(where + " lane " + lane + ": malformed bias bin " + bin);
            }
            if (Plausible(*baseline, check)) lb.bias[static_cast<int>(parsed)] = *baseline;
          }
        }
        b.lanes[lane] = std::move(lb);
      }
      loaded[serial] = std::move(b);
    }
    baselines_ = std::move(loaded);
    return Status::Ok();
  }

 private:
  // A baseline whose readings end in the future, or end before they start, is dropped
  // (counted): its warm-up and ageing would be measured against the wrong clock.
  static bool Plausible(const Baseline& b, StateLoadCheck& check) {
    if (!check.Past(b.first) || !check.Past(b.last)) return false;
    if (b.first > b.last) {
      check.Drop(StateLoadCheck::kOutOfRange);
      return false;
    }
    return true;
  }

  void ObserveModule(const Families& families, const std::string& netdev, const std::string& serial,
                     TimePoint snapshot_time) {
    TimePoint time = snapshot_time;
    if (auto read = FindValue<optics::kLastRead>(families, {{"netdev", netdev}})) {
      time = FromEpochSeconds(*read);
    }
    auto it = modules_.find(netdev);
    if (it != modules_.end() && it->second.serial != serial) {
      modules_.erase(it);  // module swap: new lanes, new baseline, no finding
      it = modules_.end();
    }
    if (it == modules_.end()) it = modules_.emplace(netdev, ModuleState{serial, {}, {}}).first;
    ModuleState& module = it->second;
    if (module.read_time && time <= *module.read_time) return;  // a re-exported DOM read
    module.read_time = time;
    const double now = EpochSeconds(time);

    auto [bit, inserted] = baselines_.try_emplace(serial);
    ModuleBaseline& baseline = bit->second;
    if (!inserted && baseline.netdev != netdev) baseline = ModuleBaseline{};  // moved module
    baseline.netdev = netdev;
    baseline.last_seen = now;

    const ModuleRead read{
        .families = families,
        .netdev = netdev,
        .time = time,
        .now = now,
        .module = module,
        .baseline = baseline,
        .rx_warn = Threshold<optics::kRxPowerThreshold>(families, netdev, "low_warning"),
        .rx_alarm = Threshold<optics::kRxPowerThreshold>(families, netdev, "low_alarm"),
        .bias_warn = Threshold<optics::kBiasThreshold>(families, netdev, "high_warning"),
        .bias_alarm = Threshold<optics::kBiasThreshold>(families, netdev, "high_alarm"),
        .temperature = FindValue<optics::kTemperature>(families, {{"netdev", netdev}})};
    for (auto& [lane, s] : module.lanes) s.seen = false;
    ForEachSample(families, optics::kRxPower, [&](const prometheus::ClientMetric& m, double watts) {
      ObserveRx(read, m, watts);
    });
    ForEachSample(families, optics::kBias, [&](const prometheus::ClientMetric& m, double amperes) {
      ObserveBias(read, m, amperes);
    });
    std::erase_if(module.lanes, [](const auto& entry) { return !entry.second.seen; });
  }

  // One module's DOM read, as the per-lane observers need it.
  struct ModuleRead {
    const Families& families;
    const std::string& netdev;
    TimePoint time;
    double now;  // epoch seconds of `time`
    ModuleState& module;
    ModuleBaseline& baseline;
    std::optional<double> rx_warn, rx_alarm, bias_warn, bias_alarm, temperature;
  };

  // A lane's rx power: the module's low thresholds, and the drop from the lane's baseline.
  void ObserveRx(const ModuleRead& r, const prometheus::ClientMetric& m, double watts) {
    const double tau = duration<double>(options_.baseline_time_constant).count();
    const double warmup = duration<double>(options_.baseline_warmup).count();
    if (Label<optics::kRxPower>(m, "netdev") != r.netdev) return;
    const std::string lane(Label<optics::kRxPower>(m, "lane"));
    if (lane.empty()) return;  // no lane a finding could name
    LaneState& s = r.module.lanes.try_emplace(lane, options_).first->second;
    s.seen = true;
    const auto los = FindValue<optics::kRxLos>(r.families, {{"netdev", r.netdev}, {"lane", lane}});
    if ((los && *los != 0) || !(watts > 0) || !std::isfinite(watts)) {
      // Dark lane: not an optics drift (link_flap's business); forget pending conditions.
      s.rx_watts.reset();
      s.rx_drop_db.reset();
      for (HoldDown* l :
           {&s.rx_low_warning, &s.rx_low_alarm, &s.rx_drift_warning, &s.rx_drift_critical}) {
        l->Reset();
      }
      return;
    }
    s.rx_watts = watts;
    if (r.rx_warn) {
      s.rx_low_warning_w = *r.rx_warn;
      s.rx_low_warning.Update(watts < *r.rx_warn, watts >= *r.rx_warn * 1.122, r.time);  // +0.5 dB
    }
    if (r.rx_alarm) {
      s.rx_low_alarm_w = *r.rx_alarm;
      s.rx_low_alarm.Update(watts < *r.rx_alarm, watts >= *r.rx_alarm * 1.122, r.time);
    }
    Baseline& rx = r.baseline.lanes[lane].rx_dbm;
    const double dbm = Dbm(watts);
    const bool established = rx.samples > 0 && rx.last - rx.first >= warmup;
    if (established) {
      const double drop = rx.mean - dbm;
      s.rx_drop_db = drop;
      s.baseline_watts = Watts(rx.mean);
      s.rx_drift_warning.Update(drop >= options_.rx_drift_warning_db,
                                drop < options_.rx_drift_clear_db, r.time);
      s.rx_drift_critical.Update(drop >= options_.rx_drift_critical_db,
                                 drop < options_.rx_drift_clear_db, r.time);
      if (drop < options_.rx_drift_warning_db && !s.rx_drift_warning.active()) {
        rx.Add(dbm, r.now, tau);
      }
    } else {
      rx.Add(dbm, r.now, tau);
      s.baseline_watts = Watts(rx.mean);
      s.rx_drop_db.reset();
    }
  }

  // A lane's laser bias: the module's high thresholds, and the rise over the lane's baseline at
  // the module's temperature (bias depends on temperature, so baselines are kept per bin).
  void ObserveBias(const ModuleRead& r, const prometheus::ClientMetric& m, double amperes) {
    const double tau = duration<double>(options_.baseline_time_constant).count();
    if (Label<optics::kBias>(m, "netdev") != r.netdev || !std::isfinite(amperes) || amperes < 0) {
      return;
    }
    const std::string lane(Label<optics::kBias>(m, "lane"));
    if (lane.empty()) return;  // no lane a finding could name
    LaneState& s = r.module.lanes.try_emplace(lane, options_).first->second;
    s.seen = true;
    s.bias_amperes = amperes;
    if (r.bias_warn) {
      s.bias_high_warning_a = *r.bias_warn;
      s.bias_high_warning.Update(amperes >= *r.bias_warn, amperes < *r.bias_warn * 0.95, r.time);
    }
    if (r.bias_alarm) {
      s.bias_high_alarm_a = *r.bias_alarm;
      s.bias_high_alarm.Update(amperes >= *r.bias_alarm, amperes < *r.bias_alarm * 0.95, r.time);
    }
    if (!r.temperature || amperes <= 0) {
      s.bias_ratio.reset();
      return;
    }
    const int bin = static_cast<int>(std::floor(*r.temperature / options_.bias_bin_celsius));
    Baseline& b = r.baseline.lanes[lane].bias[bin];
    if (b.samples >= options_.bias_min_samples && b.mean > 0) {
      const double ratio = amperes / b.mean;
      s.bias_ratio = ratio;
      s.bias_drift_warning.Update(ratio >= 1 + options_.bias_warning_ratio,
                                  ratio < 1 + options_.bias_clear_ratio, r.time);
      s.bias_drift_critical.Update(ratio >= 1 + options_.bias_critical_ratio,
                                   ratio < 1 + options_.bias_clear_ratio, r.time);
      if (ratio < 1 + options_.bias_warning_ratio && !s.bias_drift_warning.active()) {
        b.Add(amperes, r.now, tau);
      }
    } else {
      b.Add(amperes, r.now, tau);
      s.bias_ratio.reset();
    }
  }

  OpticalDriftOptions options_;
  std::map<std::string, ModuleState> modules_;       // by netdev: what is plugged in now
  std::map<std::string, ModuleBaseline> baselines_;  // by serial: what survives a restart
};

}  // namespace

Result<OpticalDriftOptions> ParseOpticalDriftOptions(const DetectorOptions& options) {
  OpticalDriftOptions o;
  auto reader = OptionReader::Make(kName, options, kOptions);
  if (!reader) return Error(reader.error());
  o.threshold_warning_for = reader->Duration("threshold-warning-for", true);
  o.threshold_alarm_for = reader->Duration("threshold-alarm-for", true);
  o.rx_drift_warning_db = reader->Number("rx-drift-warning-db", 0.1, 40);
  o.rx_drift_critical_db = reader->Number("rx-drift-critical-db", 0.1, 40);
  o.rx_drift_clear_db = reader->Number("rx-drift-clear-db", 0, 40);
  o.rx_drift_for = reader->Duration("rx-drift-for", true);
  o.baseline_time_constant = reader->Duration("baseline-time-constant");
  o.baseline_warmup = reader->Duration("baseline-warmup", true);
  o.bias_warning_ratio = reader->Number("bias-warning-ratio", 0.01, 10);
  o.bias_critical_ratio = reader->Number("bias-critical-ratio", 0.01, 10);
  o.bias_clear_ratio = reader->Number("bias-clear-ratio", 0, 10);
  o.bias_for = reader->Duration("bias-for", true);
  o.bias_bin_celsius = reader->Number("bias-bin-celsius", 0.5, 50);
  o.bias_min_samples = reader->Number("bias-min-samples", 1, 1e9);
  o.clear_for = reader->Duration("clear-for", true);
  o.baseline_retention = reader->Duration("baseline-retention");
  if (!reader->status().ok()) return Error(reader->status());
  auto order = [](const char* key, bool ok) -> Status {
    return ok ? Status::Ok()
              : Status(StatusCode::kInvalidArgument,
                       std::string("detector optical_drift: option ") + key +
                           " is inconsistent with its warning/critical/clear siblings");
  };
  for (Status s : {order("rx-drift-clear-db", o.rx_drift_clear_db < o.rx_drift_warning_db),
                   order("rx-drift-warning-db", o.rx_drift_warning_db <= o.rx_drift_critical_db),
                   order("bias-clear-ratio", o.bias_clear_ratio < o.bias_warning_ratio),
                   order("bias-warning-ratio", o.bias_warning_ratio <= o.bias_critical_ratio)}) {
    if (!s.ok()) return Error(s);
  }
  return o;
}

std::span<const DetectorOptionSpec> OpticalDriftDetectorOptions() { return kOptions; }
std::span<const MetricDesc> OpticalDriftDetectorMetrics() { return kMetrics; }
std::span<const MetricInput> OpticalDriftDetectorInputs() { return kInputs; }

Status ValidateOpticalDriftDetectorOptions(const DetectorOptions& options) {
  return StatusOf(ParseOpticalDriftOptions(options));
}

Result<std::unique_ptr<Detector>> MakeOpticalDriftDetector(const DetectorOptions& options) {
  Result<OpticalDriftOptions> parsed = ParseOpticalDriftOptions(options);
  if (!parsed) return Error(parsed.error());
  return std::unique_ptr<Detector>(new OpticalDriftDetector(*parsed));
}

}  // namespace fabricwatch::detect
