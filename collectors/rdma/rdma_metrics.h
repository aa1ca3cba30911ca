#pragma once
// The rdma collector's families that other parts read (detectors, through their MetricInput
// declarations): the collector's contract, defined once here and used by both sides. The IBA
// PortCounters among them carry their saturation width (CounterRange), which the collector's
// counter table and the detectors' CounterTracker both read from here.

#include <optional>
#include <string_view>
#include <utility>

#include "collectors/core/collector_family.h"
#include "base/metric_sink.h"

namespace fabricwatch::rdma {

// The collector that exports the families below: its name in the collector registry
// (collectors/registry.cc), in --collector.rdma and in Snapshot::collector.
inline constexpr std::string_view kCollector = "rdma";
// Its families carry it in their type (collectors/core/collector_family.h).
using Family = FamilyOf<kCollector>;

inline constexpr LabelNames kPortLabels{"device", "port"};

inline constexpr Family kPortInfo{
    "fabric_rdma_port_info",
    "RDMA port facts: link layer (InfiniBand or Ethernet), the netdev carrying the port (RoCE: "
    "gid_attrs/ndevs; IPoIB: the device's netdev whose dev_port matches), and the lane speed "
    "name from rate (synthetic on RoCE). Join on netdev with fabric_netdev_* and ethtool "
    "metrics. Constant 1.",
    MetricKind::kInfo,
    {"device", "port", "link_layer", "netdev", "speed"}};
inline constexpr Family kPortState{
    "fabric_rdma_port_state",
    "Logical port state (state): 0 NOP, 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER.",
    MetricKind::kGauge,
    kPortLabels,
    {},
    {ExportRule::kOff,
     "the IBA state as a number; fabric_rdma_port_active says whether the port is ACTIVE, "
     "fabric_rdma_port_phys_state why not"}};
inline constexpr Family kPortRate{
    "fabric_rdma_port_rate_bytes_per_second",
    "Port data rate from rate (Gb/s across all lanes, converted to bytes per second); stale "
    "while the port is down.",
    MetricKind::kGauge, kPortLabels};
inline constexpr Family kSymbolErrors{
    "fabric_rdma_port_symbol_errors_total",
    "Minor link errors (symbol/code errors) on any lane (counters/symbol_error; IBA "
    "SymbolErrorCounter, 16-bit, saturates at 65535).",
    MetricKind::kCounter,
    kPortLabels,
    {CounterOverflow::kSaturates, 16}};
inline constexpr Family kLinkErrorRecovery{
    "fabric_rdma_port_link_error_recoveries_total",
    "Successful link error recoveries (counters/link_error_recovery; 8-bit, saturates at 255).",
    MetricKind::kCounter,
    kPortLabels,
    {CounterOverflow::kSaturates, 8}};
inline constexpr Family kLinkDowned{
    "fabric_rdma_port_link_downed_total",
    "Times link error recovery failed and the link went down (counters/link_downed; 8-bit, "
    "saturates at 255).",
    MetricKind::kCounter,
    kPortLabels,
    {CounterOverflow::kSaturates, 8}};
// Filled by rdma_events.cc from the libibverbs listener; link_flap reads port_err as a down source.
inline constexpr Family kPortEvents{
    "fabric_rdma_port_events_total",
    "Asynchronous port events reported by libibverbs since the agent started, by event "
    "(port_active, port_err, lid_change, pkey_change, sm_change, client_reregister, "
    "gid_change; device_fatal with port 0). Seen as they happen, between samples. A "
    "port_active or port_err that repeats the port's last one is no transition and is counted "
    "in fabric_rdma_port_events_repeated_total instead. A device that disappears loses its "
    "series; if it comes back they start again from 0.",
    MetricKind::kCounter,
    {"device", "port", "event"}};
inline constexpr Family kLocalLinkIntegrity{
    "fabric_rdma_port_local_link_integrity_errors_total",
    "Times local physical errors exceeded their threshold "
    "(counters/local_link_integrity_errors; 4-bit, saturates at 15).",
    MetricKind::kCounter,
    kPortLabels,
    {CounterOverflow::kSaturates, 4},
    {ExportRule::kInfiniBand,
     "an InfiniBand physical-layer counter; a RoCE port's PHY errors are fabric_ethtool_phy_*"}};
inline constexpr Family kExcessiveBufferOverrun{
    "fabric_rdma_port_excessive_buffer_overrun_errors_total",
    "Consecutive flow-control update periods with buffer overruns "
    "(counters/excessive_buffer_overrun_errors; 4-bit, saturates at 15).",
    MetricKind::kCounter,
    kPortLabels,
    {CounterOverflow::kSaturates, 4},
    {ExportRule::kInfiniBand, "an InfiniBand flow-control counter; not maintained on RoCE ports"}};
inline constexpr Family kDeviceInfo{
    "fabric_rdma_device_info",
    "RDMA device facts from /sys/class/infiniband/<device>: node type, firmware version, node and "
    "system image GUIDs, HCA type (mlx5: PCI device ID as MT<decimal>), board id (PSID), node "
    "description, PCI function and the netdevs of that function (comma-separated). Constant 1.",
    MetricKind::kInfo,
    {"device", "node_type", "fw_ver", "node_guid", "sys_image_guid", "hca_type", "board_id",
     "node_desc", "pci_address", "netdevs"}};
inline constexpr Family kPortPhysState{
    "fabric_rdma_port_phys_state",
    "Physical port state (phys_state): 1 Sleep, 2 Polling, 3 Disabled, "
    "4 PortConfigurationTraining, 5 LinkUp, 6 LinkErrorRecovery, 7 Phy Test.",
    MetricKind::kGauge, kPortLabels};
inline constexpr Family kPortLanes{
    "fabric_rdma_port_lanes",
    "Active link width in lanes (the NX of rate).",
    MetricKind::kGauge,
    kPortLabels,
    {},
    {ExportRule::kOff, "the same as fabric_link_degraded_lanes, which the dashboards read"}};
inline constexpr Family kPortSmLid{"fabric_rdma_port_sm_lid",
                                   "LID of the subnet manager an InfiniBand port is managed by.",
                                   MetricKind::kGauge, kPortLabels};
inline constexpr Family kPortLaneSpeed{
    "fabric_rdma_port_lane_speed_bytes_per_second",
    "Per-lane signalling rate of the port from rate: the IBTA speed generation's nominal lane "
    "rate (SDR 2.5, DDR 5, QDR and FDR10 10, FDR 14, EDR 25, HDR 50, NDR 100, XDR 200 Gb/s) "
    "where rate names it, else the rate divided by its width; converted to bytes per second. "
    "Synthetic on RoCE. Stale while the port is down.",
    MetricKind::kGauge,
    kPortLabels,
    {},
    {ExportRule::kOff, "fabric_rdma_port_rate_bytes_per_second / fabric_rdma_port_lanes"}};
inline constexpr Family kPortActiveMtu{
    "fabric_rdma_port_active_mtu_bytes",
    "Active IB MTU of the port (ibv_query_port active_mtu, enum ibv_mtu 256-4096 bytes): the "
    "largest packet payload RDMA uses on the link. On RoCE it follows the netdev MTU (1500 gives "
    "1024, 9000 gives 4096). Absent without a libibverbs provider for the device, and in a "
    "replay root without ports/<n>/active_mtu.",
    MetricKind::kGauge,
    kPortLabels,
    {},
    {ExportRule::kOff,
     "static configuration; config_drift's ib_mtu finding names a port that differs"}};
inline constexpr Family kPortMaxMtu{
    "fabric_rdma_port_max_mtu_bytes",
    "Largest IB MTU the port supports (ibv_query_port max_mtu, 256-4096 bytes). Absent as "
    "fabric_rdma_port_active_mtu_bytes is.",
    MetricKind::kGauge,
    kPortLabels,
    {},
    {ExportRule::kOff,
     "what the port supports; config_drift's ib_mtu finding names it when it is below the "
     "expectation"}};

// The nominal per-lane rate in Gb/s of an IBTA speed generation as rate_show names it: the
// meaning of kPortLaneSpeed and of a shape manifest's lane_speed. rate_show prints "%d%s" of the
// per-lane deci-Gb/s × width / 10 (docs/reference.md §1.3, kernel drivers/infiniband/core/
// sysfs.c), so FDR's 14.0625 Gb/s lane is 140 deci-Gb/s: "56 Gb/sec (4X FDR)". nullopt for any
// other name.
inline std::optional<double> IbLaneGbps(std::string_view speed) {
  constexpr std::pair<std::string_view, double> kGenerations[] = {
      {"SDR", 2.5}, {"DDR", 5},  {"QDR", 10},  {"FDR10", 10}, {"FDR", 14},
      {"EDR", 25},  {"HDR", 50}, {"NDR", 100}, {"XDR", 200}};
  for (const auto& [name, gbps] : kGenerations) {
    if (name == speed) return gbps;
  }
  return std::nullopt;
}
}  // namespace fabricwatch::rdma
