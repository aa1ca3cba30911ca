#pragma once
// The contract of the thermal_drift detector (issue 36; CONTRIBUTING.md "Adding a detector"): its
// evidence families, which the status page and the series budget read through these constants
// rather than by name, and its declaration for the generic code (detectors/core/declaration.h),
// which registry.cc passes on as DetectorInfo::declaration.

#include "base/metric_sink.h"
#include "detectors/core/declaration.h"

namespace fabricwatch::detect::thermal_drift {

inline constexpr LabelNames kNetdev{"netdev"};
inline constexpr MetricDesc kThreshold{
    "fabric_thermal_drift_threshold_celsius",
    "Temperature thresholds thermal_drift applies to a module (level=warning|alarm): the "
    "module's own high warning/alarm, or the 70/75 °C fallback when it has none.",
    MetricKind::kGauge,
    {"netdev", "level"},
    {},
    {ExportRule::kOff, "static thresholds; thermal_drift's finding names the one crossed"}};
inline constexpr MetricDesc kSlew{
    "fabric_thermal_drift_slew_celsius",
    "Largest minus smallest module temperature within the slew window (default 5m).",
    MetricKind::kGauge, kNetdev};
inline constexpr MetricDesc kSlope{
    "fabric_thermal_drift_slope_celsius_per_second",
    "Slope of the least-squares line through the module temperature over the projection "
    "lookback (default 30m).",
    MetricKind::kGauge, kNetdev};
inline constexpr MetricDesc kEta{
    "fabric_thermal_drift_warning_eta_seconds",
    "Projected seconds until the module temperature reaches its warning threshold; absent when "
    "the temperature is not rising towards it.",
    MetricKind::kGauge, kNetdev};

// `fabricwatch check`: only the threshold holds pass; the trend rules need time.
inline constexpr std::string_view kOneLookHolds[] = {"warning-for", "alarm-for"};
inline constexpr DetectorDeclaration kDeclaration{
    .criticals_drain = true,
    .marks = PortColumn::kTemperature,
    .one_look = true,
    .one_look_holds = kOneLookHolds,
};

}  // namespace fabricwatch::detect::thermal_drift
