#pragma once
// The contract of the optical_drift detector (issue 36; CONTRIBUTING.md "Adding a detector"): its
// evidence families, which the status page and the series budget read through these constants
// rather than by name, and its declaration for the generic code (detectors/core/declaration.h),
// which registry.cc passes on as DetectorInfo::declaration.

#include "base/metric_sink.h"
#include "detectors/core/declaration.h"

namespace fabricwatch::detect::optical_drift {

inline constexpr LabelNames kLane{"netdev", "lane"};
inline constexpr MetricDesc kRxBaseline{
    "fabric_optical_drift_rx_power_baseline_watts",
    "The lane's receive-power baseline (EWMA of dBm, 7 d time constant, per module serial), "
    "converted back to watts.",
    MetricKind::kGauge,
    kLane,
    {},
    {ExportRule::kOff,
     "fabric_optical_drift_rx_power_baseline_ratio says how far from it the lane is; the finding "
     "names the baseline"}};
inline constexpr MetricDesc kRxRatio{
    "fabric_optical_drift_rx_power_baseline_ratio",
    "Current receive power divided by the lane's baseline (0.63 = -2 dB, 0.5 = -3 dB).",
    MetricKind::kGauge,
    kLane,
    {},
    {ExportRule::kOff,
     "optical_drift's evidence, 1 per lane; its finding carries the ratio and the baseline"}};
inline constexpr MetricDesc kBiasRatio{
    "fabric_optical_drift_tx_bias_baseline_ratio",
    "Current laser bias divided by the lane's baseline at the same 5 °C temperature bin "
    "(1.2 = +20 %); absent until that bin has a baseline.",
    MetricKind::kGauge, kLane};

// `fabricwatch check`: only the threshold holds pass; the baselines need time.
inline constexpr std::string_view kOneLookHolds[] = {"threshold-warning-for",
                                                     "threshold-alarm-for"};
inline constexpr DetectorDeclaration kDeclaration{
    .criticals_drain = true,
    .marks = PortColumn::kRxPower,
    .one_look = true,
    .one_look_holds = kOneLookHolds,
};

}  // namespace fabricwatch::detect::optical_drift
