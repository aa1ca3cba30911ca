#pragma once
// The contract of the ber_growth detector (issue 36; CONTRIBUTING.md "Adding a detector"): its
// evidence families, which the status page and the series budget read through these constants
// rather than by name, and its declaration for the generic code (detectors/core/declaration.h),
// which registry.cc passes on as DetectorInfo::declaration.

#include "base/metric_sink.h"
#include "detectors/core/declaration.h"

namespace fabricwatch::detect::ber_growth {

inline constexpr MetricDesc kEffective{
    "fabric_ber_effective_ratio",
    "Post-FEC (effective) bit error ratio of an Ethernet PHY: PCS symbol errors / received "
    "bits over the detector window (window = the configured minimum; extended until it holds "
    "3/threshold bits, docs/detection.md §0.3).",
    MetricKind::kGauge,
    {"netdev", "window"}};
inline constexpr MetricDesc kPreFec{
    "fabric_ber_pre_fec_ratio",
    "Pre-FEC bit error ratio of an Ethernet PHY: FEC-corrected bits / received bits over the "
    "pre-FEC window (default 1m).",
    MetricKind::kGauge,
    {"netdev"}};
inline constexpr MetricDesc kEta{
    "fabric_ber_pre_fec_limit_eta_seconds",
    "Projected seconds until the pre-FEC bit error ratio reaches the FEC limit (default 2.4e-4), "
    "from a linear fit of its log10 over the trend lookback; absent when not rising.",
    MetricKind::kGauge,
    {"netdev"}};
inline constexpr MetricDesc kIbEffective{
    "fabric_ber_ib_effective_ratio",
    "InfiniBand port symbol errors / bits at the port's link rate over the detector window "
    "(an effective BER estimate; IB has no received-bit statistic).",
    MetricKind::kGauge,
    {"device", "port", "window"}};
inline constexpr MetricDesc kIbSymbolRate{
    "fabric_ber_ib_symbol_errors_per_second",
    "InfiniBand port symbol errors per second over the last hour (critical above 120 per hour).",
    MetricKind::kGauge,
    {"device", "port"}};

inline constexpr SuppressionRule kSuppressedWhen[] = {
    {.name = "ber_on_down_port",
     .explained_by = PortFact::kLinkDown,
     .says = "reports the port down",
     .why = "a port that is down or training has no BER to judge: its errors are the outage's",
     .when_port_not_active = true},
};
inline constexpr DetectorDeclaration kDeclaration{
    .criticals_drain = true,
    .suppressed_when = kSuppressedWhen,
    .marks = PortColumn::kBer,
};

}  // namespace fabricwatch::detect::ber_growth
