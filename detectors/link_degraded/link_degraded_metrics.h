#pragma once
// The contract of the link_degraded detector (issue 36; CONTRIBUTING.md "Adding a detector"): its
// evidence families, which the status page and the series budget read through these constants
// rather than by name, and its declaration for the generic code (detectors/core/declaration.h),
// which registry.cc passes on as DetectorInfo::declaration.

#include "base/metric_sink.h"
#include "detectors/core/declaration.h"

namespace fabricwatch::detect::link_degraded {

inline constexpr LabelNames kPortLabels{"device", "port", "netdev"};
inline constexpr LabelNames kExpectedLabels{"device", "port", "netdev", "source"};
inline constexpr MetricDesc kRate{
    "fabric_link_degraded_rate_bytes_per_second",
    "The port's link rate as link_degraded sees it (InfiniBand: rate; Ethernet: the ethtool "
    "speed), while the port is up.",
    MetricKind::kGauge, kPortLabels};
inline constexpr MetricDesc kLanes{
    "fabric_link_degraded_lanes",
    "The port's link width in lanes as link_degraded sees it (InfiniBand: the NX of rate; "
    "Ethernet: ethtool Lanes), while the port is up.",
    MetricKind::kGauge, kPortLabels};
inline constexpr MetricDesc kExpectedRate{
    "fabric_link_degraded_expected_rate_bytes_per_second",
    "The rate the port should run at, and where that comes from (source: manifest, siblings, "
    "history or supported).",
    MetricKind::kGauge, kExpectedLabels};
inline constexpr MetricDesc kExpectedLanes{
    "fabric_link_degraded_expected_lanes",
    "The width in lanes the port should run at, and where that comes from (source).",
    MetricKind::kGauge, kExpectedLabels};
inline constexpr MetricDesc kExpectedLaneSpeed{
    "fabric_link_degraded_expected_lane_speed_bytes_per_second",
    "The per-lane rate the port should run at, and where that comes from (source).",
    MetricKind::kGauge,
    kExpectedLabels,
    {},
    {ExportRule::kOff,
     "fabric_link_degraded_expected_rate_bytes_per_second / fabric_link_degraded_expected_lanes"}};
inline constexpr MetricDesc kRateRatio{
    "fabric_link_degraded_rate_ratio",
    "The port's rate divided by its expected rate (1 = as expected), while the port is up.",
    MetricKind::kGauge, kPortLabels};
inline constexpr MetricDesc kKnownPorts{
    "fabric_link_degraded_known_ports",
    "Fabric ports in the learned history (live or not): what a missing port is judged against.",
    MetricKind::kGauge,
    {}};

// Its port-state findings (down, stuck in INIT/ARMED) are the ones with port_state evidence; its
// width, speed, firmware and missing findings are not outages.
inline bool PortStateFinding(const Finding& f) {
  for (const Evidence& e : f.evidence) {
    if (e.name == "port_state") return true;
  }
  return false;
}
inline constexpr SuppressionRule kSuppressedWhen[] = {
    {.name = "outage_of_port_seen_up",
     .explained_by = PortFact::kLinkUnstable,
     .says = "counted downs of this port, so it was up",
     .why = "link_flap owns the outages of ports ever seen up, link_degraded the never-up ones "
            "(detectors/link_degraded/link_degraded.h)",
     .applies = PortStateFinding},
};
inline constexpr std::string_view kOneLookHolds[] = {"degraded-for", "stuck-for", "down-for",
                                                     "missing-for"};
inline constexpr DetectorDeclaration kDeclaration{
    .criticals_drain = true,
    .suppressed_when = kSuppressedWhen,
    .marks = PortColumn::kRate,
    .one_look = true,
    .one_look_holds = kOneLookHolds,
    .shape_file_option = "shape-file",
};

}  // namespace fabricwatch::detect::link_degraded
