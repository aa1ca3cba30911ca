#include "tools/fabricsim/simulator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "collectors/jobs/jobs.h"
#include "collectors/kmsg/kmsg.h"
#include "collectors/peer/peer.h"
#include "tools/fabricsim/mlx5_stats.h"
#include "tools/fabricsim/simulator_port.h"

namespace fabricwatch::sim {
namespace {

const char* const kPmaNames[kPmaCount] = {"symbol_error",
                                          "link_error_recovery",
                                          "link_downed",
                                          "port_rcv_errors",
                                          "port_rcv_remote_physical_errors",
                                          "port_rcv_switch_relay_errors",
                                          "port_xmit_discards",
                                          "port_xmit_constraint_errors",
                                          "port_rcv_constraint_errors",
                                          "local_link_integrity_errors",
                                          "excessive_buffer_overrun_errors",
                                          "VL15_dropped",
                                          "port_xmit_data",
                                          "port_rcv_data",
                                          "port_xmit_packets",
                                          "port_rcv_packets",
                                          "port_xmit_wait",
                                          "unicast_xmit_packets",
                                          "unicast_rcv_packets",
                                          "multicast_xmit_packets",
                                          "multicast_rcv_packets"};
// IBA PortCounters widths (IBA 1.4 Table 247); the data counters come from PortCountersExtended
// (64 bit) on mlx5; PortXmitWait stays 32 bit.
constexpr int kPmaBits[kPmaCount] = {16, 8,  8,  16, 16, 16, 16, 8,  8,  4, 4,
                                     16, 64, 64, 64, 64, 32, 64, 64, 64, 64};

const char* const kNetStatNames[kNetStatCount] = {
    "collisions",        "multicast",           "rx_bytes",          "rx_compressed",
    "rx_crc_errors",     "rx_dropped",          "rx_errors",         "rx_fifo_errors",
    "rx_frame_errors",   "rx_length_errors",    "rx_missed_errors",  "rx_nohandler",
    "rx_over_errors",    "rx_packets",          "tx_aborted_errors", "tx_bytes",
    "tx_carrier_errors", "tx_compressed",       "tx_dropped",        "tx_errors",
    "tx_fifo_errors",    "tx_heartbeat_errors", "tx_packets",        "tx_window_errors"};

}  // namespace

const char* PmaName(int counter) { return kPmaNames[counter]; }
const char* NetStatName(int stat) { return kNetStatNames[stat]; }

uint64_t PmaPrinted(int counter, uint64_t value) {
  const int bits = kPmaBits[counter];
  if (bits >= 64) return value;
  return std::min(value, (uint64_t{1} << bits) - 1);
}

std::string InjectionJson(const Injection& in, double unix_time) {
  nlohmann::json entity = nlohmann::json::object();
  if (!in.device.empty()) entity["device"] = in.device;
  if (in.port > 0) entity["port"] = std::to_string(in.port);
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
      kmsg_path_(root + "/kmsg"),
      procfs_root_(root + "/proc"),
      smp_root_(root + "/smp"),
      lldp_root_(root + "/lldp"),
      rng_(options.seed) {}

Simulator::~Simulator() = default;

Roots Simulator::roots() const {
  Roots roots{.sysfs = sysfs_root_, .ethtool = ethtool_root_};
  roots.SetReplay(kmsg::kKernelLog, kmsg_path_);
  roots.SetReplay(jobs::kProcfs, procfs_root_);
  roots.SetReplay(peer::kSmpReplay, smp_root_);
  roots.SetReplay(peer::kLldpReplay, lldp_root_);
  return roots;
}

Result<std::unique_ptr<Simulator>> Simulator::Create(Node node, Scenario scenario, std::string root,
                                                     SimOptions options) {
  if (root.empty()) return Error(StatusCode::kInvalidArgument, "empty root directory");
  std::unique_ptr<Simulator> sim(
      new Simulator(std::move(node), std::move(scenario), std::move(root), options));
  if (Status s = sim->Init(); !s.ok()) return Error(s);
  return sim;
}

Result<int> Simulator::Resolve(const ScenarioEvent& ev) const {
  const std::string where = scenario_.source + ":" + std::to_string(ev.line) + ": ";
  const Port* port = nullptr;
  if (ev.device.empty() && ev.netdev.empty()) return -1;  // node-wide or a GPU's (TargetOf)
  if (!ev.device.empty()) {
    port = node_.FindRdmaDevice(ev.device);
    if (port == nullptr) {
      std::string known;
      for (const std::string& d : node_.RdmaDevices()) known += (known.empty() ? "" : " ") + d;
      return Error(StatusCode::kInvalidArgument,
                   where + "device \"" + ev.device + "\" does not exist on preset " +
                       node_.spec.preset + " (devices: " + known + ")");
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
      return Error(StatusCode::kInvalidArgument, where + "device " + ev.device + " and netdev " +
                                                     ev.netdev + " are different ports");
    }
    port = by_netdev;
  }
  const std::string name = port->rdma_device + " (" + port->netdev + ")";
  const bool ethernet = port->link_layer == LinkLayer::kEthernet;
  if (ev.fault == "congestion" || ev.fault.starts_with("pfc_storm")) {
    if (!ethernet) {
      return Error(
          StatusCode::kInvalidArgument,
          where + ev.fault + " needs an Ethernet (RoCE) port; " + name + " is InfiniBand (no PFC)");
    }
    const int prio = ev.priority.value_or(3);
    if (prio != 3) {
      return Error(StatusCode::kInvalidArgument, where + "priority " + std::to_string(prio) +
                                                     " has no PFC on " + name +
                                                     " (PFC priorities: 3)");
    }
  }
  if (ev.fault == "ib_micro_flap" && ethernet) {
    return Error(StatusCode::kInvalidArgument,
                 where + "ib_micro_flap needs an InfiniBand port; " + name +
                     " is Ethernet (RoCE: link_error_recovery is not its link's)");
  }
  if (ev.fault == "rx_power_decay" || ev.fault == "laser_bias_creep") {
    if (port->module == ModuleType::kNone) {
      return Error(StatusCode::kInvalidArgument,
                   where + ev.fault + ": " + name +
                       " has no module readable through ethtool (InfiniBand port)");
    }
  }
  if (Status s = CheckConfigFault(ev, *port); !s.ok()) {
    return Error(StatusCode::kInvalidArgument, where + s.message());
  }
  if (Status s = CheckShapeFault(ev, *port); !s.ok()) {
    return Error(StatusCode::kInvalidArgument, where + s.message());
  }
  if (Status s = CheckLogFault(ev, *port); !s.ok()) {
    return Error(StatusCode::kInvalidArgument, where + s.message());
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
  FW_TRY(CheckLeafOptions(node_, options_.leaf));
  InitConfig();
  for (const ScenarioEvent& ev : scenario_.events) {
    auto port = Resolve(ev);
    if (!port) return port.error();
    event_port_.push_back(*port);
    auto function = ResolveFunction(ev, *port >= 0 ? &node_.ports[*port] : nullptr);
    if (!function) return function.error();
    event_function_.push_back(*function);
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
    SetStatRules(*ps, channel_weight);
    ps->module = NewModule(p.module == ModuleType::kNone ? ModuleType::kOsfp : p.module, p.lanes,
                           p.rate_gbps, p.index);
    ps->module.temperature_c = 42.0 + 0.7 * (p.index % 6);
    ps->module_base = ps->module;
    ps->utilization = 0.45 + 0.1 * std::uniform_real_distribution<double>(0, 1)(rng_);
    ps->trained = {p.lanes, p.lane_speed};
    ps->gbps = RateGbps(ps->trained);
    ps->fw_ver = p.fw_ver;
    ps->mtu = ethernet ? 9000 : 4092;
    ports_.push_back(std::move(ps));
  }
  // A node up for a while: the counters start where 3 days of this traffic left them.
  for (auto& ps : ports_) {
    const double saved = ps->utilization;
    StepPort(*ps);
    for (size_t i = 0; i < ps->stats.size(); ++i) ps->stats[i] *= 259200;
    for (uint64_t& v : ps->net) v *= 259200;
    for (int c :
         {kPortXmitData, kPortRcvData, kPortXmitPackets, kPortRcvPackets, kPortXmitWait,
          kUnicastXmitPackets, kUnicastRcvPackets, kMulticastXmitPackets, kMulticastRcvPackets}) {
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

Injection Simulator::MakeInjection(const ScenarioEvent& ev, int port, int function,
                                   const char* what) const {
  Injection in;
  in.sim_time = static_cast<double>(now_);
  in.event = what;
  in.fault = ev.fault;
  if (function >= 0) {
    in.device = node_.functions[function].bdf;  // the function a PCIe fault changed
    in.port = 0;
  } else if (port >= 0) {
    const Port& p = node_.ports[port];
    in.device = p.rdma_device;
    in.port = p.port_num;
    in.netdev = p.netdev;
  } else {
    in.port = 0;  // node-wide
  }
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

void Simulator::StartFault(const ScenarioEvent& ev, int port, int function,
                           std::vector<Injection>& out) {
  out.push_back(MakeInjection(ev, port, function, "start"));
  const FaultInfo* info = FindFault(ev.fault);
  const auto end = now_ + static_cast<int64_t>(std::llround(ev.duration_s));
  if (StartConfigFault(ev, port >= 0 ? ports_[port].get() : nullptr, function)) {
    active_.push_back({&ev, port, function, now_, end});
    return;
  }
  PortState& ps = *ports_[port];
  if (ev.fault == "counter_reset") {
    ResetCounters(ps);
  } else if (ev.fault == "counter_wrap32") {
    // Start 3 s of traffic below 2^32 so the wrap shows within seconds.
    ps.wrap32 = true;
    ps.wrap_offset_stats.clear();
    for (const char* name : {"rx_packets", "rx_bytes", "tx_packets", "tx_bytes"}) {
      const int i = ps.Idx(name);
      const uint64_t margin = std::max<uint64_t>(
          1000,
          3 * static_cast<uint64_t>(ps.inc[std::string(name).starts_with("rx_p")   ? kSwRxPkt
                                           : std::string(name).starts_with("rx_b") ? kSwRxByte
                                           : std::string(name).starts_with("tx_p") ? kSwTxPkt
                                                                                   : kSwTxByte]));
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
  } else if (!StartLogFault(ev, ps)) {
    StartShapeFault(ev, ps);
  }
  if (!info->instant) active_.push_back({&ev, port, -1, now_, end});
}

void Simulator::EndFault(size_t i, std::vector<Injection>& out) {
  const ActiveFault af = active_[i];
  active_.erase(active_.begin() + static_cast<long>(i));
  const std::string& fault = af.event->fault;
  out.push_back(MakeInjection(*af.event, af.port, af.function, "end"));
  if (EndConfigFault(*af.event, af.port >= 0 ? ports_[af.port].get() : nullptr, af.function)) {
    return;
  }
  PortState& ps = *ports_[af.port];
  if (fault == "counter_wrap32") {
    ps.wrap32 = false;
  } else if (fault == "hot_unplug") {
    Replug(ps);
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
  } else if (!EndLogFault(af, ps)) {
    EndShapeFault(*af.event, ps);
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
    // Simulated time starts at 0 and the first tick is 1: a fault `at: 0s` starts with it, so a
    // node can be faulty from the first sample (a port stuck since boot).
    const int64_t at = std::llround(ev.at_s);
    if (at == local || (at == 0 && now_ == 1)) {
      StartFault(ev, event_port_[e], event_function_[e], out);
    }
  }
  if (!options_.loop && now_ >= duration) {
    while (!active_.empty()) EndFault(0, out);
  }
  for (auto& ps : ports_) StepPort(*ps);
  StepPcie();
  StepKmsg();
}

Result<std::vector<Injection>> Simulator::AdvanceTo(double sim_seconds) {
  const int64_t target = static_cast<int64_t>(std::floor(sim_seconds));
  if (target < now_) {
    return Error(StatusCode::kInvalidArgument, "AdvanceTo(" + std::to_string(target) +
                                                   "): simulated time is already " +
                                                   std::to_string(now_));
  }
  std::vector<Injection> out;
  // Past the scenario's end (no loop) the node runs on with healthy traffic: every fault ended
  // at the end, and AdvanceTo(t) still reaches t (finished() tells the CLI when to stop).
  while (now_ < target) {
    Tick(out);
    // A long step through a flood: append what is queued at a tick's end (records of later
    // ticks are later) rather than hold it all.
    if (kmsg_.pending_bytes() > (size_t{8} << 20)) {
      if (Status s = FlushKmsg(); !s.ok()) return Error(s);
    }
  }
  for (auto& ps : ports_) {
    if (Status s = WritePort(*ps); !s.ok()) return Error(s);
  }
  if (node_config_dirty_) {
    if (Status s = WriteNodeConfig(); !s.ok()) return Error(s);
  }
  // After the files: the kernel changes the state, then prints the line (mlx5e_update_carrier).
  if (Status s = FlushKmsg(); !s.ok()) return Error(s);
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
