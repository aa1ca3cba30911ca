#pragma once
// The contract of the pfc_storm detector (issue 36; CONTRIBUTING.md "Adding a detector"): its
// evidence families, which the status page and the series budget read through these constants
// rather than by name, and its declaration for the generic code (detectors/core/declaration.h),
// which registry.cc passes on as DetectorInfo::declaration.

#include "base/metric_sink.h"
#include "detectors/core/declaration.h"

namespace fabricwatch::detect::pfc_storm {

inline constexpr MetricDesc kPauseRatio{
    "fabric_pfc_pause_ratio",
    "Fraction of the last sample interval the priority was paused (pfc_storm): direction=tx we "
    "paused the peer, rx the peer paused us. From fabric_pfc_pause_duration_seconds_total over "
    "the measured interval.",
    MetricKind::kGauge,
    {"netdev", "priority", "direction"}};
inline constexpr MetricDesc kStormSeconds{
    "fabric_pfc_storm_condition_seconds",
    "How long the storm signature of the role has held without interruption (pfc_storm): "
    "role=source tx ratio >= storm-ratio with no receive progress, role=victim rx ratio >= "
    "storm-ratio with no transmit progress; 0 when it does not hold.",
    MetricKind::kGauge,
    {"netdev", "priority", "role"},
    {},
    {ExportRule::kOff,
     "pfc_storm's evidence per role and priority; its finding carries it, fabric_pfc_pause_ratio "
     "is the signal"}};

inline constexpr SuppressionRule kSuppressedWhen[] = {
    {.name = "storm_on_flapping_link",
     .explained_by = PortFact::kLinkUnstable,
     .says = "reports the link flapping or down",
     .why = "a flapping link pauses and stalls without a storm; SONiC moved its PFC watchdog to "
            "pause-duration counters to stop false storms on flapping links"},
};
inline constexpr DetectorDeclaration kDeclaration{
    .criticals_drain = true,
    .suppressed_when = kSuppressedWhen,
    .marks = PortColumn::kPfcPause,
};

}  // namespace fabricwatch::detect::pfc_storm
