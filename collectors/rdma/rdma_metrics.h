#pragma once
// The rdma collector's families that other parts read (detectors, through their MetricInput
// declarations): the collector's contract, defined once here and used by both sides. The IBA
// PortCounters among them carry their saturation width (CounterRange), which the collector's
// counter table and the detectors' CounterTracker both read from here.

#include "collectors/core/metric_sink.h"

namespace fabricwatch::rdma {

inline constexpr LabelNames kPortLabels{"device", "port"};

inline constexpr MetricDesc kPortInfo{
    "fabric_rdma_port_info",
    "RDMA port facts: link layer (InfiniBand or Ethernet), the netdev carrying the port (RoCE: "
    "gid_attrs/ndevs; IPoIB: the device's netdev whose dev_port matches), and the lane speed "
    "name from rate (synthetic on RoCE). Join on netdev with fabric_netdev_* and ethtool "
    "metrics. Constant 1.",
    MetricKind::kInfo,
    {"device", "port", "link_layer", "netdev", "speed"}};
inline constexpr MetricDesc kPortState{
    "fabric_rdma_port_state",
    "Logical port state (state): 0 NOP, 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER.",
    MetricKind::kGauge, kPortLabels};
inline constexpr MetricDesc kPortRate{
    "fabric_rdma_port_rate_bytes_per_second",
    "Port data rate from rate (Gb/s across all lanes, converted to bytes per second); stale "
    "while the port is down.",
    MetricKind::kGauge, kPortLabels};
inline constexpr MetricDesc kSymbolErrors{
    "fabric_rdma_port_symbol_errors_total",
    "Minor link errors (symbol/code errors) on any lane (counters/symbol_error; IBA "
    "SymbolErrorCounter, 16-bit, saturates at 65535).",
    MetricKind::kCounter,
    kPortLabels,
    {CounterOverflow::kSaturates, 16}};
inline constexpr MetricDesc kLinkErrorRecovery{
    "fabric_rdma_port_link_error_recoveries_total",
    "Successful link error recoveries (counters/link_error_recovery; 8-bit, saturates at 255).",
    MetricKind::kCounter,
    kPortLabels,
    {CounterOverflow::kSaturates, 8}};
inline constexpr MetricDesc kLinkDowned{
    "fabric_rdma_port_link_downed_total",
    "Times link error recovery failed and the link went down (counters/link_downed; 8-bit, "
    "saturates at 255).",
    MetricKind::kCounter,
    kPortLabels,
    {CounterOverflow::kSaturates, 8}};
inline constexpr MetricDesc kLocalLinkIntegrity{
    "fabric_rdma_port_local_link_integrity_errors_total",
    "Times local physical errors exceeded their threshold "
    "(counters/local_link_integrity_errors; 4-bit, saturates at 15).",
    MetricKind::kCounter,
    kPortLabels,
    {CounterOverflow::kSaturates, 4}};
inline constexpr MetricDesc kExcessiveBufferOverrun{
    "fabric_rdma_port_excessive_buffer_overrun_errors_total",
    "Consecutive flow-control update periods with buffer overruns "
    "(counters/excessive_buffer_overrun_errors; 4-bit, saturates at 15).",
    MetricKind::kCounter,
    kPortLabels,
    {CounterOverflow::kSaturates, 4}};
}  // namespace fabricwatch::rdma
