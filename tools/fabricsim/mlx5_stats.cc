#include "tools/fabricsim/mlx5_stats.h"

#include <initializer_list>

namespace fabricwatch::sim {
namespace {

void Append(std::vector<std::string>& out, std::initializer_list<const char*> names) {
  for (const char* n : names) out.emplace_back(n);
}

// "%d" in a pattern replaced by i.
std::string Fmt(const char* pattern, int i) {
  std::string s(pattern);
  const size_t at = s.find("%d");
  if (at != std::string::npos) s.replace(at, 2, std::to_string(i));
  return s;
}

// en_stats.c sw_stats_desc (the sum over channels), kernel 6.x order.
constexpr std::initializer_list<const char*> kSw = {
    "rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "tx_tso_packets", "tx_tso_bytes",
    "tx_tso_inner_packets", "tx_tso_inner_bytes", "tx_added_vlan_packets", "tx_nop",
    "tx_mpwqe_blks", "tx_mpwqe_pkts", "rx_lro_packets", "rx_lro_bytes", "rx_gro_packets",
    "rx_gro_bytes", "rx_gro_skbs", "rx_gro_match_packets", "rx_gro_large_hds", "rx_ecn_mark",
    "rx_removed_vlan_packets", "rx_csum_unnecessary", "rx_csum_none", "rx_csum_complete",
    "rx_csum_complete_tail", "rx_csum_complete_tail_slow", "rx_csum_unnecessary_inner",
    "rx_xdp_drop", "rx_xdp_redirect", "rx_xdp_tx_xmit", "rx_xdp_tx_mpwqe", "rx_xdp_tx_inlnw",
    "rx_xdp_tx_nops", "rx_xdp_tx_full", "rx_xdp_tx_err", "rx_xdp_tx_cqe", "tx_csum_none",
    "tx_csum_partial", "tx_csum_partial_inner", "tx_queue_stopped", "tx_queue_dropped",
    "tx_xmit_more", "tx_recover", "tx_cqes", "tx_queue_wake", "tx_cqe_err", "tx_xdp_xmit",
    "tx_xdp_mpwqe", "tx_xdp_inlnw", "tx_xdp_nops", "tx_xdp_full", "tx_xdp_err", "tx_xdp_cqes",
    "rx_wqe_err", "rx_mpwqe_filler_cqes", "rx_mpwqe_filler_strides", "rx_oversize_pkts_sw_drop",
    "rx_buff_alloc_err", "rx_cqe_compress_blks", "rx_cqe_compress_pkts", "rx_congst_umr",
    "rx_arfs_err", "rx_recover", "rx_pp_alloc_fast", "rx_pp_alloc_slow",
    "rx_pp_alloc_slow_high_order", "rx_pp_alloc_empty", "rx_pp_alloc_refill",
    "rx_pp_alloc_waive", "rx_pp_recycle_cached", "rx_pp_recycle_cache_full",
    "rx_pp_recycle_ring", "rx_pp_recycle_ring_full", "rx_pp_recycle_released_ref",
    "ch_events", "ch_poll", "ch_arm", "ch_aff_change", "ch_force_irq", "ch_eq_rearm"};

constexpr std::initializer_list<const char*> kVport = {
    "rx_vport_unicast_packets", "rx_vport_unicast_bytes", "tx_vport_unicast_packets",
    "tx_vport_unicast_bytes", "rx_vport_multicast_packets", "rx_vport_multicast_bytes",
    "tx_vport_multicast_packets", "tx_vport_multicast_bytes", "rx_vport_broadcast_packets",
    "rx_vport_broadcast_bytes", "tx_vport_broadcast_packets", "tx_vport_broadcast_bytes",
    "rx_vport_rdma_unicast_packets", "rx_vport_rdma_unicast_bytes",
    "tx_vport_rdma_unicast_packets", "tx_vport_rdma_unicast_bytes",
    "rx_vport_rdma_multicast_packets", "rx_vport_rdma_multicast_bytes",
    "tx_vport_rdma_multicast_packets", "tx_vport_rdma_multicast_bytes"};

// pport_802_3_stats_desc, pport_2863_stats_desc, pport_2819_stats_desc.
constexpr std::initializer_list<const char*> kPhy = {
    "tx_packets_phy", "rx_packets_phy", "rx_crc_errors_phy", "tx_bytes_phy", "rx_bytes_phy",
    "tx_multicast_phy", "tx_broadcast_phy", "rx_multicast_phy", "rx_broadcast_phy",
    "rx_in_range_len_errors_phy", "rx_out_of_range_len_phy", "rx_oversize_pkts_phy",
    "rx_symbol_err_phy", "tx_mac_control_phy", "rx_mac_control_phy", "rx_unsupported_op_phy",
    "rx_pause_ctrl_phy", "tx_pause_ctrl_phy", "rx_discards_phy", "tx_discards_phy",
    "tx_errors_phy", "rx_undersize_pkts_phy", "rx_fragments_phy", "rx_jabbers_phy",
    "rx_64_bytes_phy", "rx_65_to_127_bytes_phy", "rx_128_to_255_bytes_phy",
    "rx_256_to_511_bytes_phy", "rx_512_to_1023_bytes_phy", "rx_1024_to_1518_bytes_phy",
    "rx_1519_to_2047_bytes_phy", "rx_2048_to_4095_bytes_phy", "rx_4096_to_8191_bytes_phy",
    "rx_8192_to_10239_bytes_phy", "link_down_events_phy", "rx_bits_phy",
    "rx_pcs_symbol_err_phy", "rx_corrected_bits_phy"};

constexpr std::initializer_list<const char*> kPcie = {
    "rx_pci_signal_integrity", "tx_pci_signal_integrity", "outbound_pci_buffer_overflow",
    "outbound_pci_stalled_rd", "outbound_pci_stalled_wr", "outbound_pci_stalled_rd_events",
    "outbound_pci_stalled_wr_events"};

// Per channel: ch_stats_desc, rq_stats_desc, sq_stats_desc, xdpsq (XDP_TX) and xsk.
constexpr std::initializer_list<const char*> kCh = {
    "ch%d_events", "ch%d_poll", "ch%d_arm", "ch%d_aff_change", "ch%d_force_irq",
    "ch%d_eq_rearm"};
constexpr std::initializer_list<const char*> kRq = {
    "rx%d_packets", "rx%d_bytes", "rx%d_csum_complete", "rx%d_csum_complete_tail",
    "rx%d_csum_complete_tail_slow", "rx%d_csum_unnecessary", "rx%d_csum_unnecessary_inner",
    "rx%d_csum_none", "rx%d_xdp_drop", "rx%d_xdp_redirect", "rx%d_lro_packets",
    "rx%d_lro_bytes", "rx%d_gro_packets", "rx%d_gro_bytes", "rx%d_gro_skbs",
    "rx%d_gro_match_packets", "rx%d_gro_large_hds", "rx%d_ecn_mark",
    "rx%d_removed_vlan_packets", "rx%d_wqe_err", "rx%d_mpwqe_filler_cqes",
    "rx%d_mpwqe_filler_strides", "rx%d_oversize_pkts_sw_drop", "rx%d_buff_alloc_err",
    "rx%d_cqe_compress_blks", "rx%d_cqe_compress_pkts", "rx%d_congst_umr", "rx%d_arfs_err",
    "rx%d_recover", "rx%d_pp_alloc_fast", "rx%d_pp_alloc_slow", "rx%d_pp_alloc_slow_high_order",
    "rx%d_pp_alloc_empty", "rx%d_pp_alloc_refill", "rx%d_pp_alloc_waive",
    "rx%d_pp_recycle_cached", "rx%d_pp_recycle_cache_full", "rx%d_pp_recycle_ring",
    "rx%d_pp_recycle_ring_full", "rx%d_pp_recycle_released_ref", "rx%d_xdp_tx_xmit",
    "rx%d_xdp_tx_mpwqe", "rx%d_xdp_tx_inlnw", "rx%d_xdp_tx_nops", "rx%d_xdp_tx_full",
    "rx%d_xdp_tx_err", "rx%d_xdp_tx_cqes"};
constexpr std::initializer_list<const char*> kSq = {
    "tx%d_packets", "tx%d_bytes", "tx%d_tso_packets", "tx%d_tso_bytes", "tx%d_tso_inner_packets",
    "tx%d_tso_inner_bytes", "tx%d_csum_partial", "tx%d_csum_partial_inner",
    "tx%d_added_vlan_packets", "tx%d_nop", "tx%d_mpwqe_blks", "tx%d_mpwqe_pkts",
    "tx%d_csum_none", "tx%d_stopped", "tx%d_dropped", "tx%d_xmit_more", "tx%d_recover",
    "tx%d_cqes", "tx%d_wake", "tx%d_cqe_err"};
constexpr std::initializer_list<const char*> kXdpSq = {
    "tx%d_xdp_xmit", "tx%d_xdp_mpwqe", "tx%d_xdp_inlnw", "tx%d_xdp_nops", "tx%d_xdp_full",
    "tx%d_xdp_err", "tx%d_xdp_cqes"};

}  // namespace

std::vector<std::string> Mlx5StatNames(const Mlx5StatsShape& shape) {
  std::vector<std::string> out;
  out.reserve(1200);
  Append(out, kSw);
  Append(out, {"rx_out_of_buffer", "rx_if_down_packets", "rx_steer_missed_packets"});
  if (!shape.ipoib) {
    Append(out, kVport);
    Append(out, kPhy);
    for (int lane = 0; lane < shape.lanes; ++lane) out.push_back(Fmt("rx_err_lane_%d_phy", lane));
    Append(out, {"rx_buffer_passed_thres_phy"});
    Append(out, kPcie);
    for (int p = 0; p < 8; ++p) {
      for (const char* n : {"rx_prio%d_bytes", "rx_prio%d_packets", "rx_prio%d_discards",
                            "tx_prio%d_bytes", "tx_prio%d_packets"}) {
        out.push_back(Fmt(n, p));
      }
    }
    for (int p : shape.pfc_priorities) {
      for (const char* n : {"rx_prio%d_pause", "rx_prio%d_pause_duration", "tx_prio%d_pause",
                            "tx_prio%d_pause_duration", "rx_prio%d_pause_transition"}) {
        out.push_back(Fmt(n, p));
      }
    }
    Append(out, {"tx_pause_storm_warning_events", "tx_pause_storm_error_events",
                 "module_unplug", "module_bus_stuck", "module_high_temp", "module_bad_shorted"});
    for (int p = 0; p < 8; ++p) {
      for (const char* n : {"rx_prio%d_buf_discard", "rx_prio%d_cong_discard", "rx_prio%d_marked"})
        out.push_back(Fmt(n, p));
    }
  }
  for (int c = 0; c < shape.channels; ++c) {
    for (const char* n : kCh) out.push_back(Fmt(n, c));
  }
  for (int c = 0; c < shape.channels; ++c) {
    for (const char* n : kRq) out.push_back(Fmt(n, c));
  }
  for (int c = 0; c < shape.channels; ++c) {
    for (const char* n : kSq) out.push_back(Fmt(n, c));
  }
  for (int c = 0; c < shape.channels; ++c) {
    for (const char* n : kXdpSq) out.push_back(Fmt(n, c));
  }
  return out;
}

}  // namespace fabricwatch::sim
