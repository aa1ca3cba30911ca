#include "tools/fabricsim/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "tools/fabricsim/mlx5_stats.h"

namespace fabricwatch::sim {
namespace {

constexpr uint64_t kMask32 = 0xffffffffULL;

// Traffic sources the ethtool statistics follow (see StatRule).
enum Source {
  kSwRxPkt, kSwRxByte, kSwTxPkt, kSwTxByte,          // the kernel's own traffic (netdev stack)
  kWireRxPkt, kWireRxByte, kWireTxPkt, kWireTxByte,  // everything on the port
  kRdmaRxPkt, kRdmaRxByte, kRdmaTxPkt, kRdmaTxByte,  // RoCE, bypassing the stack
  kSourceCount
};

const char* const kPmaNames[kPmaCount] = {
    "symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
    "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors", "port_xmit_discards",
    "port_xmit_constraint_errors", "port_rcv_constraint_errors", "local_link_integrity_errors",
    "excessive_buffer_overrun_errors", "VL15_dropped", "port_xmit_data", "port_rcv_data",
    "port_xmit_packets", "port_rcv_packets", "port_xmit_wait", "unicast_xmit_packets",
    "unicast_rcv_packets", "multicast_xmit_packets", "multicast_rcv_packets"};
// IBA PortCounters widths (IBA 1.4 Table 247); the data counters come from PortCountersExtended
// (64 bit) on mlx5; PortXmitWait stays 32 bit.
constexpr int kPmaBits[kPmaCount] = {16, 8, 8, 16, 16, 16, 16, 8, 8, 4, 4, 16,
                                     64, 64, 64, 64, 32, 64, 64, 64, 64};

const char* const kNetStatNames[kNetStatCount] = {
    "collisions", "multicast", "rx_bytes", "rx_compressed", "rx_crc_errors", "rx_dropped",
    "rx_errors", "rx_fifo_errors", "rx_frame_errors", "rx_length_errors", "rx_missed_errors",
    "rx_nohandler", "rx_over_errors", "rx_packets", "tx_aborted_errors", "tx_bytes",
    "tx_carrier_errors", "tx_compressed", "tx_dropped", "tx_errors", "tx_fifo_errors",
    "tx_heartbeat_errors", "tx_packets", "tx_window_errors"};

// mlx5 port hw_counters (drivers/infiniband/hw/mlx5/counters.c), as in a ConnectX-7 capture.
const char* const kHwCounters[] = {
    "duplicate_request", "implied_nak_seq_err", "lifespan", "local_ack_timeout_err",
    "np_cnp_sent", "np_ecn_marked_roce_packets", "out_of_buffer", "out_of_sequence",
    "packet_seq_err", "req_cqe_error", "req_cqe_flush_error", "req_remote_access_errors",
    "req_remote_invalid_request", "req_rnr_retries_exceeded", "req_transport_retries_exceeded",
    "resp_cqe_error", "resp_cqe_flush_error", "resp_local_length_error",
    "resp_remote_access_errors", "rnr_nak_retry_err", "roce_adp_retrans", "roce_adp_retrans_to",
    "roce_slow_restart", "roce_slow_restart_cnps", "roce_slow_restart_trans", "rp_cnp_handled",
    "rp_cnp_ignored", "rx_atomic_requests", "rx_dct_connect", "rx_icrc_encapsulated",
    "rx_read_requests", "rx_write_requests"};
constexpr int kHwCount = sizeof(kHwCounters) / sizeof(kHwCounters[0]);
int HwIndex(std::string_view name) {
  for (int i = 0; i < kHwCount; ++i) {
    if (name == kHwCounters[i]) return i;
  }
  return -1;
}

std::string Hex16(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%x", v);
  return buf;
}

std::string PcieSpeed(double gts) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GT/s PCIe", gts);
  return buf;
}

std::string CpuList(int numa) { return numa == 0 ? "0-55,112-167" : "56-111,168-223"; }

// "../" repeated for a link at `relative_dir` to reach the root.
std::string UpTo(std::string_view relative_dir) {
  std::string up;
  const size_t depth = std::count(relative_dir.begin(), relative_dir.end(), '/') + 1;
  for (size_t i = 0; i < depth; ++i) up += "../";
  return up;
}

double Param(const ScenarioEvent& ev, const char* key, double fallback) {
  auto it = ev.params.find(key);
  return it == ev.params.end() ? fallback : it->second;
}

double DbmToMw(double dbm) { return std::pow(10.0, dbm / 10.0); }

}  // namespace

const char* PmaName(int counter) { return kPmaNames[counter]; }
const char* NetStatName(int stat) { return kNetStatNames[stat]; }

uint64_t PmaPrinted(int counter, uint64_t value) {
  const int bits = kPmaBits[counter];
  if (bits >= 64) return value;
  return std::min(value, (uint64_t{1} << bits) - 1);
}

