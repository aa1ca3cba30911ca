#pragma once
// The netdev collector's families that other parts read (detectors, through their MetricInput
// declarations): the collector's contract, defined once here and used by both sides.

#include "collectors/core/collector_family.h"
#include "base/metric_sink.h"

namespace fabricwatch::netdev {

// The collector that exports the families below: its name in the collector registry
// (collectors/registry.cc), in --collector.netdev and in Snapshot::collector.
inline constexpr std::string_view kCollector = "netdev";
// Its families carry it in their type (collectors/core/collector_family.h).
using Family = FamilyOf<kCollector>;

inline constexpr Family kOperState{
    "fabric_netdev_oper_state",
    "RFC 2863 operational state code from operstate: 0 unknown, 1 notpresent, 2 down, "
    "3 lowerlayerdown, 4 testing, 5 dormant, 6 up.",
    MetricKind::kGauge,
    {"netdev"},
    {},
    {ExportRule::kOff,
     "RFC 2863 operstate as a number; fabric_netdev_oper_up and fabric_netdev_carrier say up or "
     "down"}};
inline constexpr Family kCarrier{
    "fabric_netdev_carrier",
    "1 if the physical link (carrier) is up, 0 if down; absent while the interface is "
    "administratively down (the kernel answers EINVAL).",
    MetricKind::kGauge,
    {"netdev"}};
inline constexpr Family kCarrierDown{
    "fabric_netdev_carrier_down_changes_total",
    "Carrier down transitions counted by the kernel (carrier_down_count, 32-bit, kernel 4.16+).",
    MetricKind::kCounter,
    {"netdev"},
    {CounterOverflow::kWraps, 32}};
inline constexpr Family kMtu{
    "fabric_netdev_mtu_bytes",
    "Maximum transmission unit (mtu).",
    MetricKind::kGauge,
    {"netdev"},
    {},
    {ExportRule::kOff,
     "static configuration; config_drift's mtu finding names a port that differs"}};
inline constexpr Family kSpeed{
    "fabric_netdev_speed_bytes_per_second",
    "Negotiated link speed (speed, Mbit/s, converted to bytes per second); absent when the "
    "driver reports it unknown (-1) or the link is down.",
    MetricKind::kGauge,
    {"netdev"}};
}  // namespace fabricwatch::netdev
