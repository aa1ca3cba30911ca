// The rules of the series budget (series_budget.h), one per trimmed family, each with its
// reason. A family not listed here is exported whole. Counted on the simulator's 8-port nodes
// (tools/fabricsim presets hgx-roce and hgx-ib; README "Series budget" has the figures).
// Principles:
//   - error counters stay, zero or not: rate() and increase() need a series before the first
//     error, or the first error is lost;
//   - a flag (1 = something wrong) is exported once it is, or was, raised: absent reads as 0
//     in every shipped rule and panel (`== 1`, `max by`, `or`);
//   - per-priority families keep the priorities that matter: PFC on, or traffic seen;
//   - static values and values that repeat another family stay inside the agent, where the
//     detectors and the status page read them: a finding names the drift, the threshold or the
//     limit when it matters.
// dashboards_budget_test (tests/unit/exporter/series_budget_test.cc) fails when a shipped rule
// or panel names a family that is off here.

#include "exporter/pipeline/series_budget.h"

namespace fabricwatch::exporter {
namespace {

constexpr ExportRule kOff = ExportRule::kOff;
constexpr ExportRule kNonZero = ExportRule::kNonZero;
constexpr ExportRule kActivePriority = ExportRule::kActivePriority;
constexpr ExportRule kEndpoints = ExportRule::kEndpoints;
constexpr ExportRule kLosslessPriority = ExportRule::kLosslessPriority;
constexpr ExportRule kInfiniBand = ExportRule::kInfiniBand;
constexpr ExportRule kAlarmThresholds = ExportRule::kAlarmThresholds;

// Sorted by family name (series_budget_test checks).
constexpr FamilyBudgetRule kRules[] = {
    {"fabric_config_setting_drifted", kNonZero,
     "one series per checked setting of every port and PCI function (129 on hgx-roce), 0 while "
     "in line; the drifted ones are what a query wants, and config_drift's findings name them"},
    {"fabric_ethtool_driver_stats", kOff,
     "a count of the driver's statistics, for debugging the ethtool collector"},
    {"fabric_ethtool_link_advertised_max_speed_bytes_per_second", kOff,
     "static; link_degraded compares the link with it and names it in its finding"},
    {"fabric_ethtool_link_autoneg", kOff, "static configuration, read by link_degraded"},
    {"fabric_ethtool_link_info", kOff,
     "static attributes of the link (duplex, connector), what ethtool NETDEV prints"},
    {"fabric_ethtool_link_lanes", kOff,
     "the same as fabric_rdma_port_lanes and fabric_link_degraded_lanes"},
    {"fabric_ethtool_link_speed_bytes_per_second", kOff,
     "the same as fabric_netdev_speed_bytes_per_second"},
    {"fabric_ethtool_link_supported_max_speed_bytes_per_second", kOff,
     "static; link_degraded compares the link with it and names it in its finding"},
    {"fabric_ethtool_module_events_total", kNonZero,
     "4 kinds per port of rare events (unplug, stuck bus, over-temperature, bad cable), each also "
     "a driver_fault or link_flap finding; the first event of a kind shows as its series "
     "appearing at 1"},
    {"fabric_ethtool_pause_autoneg", kOff, "static configuration of global pause"},
    {"fabric_ethtool_pause_enabled", kNonZero,
     "global pause is off on a PFC fabric; config_drift's global_pause finding names a port "
     "where it is on"},
    {"fabric_ethtool_phy_lane_corrected_bit_errors_total", kOff,
     "4 lanes per port; ber_growth compares the lanes and names the one that grows in its finding"},
    {"fabric_ethtool_priority_bytes_total", kActivePriority,
     "8 priorities x 2 directions per port; traffic runs on one or two"},
    {"fabric_ethtool_priority_ecn_marked_packets_total", kLosslessPriority,
     "8 priorities per port; RoCE's congestion control marks the lossless priority"},
    {"fabric_ethtool_priority_packets_total", kOff,
     "fabric_ethtool_priority_bytes_total tells the load of a priority"},
    {"fabric_ethtool_priority_receive_buffer_discards_total", kLosslessPriority,
     "8 priorities per port; a drop is a fault on a lossless priority, traffic policy on a lossy "
     "one"},
    {"fabric_ethtool_priority_receive_congestion_discards_total", kLosslessPriority,
     "8 priorities per port; a drop is a fault on a lossless priority, traffic policy on a lossy "
     "one"},
    {"fabric_ethtool_priority_receive_discards_total", kLosslessPriority,
     "8 priorities per port; a drop is a fault on a lossless priority, traffic policy on a lossy "
     "one"},
    {"fabric_link_degraded_expected_lane_speed_bytes_per_second", kOff,
     "fabric_link_degraded_expected_rate_bytes_per_second / fabric_link_degraded_expected_lanes"},
    {"fabric_link_down_duration_seconds", kNonZero, "0 while the port is up"},
    {"fabric_link_flap_hard_window_down_events", kOff,
     "link_flap's evidence; its finding carries the count, and fabric_link_flap_down_events_total "
     "the history"},
    {"fabric_link_flap_penalty", kNonZero, "0 on a port that never flapped"},
    {"fabric_link_flap_slow_window_down_events", kOff,
     "link_flap's evidence; its finding carries the count, and fabric_link_flap_down_events_total "
     "the history"},
    {"fabric_link_flap_window_downtime_seconds", kNonZero,
     "0 on a port that was not down in the window"},
    {"fabric_netdev_admin_up", kOff,
     "the operator's own setting; fabric_netdev_oper_up and fabric_netdev_carrier say whether the "
     "port works, and link_flap reads it to tell maintenance from a fault"},
    {"fabric_netdev_carrier_changes_total", kOff,
     "the sum of fabric_netdev_carrier_{up,down}_changes_total"},
    {"fabric_netdev_carrier_up_changes_total", kOff,
     "every up follows a down: fabric_netdev_carrier_down_changes_total counts the flaps"},
    {"fabric_netdev_mtu_bytes", kOff,
     "static configuration; config_drift's mtu finding names a port that differs"},
    {"fabric_netdev_oper_state", kOff,
     "RFC 2863 operstate as a number; fabric_netdev_oper_up and fabric_netdev_carrier say up or "
     "down"},
    {"fabric_netdev_receive_packets_total", kOff,
     "bytes tell the load; packet counts are node_exporter's too (node_network_*)"},
    {"fabric_netdev_transmit_packets_total", kOff,
     "bytes tell the load; packet counts are node_exporter's too (node_network_*)"},
    {"fabric_optical_drift_rx_power_baseline_ratio", kOff,
     "optical_drift's evidence, 1 per lane; its finding carries the ratio and the baseline"},
    {"fabric_optical_drift_rx_power_baseline_watts", kOff,
     "fabric_optical_drift_rx_power_baseline_ratio says how far from it the lane is; the finding "
     "names the baseline"},
    {"fabric_optics_alarm_flag", kNonZero,
     "56 flags per module (448 on hgx-roce), all 0 on a healthy module; a raised flag is "
     "exported from then on"},
    {"fabric_optics_hwmon_critical_celsius", kOff, "a static threshold; thermal_drift uses it"},
    {"fabric_optics_hwmon_highest_celsius", kOff,
     "a peak since boot; fabric_optics_hwmon_temperature_celsius is the value"},
    {"fabric_optics_lane_rx_los", kNonZero, "a fault flag per lane, 0 on a healthy module"},
    {"fabric_optics_lane_tx_fault", kNonZero, "a fault flag per lane, 0 on a healthy module"},
    {"fabric_optics_lane_tx_los", kNonZero, "a fault flag per lane, 0 on a healthy module"},
    {"fabric_optics_module_decode_warnings", kNonZero,
     "0 for a module whose memory decodes cleanly"},
    {"fabric_optics_module_supply_voltage_threshold_volts", kOff,
     "static module thresholds; optics alarm flags and thermal_drift use them"},
    {"fabric_optics_module_temperature_threshold_celsius", kAlarmThresholds,
     "the recording rules measure the margin to the high alarm; the warning levels show in the "
     "module's warning flags"},
    {"fabric_optics_module_wavelength_meters", kOff, "static, from the module's memory"},
    {"fabric_optics_rx_power_threshold_watts", kAlarmThresholds,
     "the recording rules measure the margin to the low alarm; the warning levels show in the "
     "module's warning flags"},
    {"fabric_optics_tx_bias_threshold_amperes", kOff,
     "static module thresholds; the module's own alarm flags say when they are crossed"},
    {"fabric_optics_tx_power_threshold_watts", kOff,
     "static module thresholds; the module's own alarm flags say when they are crossed"},
    {"fabric_pcie_acs_capable", kOff,
     "7 static capability bits per PCI function (196 on hgx-roce); config_drift reads them"},
    {"fabric_pcie_acs_control", kOff,
     "7 bits per PCI function; config_drift's acs finding names a function whose P2P requests are "
     "redirected"},
    {"fabric_pcie_degraded_aer_correctable_errors_per_second", kOff,
     "the rate of fabric_pcie_aer_errors_total (severity correctable), which pcie_degraded names "
     "in its finding"},
    {"fabric_pcie_degraded_speed_ratio", kOff,
     "fabric_pcie_link_speed_transfers_per_second / fabric_pcie_link_max_speed_transfers_per_"
     "second, which pcie_degraded names in its finding"},
    {"fabric_pcie_degraded_width_ratio", kOff,
     "fabric_pcie_link_width_lanes / fabric_pcie_link_max_width_lanes"},
    {"fabric_pcie_device_info", kOff,
     "the identity of each function; every fabric_pcie_* series carries its device and role"},
    {"fabric_pcie_link_downtrained", kNonZero,
     "a flag per PCI function, 0 while the link runs at its maximum"},
    {"fabric_pcie_link_max_speed_transfers_per_second", kOff,
     "static; fabric_pcie_link_downtrained says when the link runs below it"},
    {"fabric_pcie_link_max_width_lanes", kEndpoints,
     "bridges on the paths (40 of 56 functions on hgx-roce) show through "
     "fabric_pcie_link_downtrained"},
    {"fabric_pcie_link_speed_transfers_per_second", kEndpoints,
     "bridges on the paths (40 of 56 functions on hgx-roce) show through "
     "fabric_pcie_link_downtrained"},
    {"fabric_pcie_link_width_lanes", kEndpoints,
     "bridges on the paths (40 of 56 functions on hgx-roce) show through "
     "fabric_pcie_link_downtrained"},
    {"fabric_pcie_max_payload_bytes", kOff,
     "static configuration; config_drift's max_payload finding names a function that differs "
     "from its path"},
    {"fabric_pcie_max_payload_supported_bytes", kOff, "a static capability of the function"},
    {"fabric_pcie_max_read_request_bytes", kOff,
     "static configuration; config_drift's max_read_request finding names a function that "
     "differs"},
    {"fabric_pfc_enabled", kNonZero,
     "8 priorities per port, PFC on one or two; config_drift's pfc finding names a port whose "
     "set differs"},
    {"fabric_pfc_storm_condition_seconds", kOff,
     "pfc_storm's evidence per role and priority; its finding carries it, fabric_pfc_pause_ratio "
     "is the signal"},
    {"fabric_pfc_storm_prevention_timeout_seconds", kOff,
     "static configuration; config_drift's storm_prevention finding names a port where it is off "
     "or too long"},
    {"fabric_qos_dscp_priority_map_info", kOff,
     "static configuration; config_drift's dscp_map finding names a port that differs"},
    {"fabric_qos_trust_info", kOff,
     "static configuration; config_drift's trust finding names a port that differs"},
    {"fabric_rdma_port_active_mtu_bytes", kOff,
     "static configuration; config_drift's ib_mtu finding names a port that differs"},
    {"fabric_rdma_port_adaptive_retransmissions_total", kOff,
     "retransmissions that worked; fabric_rdma_port_adaptive_retransmission_timeouts_total counts "
     "the ones that did not"},
    {"fabric_rdma_port_cnp_ignored_total", kOff,
     "CNPs the reaction point did not act on; fabric_rdma_port_cnp_handled_total is the signal"},
    {"fabric_rdma_port_duplicate_requests_total", kOff,
     "a consequence of the requester's retries, which fabric_rdma_port_local_ack_timeouts_total "
     "counts"},
    {"fabric_rdma_port_excessive_buffer_overrun_errors_total", kInfiniBand,
     "an InfiniBand flow-control counter; not maintained on RoCE ports"},
    {"fabric_rdma_port_implied_nak_sequence_errors_total", kOff,
     "a kind of fabric_rdma_port_packet_sequence_errors_total"},
    {"fabric_rdma_port_lane_speed_bytes_per_second", kOff,
     "fabric_rdma_port_rate_bytes_per_second / fabric_rdma_port_lanes"},
    {"fabric_rdma_port_lanes", kOff,
     "the same as fabric_link_degraded_lanes, which the dashboards read"},
    {"fabric_rdma_port_local_link_integrity_errors_total", kInfiniBand,
     "an InfiniBand physical-layer counter; a RoCE port's PHY errors are fabric_ethtool_phy_*"},
    {"fabric_rdma_port_max_mtu_bytes", kOff,
     "what the port supports; config_drift's ib_mtu finding names it when it is below the "
     "expectation"},
    {"fabric_rdma_port_multicast_receive_packets_total", kOff,
     "workload statistics, not fault signals"},
    {"fabric_rdma_port_multicast_transmit_packets_total", kOff,
     "workload statistics, not fault signals"},
    {"fabric_rdma_port_physical_link_up", kOff, "fabric_rdma_port_phys_state == 5 (LinkUp)"},
    {"fabric_rdma_port_receive_atomic_requests_total", kOff,
     "workload statistics, not fault signals"},
    {"fabric_rdma_port_receive_constraint_errors_total", kInfiniBand,
     "InfiniBand partition enforcement; not maintained on RoCE ports"},
    {"fabric_rdma_port_receive_dct_connects_total", kOff, "workload statistics, not fault signals"},
    {"fabric_rdma_port_receive_packets_total", kOff,
     "fabric_rdma_port_receive_bytes_total tells the load; packet counts are node_exporter's "
     "infiniband collector's too"},
    {"fabric_rdma_port_receive_read_requests_total", kOff,
     "workload statistics, not fault signals"},
    {"fabric_rdma_port_receive_switch_relay_errors_total", kInfiniBand,
     "an InfiniBand switch-relay counter; not maintained on RoCE ports"},
    {"fabric_rdma_port_receive_write_requests_total", kOff,
     "workload statistics, not fault signals"},
    {"fabric_rdma_port_requester_cqe_flush_errors_total", kOff,
     "flushes follow any queue-pair error, counted in fabric_rdma_port_requester_cqe_errors_total"},
    {"fabric_rdma_port_responder_cqe_flush_errors_total", kOff,
     "flushes follow any queue-pair error, counted in fabric_rdma_port_responder_cqe_errors_total"},
    {"fabric_rdma_port_rnr_nak_retries_total", kOff,
     "receiver-not-ready retries that worked; fabric_rdma_port_rnr_retries_exceeded_total counts "
     "the failures"},
    {"fabric_rdma_port_saturated", kNonZero,
     "13 IBA counters per port (104 on hgx-roce), 1 only for one stuck at its maximum"},
    {"fabric_rdma_port_slow_restart_cnps_total", kOff,
     "RoCE slow restart (rate recovery after idle), not a fault signal"},
    {"fabric_rdma_port_slow_restart_transitions_total", kOff,
     "RoCE slow restart (rate recovery after idle), not a fault signal"},
    {"fabric_rdma_port_slow_restarts_total", kOff,
     "RoCE slow restart (rate recovery after idle), not a fault signal"},
    {"fabric_rdma_port_state", kOff,
     "the IBA state as a number; fabric_rdma_port_active says whether the port is ACTIVE, "
     "fabric_rdma_port_phys_state why not"},
    {"fabric_rdma_port_transmit_constraint_errors_total", kInfiniBand,
     "InfiniBand partition enforcement; not maintained on RoCE ports"},
    {"fabric_rdma_port_transmit_packets_total", kOff,
     "fabric_rdma_port_transmit_bytes_total tells the load; packet counts are node_exporter's "
     "infiniband collector's too"},
    {"fabric_rdma_port_unicast_receive_packets_total", kOff,
     "fabric_rdma_port_receive_packets_total counts them with the multicast ones"},
    {"fabric_rdma_port_unicast_transmit_packets_total", kOff,
     "fabric_rdma_port_transmit_packets_total counts them with the multicast ones"},
    {"fabric_rdma_port_vl15_dropped_total", kInfiniBand,
     "subnet management packets (VL15) exist on InfiniBand only"},
    {"fabric_roce_ecn_enabled", kLosslessPriority,
     "2 roles x 8 priorities per port; ECN matters on the lossless RoCE priority, and "
     "config_drift's ecn finding names a port without it there"},
    {"fabric_thermal_drift_threshold_celsius", kOff,
     "static thresholds; thermal_drift's finding names the one crossed"},
    {"fabric_topology_gpu_info", kOff,
     "the identity of each GPU; the topology series carry the GPU's name and address"},
    {"fabric_topology_gpu_nic_link_info", kOff,
     "the same GPU x NIC matrix as fabric_topology_gpu_nic_distance, as a label"},
    {"fabric_topology_nic_info", kOff,
     "the identity of each NIC; the topology series carry the NIC's name"},
    {"fabricwatch_collector_device_reads", kOff,
     "about 11 series per node (collector x kind of read that reaches a NIC's driver or "
     "firmware) that change only when the ports do; tools/bench/run.sh reports them per node, and "
     "--metrics.include exports them where the NIC's command load is in question"},
};

}  // namespace

std::span<const FamilyBudgetRule> SeriesBudgetRules() { return kRules; }

}  // namespace fabricwatch::exporter