struct Simulator::PortState {
  const Port* port = nullptr;
  const PciFunction* pci = nullptr;
  std::string dev_dir;  // devices/<path>/infiniband/<dev>, relative to sys
  std::string net_dir;  // devices/<path>/net/<netdev>
  std::string hwmon;    // hwmon<N>
  bool present = true;
  bool link_up = true;
  bool module_present = true;
  int generation = 0;  // re-plugs and reloads: new ifindex
  uint64_t carrier_changes = 2, carrier_up = 1, carrier_down = 1;
  std::array<uint64_t, kNetStatCount> net{};
  std::array<uint64_t, kPmaCount> pma{};
  std::array<uint64_t, kHwCount> hw{};
  std::vector<std::string> stat_names;
  std::vector<uint64_t> stats;
  std::vector<StatRule> rules;
  std::unordered_map<std::string, int> stat_index;
  std::vector<int> pfc_priorities;
  // counter_wrap32: printed = (value + offset) mod 2^32 for the wrapped statistics.
  bool wrap32 = false;
  std::unordered_map<int, uint64_t> wrap_offset_stats;
  std::array<uint64_t, kNetStatCount> wrap_offset_net{};
  ModuleState module;
  ModuleState module_base;  // healthy values to recover to
  double asic_temp = 55.0;
  double asic_highest = 55.0;
  double module_highest = 45.0;
  double utilization = 0.5;
  std::array<double, kSourceCount> inc{};
  // Per-tick inputs derived from the active faults.
  int storm_source_prio = -1, storm_victim_prio = -1, congestion_prio = -1;
  double congestion_rate = 0;
  int64_t storm_started = -1;
  double ber = 0;
  int ber_lane = -1;

  int Idx(const std::string& name) const {
    auto it = stat_index.find(name);
    return it == stat_index.end() ? -1 : it->second;
  }
  void Add(int idx, uint64_t v) {
    if (idx >= 0) stats[idx] += v;
  }
  void Add(const std::string& name, uint64_t v) { Add(Idx(name), v); }
};

std::string InjectionJson(const Injection& in, double unix_time) {
  nlohmann::json entity = nlohmann::json::object();
  entity["device"] = in.device;
  entity["port"] = std::to_string(in.port);
  if (!in.netdev.empty()) entity["netdev"] = in.netdev;
  if (in.priority) entity["priority"] = std::to_string(*in.priority);
  if (in.lane) entity["lane"] = std::to_string(*in.lane);
  nlohmann::json j;
  j["sim_time"] = in.sim_time;
  j["time"] = unix_time;
  j["event"] = in.event;
  j["fault"] = in.fault;
  j["entity"] = entity;
  j["line"] = in.line;
  return j.dump();
}

Simulator::Simulator(Node node, Scenario scenario, std::string root, SimOptions options)
    : node_(std::move(node)),
      scenario_(std::move(scenario)),
      options_(options),
      writer_(root),
      sysfs_root_(root + "/sys"),
      ethtool_root_(root + "/ethtool"),
      rng_(options.seed) {}

Simulator::~Simulator() = default;

Result<std::unique_ptr<Simulator>> Simulator::Create(Node node, Scenario scenario,
                                                     std::string root, SimOptions options) {
  if (root.empty()) return Error(StatusCode::kInvalidArgument, "empty root directory");
  std::unique_ptr<Simulator> sim(
      new Simulator(std::move(node), std::move(scenario), std::move(root), options));
  if (Status s = sim->Init(); !s.ok()) return Error(s);
  return sim;
}

Result<int> Simulator::Resolve(const ScenarioEvent& ev) const {
  const std::string where = scenario_.source + ":" + std::to_string(ev.line) + ": ";
  const Port* port = nullptr;
  if (!ev.device.empty()) {
    port = node_.FindRdmaDevice(ev.device);
    if (port == nullptr) {
      std::string known;
      for (const std::string& d : node_.RdmaDevices()) known += (known.empty() ? "" : " ") + d;
      return Error(StatusCode::kInvalidArgument, where + "device \"" + ev.device +
                                                     "\" does not exist on preset " +
                                                     node_.spec.preset + " (devices: " + known +
                                                     ")");
    }
    if (ev.port != port->port_num) {
      return Error(StatusCode::kInvalidArgument,
                   where + "device " + ev.device + " has no port " + std::to_string(ev.port));
    }
  }
  if (!ev.netdev.empty()) {
    const Port* by_netdev = node_.FindNetdev(ev.netdev);
    if (by_netdev == nullptr) {
      std::string known;
      for (const std::string& d : node_.Netdevs()) known += (known.empty() ? "" : " ") + d;
      return Error(StatusCode::kInvalidArgument,
                   where + "netdev \"" + ev.netdev + "\" does not exist on preset " +
                       node_.spec.preset + " (netdevs: " + known + ")");
    }
    if (port != nullptr && port != by_netdev) {
      return Error(StatusCode::kInvalidArgument,
                   where + "device " + ev.device + " and netdev " + ev.netdev +
                       " are different ports");
    }
    port = by_netdev;
  }
  const std::string name = port->rdma_device + " (" + port->netdev + ")";
  const bool ethernet = port->link_layer == LinkLayer::kEthernet;
  if (ev.fault == "congestion" || ev.fault.starts_with("pfc_storm")) {
    if (!ethernet) {
      return Error(StatusCode::kInvalidArgument,
                   where + ev.fault + " needs an Ethernet (RoCE) port; " + name +
                       " is InfiniBand (no PFC)");
    }
    const int prio = ev.priority.value_or(3);
    if (prio != 3) {
      return Error(StatusCode::kInvalidArgument, where + "priority " + std::to_string(prio) +
                                                     " has no PFC on " + name +
                                                     " (PFC priorities: 3)");
    }
  }
  if (ev.fault == "rx_power_decay" || ev.fault == "laser_bias_creep") {
    if (port->module == ModuleType::kNone) {
      return Error(StatusCode::kInvalidArgument,
                   where + ev.fault + ": " + name +
                       " has no module readable through ethtool (InfiniBand port)");
    }
  }
  if (ev.lane) {
    const int lanes = port->module == ModuleType::kSfp ? 1 : port->lanes;
    if (*ev.lane > lanes) {
      return Error(StatusCode::kInvalidArgument, where + "lane " + std::to_string(*ev.lane) +
                                                     " does not exist on " + name + " (" +
                                                     std::to_string(lanes) + " lanes)");
    }
  }
  return port->index;
}

