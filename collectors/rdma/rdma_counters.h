#pragma once
// The curated RDMA counter tables: which counter file becomes which metric, with its unit
// scale and, for IBA PortCounters, the width at which it saturates.

#include <span>
#include <string_view>

#include "base/metric_sink.h"
#include "collectors/rdma/rdma_metrics.h"

namespace fabricwatch::rdma {

struct CounterSpec {
  std::string_view file;   // the file name in counters/, counters_ext/ or hw_counters/
  const MetricDesc* desc;  // the curated metric
  double scale;            // multiplier to base units (4 for IBA 4-octet data words)
  int saturating_bits;     // width of an IBA counter that stops at all-ones; 0 if it does not
  // True for the data/packet counters that the kernel serves from PortCountersExtended (64-bit)
  // when the PMA supports it; port_xmit_wait and the error counters stay narrow regardless.
  bool widened_by_extended_table = false;
};

// Port traffic: from the IBA counters/ (4-octet words) on IB and mlx5 RoCE ports, from
// hw_counters/ (bytes) on bnxt_re and efa, which have no counters/ directory.
inline constexpr MetricDesc kXmitBytes{
    "fabric_rdma_port_transmit_bytes_total",
    "Data bytes transmitted: counters/port_xmit_data or counters_ext/port_xmit_data_64 (4-octet "
    "words, multiplied by 4 here), or hw_counters/tx_bytes (bnxt_re, efa). On RoCE ports this is "
    "RDMA traffic only.",
    MetricKind::kCounter, kPortLabels};
inline constexpr MetricDesc kRcvBytes{
    "fabric_rdma_port_receive_bytes_total",
    "Data bytes received: counters/port_rcv_data or counters_ext/port_rcv_data_64 (4-octet words, "
    "multiplied by 4 here), or hw_counters/rx_bytes (bnxt_re, efa). On RoCE ports this is RDMA "
    "traffic only.",
    MetricKind::kCounter, kPortLabels};
inline constexpr MetricDesc kXmitPackets{
    "fabric_rdma_port_transmit_packets_total",
    "Packets transmitted (counters/port_xmit_packets or counters_ext/port_xmit_packets_64; "
    "hw_counters/tx_pkts on bnxt_re and efa).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff,
     "fabric_rdma_port_transmit_bytes_total tells the load; packet counts are node_exporter's "
     "infiniband collector's too"}};
inline constexpr MetricDesc kRcvPackets{
    "fabric_rdma_port_receive_packets_total",
    "Packets received (counters/port_rcv_packets or counters_ext/port_rcv_packets_64; "
    "hw_counters/rx_pkts on bnxt_re and efa).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff,
     "fabric_rdma_port_receive_bytes_total tells the load; packet counts are node_exporter's "
     "infiniband collector's too"}};

// counters/ and counters_ext/ files (IBA PMA), or nullptr for an unknown file.
const CounterSpec* FindPmaCounter(std::string_view file);
// hw_counters/ files of known drivers (mlx5, irdma, bnxt_re, efa), or nullptr
// (rdma_hw_counters.cc).
const CounterSpec* FindHwCounter(std::string_view file);
// The hw_counters table itself, and its curated metrics (for tests and the metric reference).
std::span<const CounterSpec> HwCounterTable();
std::span<const MetricDesc* const> HwCounterMetrics();
// Every curated metric, for the metric reference.
std::span<const MetricDesc* const> CuratedCounterMetrics();

}  // namespace fabricwatch::rdma
