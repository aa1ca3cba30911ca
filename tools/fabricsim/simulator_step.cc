// Simulator, one simulated second of a port (simulator_port.h): how the active faults shape it,
// the traffic it carries with noise, and the counters that traffic moves (ethtool statistics,
// netdev statistics, IBA PMA and mlx5 hw_counters, PFC, PHY), temperatures.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tools/fabricsim/simulator.h"
#include "tools/fabricsim/simulator_port.h"

namespace fabricwatch::sim {
namespace {

double DbmToMw(double dbm) { return std::pow(10.0, dbm / 10.0); }

}  // namespace

int HwIndex(std::string_view name) {
  for (int i = 0; i < kHwCount; ++i) {
    if (name == kHwCounters[i]) return i;
  }
  return -1;
}

void Simulator::SetStatRules(PortState& ps, const std::vector<double>& channel_weight) {
  const Port& p = *ps.port;
  // How each statistic follows the traffic. Per-channel statistics are their sw total's share.
  // clang-format off
  static const std::map<std::string, std::pair<int, double>> kTotals = {
      {"rx_packets", {kSwRxPkt, 1}}, {"rx_bytes", {kSwRxByte, 1}},
      {"tx_packets", {kSwTxPkt, 1}}, {"tx_bytes", {kSwTxByte, 1}},
      {"tx_tso_packets", {kSwTxPkt, 0.2}}, {"tx_tso_bytes", {kSwTxByte, 0.6}},
      {"rx_gro_packets", {kSwRxPkt, 0.5}}, {"rx_gro_bytes", {kSwRxByte, 0.5}},
      {"rx_gro_skbs", {kSwRxPkt, 0.1}}, {"rx_csum_complete", {kSwRxPkt, 0.9}},
      {"rx_csum_unnecessary", {kSwRxPkt, 0.1}}, {"tx_csum_partial", {kSwTxPkt, 0.8}},
      {"tx_csum_none", {kSwTxPkt, 0.2}}, {"tx_xmit_more", {kSwTxPkt, 0.3}},
      {"tx_cqes", {kSwTxPkt, 0.7}}, {"rx_cqe_compress_pkts", {kSwRxPkt, 0.3}},
      {"rx_cqe_compress_blks", {kSwRxPkt, 0.05}}, {"rx_pp_alloc_fast", {kSwRxPkt, 0.02}},
      {"rx_pp_recycle_cached", {kSwRxPkt, 0.02}}, {"rx_pp_recycle_ring", {kSwRxPkt, 0.001}},
      {"ch_events", {kSwRxPkt, 0.3}}, {"ch_poll", {kSwRxPkt, 0.35}},
      {"ch_arm", {kSwRxPkt, 0.3}}, {"tx_mpwqe_blks", {kSwTxPkt, 0.05}},
      {"tx_mpwqe_pkts", {kSwTxPkt, 0.4}},
      {"rx_vport_unicast_packets", {kSwRxPkt, 0.98}}, {"rx_vport_unicast_bytes", {kSwRxByte, 0.98}},
      {"tx_vport_unicast_packets", {kSwTxPkt, 0.98}}, {"tx_vport_unicast_bytes", {kSwTxByte, 0.98}},
      {"rx_vport_multicast_packets", {kSwRxPkt, 0.015}},
      {"rx_vport_multicast_bytes", {kSwRxByte, 0.002}},
      {"tx_vport_multicast_packets", {kSwTxPkt, 0.015}},
      {"tx_vport_multicast_bytes", {kSwTxByte, 0.002}},
      {"rx_vport_broadcast_packets", {kSwRxPkt, 0.005}},
      {"rx_vport_broadcast_bytes", {kSwRxByte, 0.0005}},
      {"tx_vport_broadcast_packets", {kSwTxPkt, 0.005}},
      {"tx_vport_broadcast_bytes", {kSwTxByte, 0.0005}},
      {"rx_vport_rdma_unicast_packets", {kRdmaRxPkt, 1}},
      {"rx_vport_rdma_unicast_bytes", {kRdmaRxByte, 1}},
      {"tx_vport_rdma_unicast_packets", {kRdmaTxPkt, 1}},
      {"tx_vport_rdma_unicast_bytes", {kRdmaTxByte, 1}},
      {"tx_packets_phy", {kWireTxPkt, 1}}, {"rx_packets_phy", {kWireRxPkt, 1}},
      {"tx_bytes_phy", {kWireTxByte, 1}}, {"rx_bytes_phy", {kWireRxByte, 1}},
      {"tx_multicast_phy", {kSwTxPkt, 0.015}}, {"rx_multicast_phy", {kSwRxPkt, 0.015}},
      {"tx_broadcast_phy", {kSwTxPkt, 0.005}}, {"rx_broadcast_phy", {kSwRxPkt, 0.005}},
      {"rx_64_bytes_phy", {kWireRxPkt, 0.01}}, {"rx_65_to_127_bytes_phy", {kWireRxPkt, 0.07}},
      {"rx_128_to_255_bytes_phy", {kWireRxPkt, 0.01}},
      {"rx_256_to_511_bytes_phy", {kWireRxPkt, 0.005}},
      {"rx_512_to_1023_bytes_phy", {kWireRxPkt, 0.005}},
      {"rx_1024_to_1518_bytes_phy", {kWireRxPkt, 0.01}},
      {"rx_1519_to_2047_bytes_phy", {kWireRxPkt, 0.005}},
      {"rx_2048_to_4095_bytes_phy", {kWireRxPkt, 0.005}},
      {"rx_4096_to_8191_bytes_phy", {kWireRxPkt, 0.88}},
  };
  // clang-format on
  static const std::map<std::string, std::string> kSqAlias = {
      {"stopped", "queue_stopped"}, {"dropped", "queue_dropped"}, {"wake", "queue_wake"}};
  for (size_t i = 0; i < ps.stat_names.size(); ++i) {
    const std::string& name = ps.stat_names[i];
    ps.stat_index.emplace(name, static_cast<int>(i));
    std::string total_name = name;
    double share = 1;
    // rx<c>_x / tx<c>_x / ch<c>_x -> rx_x / tx_x / ch_x times the channel's weight.
    for (const char* prefix : {"rx", "tx", "ch"}) {
      if (!name.starts_with(prefix)) continue;
      size_t d = 2;
      while (d < name.size() && std::isdigit(static_cast<unsigned char>(name[d]))) ++d;
      if (d == 2 || d >= name.size() || name[d] != '_') continue;
      const int channel = std::stoi(name.substr(2, d - 2));
      std::string rest = name.substr(d + 1);
      if (std::string(prefix) == "tx" && kSqAlias.contains(rest)) rest = kSqAlias.at(rest);
      total_name = std::string(prefix) + "_" + rest;
      share = channel < p.channels ? channel_weight[channel] : 0;
    }
    if (auto it = kTotals.find(total_name); it != kTotals.end()) {
      ps.rules[i] = {it->second.first, it->second.second * share, 0};
    }
  }
}

void Simulator::SetLink(PortState& ps, bool up, bool logical_active) {
  const bool carrier = ps.Carrier();
  if (ps.link_up != up && !up) {
    ps.Add("link_down_events_phy", 1);
    ++ps.pma[kLinkDowned];
  }
  ps.link_up = up;
  ps.logical_active = logical_active;
  if (ps.Carrier() != carrier) {
    ++ps.carrier_changes;
    ++(ps.Carrier() ? ps.carrier_up : ps.carrier_down);
    LogCarrier(ps);
  }
}

void Simulator::ResetCounters(PortState& ps) {
  std::fill(ps.stats.begin(), ps.stats.end(), 0);
  ps.net.fill(0);
  ps.pma.fill(0);
  ps.hw.fill(0);
  ps.hw[HwIndex("lifespan")] = 10;
  // A re-registered netdev: carrier went up once.
  ps.carrier_changes = 1;
  ps.carrier_up = 1;
  ps.carrier_down = 0;
  ++ps.generation;
  ps.wrap32 = false;
}

void Simulator::StepPort(PortState& ps) {
  // One distribution for the whole second: the helpers below draw from it in turn.
  std::normal_distribution<double> noise(0.0, 1.0);
  ApplyFaults(ps);
  if (!ps.present) {
    ps.inc.fill(0);
    return;
  }
  const double util = StepTraffic(ps, noise);
  StepPfc(ps, noise);
  StepPhy(ps, noise);
  StepTemperatures(ps, util, noise);
}

void Simulator::ApplyFaults(PortState& ps) {
  // Faults active on this port shape this second.
  ps.storm_source_prio = ps.storm_victim_prio = ps.congestion_prio = -1;
  ps.ber = 0;
  ps.ber_lane = -1;
  ps.trained = {ps.port->lanes, ps.port->lane_speed};
  ps.phys_state_up = 5;
  bool logical_active = true;
  bool down = !ps.present || !ps.module_present;
  int flaps_now = 0;  // zero-length flaps: down and up inside this second
  for (const ActiveFault& af : active_) {
    if (af.port < 0 || ports_[af.port].get() != &ps) continue;
    const ScenarioEvent& ev = *af.event;
    const double elapsed = static_cast<double>(now_ - af.start);
    const double length = std::max(1.0, static_cast<double>(af.end - af.start));
    const double progress = std::clamp(elapsed / length, 0.0, 1.0);
    if (ev.fault == "link_down" || ev.fault == "fw_fatal") {
      // fw_fatal: the function is lost until the health recovery reloads it.
      down = true;
    } else if (ev.fault == "link_flap") {
      const double period = EventParam(ev, "period", 10), count = EventParam(ev, "count", 3);
      const double down_s = EventParam(ev, "down", 1);
      const double flap = std::floor(elapsed / period);
      const double into = elapsed - flap * period;
      if (flap < count) {
        if (down_s <= 0) {
          if (into < 1) ++flaps_now;
        } else if (into < down_s) {
          down = true;
        }
      }
    } else if (ev.fault == "ib_micro_flap") {
      // A retrain at the start of each period: link_error_recovery only, the link stays up.
      const double period = EventParam(ev, "period", 60), count = EventParam(ev, "count", 3);
      const double flap = std::floor(elapsed / period);
      if (flap < count && elapsed - flap * period < 1 && ps.link_up) ++ps.pma[kLinkErrorRecovery];
    } else if (ev.fault == "pfc_storm_source") {
      ps.storm_source_prio = ev.priority.value_or(3);
      if (ps.storm_started < 0) ps.storm_started = af.start;
    } else if (ev.fault == "pfc_storm_victim") {
      ps.storm_victim_prio = ev.priority.value_or(3);
    } else if (ev.fault == "congestion") {
      ps.congestion_prio = ev.priority.value_or(3);
      ps.congestion_rate = EventParam(ev, "rate", 60000);
    } else if (ev.fault == "ber_growth") {
      // log-linear from a healthy 1e-9 to the target over `ramp` (default: the duration).
      const double target = EventParam(ev, "ber", 1e-5);
      const double ramp = EventParam(ev, "ramp", length);
      const double grown = ramp <= 0 ? 1.0 : std::clamp(elapsed / ramp, 0.0, 1.0);
      ps.ber = std::pow(10.0, std::log10(1e-9) + grown * (std::log10(target) + 9.0));
      ps.ber_lane = ev.lane ? *ev.lane - 1 : -1;
    } else if (ev.fault == "module_temp_ramp") {
      const double target = EventParam(ev, "target_celsius", ps.module.temperature.high_alarm + 3);
      // Reaches the target after `ramp` s (default: the duration) and holds it to the end.
      const double ramp = EventParam(ev, "ramp", length);
      const double heated = ramp <= 0 ? 1.0 : std::clamp(elapsed / ramp, 0.0, 1.0);
      ps.module.temperature_c =
          ps.module_base.temperature_c + heated * (target - ps.module_base.temperature_c);
    } else if (ev.fault == "rx_power_decay") {
      const int lane = ev.lane.value_or(1) - 1;
      const double from = ps.module_base.rx_power_mw[lane];
      const double to = DbmToMw(EventParam(ev, "target_dbm", -13));
      // Exponential in mW = linear in dBm.
      ps.module.rx_power_mw[lane] = from * std::pow(to / from, progress);
    } else if (ev.fault == "laser_bias_creep") {
      const int lane = ev.lane.value_or(1) - 1;
      const double from = ps.module_base.bias_ma[lane];
      const double to = EventParam(ev, "target_ma", ps.module.bias.high_warning + 1.0);
      ps.module.bias_ma[lane] = from + progress * (to - from);
    } else {
      ApplyShapeFault(ps, af, down, logical_active);
    }
  }
  if (ps.storm_source_prio < 0) ps.storm_started = -1;
  ps.gbps = RateGbps(ps.trained);
  for (int i = 0; i < flaps_now && ps.link_up; ++i) {
    SetLink(ps, false, ps.logical_active);
    SetLink(ps, true, ps.logical_active);
  }
  SetLink(ps, !down, logical_active);
}

double Simulator::StepTraffic(PortState& ps, std::normal_distribution<double>& noise) {
  const Port& p = *ps.port;
  // Traffic of this second (bytes, packets) with noise.
  const bool ethernet = p.link_layer == LinkLayer::kEthernet;
  const double line_bytes = ps.gbps * 1e9 / 8;
  double util = std::clamp(ps.utilization + 0.05 * noise(rng_), 0.05, 0.95);
  double rx_factor = 1, tx_factor = 1;
  if (ps.congestion_prio >= 0) {
    rx_factor = 0.7;
    tx_factor = 0.6;
  }
  if (ps.storm_source_prio >= 0) rx_factor = 0;      // the receive pipeline is stuck
  if (ps.storm_victim_prio >= 0) tx_factor = 0.002;  // paused: only other priorities move
  if (!ps.Carrier()) rx_factor = tx_factor = 0;      // an IB port in INIT carries no data
  const double wire_rx = line_bytes * util * rx_factor;
  const double wire_tx = line_bytes * util * tx_factor * 0.97;
  const double pkt = 4150;                          // RoCE/IB 4096 MTU payload plus headers
  const double sw_share = ethernet ? 0.001 : 0.01;  // kernel (TCP, IPoIB) traffic
  auto& inc = ps.inc;
  inc[kWireRxByte] = wire_rx;
  inc[kWireTxByte] = wire_tx;
  inc[kWireRxPkt] = wire_rx / pkt;
  inc[kWireTxPkt] = wire_tx / pkt;
  inc[kSwRxByte] = wire_rx * sw_share;
  inc[kSwTxByte] = wire_tx * sw_share;
  inc[kSwRxPkt] = inc[kSwRxByte] / 1400;
  inc[kSwTxPkt] = inc[kSwTxByte] / 1400;
  inc[kRdmaRxByte] = wire_rx - inc[kSwRxByte];
  inc[kRdmaTxByte] = wire_tx - inc[kSwTxByte];
  inc[kRdmaRxPkt] = inc[kRdmaRxByte] / pkt;
  inc[kRdmaTxPkt] = inc[kRdmaTxByte] / pkt;
  for (size_t i = 0; i < ps.rules.size(); ++i) {
    StatRule& r = ps.rules[i];
    if (r.source < 0) continue;
    const double v = inc[r.source] * r.fraction + r.carry;
    const uint64_t whole = static_cast<uint64_t>(v);
    r.carry = v - static_cast<double>(whole);
    ps.stats[i] += whole;
  }
  // sysfs netdev statistics: the stack's traffic, as the driver's sw counters.
  ps.net[kRxBytes] += static_cast<uint64_t>(inc[kSwRxByte]);
  ps.net[kTxBytes] += static_cast<uint64_t>(inc[kSwTxByte]);
  ps.net[kRxPackets] += static_cast<uint64_t>(inc[kSwRxPkt]);
  ps.net[kTxPackets] += static_cast<uint64_t>(inc[kSwTxPkt]);
  ps.net[kMulticast] += static_cast<uint64_t>(inc[kSwRxPkt] * 0.015);
  // Keep the ethtool sw totals equal to the sysfs numbers (mlx5e_get_stats64 folds the same
  // sw counters).
  if (int i = ps.Idx("rx_bytes"); i >= 0) ps.stats[i] = ps.net[kRxBytes];
  if (int i = ps.Idx("tx_bytes"); i >= 0) ps.stats[i] = ps.net[kTxBytes];
  if (int i = ps.Idx("rx_packets"); i >= 0) ps.stats[i] = ps.net[kRxPackets];
  if (int i = ps.Idx("tx_packets"); i >= 0) ps.stats[i] = ps.net[kTxPackets];

  // IBA PMA: data in 4-octet words.
  ps.pma[kPortXmitData] += static_cast<uint64_t>(wire_tx / 4);
  ps.pma[kPortRcvData] += static_cast<uint64_t>(wire_rx / 4);
  ps.pma[kPortXmitPackets] += static_cast<uint64_t>(inc[kWireTxPkt]);
  ps.pma[kPortRcvPackets] += static_cast<uint64_t>(inc[kWireRxPkt]);
  ps.pma[kUnicastXmitPackets] += static_cast<uint64_t>(inc[kWireTxPkt] * 0.999);
  ps.pma[kUnicastRcvPackets] += static_cast<uint64_t>(inc[kWireRxPkt] * 0.999);
  ps.pma[kMulticastXmitPackets] += static_cast<uint64_t>(inc[kWireTxPkt] * 0.001);
  ps.pma[kMulticastRcvPackets] += static_cast<uint64_t>(inc[kWireRxPkt] * 0.001);
  ps.hw[HwIndex("rx_write_requests")] += static_cast<uint64_t>(inc[kRdmaRxPkt] * 0.3);
  ps.hw[HwIndex("rx_read_requests")] += static_cast<uint64_t>(inc[kRdmaRxPkt] * 0.05);
  // Healthy background: a little credit wait and, on RoCE, a little PFC and ECN.
  ps.pma[kPortXmitWait] += ps.link_up ? static_cast<uint64_t>(200 + 50 * std::abs(noise(rng_))) : 0;
  return util;
}

void Simulator::StepPfc(PortState& ps, std::normal_distribution<double>& noise) {
  const Port& p = *ps.port;
  const bool ethernet = p.link_layer == LinkLayer::kEthernet;
  const double wire_rx = ps.inc[kWireRxByte];
  const double wire_tx = ps.inc[kWireTxByte];
  const auto& inc = ps.inc;
  if (ethernet && ps.link_up) {
    for (int prio = 0; prio < 8; ++prio) {
      // Priority 3 carries RoCE, 0 the rest; CNPs go on 6.
      const double share_rx = prio == 3 ? 0.985 : prio == 0 ? 0.0145 : prio == 6 ? 0.0005 : 0;
      // A victim's paused priority transmits nothing; its little remaining traffic is the
      // other priorities'.
      const double share_tx = prio == ps.storm_victim_prio ? 0 : share_rx;
      ps.Add("rx_prio" + std::to_string(prio) + "_bytes",
             static_cast<uint64_t>(wire_rx * share_rx));
      ps.Add("rx_prio" + std::to_string(prio) + "_packets",
             static_cast<uint64_t>(inc[kWireRxPkt] * share_rx));
      ps.Add("tx_prio" + std::to_string(prio) + "_bytes",
             static_cast<uint64_t>(wire_tx * share_tx));
      ps.Add("tx_prio" + std::to_string(prio) + "_packets",
             static_cast<uint64_t>(inc[kWireTxPkt] * share_tx));
    }
    for (int prio : ps.pfc_priorities) {
      const std::string P = std::to_string(prio);
      uint64_t rx_pause = static_cast<uint64_t>(std::max(0.0, 20 + 10 * noise(rng_)));
      uint64_t tx_pause = static_cast<uint64_t>(std::max(0.0, 15 + 8 * noise(rng_)));
      uint64_t rx_dur = rx_pause * 3, tx_dur = tx_pause * 3;  // µs: short pauses
      uint64_t rx_transitions = rx_pause;
      if (prio == ps.congestion_prio) {
        // Heavy but flowing: paused about 35% of the time, every pause released by XON.
        rx_pause = static_cast<uint64_t>(ps.congestion_rate * (1 + 0.1 * noise(rng_)));
        tx_pause = rx_pause / 3;
        rx_dur = static_cast<uint64_t>(350000 * (1 + 0.05 * noise(rng_)));
        tx_dur = 120000;
        rx_transitions = rx_pause * 9 / 10;
        ps.Add("rx_prio" + P + "_marked", static_cast<uint64_t>(inc[kWireRxPkt] * 0.02));
        ps.Add("rx_buffer_passed_thres_phy", 40);
        ps.hw[HwIndex("np_ecn_marked_roce_packets")] +=
            static_cast<uint64_t>(inc[kWireRxPkt] * 0.02);
        ps.hw[HwIndex("np_cnp_sent")] += static_cast<uint64_t>(inc[kWireRxPkt] * 0.019);
        ps.hw[HwIndex("rp_cnp_handled")] += static_cast<uint64_t>(inc[kWireTxPkt] * 0.015);
        ps.pma[kPortXmitWait] += 3000000;
      }
      if (prio == ps.storm_source_prio) {
        // Continuous pause: refreshed every half quantum time (65535 quanta x 512 bit times).
        const double quantum_s = 65535.0 * 512 / (ps.gbps * 1e9);
        tx_pause = static_cast<uint64_t>(2.0 / quantum_s);
        tx_dur = 1000000;
        // Past the warning watermark the NIC counts a storm warning (mlx5 pause storm
        // prevention, device_stall_minor_watermark); the storm itself is never released here.
        if (now_ - ps.storm_started == 3) ps.Add("tx_pause_storm_warning_events", 1);
      }
      if (prio == ps.storm_victim_prio) {
        const double quantum_s = 65535.0 * 512 / (ps.gbps * 1e9);
        rx_pause = static_cast<uint64_t>(2.0 / quantum_s);
        rx_dur = 1000000;
        rx_transitions = 0;  // never released
        ps.pma[kPortXmitWait] += 50000000;
        ps.hw[HwIndex("local_ack_timeout_err")] += 3;
        ps.hw[HwIndex("roce_adp_retrans")] += 5;
      }
      ps.Add("rx_prio" + P + "_pause", rx_pause);
      ps.Add("tx_prio" + P + "_pause", tx_pause);
      ps.Add("rx_prio" + P + "_pause_duration", rx_dur);
      ps.Add("tx_prio" + P + "_pause_duration", tx_dur);
      ps.Add("rx_prio" + P + "_pause_transition", rx_transitions);
      ps.Add("rx_pause_ctrl_phy", rx_pause);
      ps.Add("tx_pause_ctrl_phy", tx_pause);
      ps.Add("rx_mac_control_phy", rx_pause);
      ps.Add("tx_mac_control_phy", tx_pause);
    }
  }
}

void Simulator::StepPhy(PortState& ps, std::normal_distribution<double>& noise) {
  const Port& p = *ps.port;
  // PHY: bits received at line rate while up; FEC-corrected errors at the BER.
  if (ps.link_up) {
    const double bits = ps.gbps * 1e9 * (1 + 1e-6 * noise(rng_));
    const double ber = ps.ber > 0 ? ps.ber : 2e-9 * (1 + 0.3 * noise(rng_));
    const double corrected = std::max(0.0, bits * ber);
    ps.Add("rx_bits_phy", static_cast<uint64_t>(bits));
    ps.Add("rx_corrected_bits_phy", static_cast<uint64_t>(corrected));
    const int lanes = std::min(4, p.module == ModuleType::kSfp ? 1 : p.lanes);
    for (int lane = 0; lane < lanes; ++lane) {
      double share = ps.ber_lane < 0 ? 1.0 / lanes : (lane == ps.ber_lane ? 0.97 : 0.01);
      ps.Add("rx_err_lane_" + std::to_string(lane) + "_phy",
             static_cast<uint64_t>(corrected * share));
    }
    if (ps.ber > 1e-6) {
      // Past what RS-FEC corrects: uncorrectable codewords become symbol and CRC errors.
      const uint64_t uncorrected = static_cast<uint64_t>(corrected * 1e-4 * (ps.ber / 1e-6));
      ps.Add("rx_pcs_symbol_err_phy", uncorrected);
      ps.Add("rx_symbol_err_phy", uncorrected / 4);
      ps.Add("rx_crc_errors_phy", uncorrected / 8);
      ps.pma[kSymbolError] += uncorrected;
      ps.pma[kPortRcvErrors] += uncorrected / 8;
      ps.net[kRxErrors] += uncorrected / 8;
      ps.net[kRxCrcErrors] += uncorrected / 8;
      ps.hw[HwIndex("packet_seq_err")] += uncorrected / 64;
      ps.hw[HwIndex("out_of_sequence")] += uncorrected / 32;
    }
  }
}

void Simulator::StepTemperatures(PortState& ps, double util,
                                 std::normal_distribution<double>& noise) {
  // Temperatures: ASIC follows load; modules wander around their baseline.
  ps.asic_temp = 52 + 10 * util + 0.3 * noise(rng_);
  ps.asic_highest = std::max(ps.asic_highest, ps.asic_temp);
  bool ramping = false;
  for (const ActiveFault& af : active_) {
    ramping |=
        af.port >= 0 && ports_[af.port].get() == &ps && af.event->fault == "module_temp_ramp";
  }
  if (!ramping) ps.module.temperature_c = ps.module_base.temperature_c + 0.2 * noise(rng_);
  if (ps.module.temperature_c > ps.module.temperature.high_alarm &&
      ps.module_highest <= ps.module.temperature.high_alarm) {
    ps.Add("module_high_temp", 1);
  }
  ps.module_highest = std::max(ps.module_highest, ps.module.temperature_c);
  ps.module.vcc_v = 3.30 + 0.005 * noise(rng_);
}

}  // namespace fabricwatch::sim
