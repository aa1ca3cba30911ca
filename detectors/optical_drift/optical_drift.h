#pragma once
// optical_drift: receive power and laser bias per lane against the module's own thresholds and
// against the module's own baseline (docs/detection.md §4.2).
//
// Inputs (collector `optics`, README "Collector optics"):
//   fabric_optics_lane_rx_power_watts{netdev,lane}, fabric_optics_lane_tx_bias_amperes{netdev,lane}
//   fabric_optics_rx_power_threshold_watts{netdev,threshold=low_warning|low_alarm}
//   fabric_optics_tx_bias_threshold_amperes{netdev,threshold=high_warning|high_alarm}
//   fabric_optics_lane_rx_los{netdev,lane}, fabric_optics_module_temperature_celsius{netdev}
//   fabric_optics_info{netdev,serial,...}, fabric_optics_module_present{netdev},
//   fabric_optics_last_read_timestamp_seconds{netdev} (repeats of one DOM read are skipped)
//
// Baselines are keyed by module serial and persisted with SaveState (docs/detection.md §4.2 "keep
// per-module baselines keyed by module serial"): a module swap starts a new baseline and is never
// a finding; a module seen again on a different netdev also starts over (rx power depends on the
// fiber as much as on the module). The rx baseline is an EWMA of dBm with a 7 d time constant,
// started as a plain running mean so the first readings are not overweighted; the bias baseline
// is the same per 5 °C temperature bin, so bias is only compared at similar temperature (§4.1:
// bias depends on temperature [S33][S34]). A baseline does not learn while the lane deviates by
// a warning amount or more, so a slow fault is not absorbed into it.
//
// Findings, entity {netdev, lane}:
//   critical  rx power < module low alarm for threshold_alarm_for; bias ≥ module high alarm
//   warning   rx power < module low warning for threshold_warning_for; bias ≥ high warning
//   critical / warning  baseline − rx ≥ rx_drift_critical_db / rx_drift_warning_db for
//             rx_drift_for
//   critical / warning  bias ≥ (1 + bias_critical_ratio / bias_warning_ratio) × baseline of the
//             same temperature bin for bias_for
// Lanes that report loss of signal (or 0 W) are skipped: a dark fiber is a link-down, which
// link_flap owns.

#include <chrono>
#include <memory>
#include <span>

#include "base/metric_sink.h"
#include "base/status.h"
#include "detectors/core/detector.h"
#include "detectors/core/inputs.h"
#include "detectors/core/options.h"

namespace fabricwatch::detect {

struct OpticalDriftOptions {
  using Duration = std::chrono::milliseconds;
  // Every default is in OpticalDriftDetectorOptions() (the spec table that --help and the README
  // show), so it is written once; the comments here say why each value was chosen.
  // §4.2: "< RxPowerLowWarning for 5 min", "< RxPowerLowAlarm for 1 min" [S30]; the same
  // durations for the module's bias thresholds (§4.2 Tx bias row).
  Duration threshold_warning_for{};
  Duration threshold_alarm_for{};
  // §4.2 / §8: baseline − current ≥ 2 dB for 30 min warning, ≥ 3 dB critical (Judgement
  // anchored to the ~3 dB reserved margin of [S35b]); clears below 1 dB (Judgement).
  double rx_drift_warning_db{};
  double rx_drift_critical_db{};
  double rx_drift_clear_db{};
  Duration rx_drift_for{};
  // §8 "EWMA-7d baseline"; compared only once the baseline has 30 min of readings (Judgement:
  // the §4.2 drift window).
  Duration baseline_time_constant{};
  Duration baseline_warmup{};
  // §4.2: +20 % warning, +30 % critical vs the same 5 °C bin (Judgement informed by the 30 %
  // drive-current end-of-life example [S36] and temperature-aware limits [S34]); clears below
  // +10 %; 30 min sustained like the rx drift; a bin needs 20 readings (10 min at the 30 s DOM
  // cadence) before it is a baseline.
  double bias_warning_ratio{};
  double bias_critical_ratio{};
  double bias_clear_ratio{};
  Duration bias_for{};
  double bias_bin_celsius{};
  double bias_min_samples{};
  // Hysteresis hold-down before any finding clears (UFM PDR de-isolation 5 min [S21]).
  Duration clear_for{};
  // Baselines of modules not seen for this long are dropped from the state (Judgement: a
  // module on a shelf for a month gets a fresh baseline when it comes back).
  Duration baseline_retention{};
};

// Option keys: the field names in kebab-case (clear_for → `clear-for`), with their defaults in
// OpticalDriftDetectorOptions().
std::span<const DetectorOptionSpec> OpticalDriftDetectorOptions();
std::span<const MetricDesc> OpticalDriftDetectorMetrics();
// The collector families it reads (detectors/core/inputs.h).
std::span<const MetricInput> OpticalDriftDetectorInputs();
Result<OpticalDriftOptions> ParseOpticalDriftOptions(const DetectorOptions& options);
Result<std::unique_ptr<Detector>> MakeOpticalDriftDetector(const DetectorOptions& options);
// The factory's checks of `options` without building the detector (config validation).
Status ValidateOpticalDriftDetectorOptions(const DetectorOptions& options);

}  // namespace fabricwatch::detect
