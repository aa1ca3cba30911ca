#pragma once
// Normalisation of vendor `ethtool -S` statistic names (docs/reference.md §4.1–4.3) into curated,
// labelled metric families with base units, and sanitising of raw names for the opt-in
// passthrough.
//
// The curated families (all counters, all labelled "netdev" first; the collector supplies the
// netdev, NormalizeStat the labels after it, in MetricDesc order):
//   fabric_pfc_pause_frames_total{priority,direction}          PFC pause (XOFF) frames
//   fabric_pfc_pause_duration_seconds_total{priority,direction} time paused (vendor µs -> s)
//   fabric_pfc_pause_transitions_total{priority,direction}     pause state transitions
//   fabric_pfc_xon_frames_total{priority,direction}            PFC XON (resume) frames
//   fabric_ethtool_priority_{bytes,packets}_total{priority,direction}
//   fabric_ethtool_priority_receive_{discards,buffer_discards,congestion_discards}_total{priority}
//   fabric_ethtool_priority_ecn_marked_packets_total{priority}
//   fabric_ethtool_global_pause_{frames,duration_seconds,transitions}_total{direction}
//   fabric_ethtool_global_xon_frames_total{direction}           802.3x link-level pause
//   fabric_ethtool_pause_storm_events_total{severity}            mlx5 PFC storm prevention
//   fabric_ethtool_continuous_pause_{events,resumes}_total{traffic}   bnxt_en pause storms
//   fabric_ethtool_port_discards_total{direction}, fabric_ethtool_out_of_buffer_drops_total,
//   fabric_ethtool_receive_buffer_threshold_events_total
//   fabric_ethtool_phy_{received_bits,corrected_bits,pcs_symbol_errors,symbol_errors}_total,
//   fabric_ethtool_phy_lane_corrected_bits_total{lane}, fabric_ethtool_crc_errors_total,
//   fabric_ethtool_link_down_events_total, fabric_ethtool_module_events_total{event}
// Label values: priority and lane "0".."7", direction "rx"|"tx", severity "warning"|"error",
// traffic "all"|"roce", event "unplug"|"bus_stuck"|"high_temp"|"bad_shorted".
//
// Deliberately not mapped (available through the passthrough), see ethtool_names.cc:
// mlx5 rx/tx_pause_ctrl_phy (the same 802.3 counters the collector reads through netlink
// PAUSE_GET), bnxt_en *_cos%d and *_pri%d traffic (CoS-queue counters, not per priority),
// i40e port.rx_priority_%d_xon_2_xoff (XON->XOFF, the opposite transition of mlx5's), ionic
// frames_rx/tx_pripause (totals over all priorities).
//
// Vendors with nothing to map for a family (docs/reference.md §4): ice and i40e count PFC frames
// but no pause time, so fabric_pfc_pause_duration_seconds_total (what pfc_storm reads) is
// mlx5, bnxt_en and ionic only; ionic has pause time and per-priority frames but no PFC frame
// counts; ENA, the netdev of an AWS EFA, has no PFC, FEC, PHY or link-down statistic at all (its
// *_allowance_exceeded counters are instance shaping, K drivers/net/ethernet/amazon/ena/
// ena_ethtool.c).

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "base/metric_sink.h"
#include "collectors/ethtool/ethtool_metrics.h"

namespace fabricwatch::ethtool {

struct NormalizedStat {
  static constexpr size_t kMaxExtra = 3;
  const MetricDesc* desc = nullptr;
  // The labels after "netdev", exactly desc->labels[1..] in order, as (name, value). Both views
  // point at static storage and stay valid for the life of the program.
  std::array<std::pair<std::string_view, std::string_view>, kMaxExtra> extra{};
  size_t n_extra = 0;
  // Multiplier to the metric's base unit: 1e-6 for vendor microseconds, else 1.
  double scale = 1.0;
};

// One row of the table NormalizeStat is built from: a vendor name in which "%d" (at most once)
// stands for a single digit 0-7 that becomes the value of `index_label`.
struct StatPattern {
  std::string_view pattern;
  const MetricDesc* desc;
  std::string_view index_label;  // "priority", "lane", or empty when the pattern has no %d
  LabelPair fixed[2];            // constant labels (direction, severity, ...); empty name = none
  double scale;
};

// The curated family of a driver statistic name (as GSTRINGS or `ethtool -S` gives it;
// surrounding blanks are ignored, since some kernels pad names, e.g. mlx5's
// "tx_pause_storm_warning_events "), or nullopt when the name is not curated.
// O(1): a hash lookup in an index built once from the pattern table. Thread-safe.
std::optional<NormalizedStat> NormalizeStat(std::string_view name);

// Every curated MetricDesc, each once, for the metric reference and the sink.
std::span<const MetricDesc* const> NormalizedMetrics();

// The pattern table itself (for tests and documentation).
std::span<const StatPattern> StatPatterns();

// A raw statistic name as a metric name: ASCII lower case, every run of characters outside
// [a-z0-9] (underscores included) becomes one '_', no '_' at either end, and a leading digit is
// prefixed with '_' so the result is a valid metric name on its own. Deterministic and
// context-free, so different raw names can collide ("rx-bytes", "rx_bytes", "RX.Bytes" all give
// "rx_bytes"): callers must detect that. Empty when `raw` has no letter or digit.
// Examples: "rx_crc_errors.nic" -> "rx_crc_errors_nic", "[0]: rx_ucast_packets" ->
// "_0_rx_ucast_packets", "port.VF_admin_queue_requests" -> "port_vf_admin_queue_requests".
std::string SanitizeMetricName(std::string_view raw);

// The passthrough metric name: "fabric_ethtool_" + the sanitised name, without the guard '_'
// (the prefix already makes it valid): "[0]: rx_ucast_packets" ->
// "fabric_ethtool_0_rx_ucast_packets". Empty when the sanitised name is empty.
std::string PassthroughMetricName(std::string_view raw);

}  // namespace fabricwatch::ethtool