Status Simulator::Init() {
  for (const ScenarioEvent& ev : scenario_.events) {
    auto port = Resolve(ev);
    if (!port) return port.error();
    event_port_.push_back(*port);
  }
  std::uniform_real_distribution<double> weight(0.5, 1.5);
  for (const Port& p : node_.ports) {
    auto ps = std::make_unique<PortState>();
    ps->port = &p;
    ps->pci = &node_.functions[p.pci];
    ps->dev_dir = "devices/" + ps->pci->path + "/infiniband/" + p.rdma_device;
    ps->net_dir = "devices/" + ps->pci->path + "/net/" + p.netdev;
    ps->hwmon = "hwmon" + std::to_string(p.index + 2);  // hwmon0/1: CPU sensors on real hosts
    const bool ethernet = p.link_layer == LinkLayer::kEthernet;
    if (ethernet) ps->pfc_priorities = {3};
    Mlx5StatsShape shape{.channels = p.channels,
                         .lanes = 4,
                         .pfc_priorities = ps->pfc_priorities,
                         .ipoib = !ethernet};
    ps->stat_names = Mlx5StatNames(shape);
    ps->stats.assign(ps->stat_names.size(), 0);
    ps->rules.resize(ps->stat_names.size());
    std::vector<double> channel_weight(p.channels);
    double total = 0;
    for (double& w : channel_weight) total += (w = weight(rng_));
    for (double& w : channel_weight) w /= total;
    // How each statistic follows the traffic. Per-channel statistics are their sw total's share.
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
    static const std::map<std::string, std::string> kSqAlias = {
        {"stopped", "queue_stopped"}, {"dropped", "queue_dropped"}, {"wake", "queue_wake"}};
    for (size_t i = 0; i < ps->stat_names.size(); ++i) {
      const std::string& name = ps->stat_names[i];
      ps->stat_index.emplace(name, static_cast<int>(i));
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
        ps->rules[i] = {it->second.first, it->second.second * share, 0};
      }
    }
    ps->module = NewModule(p.module == ModuleType::kNone ? ModuleType::kOsfp : p.module, p.lanes,
                           p.rate_gbps, p.index);
    ps->module.temperature_c = 42.0 + 0.7 * (p.index % 6);
    ps->module_base = ps->module;
    ps->utilization = 0.45 + 0.1 * std::uniform_real_distribution<double>(0, 1)(rng_);
    ports_.push_back(std::move(ps));
  }
  // A node up for a while: the counters start where 3 days of this traffic left them.
  for (auto& ps : ports_) {
    const double saved = ps->utilization;
    StepPort(*ps);
    for (size_t i = 0; i < ps->stats.size(); ++i) ps->stats[i] *= 259200;
    for (uint64_t& v : ps->net) v *= 259200;
    for (int c : {kPortXmitData, kPortRcvData, kPortXmitPackets, kPortRcvPackets, kPortXmitWait,
                  kUnicastXmitPackets, kUnicastRcvPackets, kMulticastXmitPackets,
                  kMulticastRcvPackets}) {
      ps->pma[c] *= 259200;
    }
    for (uint64_t& v : ps->hw) v *= 259200;
    ps->hw[HwIndex("lifespan")] = 10;
    ps->pma[kLinkDowned] = 1;
    ps->pma[kLinkErrorRecovery] = 0;
    ps->utilization = saved;
  }
  return Status::Ok();
}

bool Simulator::finished() const {
  return !options_.loop && static_cast<double>(now_) >= scenario_.duration_s;
}

Injection Simulator::MakeInjection(const ScenarioEvent& ev, int port, const char* what) const {
  const Port& p = node_.ports[port];
  Injection in;
  in.sim_time = static_cast<double>(now_);
  in.event = what;
  in.fault = ev.fault;
  in.device = p.rdma_device;
  in.port = p.port_num;
  in.netdev = p.netdev;
  if (ev.fault == "congestion" || ev.fault.starts_with("pfc_storm")) {
    in.priority = ev.priority.value_or(3);
  }
  if (ev.lane) {
    in.lane = ev.lane;
  } else if (ev.fault == "rx_power_decay" || ev.fault == "laser_bias_creep") {
    in.lane = 1;
  }
  in.line = ev.line;
  return in;
}

