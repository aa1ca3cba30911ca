// Simulator, configuration (simulator_port.h; issue 21, configuration drift): the settings that
// make the node a consistent lossless RoCE node, and the faults that drift them. Healthy:
//
//   ethtool/<netdev>/qos       `mlnx_qos -i <netdev>` (mlnx-tools pretty_print): DCBX OS
//                              controlled, trust dscp, the NVIDIA default DSCP map (DSCP/8, so
//                              DSCP 26 -> priority 3), PFC on priority 3 only, priority 3 in
//                              its own ETS class, CNPs (priority 6) strict
//   ethtool/<netdev>/pause     `ethtool -a <netdev>` (netlink/pause.c): autoneg, RX and TX off
//   ethtool/<netdev>/tunables  `ethtool --get-tunable <netdev> pfc-prevention-tout`
//                              (ethtool.c print_tunable, a u16): 100 ms, the mlx5 default
//   net/<netdev>/ecn/roce_{np,rp}/enable/<0..7>   MLNX_OFED's ECN switches: 1
//   net/<netdev>/mtu           9000 on RoCE netdevs (IPoIB keeps 4092)
//   module/nvidia_peermem      present on a node with NVIDIA GPUs (GPUDirect RDMA)
//   <function>/config          4096 bytes with a real capability list (pci_config_image.h):
//                              MPS 256 everywhere (supported 512 on bridges and NICs, 256 on
//                              GPUs), MRRS 512, ACS on root and switch downstream ports with
//                              only Source Validation on (P2P stays inside the switch)
//
// Only Ethernet ports have the RoCE settings. The faults sit for their duration and the healthy
// value is written back at their end.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tools/fabricsim/simulator.h"
#include "tools/fabricsim/simulator_port.h"

