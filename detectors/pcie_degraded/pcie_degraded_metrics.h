#pragma once
// The contract of the pcie_degraded detector (issue 36; CONTRIBUTING.md "Adding a detector"): its
// evidence families, which the status page and the series budget read through these constants
// rather than by name, and its declaration for the generic code (detectors/core/declaration.h),
// which registry.cc passes on as DetectorInfo::declaration.

#include "base/metric_sink.h"
#include "detectors/core/declaration.h"

namespace fabricwatch::detect::pcie_degraded {

inline constexpr LabelNames kLink{"device", "role"};
inline constexpr MetricDesc kSpeedRatio{
    "fabric_pcie_degraded_speed_ratio",
    "Current PCIe link speed divided by the function's maximum (GPUs and NICs; 1 = full "
    "speed).",
    MetricKind::kGauge,
    kLink,
    {},
    {ExportRule::kOff,
     "fabric_pcie_link_speed_transfers_per_second / "
     "fabric_pcie_link_max_speed_transfers_per_second, which pcie_degraded names in its finding"}};
inline constexpr MetricDesc kWidthRatio{
    "fabric_pcie_degraded_width_ratio",
    "Current PCIe link width divided by the function's maximum (GPUs and NICs; 1 = all lanes).",
    MetricKind::kGauge,
    kLink,
    {},
    {ExportRule::kOff, "fabric_pcie_link_width_lanes / fabric_pcie_link_max_width_lanes"}};
inline constexpr MetricDesc kAerRate{
    "fabric_pcie_degraded_aer_correctable_errors_per_second",
    "Correctable AER errors per second over the detector's AER window (default 10m).",
    MetricKind::kGauge,
    kLink,
    {},
    {ExportRule::kOff,
     "the rate of fabric_pcie_aer_errors_total (severity correctable), which pcie_degraded names "
     "in its finding"}};

inline constexpr std::string_view kOneLookHolds[] = {"downtrain-for"};
inline constexpr DetectorDeclaration kDeclaration{
    .criticals_drain = true,
    .one_look = true,
    .one_look_holds = kOneLookHolds,
};

}  // namespace fabricwatch::detect::pcie_degraded