void Simulator::SetLink(PortState& ps, bool up) {
  if (ps.link_up == up) return;
  ps.link_up = up;
  ++ps.carrier_changes;
  if (up) {
    ++ps.carrier_up;
  } else {
    ++ps.carrier_down;
    ps.Add("link_down_events_phy", 1);
    ++ps.pma[kLinkDowned];
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

void Simulator::StartFault(const ScenarioEvent& ev, int port, std::vector<Injection>& out) {
  PortState& ps = *ports_[port];
  out.push_back(MakeInjection(ev, port, "start"));
  const FaultInfo* info = FindFault(ev.fault);
  if (ev.fault == "counter_reset") {
    ResetCounters(ps);
  } else if (ev.fault == "counter_wrap32") {
    // Start 3 s of traffic below 2^32 so the wrap shows within seconds.
    ps.wrap32 = true;
    ps.wrap_offset_stats.clear();
    for (const char* name : {"rx_packets", "rx_bytes", "tx_packets", "tx_bytes"}) {
      const int i = ps.Idx(name);
      const uint64_t margin = std::max<uint64_t>(1000, 3 * static_cast<uint64_t>(
          ps.inc[std::string(name).starts_with("rx_p") ? kSwRxPkt
                 : std::string(name).starts_with("rx_b") ? kSwRxByte
                 : std::string(name).starts_with("tx_p") ? kSwTxPkt : kSwTxByte]));
      ps.wrap_offset_stats[i] = (uint64_t{1} << 32) - (ps.stats[i] & kMask32) - margin;
    }
    for (int s : {kRxBytes, kRxPackets, kTxBytes, kTxPackets}) {
      const int i = ps.Idx(kNetStatNames[s]);
      ps.wrap_offset_net[s] = ps.wrap_offset_stats.contains(i)
                                  ? (ps.wrap_offset_stats[i] + ps.stats[i] - ps.net[s]) & kMask32
                                  : 0;
    }
  } else if (ev.fault == "hot_unplug") {
    ps.present = false;
  } else if (ev.fault == "module_swap") {
    ps.module_present = false;
    ps.Add("module_unplug", 1);
  }
  if (!info->instant) {
    active_.push_back({&ev, port, now_, now_ + static_cast<int64_t>(std::llround(ev.duration_s))});
  }
}

void Simulator::EndFault(size_t i, std::vector<Injection>& out) {
  const ActiveFault af = active_[i];
  active_.erase(active_.begin() + static_cast<long>(i));
  PortState& ps = *ports_[af.port];
  const std::string& fault = af.event->fault;
  out.push_back(MakeInjection(*af.event, af.port, "end"));
  if (fault == "counter_wrap32") {
    ps.wrap32 = false;
  } else if (fault == "hot_unplug") {
    // Re-plug: a new device instance with fresh counters.
    ps.present = true;
    ResetCounters(ps);
    ps.link_up = true;
  } else if (fault == "module_swap") {
    ps.module_present = true;
    const Port& p = *ps.port;
    ModuleState fresh = NewModule(ps.module_base.type, p.lanes, p.rate_gbps,
                                  p.index + 1000 * (ps.generation + 1) + static_cast<int>(now_));
    fresh.temperature_c = ps.module_base.temperature_c;
    ps.module_base = fresh;
    ps.module = fresh;
    ++ps.generation;
  } else if (fault == "module_temp_ramp") {
    ps.module.temperature_c = ps.module_base.temperature_c;
  } else if (fault == "rx_power_decay") {
    ps.module.rx_power_mw = ps.module_base.rx_power_mw;
  } else if (fault == "laser_bias_creep") {
    ps.module.bias_ma = ps.module_base.bias_ma;
  }
}

void Simulator::Tick(std::vector<Injection>& out) {
  ++now_;
  const int64_t duration = std::max<int64_t>(1, std::llround(scenario_.duration_s));
  const int64_t local = options_.loop ? now_ % duration : now_;
  if (options_.loop && local == 0) {
    while (!active_.empty()) EndFault(0, out);
  }
  for (size_t i = 0; i < active_.size();) {
    if (active_[i].end <= now_) {
      EndFault(i, out);
    } else {
      ++i;
    }
  }
  for (size_t e = 0; e < scenario_.events.size(); ++e) {
    const ScenarioEvent& ev = scenario_.events[e];
    if (std::llround(ev.at_s) == local) StartFault(ev, event_port_[e], out);
  }
  if (!options_.loop && now_ >= duration) {
    while (!active_.empty()) EndFault(0, out);
  }
  for (auto& ps : ports_) StepPort(*ps);
}

void Simulator::StepPort(PortState& ps) {
  const Port& p = *ps.port;
  std::normal_distribution<double> noise(0.0, 1.0);
  // Faults active on this port shape this second.
  ps.storm_source_prio = ps.storm_victim_prio = ps.congestion_prio = -1;
  ps.ber = 0;
  ps.ber_lane = -1;
  bool down = !ps.present || !ps.module_present;
  int flaps_now = 0;  // zero-length flaps: down and up inside this second
  for (const ActiveFault& af : active_) {
    if (ports_[af.port].get() != &ps) continue;
    const ScenarioEvent& ev = *af.event;
    const double elapsed = static_cast<double>(now_ - af.start);
    const double length = std::max(1.0, static_cast<double>(af.end - af.start));
    const double progress = std::clamp(elapsed / length, 0.0, 1.0);
    if (ev.fault == "link_down") {
      down = true;
    } else if (ev.fault == "link_flap") {
      const double period = Param(ev, "period", 10), count = Param(ev, "count", 3);
      const double down_s = Param(ev, "down", 1);
      const double flap = std::floor(elapsed / period);
      const double into = elapsed - flap * period;
      if (flap < count) {
        if (down_s <= 0) {
          if (into < 1) ++flaps_now;
        } else if (into < down_s) {
          down = true;
        }
      }
    } else if (ev.fault == "pfc_storm_source") {
      ps.storm_source_prio = ev.priority.value_or(3);
      if (ps.storm_started < 0) ps.storm_started = af.start;
    } else if (ev.fault == "pfc_storm_victim") {
      ps.storm_victim_prio = ev.priority.value_or(3);
    } else if (ev.fault == "congestion") {
      ps.congestion_prio = ev.priority.value_or(3);
      ps.congestion_rate = Param(ev, "rate", 60000);
    } else if (ev.fault == "ber_growth") {
      // log-linear from a healthy 1e-9 to the target.
      const double target = Param(ev, "ber", 1e-5);
      ps.ber = std::pow(10.0, std::log10(1e-9) + progress * (std::log10(target) + 9.0));
      ps.ber_lane = ev.lane ? *ev.lane - 1 : -1;
    } else if (ev.fault == "module_temp_ramp") {
      const double target = Param(ev, "target_celsius", ps.module.temperature.high_alarm + 3);
      ps.module.temperature_c =
          ps.module_base.temperature_c + progress * (target - ps.module_base.temperature_c);
    } else if (ev.fault == "rx_power_decay") {
      const int lane = ev.lane.value_or(1) - 1;
      const double from = ps.module_base.rx_power_mw[lane];
      const double to = DbmToMw(Param(ev, "target_dbm", -13));
      // Exponential in mW = linear in dBm.
      ps.module.rx_power_mw[lane] = from * std::pow(to / from, progress);
    } else if (ev.fault == "laser_bias_creep") {
      const int lane = ev.lane.value_or(1) - 1;
      const double from = ps.module_base.bias_ma[lane];
      const double to = Param(ev, "target_ma", ps.module.bias.high_warning + 1.0);
      ps.module.bias_ma[lane] = from + progress * (to - from);
    }
  }
  if (ps.storm_source_prio < 0) ps.storm_started = -1;
  for (int i = 0; i < flaps_now && ps.link_up; ++i) {
    SetLink(ps, false);
    SetLink(ps, true);
  }
  SetLink(ps, !down);
  if (!ps.present) {
    ps.inc.fill(0);
    return;
  }

  // Traffic of this second (bytes, packets) with noise.
  const bool ethernet = p.link_layer == LinkLayer::kEthernet;
  const double line_bytes = p.rate_gbps * 1e9 / 8;
  double util = std::clamp(ps.utilization + 0.05 * noise(rng_), 0.05, 0.95);
  double rx_factor = 1, tx_factor = 1;
  if (ps.congestion_prio >= 0) {
    rx_factor = 0.7;
    tx_factor = 0.6;
  }
  if (ps.storm_source_prio >= 0) rx_factor = 0;  // the receive pipeline is stuck
  if (ps.storm_victim_prio >= 0) tx_factor = 0.002;  // paused: only other priorities move
  if (!ps.link_up) rx_factor = tx_factor = 0;
  const double wire_rx = line_bytes * util * rx_factor;
  const double wire_tx = line_bytes * util * tx_factor * 0.97;
  const double pkt = 4150;  // RoCE/IB 4096 MTU payload plus headers
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

  if (ethernet && ps.link_up) {
    for (int prio = 0; prio < 8; ++prio) {
      // Priority 3 carries RoCE, 0 the rest; CNPs go on 6.
      const double share_rx = prio == 3 ? 0.985 : prio == 0 ? 0.0145 : prio == 6 ? 0.0005 : 0;
      // A victim's paused priority transmits nothing; its little remaining traffic is the
      // other priorities'.
      const double share_tx = prio == ps.storm_victim_prio ? 0 : share_rx;
      ps.Add("rx_prio" + std::to_string(prio) + "_bytes", static_cast<uint64_t>(wire_rx * share_rx));
      ps.Add("rx_prio" + std::to_string(prio) + "_packets",
             static_cast<uint64_t>(inc[kWireRxPkt] * share_rx));
      ps.Add("tx_prio" + std::to_string(prio) + "_bytes", static_cast<uint64_t>(wire_tx * share_tx));
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
        ps.hw[HwIndex("np_ecn_marked_roce_packets")] += static_cast<uint64_t>(inc[kWireRxPkt] * 0.02);
        ps.hw[HwIndex("np_cnp_sent")] += static_cast<uint64_t>(inc[kWireRxPkt] * 0.019);
        ps.hw[HwIndex("rp_cnp_handled")] += static_cast<uint64_t>(inc[kWireTxPkt] * 0.015);
        ps.pma[kPortXmitWait] += 3000000;
      }
      if (prio == ps.storm_source_prio) {
        // Continuous pause: refreshed every half quantum time (65535 quanta x 512 bit times).
        const double quantum_s = 65535.0 * 512 / (p.rate_gbps * 1e9);
        tx_pause = static_cast<uint64_t>(2.0 / quantum_s);
        tx_dur = 1000000;
        // Past the warning watermark the NIC counts a storm warning (mlx5 pause storm
        // prevention, device_stall_minor_watermark); the storm itself is never released here.
        if (now_ - ps.storm_started == 3) ps.Add("tx_pause_storm_warning_events", 1);
      }
      if (prio == ps.storm_victim_prio) {
        const double quantum_s = 65535.0 * 512 / (p.rate_gbps * 1e9);
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

  // PHY: bits received at line rate while up; FEC-corrected errors at the BER.
  if (ps.link_up) {
    const double bits = p.rate_gbps * 1e9 * (1 + 1e-6 * noise(rng_));
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

  // Temperatures: ASIC follows load; modules wander around their baseline.
  ps.asic_temp = 52 + 10 * util + 0.3 * noise(rng_);
  ps.asic_highest = std::max(ps.asic_highest, ps.asic_temp);
  bool ramping = false;
  for (const ActiveFault& af : active_) {
    ramping |= ports_[af.port].get() == &ps && af.event->fault == "module_temp_ramp";
  }
  if (!ramping) ps.module.temperature_c = ps.module_base.temperature_c + 0.2 * noise(rng_);
  if (ps.module.temperature_c > ps.module.temperature.high_alarm &&
      ps.module_highest <= ps.module.temperature.high_alarm) {
    ps.Add("module_high_temp", 1);
  }
  ps.module_highest = std::max(ps.module_highest, ps.module.temperature_c);
  ps.module.vcc_v = 3.30 + 0.005 * noise(rng_);
}

uint64_t Simulator::Printed(const PortState& ps, int i) const {
  const uint64_t v = ps.stats[i];
  if (!ps.wrap32) return v;
  auto it = ps.wrap_offset_stats.find(i);
  return it == ps.wrap_offset_stats.end() ? v : (v + it->second) & kMask32;
}

uint64_t Simulator::PrintedNet(const PortState& ps, int stat) const {
  const uint64_t v = ps.net[stat];
  if (!ps.wrap32) return v;
  if (stat == kRxBytes || stat == kTxBytes || stat == kRxPackets || stat == kTxPackets) {
    return (v + ps.wrap_offset_net[stat]) & kMask32;
  }
  return v;
}

std::string Simulator::EthtoolText(const PortState& ps) const {
  std::string text = "NIC statistics:\n";
  text.reserve(ps.stats.size() * 40);
  for (size_t i = 0; i < ps.stats.size(); ++i) {
    text += "     ";
    text += ps.stat_names[i];
    text += ": ";
    text += std::to_string(Printed(ps, static_cast<int>(i)));
    text += '\n';
  }
  return text;
}

#define FW_TRY(expr)                  \
  do {                                \
    if (Status s_ = (expr); !s_.ok()) return s_; \
  } while (0)

Status Simulator::WritePciAttributes(const PciFunction& f) {
  TreeWriter& w = writer_;
  const std::string dir = "sys/devices/" + f.path;
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%04x\n", f.vendor);
  FW_TRY(w.Write(dir + "/vendor", buf));
  std::snprintf(buf, sizeof(buf), "0x%04x\n", f.device);
  FW_TRY(w.Write(dir + "/device", buf));
  std::snprintf(buf, sizeof(buf), "0x%06x\n", f.pci_class);
  FW_TRY(w.Write(dir + "/class", buf));
  FW_TRY(w.Write(dir + "/numa_node", std::to_string(f.numa_node) + "\n"));
  FW_TRY(w.Write(dir + "/local_cpulist", CpuList(f.numa_node) + "\n"));
  FW_TRY(w.Write(dir + "/current_link_speed", PcieSpeed(f.link_speed_gts) + "\n"));
  FW_TRY(w.Write(dir + "/max_link_speed", PcieSpeed(f.link_speed_gts) + "\n"));
  FW_TRY(w.Write(dir + "/current_link_width", std::to_string(f.link_width) + "\n"));
  FW_TRY(w.Write(dir + "/max_link_width", std::to_string(f.link_width) + "\n"));
  return Status::Ok();
}

Status Simulator::WriteGlobal() {
  TreeWriter& w = writer_;
  for (const PciFunction& f : node_.functions) {
    const std::string dir = "sys/devices/" + f.path;
    FW_TRY(WritePciAttributes(f));
    if (f.pci_class != 0x060400) {
      // drivers/pci/pcie/aer.c aer_stats_dev_attr: one line per error type, then the total.
      FW_TRY(w.Write(dir + "/aer_dev_correctable",
                     "RxErr 0\nBadTLP 0\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\n"
                     "CorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR 0\n"));
      FW_TRY(w.Write(dir + "/aer_dev_nonfatal",
                     "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\n"
                     "UnxCmplt 0\nRxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\n"
                     "TOTAL_ERR_NONFATAL 0\n"));
      FW_TRY(w.Write(dir + "/aer_dev_fatal",
                     "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\n"
                     "UnxCmplt 0\nRxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\n"
                     "TOTAL_ERR_FATAL 0\n"));
    }
    if (!f.driver.empty()) {
      FW_TRY(w.MakeDirs("sys/bus/pci/drivers/" + f.driver));
      FW_TRY(w.Symlink(dir + "/driver", UpTo("devices/" + f.path) + "bus/pci/drivers/" + f.driver));
    }
    FW_TRY(w.Symlink("sys/bus/pci/devices/" + f.bdf, "../../../devices/" + f.path));
  }
  // GPUDirect RDMA: nvidia_peermem loaded.
  FW_TRY(w.Write("sys/module/nvidia_peermem/refcnt", "0\n"));
  FW_TRY(w.MakeDirs("sys/class/net"));
  FW_TRY(w.MakeDirs("sys/class/infiniband"));
  FW_TRY(w.MakeDirs("sys/class/hwmon"));
  FW_TRY(w.MakeDirs("ethtool"));
  return Status::Ok();
}

Status Simulator::WriteStatic(const PortState& ps) {
  TreeWriter& w = writer_;
  const Port& p = *ps.port;
  const PciFunction& f = *ps.pci;
  const std::string fdir = "sys/devices/" + f.path;
  // The PCI function itself (re-plug recreates it).
  FW_TRY(WritePciAttributes(f));
  FW_TRY(w.Symlink(fdir + "/driver", UpTo("devices/" + f.path) + "bus/pci/drivers/mlx5_core"));
  FW_TRY(w.Symlink("sys/bus/pci/devices/" + f.bdf, "../../../devices/" + f.path));

  // RDMA device (drivers/infiniband/core/sysfs.c).
  const std::string dev = "sys/" + ps.dev_dir;
  FW_TRY(w.Write(dev + "/node_type", "1: CA\n"));
  FW_TRY(w.Write(dev + "/fw_ver", p.fw_ver + "\n"));
  FW_TRY(w.Write(dev + "/node_guid", p.node_guid + "\n"));
  FW_TRY(w.Write(dev + "/sys_image_guid", p.node_guid + "\n"));
  FW_TRY(w.Write(dev + "/hca_type", p.part + "\n"));
  FW_TRY(w.Write(dev + "/hw_rev", "0\n"));
  FW_TRY(w.Write(dev + "/board_id", p.board_id + "\n"));
  FW_TRY(w.Write(dev + "/node_desc", node_.spec.hostname + " " + p.rdma_device + "\n"));
  FW_TRY(w.Symlink(dev + "/device", "../../../" + f.bdf));
  FW_TRY(w.Symlink("sys/class/infiniband/" + p.rdma_device, "../../" + ps.dev_dir));
  const std::string port = dev + "/ports/" + std::to_string(p.port_num);
  const bool ethernet = p.link_layer == LinkLayer::kEthernet;
  FW_TRY(w.Write(port + "/link_layer", std::string(LinkLayerName(p.link_layer)) + "\n"));
  FW_TRY(w.Write(port + "/rate", p.rate_text + "\n"));
  FW_TRY(w.Write(port + "/lid", Hex16(p.lid) + "\n"));
  FW_TRY(w.Write(port + "/sm_lid", Hex16(ethernet ? 0 : 1) + "\n"));
  FW_TRY(w.Write(port + "/lid_mask_count", "0\n"));
  FW_TRY(w.Write(port + "/sm_sl", "0\n"));
  FW_TRY(w.Write(port + "/cap_mask", ethernet ? "0x04010000\n" : "0xa751e848\n"));
  if (ethernet) {
    FW_TRY(w.Write(port + "/gid_attrs/types/0", "IB/RoCE v1\n"));
    FW_TRY(w.Write(port + "/gid_attrs/types/1", "RoCE v2\n"));
    FW_TRY(w.Write(port + "/gid_attrs/ndevs/0", p.netdev + "\n"));
    FW_TRY(w.Write(port + "/gid_attrs/ndevs/1", p.netdev + "\n"));
  } else {
    FW_TRY(w.Write(port + "/gid_attrs/types/0", "IB/RoCE v1\n"));
    // gid_attrs/ndevs/<i> of an IB port reads EINVAL on a real kernel; a capture stores it empty.
    FW_TRY(w.Write(port + "/gid_attrs/ndevs/0", ""));
  }

  // Netdev (net/core/net-sysfs.c).
  const std::string net = "sys/" + ps.net_dir;
  FW_TRY(w.Write(net + "/address", (ethernet ? p.mac
                                             : "00:00:10:87:fe:80:00:00:00:00:00:00:" +
                                                   p.mac.substr(0, 9) + "03:00:" +
                                                   p.mac.substr(9)) + "\n"));
  FW_TRY(w.Write(net + "/addr_assign_type", "0\n"));
  FW_TRY(w.Write(net + "/ifindex", std::to_string(p.ifindex + 100 * ps.generation) + "\n"));
  FW_TRY(w.Write(net + "/type", ethernet ? "1\n" : "32\n"));
  FW_TRY(w.Write(net + "/mtu", ethernet ? "4200\n" : "4092\n"));
  FW_TRY(w.Write(net + "/flags", "0x1003\n"));
  FW_TRY(w.Write(net + "/dev_port", "0\n"));
  FW_TRY(w.Write(net + "/dev_id", "0x0\n"));
  FW_TRY(w.Write(net + "/tx_queue_len", "1000\n"));
  FW_TRY(w.Symlink(net + "/device", "../../../" + f.bdf));
  FW_TRY(w.Symlink("sys/class/net/" + p.netdev, "../../" + ps.net_dir));

  // mlx5 hwmon (kernel 6.6+, drivers/net/ethernet/mellanox/mlx5/core/hwmon.c).
  const std::string hw_rel = "devices/" + f.path + "/hwmon/" + ps.hwmon;
  FW_TRY(w.Write("sys/" + hw_rel + "/name", "mlx5\n"));
  FW_TRY(w.Symlink("sys/" + hw_rel + "/device", "../../../" + f.bdf));
  FW_TRY(w.Symlink("sys/class/hwmon/" + ps.hwmon, "../../" + hw_rel));
  FW_TRY(w.Write("sys/" + hw_rel + "/temp1_label", "asic\n"));
  FW_TRY(w.Write("sys/" + hw_rel + "/temp1_crit", "105000\n"));
  FW_TRY(w.Write("sys/" + hw_rel + "/temp2_label",
                 "Module" + std::to_string(p.module_number) + "\n"));
  return Status::Ok();
}

Status Simulator::Unplug(PortState& ps) {
  const Port& p = *ps.port;
  FW_TRY(writer_.Remove("sys/class/net/" + p.netdev));
  FW_TRY(writer_.Remove("sys/class/infiniband/" + p.rdma_device));
  FW_TRY(writer_.Remove("sys/class/hwmon/" + ps.hwmon));
  FW_TRY(writer_.Remove("sys/bus/pci/devices/" + ps.pci->bdf));
  FW_TRY(writer_.Remove("sys/devices/" + ps.pci->path));
  FW_TRY(writer_.Remove("ethtool/" + p.netdev));
  return Status::Ok();
}

Status Simulator::WritePort(PortState& ps) {
  TreeWriter& w = writer_;
  const Port& p = *ps.port;
  const bool on_disk = std::filesystem::exists(w.Path("sys/" + ps.net_dir));
  if (!ps.present) return on_disk ? Unplug(ps) : Status::Ok();
  if (!on_disk) FW_TRY(WriteStatic(ps));
  FW_TRY(w.Write("sys/" + ps.net_dir + "/ifindex",
                 std::to_string(p.ifindex + 100 * ps.generation) + "\n"));
  const std::string port = "sys/" + ps.dev_dir + "/ports/" + std::to_string(p.port_num);
  const bool ethernet = p.link_layer == LinkLayer::kEthernet;
  FW_TRY(w.Write(port + "/state", ps.link_up ? "4: ACTIVE\n" : "1: DOWN\n"));
  FW_TRY(w.Write(port + "/phys_state", ps.link_up ? "5: LinkUp\n" : "2: Polling\n"));
  for (int c = 0; c < kPmaCount; ++c) {
    FW_TRY(w.WriteU64(port + "/counters/" + kPmaNames[c], PmaPrinted(c, ps.pma[c])));
  }
  for (int c = 0; c < kHwCount; ++c) {
    FW_TRY(w.WriteU64(port + "/hw_counters/" + kHwCounters[c], ps.hw[c]));
  }
  const std::string net = "sys/" + ps.net_dir;
  FW_TRY(w.Write(net + "/carrier", ps.link_up ? "1\n" : "0\n"));
  FW_TRY(w.Write(net + "/operstate", ps.link_up ? "up\n" : "down\n"));
  FW_TRY(w.Write(net + "/speed", ps.link_up ? std::to_string(p.rate_gbps * 1000) + "\n" : "-1\n"));
  FW_TRY(w.Write(net + "/duplex", ps.link_up ? "full\n" : "unknown\n"));
  FW_TRY(w.WriteU64(net + "/carrier_changes", ps.carrier_changes));
  FW_TRY(w.WriteU64(net + "/carrier_up_count", ps.carrier_up));
  FW_TRY(w.WriteU64(net + "/carrier_down_count", ps.carrier_down));
  for (int s = 0; s < kNetStatCount; ++s) {
    FW_TRY(w.WriteU64(net + "/statistics/" + kNetStatNames[s], PrintedNet(ps, s)));
  }
  const std::string eth = "ethtool/" + p.netdev;
  FW_TRY(w.Write(eth + "/statistics", EthtoolText(ps)));
  if (ethernet) {
    if (ps.module_present) {
      Image img = RenderModule(ps.module);
      FW_TRY(w.WriteBytes(eth + "/module-eeprom", img.bytes()));
    } else if (std::filesystem::exists(w.Path(eth + "/module-eeprom"))) {
      FW_TRY(w.Remove(eth + "/module-eeprom"));  // an empty cage
    }
  }
  const std::string hw = "sys/devices/" + ps.pci->path + "/hwmon/" + ps.hwmon;
  auto milli = [](double c) { return std::to_string(std::lround(c * 1000)) + "\n"; };
  FW_TRY(w.Write(hw + "/temp1_input", milli(ps.asic_temp)));
  FW_TRY(w.Write(hw + "/temp1_highest", milli(ps.asic_highest)));
  if (ps.module_present) {
    FW_TRY(w.Write(hw + "/temp2_input", milli(ps.module.temperature_c)));
    FW_TRY(w.Write(hw + "/temp2_crit", milli(ps.module.temperature.high_alarm)));
    FW_TRY(w.Write(hw + "/temp2_highest", milli(ps.module_highest)));
  }
  return Status::Ok();
}

Status Simulator::WriteInitial() {
  FW_TRY(WriteGlobal());
  for (auto& ps : ports_) FW_TRY(WritePort(*ps));
  return Status::Ok();
}

Result<std::vector<Injection>> Simulator::AdvanceTo(double sim_seconds) {
  const int64_t target = static_cast<int64_t>(std::floor(sim_seconds));
  if (target < now_) {
    return Error(StatusCode::kInvalidArgument,
                 "AdvanceTo(" + std::to_string(target) + "): simulated time is already " +
                     std::to_string(now_));
  }
  std::vector<Injection> out;
  // Past the scenario's end (no loop) the node runs on with healthy traffic: every fault ended
  // at the end, and AdvanceTo(t) still reaches t (finished() tells the CLI when to stop).
  while (now_ < target) Tick(out);
  for (auto& ps : ports_) {
    if (Status s = WritePort(*ps); !s.ok()) return Error(s);
  }
  return out;
}

const Simulator::PortState* Simulator::FindState(const std::string& netdev) const {
  for (const auto& ps : ports_) {
    if (ps->port->netdev == netdev || ps->port->rdma_device == netdev) return ps.get();
  }
  return nullptr;
}

std::optional<uint64_t> Simulator::EthtoolStat(const std::string& netdev,
                                               const std::string& name) const {
  const PortState* ps = FindState(netdev);
  if (ps == nullptr) return std::nullopt;
  const int i = ps->Idx(name);
  if (i < 0) return std::nullopt;
  return Printed(*ps, i);
}

std::vector<std::string> Simulator::EthtoolStatNames(const std::string& netdev) const {
  const PortState* ps = FindState(netdev);
  return ps == nullptr ? std::vector<std::string>() : ps->stat_names;
}

std::optional<uint64_t> Simulator::NetdevStat(const std::string& netdev, NetStat stat) const {
  const PortState* ps = FindState(netdev);
  if (ps == nullptr) return std::nullopt;
  return PrintedNet(*ps, stat);
}

std::optional<uint64_t> Simulator::PmaValue(const std::string& device, PmaCounter c) const {
  const PortState* ps = FindState(device);
  if (ps == nullptr) return std::nullopt;
  return PmaPrinted(c, ps->pma[c]);
}

const ModuleState* Simulator::Module(const std::string& netdev) const {
  const PortState* ps = FindState(netdev);
  return ps == nullptr ? nullptr : &ps->module;
}

bool Simulator::LinkUp(const std::string& netdev) const {
  const PortState* ps = FindState(netdev);
  return ps != nullptr && ps->link_up;
}

bool Simulator::Present(const std::string& netdev) const {
  const PortState* ps = FindState(netdev);
  return ps != nullptr && ps->present;
}

}  // namespace fabricwatch::sim
