#include "collectors/ethtool/ethtool_names.h"

#include <deque>
#include <unordered_map>

namespace fabricwatch::ethtool {
namespace {

// ---- PFC per priority. Sources: docs/reference.md §4.1 (mlx5, K
// drivers/net/ethernet/mellanox/mlx5/ core/en_stats.c pport_per_prio_pfc_stats_desc, created only
// for PFC-enabled priorities), §4.2 (bnxt_en, K drivers/net/ethernet/broadcom/bnxt/bnxt_ethtool.c
// bnxt_port_stats_arr, bnxt_port_stats_ext_arr, bnxt_tx_port_stats_ext_arr), §4.3 (ice, K
// drivers/net/ethernet/intel/ ice/ice_ethtool.c per-priority loop; i40e, K
// drivers/net/ethernet/intel/i40e/i40e_ethtool.c i40e_gstrings_pfc_stats).
//
// XON frames (ice, i40e) are not folded into the transitions family: an XON frame is a resume
// request on the wire, while mlx5 and bnxt_en count state changes of the paused queue (a pause
// can also end by its timer, and XON frames can repeat), so they get their own family.
constexpr MetricDesc kPfcPauseFrames{
    "fabric_pfc_pause_frames_total",
    "Priority flow control (802.1Qbb) pause frames received (direction=rx) or sent (tx) for the "
    "priority. mlx5 rx/tx_prio<N>_pause (present only while PFC is enabled on the priority), "
    "bnxt_en rx/tx_pfc_ena_frames_pri<N>, ice rx/tx_priority_<N>_xoff.nic, i40e "
    "port.rx_priority_<N>_xoff[_rx] / port.tx_priority_<N>_xoff[_tx]. ice and i40e count XOFF "
    "frames only; their XON frames are fabric_pfc_xon_frames_total. ionic counts no PFC frames "
    "per priority.",
    MetricKind::kCounter, kPrioDir};
constexpr MetricDesc kPfcPauseTransitions{
    "fabric_pfc_pause_transitions_total",
    "PFC pause state transitions of the priority. mlx5 rx_prio<N>_pause_transition counts "
    "XOFF-to-XON transitions of received pause (rx only); bnxt_en pfc_pri<N>_rx/tx_transitions "
    "counts transitions between XON and XOFF as its firmware defines them.",
    MetricKind::kCounter, kPrioDir};
constexpr MetricDesc kPfcXonFrames{
    "fabric_pfc_xon_frames_total",
    "PFC XON (resume, zero pause time) frames received (rx) or sent (tx) for the priority. ice "
    "rx/tx_priority_<N>_xon.nic, i40e port.rx_priority_<N>_xon[_rx] / "
    "port.tx_priority_<N>_xon[_tx].",
    MetricKind::kCounter, kPrioDir};

// ---- Per-priority traffic and drops (mlx5 en_stats.c pport_per_prio_traffic_stats_desc,
// pport_per_tc_prio_stats_desc, pport_per_tc_congest_prio_stats_desc).
//
// bnxt_en rx/tx_bytes_cos<N> are per CoS queue, not per priority; its rx/tx_{bytes,packets}_pri<N>
// read the counter of the CoS queue the priority maps to (bnxt_get_ethtool_stats:
// base_off + pri2cos_idx[i]), so priorities sharing a queue repeat the same value and a sum over
// priorities double-counts. Neither is mapped here.
constexpr MetricDesc kPrioDiscards{
    "fabric_ethtool_priority_receive_discards_total",
    "Received packets of the priority dropped at the port for lack of receive buffer "
    "(mlx5 rx_prio<N>_discards). Should stay 0 on a lossless (PFC) priority.",
    MetricKind::kCounter,
    kPrio,
    {},
    {ExportRule::kLosslessPriority,
     "8 priorities per port; a drop is a fault on a lossless priority, traffic policy on a lossy "
     "one"}};
constexpr MetricDesc kPrioBufDiscards{
    "fabric_ethtool_priority_receive_buffer_discards_total",
    "Received unicast packets of the priority dropped for lack of shared port buffer "
    "(mlx5 rx_prio<N>_buf_discard, with the sbcam_reg capability).",
    MetricKind::kCounter,
    kPrio,
    {},
    {ExportRule::kLosslessPriority,
     "8 priorities per port; a drop is a fault on a lossless priority, traffic policy on a lossy "
     "one"}};
constexpr MetricDesc kPrioCongDiscards{
    "fabric_ethtool_priority_receive_congestion_discards_total",
    "Received packets of the priority dropped by congestion control (WRED) "
    "(mlx5 rx_prio<N>_cong_discard).",
    MetricKind::kCounter,
    kPrio,
    {},
    {ExportRule::kLosslessPriority,
     "8 priorities per port; a drop is a fault on a lossless priority, traffic policy on a lossy "
     "one"}};
constexpr MetricDesc kPrioEcnMarked{
    "fabric_ethtool_priority_ecn_marked_packets_total",
    "Packets of the priority ECN-marked (congestion experienced) by the device "
    "(mlx5 rx_prio<N>_marked).",
    MetricKind::kCounter,
    kPrio,
    {},
    {ExportRule::kLosslessPriority,
     "8 priorities per port; RoCE's congestion control marks the lossless priority"}};

// ---- Global (802.3x link-level) pause. mlx5 uses the per-priority PFC counter set with "global"
// for the priority while global pause is enabled (en_stats.c pport_per_prio_pfc_stats_desc).
// mlx5 rx/tx_pause_ctrl_phy (802.3 aPAUSEMACCtrlFrames*) are not mapped: they are the counters
// the kernel's standard pause statistics (netlink PAUSE_GET, mlx5e_stats_pause_get) report,
// which the collector exports from that source.
constexpr MetricDesc kGlobalPauseFrames{
    "fabric_ethtool_global_pause_frames_total",
    "IEEE 802.3x (link-level, not per-priority) pause frames received (rx) or sent (tx), from "
    "driver statistics: mlx5 rx/tx_global_pause, bnxt_en rx/tx_pause_frames, ice "
    "link_xoff_rx/tx.nic, i40e port.link_xoff_rx/tx, igb/ixgbe rx/tx_flow_control_xoff, tg3 "
    "rx_xoff_pause_rcvd / tx_xoff_sent, ionic frames_rx/tx_pause. Intel and tg3 count XOFF frames "
    "only; their XON frames "
    "are fabric_ethtool_global_xon_frames_total.",
    MetricKind::kCounter, kDir};
constexpr MetricDesc kGlobalPauseDuration{
    "fabric_ethtool_global_pause_duration_seconds_total",
    "Time paused by 802.3x global pause, received (rx) or sent (tx) "
    "(mlx5 rx/tx_global_pause_duration; ionic rx_pause_1us_count, rx only; microseconds "
    "converted to seconds).",
    MetricKind::kCounter, kDir};
constexpr MetricDesc kGlobalPauseTransitions{
    "fabric_ethtool_global_pause_transitions_total",
    "XOFF-to-XON transitions of received 802.3x global pause (mlx5 rx_global_pause_transition).",
    MetricKind::kCounter, kDir};
constexpr MetricDesc kGlobalXonFrames{
    "fabric_ethtool_global_xon_frames_total",
    "IEEE 802.3x XON (resume) frames received (rx) or sent (tx): ice link_xon_rx/tx.nic, i40e "
    "port.link_xon_rx/tx, igb/ixgbe rx/tx_flow_control_xon, tg3 rx_xon_pause_rcvd / tx_xon_sent.",
    MetricKind::kCounter, kDir};

// ---- Pause storms. mlx5 (en_stats.c pport_pfc_stall_stats_desc, caps pfcc_mask + stall_detect)
// counts storms this NIC sends (its receive path stalled); bnxt_en's continuous_pause_events
// live in rx_port_stats_ext and come with "resume" counterparts and a RoCE variant: not the same
// condition, direction or severity scale, so they are a family of their own.
constexpr MetricDesc kContinuousPause{
    "fabric_ethtool_continuous_pause_events_total",
    "Continuous pause (pause storm) detections reported by the firmware for all traffic "
    "(traffic=all, bnxt_en continuous_pause_events) or RoCE traffic (traffic=roce, bnxt_en "
    "continuous_roce_pause_events).",
    MetricKind::kCounter,
    {"netdev", "traffic"}};
constexpr MetricDesc kContinuousPauseResumes{
    "fabric_ethtool_continuous_pause_resumes_total",
    "Recoveries from a continuous pause condition reported by the firmware (bnxt_en "
    "resume_pause_events with traffic=all, resume_roce_pause_events with traffic=roce).",
    MetricKind::kCounter,
    {"netdev", "traffic"}};

// ---- Discards and buffer pressure (mlx5 en_stats.c pport_2863_stats_desc, q_stats_desc,
// pport_eth_ext_stats_desc; bnxt_en rx_port_stats_ext).
constexpr MetricDesc kPortDiscards{
    "fabric_ethtool_port_discards_total",
    "Packets discarded at the physical port: rx for lack of receive buffer (NIC-level congestion "
    "drop), tx e.g. while the link was down (mlx5 rx/tx_discards_phy, RFC 2863 ifIn/OutDiscards).",
    MetricKind::kCounter, kDir};
constexpr MetricDesc kOutOfBuffer{
    "fabric_ethtool_out_of_buffer_drops_total",
    "Packets dropped because a driver receive queue had no posted buffer: the host is not "
    "keeping up (mlx5 rx_out_of_buffer).",
    MetricKind::kCounter, kNetdev};
constexpr MetricDesc kBufferThreshold{
    "fabric_ethtool_receive_buffer_threshold_events_total",
    "Times the port receive buffer filled past its threshold, 85% on mlx5 "
    "(mlx5 rx_buffer_passed_thres_phy, bnxt_en rx_buffer_passed_threshold).",
    MetricKind::kCounter, kNetdev};

// ---- PHY, FEC and BER (mlx5 en_stats.c pport_802_3_stats_desc, pport_phy_statistical_*,
// "link_down_events_phy", mlx5e_pme_*_desc; bnxt_en bnxt_port_stats_ext_arr; bnxt_en
// rx_fcs_err_frames is what bnxt_get_eth_mac_stats reports as FrameCheckSequenceErrors).
constexpr MetricDesc kPhySymbolErrors{
    "fabric_ethtool_phy_symbol_errors_total",
    "IEEE 802.3 aSymbolErrorDuringCarrier: PHY coding errors inside frames "
    "(mlx5 rx_symbol_err_phy).",
    MetricKind::kCounter, kNetdev};
constexpr MetricDesc kCrcErrors{
    "fabric_ethtool_crc_errors_total",
    "Frames received at the port with a bad frame check sequence (mlx5 rx_crc_errors_phy, "
    "bnxt_en rx_fcs_err_frames, ice rx_crc_errors.nic, i40e port.rx_crc_errors, ionic "
    "frames_rx_bad_fcs).",
    MetricKind::kCounter, kNetdev};

constexpr LabelPair kRx{"direction", "rx"};
constexpr LabelPair kTx{"direction", "tx"};
constexpr LabelPair kNone{};
constexpr double kMicro = 1e-6;  // vendor microseconds -> seconds

constexpr StatPattern kPatterns[] = {
    // mlx5: PFC (per PFC-enabled priority) and global pause (while 802.3x pause is on).
    {"rx_prio%d_pause", &kPfcPauseFrames, "priority", {kRx, kNone}, 1},
    {"tx_prio%d_pause", &kPfcPauseFrames, "priority", {kTx, kNone}, 1},
    {"rx_prio%d_pause_duration", &kPfcPauseDuration, "priority", {kRx, kNone}, kMicro},
    {"tx_prio%d_pause_duration", &kPfcPauseDuration, "priority", {kTx, kNone}, kMicro},
    {"rx_prio%d_pause_transition", &kPfcPauseTransitions, "priority", {kRx, kNone}, 1},
    {"rx_global_pause", &kGlobalPauseFrames, "", {kRx, kNone}, 1},
    {"tx_global_pause", &kGlobalPauseFrames, "", {kTx, kNone}, 1},
    {"rx_global_pause_duration", &kGlobalPauseDuration, "", {kRx, kNone}, kMicro},
    {"tx_global_pause_duration", &kGlobalPauseDuration, "", {kTx, kNone}, kMicro},
    {"rx_global_pause_transition", &kGlobalPauseTransitions, "", {kRx, kNone}, 1},
    // mlx5: per-priority traffic, drops and ECN marks.
    {"rx_prio%d_bytes", &kPrioBytes, "priority", {kRx, kNone}, 1},
    {"tx_prio%d_bytes", &kPrioBytes, "priority", {kTx, kNone}, 1},
    {"rx_prio%d_packets", &kPrioPackets, "priority", {kRx, kNone}, 1},
    {"tx_prio%d_packets", &kPrioPackets, "priority", {kTx, kNone}, 1},
    {"rx_prio%d_discards", &kPrioDiscards, "priority", {kNone, kNone}, 1},
    {"rx_prio%d_buf_discard", &kPrioBufDiscards, "priority", {kNone, kNone}, 1},
    {"rx_prio%d_cong_discard", &kPrioCongDiscards, "priority", {kNone, kNone}, 1},
    {"rx_prio%d_marked", &kPrioEcnMarked, "priority", {kNone, kNone}, 1},
    // mlx5: pause storm prevention.
    {"tx_pause_storm_warning_events", &kPauseStormEvents, "", {{"severity", "warning"}, kNone}, 1},
    {"tx_pause_storm_error_events", &kPauseStormEvents, "", {{"severity", "error"}, kNone}, 1},
    // mlx5: port discards, buffers.
    {"rx_discards_phy", &kPortDiscards, "", {kRx, kNone}, 1},
    {"tx_discards_phy", &kPortDiscards, "", {kTx, kNone}, 1},
    {"rx_out_of_buffer", &kOutOfBuffer, "", {kNone, kNone}, 1},
    {"rx_buffer_passed_thres_phy", &kBufferThreshold, "", {kNone, kNone}, 1},
    // mlx5: PHY, FEC, link and module.
    {"rx_bits_phy", &kPhyReceivedBits, "", {kNone, kNone}, 1},
    {"rx_corrected_bits_phy", &kPhyCorrectedBits, "", {kNone, kNone}, 1},
    {"rx_pcs_symbol_err_phy", &kPhyPcsSymbolErrors, "", {kNone, kNone}, 1},
    {"rx_symbol_err_phy", &kPhySymbolErrors, "", {kNone, kNone}, 1},
    {"rx_err_lane_%d_phy", &kPhyLaneCorrectedBits, "lane", {kNone, kNone}, 1},
    {"rx_crc_errors_phy", &kCrcErrors, "", {kNone, kNone}, 1},
    {"link_down_events_phy", &kLinkDownEvents, "", {kNone, kNone}, 1},
    {"module_unplug", &kModuleEvents, "", {{"event", "unplug"}, kNone}, 1},
    {"module_bus_stuck", &kModuleEvents, "", {{"event", "bus_stuck"}, kNone}, 1},
    {"module_high_temp", &kModuleEvents, "", {{"event", "high_temp"}, kNone}, 1},
    {"module_bad_shorted", &kModuleEvents, "", {{"event", "bad_shorted"}, kNone}, 1},

    // bnxt_en: port and extended port statistics.
    {"rx_pfc_ena_frames_pri%d", &kPfcPauseFrames, "priority", {kRx, kNone}, 1},
    {"tx_pfc_ena_frames_pri%d", &kPfcPauseFrames, "priority", {kTx, kNone}, 1},
    {"pfc_pri%d_rx_duration_us", &kPfcPauseDuration, "priority", {kRx, kNone}, kMicro},
    {"pfc_pri%d_tx_duration_us", &kPfcPauseDuration, "priority", {kTx, kNone}, kMicro},
    {"pfc_pri%d_rx_transitions", &kPfcPauseTransitions, "priority", {kRx, kNone}, 1},
    {"pfc_pri%d_tx_transitions", &kPfcPauseTransitions, "priority", {kTx, kNone}, 1},
    {"rx_pause_frames", &kGlobalPauseFrames, "", {kRx, kNone}, 1},
    {"tx_pause_frames", &kGlobalPauseFrames, "", {kTx, kNone}, 1},
    {"continuous_pause_events", &kContinuousPause, "", {{"traffic", "all"}, kNone}, 1},
    {"continuous_roce_pause_events", &kContinuousPause, "", {{"traffic", "roce"}, kNone}, 1},
    {"resume_pause_events", &kContinuousPauseResumes, "", {{"traffic", "all"}, kNone}, 1},
    {"resume_roce_pause_events", &kContinuousPauseResumes, "", {{"traffic", "roce"}, kNone}, 1},
    {"rx_buffer_passed_threshold", &kBufferThreshold, "", {kNone, kNone}, 1},
    {"rx_bits", &kPhyReceivedBits, "", {kNone, kNone}, 1},
    {"rx_corrected_bits", &kPhyCorrectedBits, "", {kNone, kNone}, 1},
    {"rx_pcs_symbol_err", &kPhyPcsSymbolErrors, "", {kNone, kNone}, 1},
    {"rx_fcs_err_frames", &kCrcErrors, "", {kNone, kNone}, 1},
    {"link_down_events", &kLinkDownEvents, "", {kNone, kNone}, 1},

    // ice (E810): ICE_PF_STAT table and per-priority loop.
    {"rx_priority_%d_xoff.nic", &kPfcPauseFrames, "priority", {kRx, kNone}, 1},
    {"tx_priority_%d_xoff.nic", &kPfcPauseFrames, "priority", {kTx, kNone}, 1},
    {"rx_priority_%d_xon.nic", &kPfcXonFrames, "priority", {kRx, kNone}, 1},
    {"tx_priority_%d_xon.nic", &kPfcXonFrames, "priority", {kTx, kNone}, 1},
    {"link_xoff_rx.nic", &kGlobalPauseFrames, "", {kRx, kNone}, 1},
    {"link_xoff_tx.nic", &kGlobalPauseFrames, "", {kTx, kNone}, 1},
    {"link_xon_rx.nic", &kGlobalXonFrames, "", {kRx, kNone}, 1},
    {"link_xon_tx.nic", &kGlobalXonFrames, "", {kTx, kNone}, 1},
    {"rx_crc_errors.nic", &kCrcErrors, "", {kNone, kNone}, 1},

    // i40e (X710/XL710): current names, and the older ones without the _rx/_tx suffix.
    // port.rx_priority_%d_xon_2_xoff (XON->XOFF transitions) stays unmapped.
    {"port.rx_priority_%d_xoff_rx", &kPfcPauseFrames, "priority", {kRx, kNone}, 1},
    {"port.tx_priority_%d_xoff_tx", &kPfcPauseFrames, "priority", {kTx, kNone}, 1},
    {"port.rx_priority_%d_xon_rx", &kPfcXonFrames, "priority", {kRx, kNone}, 1},
    {"port.tx_priority_%d_xon_tx", &kPfcXonFrames, "priority", {kTx, kNone}, 1},
    {"port.rx_priority_%d_xoff", &kPfcPauseFrames, "priority", {kRx, kNone}, 1},
    {"port.tx_priority_%d_xoff", &kPfcPauseFrames, "priority", {kTx, kNone}, 1},
    {"port.rx_priority_%d_xon", &kPfcXonFrames, "priority", {kRx, kNone}, 1},
    {"port.tx_priority_%d_xon", &kPfcXonFrames, "priority", {kTx, kNone}, 1},
    {"port.link_xoff_rx", &kGlobalPauseFrames, "", {kRx, kNone}, 1},
    {"port.link_xoff_tx", &kGlobalPauseFrames, "", {kTx, kNone}, 1},
    {"port.link_xon_rx", &kGlobalXonFrames, "", {kRx, kNone}, 1},
    {"port.link_xon_tx", &kGlobalXonFrames, "", {kTx, kNone}, 1},
    {"port.rx_crc_errors", &kCrcErrors, "", {kNone, kNone}, 1},

    // ionic, AMD Pensando (K drivers/net/ethernet/pensando/ionic/ionic_stats.c
    // ionic_port_stats_desc, fields of struct ionic_port_stats in ionic_if.h): per-priority pause
    // time in 1 us units and per-priority frame counts (traffic of the priority, not PFC frames;
    // AMD's device-metrics-exporter documents frames_rx_pri_<N> as "frames received on priority
    // N"). frames_rx/tx_pripause are totals over all priorities and stay unmapped.
    {"rx_pripause_%d_1us_count", &kPfcPauseDuration, "priority", {kRx, kNone}, kMicro},
    {"tx_pripause_%d_1us_count", &kPfcPauseDuration, "priority", {kTx, kNone}, kMicro},
    {"frames_rx_pri_%d", &kPrioPackets, "priority", {kRx, kNone}, 1},
    {"frames_tx_pri_%d", &kPrioPackets, "priority", {kTx, kNone}, 1},
    {"frames_rx_pause", &kGlobalPauseFrames, "", {kRx, kNone}, 1},
    {"frames_tx_pause", &kGlobalPauseFrames, "", {kTx, kNone}, 1},
    {"rx_pause_1us_count", &kGlobalPauseDuration, "", {kRx, kNone}, kMicro},
    {"frames_rx_bad_fcs", &kCrcErrors, "", {kNone, kNone}, 1},

    // igb and ixgbe (K drivers/net/ethernet/intel/{igb/igb,ixgbe/ixgbe}_ethtool.c): 802.3x
    // XON/XOFF counters. ixgbe's per-packet-buffer rx/tx_pb_%d_pxon/pxoff are per traffic class
    // buffer, not per priority, and stay unmapped.
    {"rx_flow_control_xoff", &kGlobalPauseFrames, "", {kRx, kNone}, 1},
    {"tx_flow_control_xoff", &kGlobalPauseFrames, "", {kTx, kNone}, 1},
    {"rx_flow_control_xon", &kGlobalXonFrames, "", {kRx, kNone}, 1},
    {"tx_flow_control_xon", &kGlobalXonFrames, "", {kTx, kNone}, 1},

    // tg3 (K drivers/net/ethernet/broadcom/tg3.c ethtool_stats_keys).
    {"rx_xoff_pause_rcvd", &kGlobalPauseFrames, "", {kRx, kNone}, 1},
    {"tx_xoff_sent", &kGlobalPauseFrames, "", {kTx, kNone}, 1},
    {"rx_xon_pause_rcvd", &kGlobalXonFrames, "", {kRx, kNone}, 1},
    {"tx_xon_sent", &kGlobalXonFrames, "", {kTx, kNone}, 1},
};

constexpr std::array<const MetricDesc*, 28> kCurated = {&kPfcPauseFrames,
                                                        &kPfcPauseDuration,
                                                        &kPfcPauseTransitions,
                                                        &kPfcXonFrames,
                                                        &kPrioBytes,
                                                        &kPrioPackets,
                                                        &kPrioDiscards,
                                                        &kPrioBufDiscards,
                                                        &kPrioCongDiscards,
                                                        &kPrioEcnMarked,
                                                        &kGlobalPauseFrames,
                                                        &kGlobalPauseDuration,
                                                        &kGlobalPauseTransitions,
                                                        &kGlobalXonFrames,
                                                        &kPauseStormEvents,
                                                        &kContinuousPause,
                                                        &kContinuousPauseResumes,
                                                        &kPortDiscards,
                                                        &kOutOfBuffer,
                                                        &kBufferThreshold,
                                                        &kPhyReceivedBits,
                                                        &kPhyCorrectedBits,
                                                        &kPhyPcsSymbolErrors,
                                                        &kPhySymbolErrors,
                                                        &kPhyLaneCorrectedBits,
                                                        &kCrcErrors,
                                                        &kLinkDownEvents,
                                                        &kModuleEvents};

constexpr std::array<std::string_view, 8> kDigits = {"0", "1", "2", "3", "4", "5", "6", "7"};

// An exact-name index over every expansion of the patterns (at most 8 per pattern).
struct Index {
  std::deque<std::string> names;  // owns the keys; deque never moves its elements
  std::unordered_map<std::string_view, NormalizedStat> by_name;

