#pragma once
// The ethtool collector's families that other parts read (detectors, through their MetricInput
// declarations): the collector's contract, defined once here and used by both sides. The rest
// of the curated families stay beside their normalisation table (ethtool_names.cc).

#include "collectors/core/collector_family.h"
#include "base/metric_sink.h"

namespace fabricwatch::ethtool {

// The collector that exports the families below: its name in the collector registry
// (collectors/registry.cc), in --collector.ethtool and in Snapshot::collector.
inline constexpr std::string_view kCollector = "ethtool";
// Its families carry it in their type (collectors/core/collector_family.h).
using Family = FamilyOf<kCollector>;

inline constexpr LabelNames kNetdev{"netdev"};
inline constexpr LabelNames kPrioDir{"netdev", "priority", "direction"};
inline constexpr LabelNames kPrio{"netdev", "priority"};
inline constexpr LabelNames kDir{"netdev", "direction"};

inline constexpr Family kPfcPauseDuration{
    "fabric_pfc_pause_duration_seconds_total",
    "Time the priority was paused by PFC, received pause (rx: our transmitter was held) or sent "
    "pause (tx: we held the peer). mlx5 rx/tx_prio<N>_pause_duration, bnxt_en "
    "pfc_pri<N>_rx/tx_duration_us and ionic rx/tx_pripause_<N>_1us_count, all in microseconds, "
    "converted to seconds.",
    MetricKind::kCounter, kPrioDir};
inline constexpr Family kPrioBytes{
    "fabric_ethtool_priority_bytes_total",
    "Bytes received (rx) or sent (tx) on the priority at the physical port "
    "(mlx5 rx/tx_prio<N>_bytes).",
    MetricKind::kCounter,
    kPrioDir,
    {},
    {ExportRule::kActivePriority,
     "8 priorities x 2 directions per port; traffic runs on one or two"}};
inline constexpr Family kPrioPackets{
    "fabric_ethtool_priority_packets_total",
    "Packets received (rx) or sent (tx) on the priority at the physical port "
    "(mlx5 rx/tx_prio<N>_packets, ionic frames_rx/tx_pri_<N>).",
    MetricKind::kCounter,
    kPrioDir,
    {},
    {ExportRule::kOff, "fabric_ethtool_priority_bytes_total tells the load of a priority"}};
inline constexpr Family kPauseStormEvents{
    "fabric_ethtool_pause_storm_events_total",
    "PFC storm prevention events of this NIC's transmit side: severity=warning when it kept "
    "sending pause longer than the warning threshold (mlx5 tx_pause_storm_warning_events), "
    "severity=error when the stall timeout expired and the NIC stopped sending pause "
    "(mlx5 tx_pause_storm_error_events).",
    MetricKind::kCounter,
    {"netdev", "severity"}};
inline constexpr Family kPhyReceivedBits{
    "fabric_ethtool_phy_bit_count_total",
    "Bits received by the PHY, the denominator of the bit error ratio "
    "(mlx5 rx_bits_phy, bnxt_en rx_bits).",
    MetricKind::kCounter, kNetdev};
inline constexpr Family kPhyCorrectedBits{
    "fabric_ethtool_phy_corrected_bit_errors_total",
    "Bits corrected by FEC: pre-FEC BER = rate of this / rate of "
    "fabric_ethtool_phy_bit_count_total (mlx5 rx_corrected_bits_phy, bnxt_en "
    "rx_corrected_bits).",
    MetricKind::kCounter, kNetdev};
inline constexpr Family kPhyLaneCorrectedBits{
    "fabric_ethtool_phy_lane_corrected_bit_errors_total",
    "Bits corrected by FEC on one physical lane (mlx5 rx_err_lane_<N>_phy, capability "
    "per_lane_error_counters; lane from 0). ber_growth names a lane that carries most of a "
    "port's corrected bits.",
    MetricKind::kCounter,
    {"netdev", "lane"},
    {},
    {ExportRule::kOff,
     "4 lanes per port; ber_growth compares the lanes and names the one that grows in its "
     "finding"}};
inline constexpr Family kPhyPcsSymbolErrors{
    "fabric_ethtool_phy_pcs_symbol_errors_total",
    "PCS symbol errors not corrected by FEC (or with FEC off): post-FEC errors "
    "(mlx5 rx_pcs_symbol_err_phy, bnxt_en rx_pcs_symbol_err).",
    MetricKind::kCounter, kNetdev};
inline constexpr Family kLinkDownEvents{
    "fabric_ethtool_link_down_events_total",
    "Times the physical port's link went down, counted by the NIC: the flap counter "
    "(mlx5 link_down_events_phy, bnxt_en link_down_events).",
    MetricKind::kCounter, kNetdev};
inline constexpr Family kModuleEvents{
    "fabric_ethtool_module_events_total",
    "Port module (transceiver) events by kind: unplug (mlx5 module_unplug), bus_stuck (I2C bus "
    "stuck or data shorted, module_bus_stuck), high_temp (over-temperature, module_high_temp), "
    "bad_shorted (bad or shorted cable/module, module_bad_shorted).",
    MetricKind::kCounter,
    {"netdev", "event"},
    {},
    {ExportRule::kNonZero,
     "4 kinds per port of rare events (unplug, stuck bus, over-temperature, bad cable), each also "
     "a driver_fault or link_flap finding; the first event of a kind shows as its series appearing "
     "at 1"}};
inline constexpr Family kFecCorrectedBits{
    "fabric_ethtool_fec_corrected_bit_errors_total",
    "Bits corrected by FEC, whole port (ETHTOOL_A_FEC_STAT_CORR_BITS[0]).",
    MetricKind::kCounter,
    {"netdev"}};

// Link settings (ethtool netlink LINKMODES_GET and LINKINFO_GET, the ETHTOOL_GLINKSETTINGS ioctl
// as fallback, or the replay file DIR/<netdev>/link with the text of `ethtool <netdev>`). The
// link_degraded detector reads them (README "Fabric shape"). Each is absent when the source does
// not report it ("Speed: Unknown!", "Lanes:" missing, link modes "Not reported").
inline constexpr Family kLinkSpeed{
    "fabric_ethtool_link_speed_bytes_per_second",
    "Current link speed as ethtool reports it (ETHTOOL_A_LINKMODES_SPEED, Mb/s, converted to "
    "bytes per second); absent while the speed is unknown (link down).",
    MetricKind::kGauge,
    kNetdev,
    {},
    {ExportRule::kOff, "the same as fabric_netdev_speed_bytes_per_second"}};
inline constexpr Family kLinkLanes{
    "fabric_ethtool_link_lanes",
    "Lanes of the current link mode (ETHTOOL_A_LINKMODES_LANES, kernel 5.11+); absent when the "
    "driver does not report it.",
    MetricKind::kGauge,
    kNetdev,
    {},
    {ExportRule::kOff, "the same as fabric_rdma_port_lanes and fabric_link_degraded_lanes"}};
inline constexpr Family kLinkSupportedMaxSpeed{
    "fabric_ethtool_link_supported_max_speed_bytes_per_second",
    "The fastest link mode the port supports (ETHTOOL_A_LINKMODES_OURS mask), in bytes per "
    "second; absent when the driver reports no link modes.",
    MetricKind::kGauge,
    kNetdev,
    {},
    {ExportRule::kOff,
     "static; link_degraded compares the link with it and names it in its finding"}};
inline constexpr Family kLinkAdvertisedMaxSpeed{
    "fabric_ethtool_link_advertised_max_speed_bytes_per_second",
    "The fastest link mode the port advertises (ETHTOOL_A_LINKMODES_OURS value), in bytes per "
    "second; absent when the driver reports no advertised modes.",
    MetricKind::kGauge,
    kNetdev,
    {},
    {ExportRule::kOff,
     "static; link_degraded compares the link with it and names it in its finding"}};
inline constexpr Family kLinkAutoneg{
    "fabric_ethtool_link_autoneg",
    "1 if auto-negotiation is on (ETHTOOL_A_LINKMODES_AUTONEG), 0 if off.",
    MetricKind::kGauge,
    kNetdev,
    {},
    {ExportRule::kOff, "static configuration, read by link_degraded"}};

// QoS classification (DCB IEEE APP table; a replay qos file: `mlnx_qos -i` text). Issue 21's
// config_drift compares them across sibling ports.
inline constexpr Family kQosTrust{
    "fabric_qos_trust_info",
    "How the NIC classifies received packets into priorities: trust=\"dscp\" (the IP DSCP, "
    "through the DSCP to priority map) when the DCB APP table maps any DSCP, trust=\"pcp\" (the "
    "VLAN 802.1p bits) when it maps none. Constant 1.",
    MetricKind::kInfo,
    {"netdev", "trust"},
    {},
    {ExportRule::kOff,
     "static configuration; config_drift's trust finding names a port that differs"}};
inline constexpr Family kQosDscpMap{
    "fabric_qos_dscp_priority_map_info",
    "The DSCP to priority map of the DCB APP table in one label: character i of map is the "
    "priority of DSCP i (0-7), or - where DSCP i has no entry. Present only when it maps a "
    "DSCP. Constant 1.",
    MetricKind::kInfo,
    {"netdev", "map"},
    {},
    {ExportRule::kOff,
     "static configuration; config_drift's dscp_map finding names a port that differs"}};
inline constexpr Family kQosDefaultPriority{
    "fabric_qos_default_priority",
    "The default priority of untagged, unmapped traffic (DCB APP ethertype 0 entry, mlnx_qos "
    "--defltprio); absent when none is set.",
    MetricKind::kGauge, kNetdev};

// The lossless-fabric configuration (issue 21, README "Configuration drift"): the config_drift
// detector compares these across sibling ports and with the configuration.
inline constexpr Family kPfcEnabled{
    "fabric_pfc_enabled",
    "1 if priority flow control is enabled on the priority (DCB IEEE PFC pfc_en bit), 0 if not. "
    "RoCE needs it on the RoCE priority (commonly 3).",
    MetricKind::kGauge,
    {"netdev", "priority"},
    {},
    {ExportRule::kNonZero,
     "8 priorities per port, PFC on one or two; config_drift's pfc finding names a port whose set "
     "differs"}};
inline constexpr Family kPfcStormTimeout{
    "fabric_pfc_storm_prevention_timeout_seconds",
    "PFC storm prevention timeout (ETHTOOL_PFC_PREVENTION_TOUT tunable, mlx5): how long the NIC "
    "may keep pausing before it stops honouring PFC; 0 means prevention is off.",
    MetricKind::kGauge,
    {"netdev"},
    {},
    {ExportRule::kOff,
     "static configuration; config_drift's storm_prevention finding names a port where it is off "
     "or too long"}};
inline constexpr Family kEcnEnabled{
    "fabric_roce_ecn_enabled",
    "1 if RoCE ECN is enabled on the priority for the role: np = notification point (sends CNPs "
    "for CE-marked packets), rp = reaction point (slows down on CNPs). From "
    "class/net/<netdev>/ecn/roce_{np,rp}/enable/<priority>, which only MLNX_OFED provides.",
    MetricKind::kGauge,
    {"netdev", "priority", "role"},
    {},
    {ExportRule::kLosslessPriority,
     "2 roles x 8 priorities per port; ECN matters on the lossless RoCE priority, and "
     "config_drift's ecn finding names a port without it there"}};
inline constexpr Family kPauseEnabled{
    "fabric_ethtool_pause_enabled",
    "1 if global IEEE 802.3x pause is enabled in the direction (rx: the port honours received "
    "pause frames, tx: it sends them), 0 if not (ETHTOOL_A_PAUSE_RX/_TX, the ETHTOOL_GPAUSEPARAM "
    "ioctl, or a replay pause file: the text of `ethtool -a`). Global pause and PFC on one port "
    "conflict: with PFC on, both should read 0.",
    MetricKind::kGauge,
    kDir,
    {},
    {ExportRule::kNonZero,
     "global pause is off on a PFC fabric; config_drift's global_pause finding names a port where "
     "it is on"}};
inline constexpr Family kPauseAutoneg{
    "fabric_ethtool_pause_autoneg",
    "1 if the pause setting is auto-negotiated with the link partner (ETHTOOL_A_PAUSE_AUTONEG), "
    "0 if forced.",
    MetricKind::kGauge,
    kNetdev,
    {},
    {ExportRule::kOff, "static configuration of global pause"}};
}  // namespace fabricwatch::ethtool
