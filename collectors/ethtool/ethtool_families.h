#pragma once
// The ethtool collector's own families that no other part reads: the driver-statistics count and
// the families of the kernel's generic queries (pause, FEC, link state, DCB PFC, PFC storm
// timeout, RoCE ECN, standard statistics), in the order of the metric reference. The families
// detectors read are in ethtool_metrics.h; the vendor-statistic families beside their
// normalisation table (ethtool_names.cc); the link-settings ones in ethtool_link.h.

#include "base/metric_sink.h"
#include "collectors/ethtool/ethtool_metrics.h"  // the read families, listed in kOwnMetrics

namespace fabricwatch::ethtool {

inline constexpr MetricDesc kDriverStats{
    "fabric_ethtool_driver_stats",
    "Number of driver statistics the netdev reports (ETHTOOL_GSSET_INFO ETH_SS_STATS count). It "
    "changes when the driver adds counters, e.g. mlx5 adds per-priority PFC counters when PFC is "
    "enabled.",
    MetricKind::kGauge,
    {"netdev"},
    {},
    {ExportRule::kOff, "a count of the driver's statistics, for debugging the ethtool collector"}};
inline constexpr MetricDesc kMacPauseFrames{
    "fabric_ethtool_mac_pause_frames_total",
    "IEEE 802.3 MAC control PAUSE frames (aPAUSEMACCtrlFramesTransmitted/Received) from the "
    "kernel's standard pause statistics (ETHTOOL_MSG_PAUSE_GET), by direction. Global 802.3x "
    "pause only, not PFC.",
    MetricKind::kCounter,
    {"netdev", "direction"}};
inline constexpr MetricDesc kFecInfo{
    "fabric_ethtool_fec_info",
    "Active forward error correction mode (ETHTOOL_MSG_FEC_GET): none, rs, baser or llrs. "
    "Constant 1.",
    MetricKind::kInfo,
    {"netdev", "mode"}};
inline constexpr MetricDesc kFecCorrected{
    "fabric_ethtool_fec_corrected_blocks_total",
    "FEC blocks with errors that were corrected, whole port (ETHTOOL_A_FEC_STAT_CORRECTED[0]).",
    MetricKind::kCounter,
    {"netdev"}};
inline constexpr MetricDesc kFecUncorrectable{
    "fabric_ethtool_fec_uncorrectable_blocks_total",
    "FEC blocks with errors that could not be corrected, whole port "
    "(ETHTOOL_A_FEC_STAT_UNCORR[0]): these are lost frames.",
    MetricKind::kCounter,
    {"netdev"}};
inline constexpr MetricDesc kFecLaneCorrected{
    "fabric_ethtool_fec_lane_corrected_blocks_total",
    "FEC corrected blocks per lane (ETHTOOL_A_FEC_STAT_CORRECTED[1..n]).",
    MetricKind::kCounter,
    {"netdev", "lane"}};
inline constexpr MetricDesc kFecLaneUncorrectable{
    "fabric_ethtool_fec_lane_uncorrectable_blocks_total",
    "FEC uncorrectable blocks per lane (ETHTOOL_A_FEC_STAT_UNCORR[1..n]).",
    MetricKind::kCounter,
    {"netdev", "lane"}};
inline constexpr MetricDesc kFecLaneCorrectedBits{
    "fabric_ethtool_fec_lane_corrected_bit_errors_total",
    "Bits corrected by FEC per lane (ETHTOOL_A_FEC_STAT_CORR_BITS[1..n]).",
    MetricKind::kCounter,
    {"netdev", "lane"}};
inline constexpr MetricDesc kLinkExtDown{
    "fabric_ethtool_link_ext_down_events_total",
    "Link-down events counted by the NIC (ETHTOOL_A_LINKSTATE_EXT_DOWN_CNT, kernel 6.2+; mlx5 and "
    "ice). It also counts flaps the netdev never saw, e.g. while administratively down.",
    MetricKind::kCounter,
    {"netdev"}};
inline constexpr MetricDesc kLinkExtState{
    "fabric_ethtool_link_ext_state",
    "Why the link is down, while it is down (ETHTOOL_A_LINKSTATE_EXT_STATE): 0 autoneg, 1 link "
    "training failure, 2 logical mismatch, 3 bad signal integrity, 4 no cable, 5 cable issue, "
    "6 EEPROM issue, 7 calibration failure, 8 power budget exceeded, 9 overheat, 10 module.",
    MetricKind::kGauge,
    {"netdev"}};
inline constexpr MetricDesc kPfcCap{
    "fabric_pfc_capable_traffic_classes",
    "Traffic classes that can be PFC-enabled at once (DCB IEEE PFC pfc_cap).",
    MetricKind::kGauge,
    {"netdev"}};
inline constexpr MetricDesc kPfcDcbFrames{
    "fabric_pfc_dcb_frames_total",
    "PFC frames per priority from DCB (struct ieee_pfc: requests = sent, tx; indications = "
    "received, rx). Vendor-neutral where the driver fills them (mlx5 does).",
    MetricKind::kCounter,
    {"netdev", "priority", "direction"}};

inline constexpr MetricDesc kStandardStat{
    "fabric_ethtool_standard_stat_total",
    "Standard statistics the driver reports through ETHTOOL_MSG_STATS_GET (kernel 5.13+), by "
    "group (eth-phy, eth-mac, eth-ctrl, rmon) and IEEE 802.3 / RFC 2819 name, e.g. "
    "group=\"eth-mac\",stat=\"FrameCheckSequenceErrors\". Vendor-neutral.",
    MetricKind::kCounter,
    {"netdev", "group", "stat"}};

inline constexpr MetricDesc kOwnMetrics[] = {kDriverStats,
                                             kMacPauseFrames,
                                             kPauseEnabled,
                                             kPauseAutoneg,
                                             kFecInfo,
                                             kFecCorrected,
                                             kFecUncorrectable,
                                             kFecCorrectedBits,
                                             kFecLaneCorrected,
                                             kFecLaneUncorrectable,
                                             kFecLaneCorrectedBits,
                                             kLinkExtDown,
                                             kLinkExtState,
                                             kPfcEnabled,
                                             kPfcCap,
                                             kPfcDcbFrames,
                                             kPfcStormTimeout,
                                             kEcnEnabled,
                                             kStandardStat};

}  // namespace fabricwatch::ethtool