  void Add(std::string name, const StatPattern& row, std::string_view index_value) {
    NormalizedStat stat;
    stat.desc = row.desc;
    stat.scale = row.scale;
    const LabelNames& labels = row.desc->labels;
    for (size_t i = 1; i < labels.size() && stat.n_extra < NormalizedStat::kMaxExtra; ++i) {
      std::string_view value;
      if (labels[i] == row.index_label) {
        value = index_value;
      } else {
        for (const LabelPair& fixed : row.fixed) {
          if (!fixed.name.empty() && fixed.name == labels[i]) value = fixed.value;
        }
      }
      stat.extra[stat.n_extra++] = {labels[i], value};
    }
    names.push_back(std::move(name));
    by_name.emplace(names.back(), stat);  // the first pattern wins; tests keep names unique
  }
};

Index BuildIndex() {
  Index index;
  for (const StatPattern& row : kPatterns) {
    const size_t at = row.pattern.find("%d");
    if (at == std::string_view::npos) {
      index.Add(std::string(row.pattern), row, {});
      continue;
    }
    for (std::string_view digit : kDigits) {
      std::string name(row.pattern.substr(0, at));
      name += digit;
      name += row.pattern.substr(at + 2);
      index.Add(std::move(name), row, digit);
    }
  }
  return index;
}

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string SanitizedBody(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  bool separator = false;
  for (char c : raw) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      if (separator) out += '_';
      separator = false;
      out += c;
    } else {
      separator = !out.empty();  // drops leading separators; trailing ones are never written
    }
  }
  return out;
}

}  // namespace

std::optional<NormalizedStat> NormalizeStat(std::string_view name) {
  static const Index index = BuildIndex();
  while (!name.empty() && IsBlank(name.front())) name.remove_prefix(1);
  while (!name.empty() && IsBlank(name.back())) name.remove_suffix(1);
  auto it = index.by_name.find(name);
  if (it == index.by_name.end()) return std::nullopt;
  return it->second;
}

std::span<const MetricDesc* const> NormalizedMetrics() { return kCurated; }

std::span<const StatPattern> StatPatterns() { return kPatterns; }

std::string SanitizeMetricName(std::string_view raw) {
  std::string body = SanitizedBody(raw);
  if (!body.empty() && body.front() >= '0' && body.front() <= '9') body.insert(0, 1, '_');
  return body;
}

std::string PassthroughMetricName(std::string_view raw) {
  std::string body = SanitizedBody(raw);
  if (body.empty()) return body;
  return "fabric_ethtool_" + body;
}

}  // namespace fabricwatch::ethtool
