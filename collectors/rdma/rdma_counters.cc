#include "collectors/rdma/rdma_counters.h"

#include <array>
#include <vector>

#include "collectors/rdma/rdma_metrics.h"

namespace fabricwatch::rdma {
namespace {

// ---- IBA PortCounters / PortCountersExtended (docs/reference.md §1.4; IBA vol. 1
// §16.1.3.5/16.1.4.11, kernel drivers/infiniband/core/sysfs.c PORT_PMA_ATTR tables).
constexpr MetricDesc kRcvErrors{
    "fabric_rdma_port_receive_errors_total",
    "Received packets with errors (counters/port_rcv_errors; 16-bit, saturates).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRcvRemotePhysErrors{
    "fabric_rdma_port_receive_remote_physical_errors_total",
    "Received packets marked bad by an upstream hop (counters/port_rcv_remote_physical_errors; "
    "16-bit, saturates).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRcvSwitchRelayErrors{
    "fabric_rdma_port_receive_switch_relay_errors_total",
    "Packets that could not be relayed (counters/port_rcv_switch_relay_errors; 16-bit, "
    "saturates).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kInfiniBand, "an InfiniBand switch-relay counter; not maintained on RoCE ports"}};
constexpr MetricDesc kXmitDiscards{
    "fabric_rdma_port_transmit_discards_total",
    "Outbound packets discarded because the port was down or congested "
    "(counters/port_xmit_discards; 16-bit, saturates).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kXmitConstraintErrors{
    "fabric_rdma_port_transmit_constraint_errors_total",
    "Packets not sent because of partition or raw filtering "
    "(counters/port_xmit_constraint_errors; 8-bit, saturates).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kInfiniBand, "InfiniBand partition enforcement; not maintained on RoCE ports"}};
constexpr MetricDesc kRcvConstraintErrors{
    "fabric_rdma_port_receive_constraint_errors_total",
    "Received packets dropped because of partition or raw filtering "
    "(counters/port_rcv_constraint_errors; 8-bit, saturates).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kInfiniBand, "InfiniBand partition enforcement; not maintained on RoCE ports"}};
constexpr MetricDesc kVl15Dropped{
    "fabric_rdma_port_vl15_dropped_total",
    "Incoming VL15 (subnet management) packets dropped for lack of resources "
    "(counters/VL15_dropped; 16-bit, saturates).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kInfiniBand, "subnet management packets (VL15) exist on InfiniBand only"}};
constexpr MetricDesc kXmitWait{
    "fabric_rdma_port_transmit_wait_total",
    "Ticks during which the port had data to send but no flow-control credits "
    "(counters/port_xmit_wait; the tick length is implementation-defined).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kUnicastXmit{
    "fabric_rdma_port_unicast_transmit_packets_total",
    "Unicast packets transmitted (counters/unicast_xmit_packets or "
    "counters_ext/port_unicast_xmit_packets).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff,
     "fabric_rdma_port_transmit_packets_total counts them with the multicast ones"}};
constexpr MetricDesc kUnicastRcv{
    "fabric_rdma_port_unicast_receive_packets_total",
    "Unicast packets received (counters/unicast_rcv_packets or "
    "counters_ext/port_unicast_rcv_packets).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff,
     "fabric_rdma_port_receive_packets_total counts them with the multicast ones"}};
constexpr MetricDesc kMulticastXmit{
    "fabric_rdma_port_multicast_transmit_packets_total",
    "Multicast packets transmitted (counters/multicast_xmit_packets or "
    "counters_ext/port_multicast_xmit_packets).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff, "workload statistics, not fault signals"}};
constexpr MetricDesc kMulticastRcv{"fabric_rdma_port_multicast_receive_packets_total",
                                   "Multicast packets received (counters/multicast_rcv_packets or "
                                   "counters_ext/port_multicast_rcv_packets).",
                                   MetricKind::kCounter,
                                   kPortLabels,
                                   {},
                                   {ExportRule::kOff, "workload statistics, not fault signals"}};

constexpr CounterSpec kPmaCounters[] = {
    {"symbol_error", &kSymbolErrors, 1, kSymbolErrors.range.bits},
    {"link_error_recovery", &kLinkErrorRecovery, 1, kLinkErrorRecovery.range.bits},
    {"link_downed", &kLinkDowned, 1, kLinkDowned.range.bits},
    {"port_rcv_errors", &kRcvErrors, 1, 16},
    {"port_rcv_remote_physical_errors", &kRcvRemotePhysErrors, 1, 16},
    {"port_rcv_switch_relay_errors", &kRcvSwitchRelayErrors, 1, 16},
    {"port_xmit_discards", &kXmitDiscards, 1, 16},
    {"port_xmit_constraint_errors", &kXmitConstraintErrors, 1, 8},
    {"port_rcv_constraint_errors", &kRcvConstraintErrors, 1, 8},
    {"local_link_integrity_errors", &kLocalLinkIntegrity, 1, kLocalLinkIntegrity.range.bits},
    {"excessive_buffer_overrun_errors", &kExcessiveBufferOverrun, 1,
     kExcessiveBufferOverrun.range.bits},
    {"VL15_dropped", &kVl15Dropped, 1, 16},
    // 32-bit when the PortCountersExtended table is not in use (the collector knows which);
    // port_xmit_wait always comes from the 32-bit PortCounters (core/sysfs.c pma_attrs_ext).
    {"port_xmit_data", &kXmitBytes, 4, 32, true},
    {"port_rcv_data", &kRcvBytes, 4, 32, true},
    {"port_xmit_packets", &kXmitPackets, 1, 32, true},
    {"port_rcv_packets", &kRcvPackets, 1, 32, true},
    {"port_xmit_wait", &kXmitWait, 1, 32},
    {"unicast_xmit_packets", &kUnicastXmit, 1, 0},
    {"unicast_rcv_packets", &kUnicastRcv, 1, 0},
    {"multicast_xmit_packets", &kMulticastXmit, 1, 0},
    {"multicast_rcv_packets", &kMulticastRcv, 1, 0},
    // counters_ext/ (mlx4): 64-bit; they replace their 32-bit counters/ twins.
    {"port_xmit_data_64", &kXmitBytes, 4, 0},
    {"port_rcv_data_64", &kRcvBytes, 4, 0},
    {"port_xmit_packets_64", &kXmitPackets, 1, 0},
    {"port_rcv_packets_64", &kRcvPackets, 1, 0},
    {"port_unicast_xmit_packets", &kUnicastXmit, 1, 0},
    {"port_unicast_rcv_packets", &kUnicastRcv, 1, 0},
    {"port_multicast_xmit_packets", &kMulticastXmit, 1, 0},
    {"port_multicast_rcv_packets", &kMulticastRcv, 1, 0},
};

constexpr std::array<const MetricDesc*, 21> kPmaCurated = {&kSymbolErrors,
                                                           &kLinkErrorRecovery,
                                                           &kLinkDowned,
                                                           &kRcvErrors,
                                                           &kRcvRemotePhysErrors,
                                                           &kRcvSwitchRelayErrors,
                                                           &kXmitDiscards,
                                                           &kXmitConstraintErrors,
                                                           &kRcvConstraintErrors,
                                                           &kLocalLinkIntegrity,
                                                           &kExcessiveBufferOverrun,
                                                           &kVl15Dropped,
                                                           &kXmitBytes,
                                                           &kRcvBytes,
                                                           &kXmitPackets,
                                                           &kRcvPackets,
                                                           &kXmitWait,
                                                           &kUnicastXmit,
                                                           &kUnicastRcv,
                                                           &kMulticastXmit,
                                                           &kMulticastRcv};

std::vector<const MetricDesc*> AllCurated() {
  std::vector<const MetricDesc*> all(kPmaCurated.begin(), kPmaCurated.end());
  for (const MetricDesc* desc : HwCounterMetrics()) all.push_back(desc);
  return all;
}

template <size_t N>
const CounterSpec* Find(const CounterSpec (&table)[N], std::string_view file) {
  for (const CounterSpec& spec : table) {
    if (spec.file == file) return &spec;
  }
  return nullptr;
}

}  // namespace

const CounterSpec* FindPmaCounter(std::string_view file) { return Find(kPmaCounters, file); }
std::span<const MetricDesc* const> CuratedCounterMetrics() {
  static const std::vector<const MetricDesc*> all = AllCurated();
  return all;
}

}  // namespace fabricwatch::rdma
