#pragma once
// thermal_drift: transceiver module temperature against the module's own thresholds, its slew,
// and a trend projection that warns before the warning threshold is crossed (docs/detection.md §4).
//
// Inputs (collector `optics`, README "Collector optics"):
//   fabric_optics_module_temperature_celsius{netdev}
//   fabric_optics_module_temperature_threshold_celsius{netdev,threshold=high_warning|high_alarm}
//   fabric_optics_last_read_timestamp_seconds{netdev}  (the real DOM read time: the collector
//       re-exports a module's values between its 30 s reads, so repeats are skipped)
//   fabric_optics_info{netdev,serial,...}, fabric_optics_module_present{netdev}
// and collector `ethtool`: fabric_ethtool_module_events_total{netdev,event="high_temp"}
// (mlx5 module_high_temp, docs/detection.md §4.2 "or Δmodule_high_temp > 0").
//
// Findings, entity {netdev}:
//   critical  temperature ≥ the module's high alarm for alarm_for, or a high_temp event
//   warning   temperature ≥ the module's high warning for warning_for
//   warning   slew: max − min over slew_window > slew_celsius
//   warning   projection: within projection_margin_celsius of the warning threshold and both a
//             long (projection_lookback) and a short (projection_min_span) linear fit reach it
//             within projection_horizon — the short fit stops a finished step (a job starting)
//             from being extrapolated.
// Signals of one severity on one netdev merge into one finding (finding_merge.h). A module swap
// (new serial) or an unplug drops the module's history: never a finding by itself.

#include <chrono>
#include <memory>
#include <span>

#include "base/metric_sink.h"
#include "base/status.h"
#include "detectors/core/detector.h"
#include "detectors/core/inputs.h"
#include "detectors/core/options.h"

namespace fabricwatch::detect {

struct ThermalDriftOptions {
  using Duration = std::chrono::milliseconds;
  // Every default is in ThermalDriftDetectorOptions() (the spec table that --help and the README
  // show), so it is written once; the comments here say why each value was chosen.
  // Fallbacks when the module has no (or unprogrammed, zero) thresholds: commercial-grade
  // optics are rated 0–70 °C case [S31]; example module TempHighWarning 70 / HighAlarm 75 [S30]
  // (docs/detection.md §4.1, §4.2, §8).
  double fallback_warning_celsius{};
  double fallback_alarm_celsius{};
  Duration warning_for{};  // §4.2 / §8 "≥ high-warn 2 min"
  Duration alarm_for{};    // §4.2 / §8 "≥ high-alarm 1 min"
  // Hysteresis (Judgement): clear below threshold − 2 °C, held for 5 min (UFM PDR de-isolates
  // after 5 min healthy [S21], docs/detection.md §3.2).
  double clear_margin_celsius{};
  Duration clear_for{};
  // Slew: UFM PDR isolates on a change > 10 °C between 300 s samples [S21] (§4.2, §8).
  double slew_celsius{};
  Duration slew_window{};
  // Projection (Judgement; the node-mixin predict_linear pattern [S40], §5): DOM changes slowly
  // (§4.2), so 30 min of history projected 1 h ahead, and only within 10 °C of the threshold.
  Duration projection_lookback{};
  Duration projection_min_span{};
  Duration projection_horizon{};
  double projection_margin_celsius{};
  Duration projection_for{};
};

// Option keys: the field names in kebab-case (clear_for → `clear-for`), with their defaults in
// ThermalDriftDetectorOptions().
std::span<const DetectorOptionSpec> ThermalDriftDetectorOptions();
std::span<const MetricDesc> ThermalDriftDetectorMetrics();
// The collector families it reads (detectors/core/inputs.h).
std::span<const MetricInput> ThermalDriftDetectorInputs();
Result<ThermalDriftOptions> ParseThermalDriftOptions(const DetectorOptions& options);
Result<std::unique_ptr<Detector>> MakeThermalDriftDetector(const DetectorOptions& options);
// The factory's checks of `options` without building the detector (config validation).
Status ValidateThermalDriftDetectorOptions(const DetectorOptions& options);

}  // namespace fabricwatch::detect
