#pragma once
// The contract of the link_flap detector (issue 36; CONTRIBUTING.md "Adding a detector"): its
// evidence families, which the status page and the series budget read through these constants
// rather than by name, and its declaration for the generic code (detectors/core/declaration.h),
// which registry.cc passes on as DetectorInfo::declaration.

#include "base/metric_sink.h"
#include "detectors/core/declaration.h"

namespace fabricwatch::detect::link_flap {

inline constexpr LabelNames kEntityLabels{"device", "port", "netdev"};
inline constexpr MetricDesc kPenalty{
    "fabric_link_flap_penalty",
    "Decayed flap penalty of the port (link_flap detector): +penalty-per-down per down event, "
    "halved every half-life; flapping from suppress until below reuse. device+port for IB "
    "ports, netdev for Ethernet (the other labels empty).",
    MetricKind::kGauge,
    kEntityLabels,
    {},
    {ExportRule::kNonZero, "0 on a port that never flapped"}};
inline constexpr MetricDesc kHardWindow{
    "fabric_link_flap_hard_window_down_events",
    "Down events of the port in the last hard-window (default 10 s; link_flap).",
    MetricKind::kGauge,
    kEntityLabels,
    {},
    {ExportRule::kOff,
     "link_flap's evidence; its finding carries the count, and fabric_link_flap_down_events_total "
     "the history"}};
inline constexpr MetricDesc kSlowWindow{
    "fabric_link_flap_slow_window_down_events",
    "Down events of the port in the last slow-window (default 6 h; link_flap).",
    MetricKind::kGauge,
    kEntityLabels,
    {},
    {ExportRule::kOff,
     "link_flap's evidence; its finding carries the count, and fabric_link_flap_down_events_total "
     "the history"}};
inline constexpr MetricDesc kWindowDowntime{
    "fabric_link_flap_window_downtime_seconds",
    "Time the port was down in the last downtime-window (default 1 h), compared with the NCCL "
    "downtime budget (link_flap).",
    MetricKind::kGauge,
    kEntityLabels,
    {},
    {ExportRule::kNonZero, "0 on a port that was not down in the window"}};
inline constexpr MetricDesc kDownDuration{
    "fabric_link_down_duration_seconds",
    "Length of the port's current outage, 0 while up (link_flap).",
    MetricKind::kGauge,
    kEntityLabels,
    {},
    {ExportRule::kNonZero, "0 while the port is up"}};
inline constexpr MetricDesc kDownEvents{
    "fabric_link_flap_down_events_total",
    "Down events of the port counted by link_flap after deduplicating its sources (netlink, "
    "carrier and PHY counters, IB port state and link_downed); maintenance downs excluded.",
    MetricKind::kCounter, kEntityLabels};

// Its warning and critical findings say the link flaps or is down; a critical one (hard flapping)
// or one with a current outage (down_seconds > 0) that it is down now.
inline bool LinkDownNow(const Finding& f) {
  if (f.severity == Severity::kCritical) return true;
  for (const Evidence& e : f.evidence) {
    if (e.name == "down_seconds") return e.value > 0;
  }
  return false;
}
inline constexpr PortFactSource kEstablishes[] = {{PortFact::kLinkUnstable},
                                                  {PortFact::kLinkDown, LinkDownNow}};
inline constexpr DetectorDeclaration kDeclaration{
    .criticals_drain = true,
    .establishes = kEstablishes,
    .marks = PortColumn::kState,
    .mark_note = "flapping",
};

}  // namespace fabricwatch::detect::link_flap