namespace fabricwatch::sim {
namespace {

constexpr uint16_t kAcsCapability =
    kAcsSourceValidation | kAcsRequestRedirect | kAcsCompletionRedirect | kAcsUpstreamForwarding;
constexpr uint16_t kRedirect = kAcsRequestRedirect | kAcsCompletionRedirect;

// Faults that change one PCI function: a GPU (gpu:) or the NIC of a port (device:/netdev:).
bool IsFunctionFault(std::string_view fault) {
  return fault == "mps_mismatch" || fault == "pcie_downtrain" || fault == "aer_burst";
}

bool IsPortFault(std::string_view fault) {
  return fault == "pfc_off" || fault == "ecn_off" || fault == "trust_pcp" || fault == "mtu_1500" ||
         fault == "global_pause_on" || fault == "storm_prevention_off";
}

std::string ParentPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

int BusOf(const std::string& bdf) { return std::stoi(bdf.substr(5, 2), nullptr, 16); }

}  // namespace

void Simulator::InitConfig() {
  const std::vector<PciFunction>& fns = node_.functions;
  auto index_of_path = [&](const std::string& path) {
    for (size_t i = 0; i < fns.size(); ++i) {
      if (fns[i].path == path) return static_cast<int>(i);
    }
    return -1;
  };
  pci_healthy_.assign(fns.size(), PciConfigSpec{});
  for (size_t i = 0; i < fns.size(); ++i) {
    const PciFunction& f = fns[i];
    PciConfigSpec& s = pci_healthy_[i];
    s.vendor = f.vendor;
    s.device = f.device;
    s.class_code = f.pci_class;
    s.link_gts = f.link_speed_gts;
    s.link_width = f.link_width;
    s.mps = SizeCode(256);
    s.mrrs = SizeCode(512);
    s.mps_supported = SizeCode(f.is_gpu ? 256 : 512);
    if (f.pci_class == 0x060400) {
      // Root port (a host bridge above it), switch upstream port (below a root or downstream
      // port), or switch downstream port (below an upstream port).
      const int parent = index_of_path(ParentPath(f.path));
      if (parent < 0) {
        s.port_type = kPcieRootPort;
      } else {
        s.port_type = pci_healthy_[parent].port_type == kPcieUpstreamPort ? kPcieDownstreamPort
                                                                          : kPcieUpstreamPort;
      }
      if (s.port_type != kPcieUpstreamPort) {
        s.acs = PciConfigSpec::Acs{kAcsCapability, kAcsSourceValidation};
        s.port_number = static_cast<uint8_t>(std::stoi(f.bdf.substr(8, 2), nullptr, 16));
      }
      // The buses below: from the first child to the last descendant.
      int lo = 0xff, hi = 0;
      for (const PciFunction& c : fns) {
        if (c.path.starts_with(f.path + "/")) {
          lo = std::min(lo, BusOf(c.bdf));
          hi = std::max(hi, BusOf(c.bdf));
        }
      }
      s.secondary_bus = static_cast<uint8_t>(lo <= hi ? lo : 0);
      s.subordinate_bus = static_cast<uint8_t>(hi);
    } else {
      // A function of a multi-function device (a dual-port card) says so in function 0.
      for (const PciFunction& c : fns) {
        if (&c != &f && c.bdf.substr(0, 10) == f.bdf.substr(0, 10)) s.multi_function = true;
      }
    }
  }
  pci_now_ = pci_healthy_;
  pci_aer_.assign(fns.size(), {0, 0});
  peermem_loaded_ = !node_.gpus.empty();
}

Status Simulator::CheckConfigFault(const ScenarioEvent& ev, const Port& p) {
  if (IsPortFault(ev.fault) && p.link_layer != LinkLayer::kEthernet) {
    return Status(StatusCode::kInvalidArgument, ev.fault + " needs an Ethernet (RoCE) port; " +
                                                    p.rdma_device + " (" + p.netdev +
                                                    ") is InfiniBand");
  }
  return Status::Ok();
}

Result<int> Simulator::CheckDowntrain(const ScenarioEvent& ev, int function) const {
  if (ev.fault != "pcie_downtrain") return function;
  const PciFunction& f = node_.functions[function];
  const std::string where = scenario_.source + ":" + std::to_string(ev.line) + ": ";
  const double width = EventParam(ev, "link_width", std::max(1, f.link_width / 2));
  const double gts = EventParam(ev, "link_gts", f.link_speed_gts);
  if (width > f.link_width || gts > f.link_speed_gts) {
    return Error(StatusCode::kInvalidArgument,
                 where + "pcie_downtrain: " + f.bdf + " trains at most x" +
                     std::to_string(f.link_width) + " " + std::to_string(f.link_speed_gts) +
                     " GT/s; link_width/link_gts must not exceed that");
  }
  if (width == f.link_width && gts == f.link_speed_gts) {
    return Error(StatusCode::kInvalidArgument,
                 where + "pcie_downtrain: link_width and link_gts leave " + f.bdf +
                     " at its maximum (nothing to downtrain)");
  }
  return function;
}

Result<int> Simulator::ResolveFunction(const ScenarioEvent& ev, const Port* port) const {
  const std::string where = scenario_.source + ":" + std::to_string(ev.line) + ": ";
  if (ev.fault != "acs_redirect" && !IsFunctionFault(ev.fault)) return -1;
  if (port != nullptr) return CheckDowntrain(ev, port->pci);  // the port's NIC function
  int gpu = -1;
  std::string known;
  for (size_t i = 0; i < node_.gpus.size(); ++i) {
    const std::string& bdf = node_.functions[node_.gpus[i]].bdf;
    known += (known.empty() ? "" : " ") + std::to_string(i) + ":" + bdf;
    if (ev.gpu == bdf || ev.gpu == std::to_string(i)) gpu = node_.gpus[i];
  }
  if (gpu < 0) {
    return Error(StatusCode::kInvalidArgument,
                 where + "gpu \"" + ev.gpu + "\" does not exist on preset " + node_.spec.preset +
                     " (GPUs: " + (known.empty() ? "none" : known) + ")");
  }
  if (IsFunctionFault(ev.fault)) return CheckDowntrain(ev, gpu);
  const std::string parent = ParentPath(node_.functions[gpu].path);
  for (size_t i = 0; i < node_.functions.size(); ++i) {
    if (node_.functions[i].path == parent && pci_healthy_[i].port_type == kPcieDownstreamPort) {
      return static_cast<int>(i);
    }
  }
  return Error(StatusCode::kInvalidArgument,
               where + "acs_redirect: GPU " + node_.functions[gpu].bdf +
                   " has no PCIe switch above it on preset " + node_.spec.preset +
                   " (it sits on a root port; the hgx-* presets have switches)");
}

bool Simulator::StartConfigFault(const ScenarioEvent& ev, PortState* ps, int function) {
  if (ev.fault == "peermem_unloaded") {
    peermem_loaded_ = false;
    node_config_dirty_ = true;
    return true;
  }
  if (ev.fault == "acs_redirect" || ev.fault == "mps_mismatch") {
    PciConfigSpec& s = pci_now_[function];
    if (ev.fault == "acs_redirect" && s.acs) s.acs->control |= kRedirect;
    if (ev.fault == "mps_mismatch") {
      s.mps = SizeCode(static_cast<int>(EventParam(ev, "mps", 128)));
      if (ev.params.contains("mrrs")) s.mrrs = SizeCode(static_cast<int>(ev.params.at("mrrs")));
    }
    node_config_dirty_ = true;
    return true;
  }
  if (ev.fault == "pcie_downtrain") {
    // Link Status and current_link_*: x16 -> x8 by default; the maximum stays.
    PciConfigSpec& s = pci_now_[function];
    s.link_width_now =
        static_cast<int>(EventParam(ev, "link_width", std::max(1, s.link_width / 2)));
    s.link_gts_now = EventParam(ev, "link_gts", s.link_gts);
    node_config_dirty_ = true;
    return true;
  }
  if (ev.fault == "aer_burst") {
    aer_base_[&ev] = pci_aer_[function];  // StepPcie counts its errors from here
    return true;
  }
  if (!IsPortFault(ev.fault) || ps == nullptr) return false;
  if (ev.fault == "pfc_off") ps->pfc_enabled = 0;
  if (ev.fault == "ecn_off") ps->ecn_enabled = false;
  if (ev.fault == "trust_pcp") ps->trust_dscp = false;
  if (ev.fault == "mtu_1500") ps->mtu = 1500;
  if (ev.fault == "global_pause_on") ps->global_pause = true;
  if (ev.fault == "storm_prevention_off") ps->storm_timeout_ms = 0;
  ps->config_dirty = true;
  return true;
}

bool Simulator::EndConfigFault(const ScenarioEvent& ev, PortState* ps, int function) {
  if (ev.fault == "peermem_unloaded") {
    peermem_loaded_ = !node_.gpus.empty();
    node_config_dirty_ = true;
    return true;
  }
  if (ev.fault == "acs_redirect" || ev.fault == "mps_mismatch") {
    pci_now_[function] = pci_healthy_[function];
    node_config_dirty_ = true;
    return true;
  }
  if (ev.fault == "pcie_downtrain") {
    pci_now_[function].link_width_now = 0;
    pci_now_[function].link_gts_now = 0;
    node_config_dirty_ = true;
    return true;
  }
  // aer_burst: the errors stay counted (AER statistics only grow); they stop growing.
  if (ev.fault == "aer_burst") return true;
  if (!IsPortFault(ev.fault) || ps == nullptr) return false;
  const PortState healthy;
  if (ev.fault == "pfc_off") ps->pfc_enabled = healthy.pfc_enabled;
  if (ev.fault == "ecn_off") ps->ecn_enabled = true;
  if (ev.fault == "trust_pcp") ps->trust_dscp = true;
  if (ev.fault == "mtu_1500") ps->mtu = ps->port->link_layer == LinkLayer::kEthernet ? 9000 : 4092;
  if (ev.fault == "global_pause_on") ps->global_pause = false;
  if (ev.fault == "storm_prevention_off") ps->storm_timeout_ms = healthy.storm_timeout_ms;
  ps->config_dirty = true;
  return true;
}

std::string Simulator::QosText(const PortState& ps) const {
  std::string t = "DCBX mode: OS controlled\n";
  t += ps.trust_dscp ? "Priority trust state: dscp\n" : "Priority trust state: pcp\n";
  char buf[64];
  if (ps.trust_dscp) {
    // mlnx_qos prints each priority's DSCPs high to low, 8 a row.
    t += "dscp2prio mapping:\n";
    for (int prio = 0; prio < 8; ++prio) {
      t += "\tprio:" + std::to_string(prio) + " dscp:";
      for (int d = 8 * prio + 7; d >= 8 * prio; --d) {
        std::snprintf(buf, sizeof(buf), "%02d,", d);
        t += buf;
      }
      t += "\n";
    }
    t += "default priority:\n";
  }
  t += "Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,total_size=1048576\n";
  t += "Cable len: 7\n";
  t += "PFC configuration:\n";
  t += "\tpriority    0   1   2   3   4   5   6   7\n";
  t += "\tenabled     ";
  for (int prio = 0; prio < 8; ++prio) t += ((ps.pfc_enabled >> prio) & 1) ? "1   " : "0   ";
  t += "\n\tbuffer      ";
  for (int prio = 0; prio < 8; ++prio) t += prio == kRocePriority ? "1   " : "0   ";
  t += "\n";
  // Lossy traffic shares TC 0, RoCE has TC 3, CNPs (priority 6) are strict in TC 6.
  t += "tc: 0 ratelimit: unlimited, tsa: ets, bw: 50%\n";
  for (int prio : {0, 1, 2, 4, 5, 7}) t += "\t priority:  " + std::to_string(prio) + "\n";
  t += "tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%\n\t priority:  3\n";
  t += "tc: 6 ratelimit: unlimited, tsa: strict\n\t priority:  6\n";
  return t;
}

void Simulator::StepPcie() {
  // aer_burst: `count` correctable (and `nonfatal` nonfatal) errors spread evenly over the
  // duration, the last at its last second.
  for (const ActiveFault& af : active_) {
    if (af.event->fault != "aer_burst") continue;
    const double length = std::max<double>(1, static_cast<double>(af.end - af.start));
    const double done = std::min(1.0, static_cast<double>(now_ - af.start + 1) / length);
    auto& [cor, nonfatal] = pci_aer_[static_cast<size_t>(af.function)];
    auto& [base_cor, base_nonfatal] = aer_base_[af.event];
    const uint64_t want_cor =
        base_cor + static_cast<uint64_t>(std::floor(EventParam(*af.event, "count", 50) * done));
    const uint64_t want_nonfatal =
        base_nonfatal +
        static_cast<uint64_t>(std::floor(EventParam(*af.event, "nonfatal", 0) * done));
    if (want_cor > cor || want_nonfatal > nonfatal) node_config_dirty_ = true;
    LogAer(af, want_cor > cor, want_nonfatal > nonfatal);  // the kernel log's share (§9.6)
    cor = std::max(cor, want_cor);
    nonfatal = std::max(nonfatal, want_nonfatal);
  }
}

Status Simulator::WritePortConfig(const PortState& ps) {
  TreeWriter& w = writer_;
  const Port& p = *ps.port;
  const std::string net = "sys/" + ps.net_dir;
  FW_TRY(w.Write(net + "/mtu", std::to_string(ps.mtu) + "\n"));
  if (p.link_layer != LinkLayer::kEthernet) return Status::Ok();
  const std::string eth = "ethtool/" + p.netdev;
  FW_TRY(w.Write(eth + "/qos", QosText(ps)));
  const char* pause = ps.global_pause ? "on" : "off";
  FW_TRY(w.Write(eth + "/pause", "Pause parameters for " + p.netdev +
                                     ":\nAutonegotiate:\toff\nRX:\t\t" + pause + "\nTX:\t\t" +
                                     pause + "\n\n"));
  FW_TRY(w.Write(eth + "/tunables",
                 "pfc-prevention-tout: " + std::to_string(ps.storm_timeout_ms) + "\n"));
  for (const char* role : {"roce_np", "roce_rp"}) {
    for (int prio = 0; prio < 8; ++prio) {
      const bool on = prio != kRocePriority || ps.ecn_enabled;
      FW_TRY(w.Write(net + "/ecn/" + role + "/enable/" + std::to_string(prio), on ? "1\n" : "0\n"));
    }
  }
  return Status::Ok();
}

Status Simulator::WritePciConfig(const PciFunction& f) {
  const size_t i = static_cast<size_t>(&f - node_.functions.data());
  return writer_.WriteBytes("sys/devices/" + f.path + "/config", RenderPciConfig(pci_now_[i]));
}

Status Simulator::WriteNodeConfig() {
  TreeWriter& w = writer_;
  // module/ holds the loaded modules; mlx5_core always, nvidia_peermem on a GPU node.
  FW_TRY(w.Write("sys/module/mlx5_core/refcnt", "1\n"));
  if (peermem_loaded_) {
    FW_TRY(w.Write("sys/module/nvidia_peermem/refcnt", "0\n"));
  } else if (std::filesystem::exists(w.Path("sys/module/nvidia_peermem"))) {
    FW_TRY(w.Remove("sys/module/nvidia_peermem"));
  }
  for (const PciFunction& f : node_.functions) {
    // A function that is away (hot_unplug, hca_missing) gets its config back with its tree.
    if (!std::filesystem::exists(w.Path("sys/devices/" + f.path))) continue;
    FW_TRY(WritePciConfig(f));
    // pcie_downtrain and aer_burst: the sysfs attributes beside the config space (unchanged
    // files are not rewritten).
    FW_TRY(WritePciLink(f));
    FW_TRY(WritePciAer(f));
  }
  node_config_dirty_ = false;
  return Status::Ok();
}

}  // namespace fabricwatch::sim
