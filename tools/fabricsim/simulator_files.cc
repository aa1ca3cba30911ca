// Simulator, the replay root's files (simulator_port.h): the sysfs tree of the node's PCI
// functions, RDMA devices, netdevs and hwmon sensors, rewritten in place each second, and the
// ethtool replay directory (`ethtool -S` text and module EEPROM images). What shows how a link
// trained (rate, state, speed, ethtool link, fw_ver) is written by simulator_link.cc.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "tools/fabricsim/module.h"
#include "tools/fabricsim/simulator.h"
#include "tools/fabricsim/simulator_port.h"

namespace fabricwatch::sim {
namespace {

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

}  // namespace

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
  FW_TRY(w.Write(dir + "/max_link_speed", PcieSpeed(f.link_speed_gts) + "\n"));
  FW_TRY(w.Write(dir + "/max_link_width", std::to_string(f.link_width) + "\n"));
  FW_TRY(WritePciLink(f));
  FW_TRY(WritePciAer(f));
  FW_TRY(WritePciConfig(f));
  return Status::Ok();
}

Status Simulator::WritePciLink(const PciFunction& f) {
  // What the link trained at: the maximum unless pcie_downtrain lowered it (the same values as
  // the config space's Link Status).
  const PciConfigSpec& s = pci_now_[static_cast<size_t>(&f - node_.functions.data())];
  const std::string dir = "sys/devices/" + f.path;
  const double gts = s.link_gts_now > 0 ? s.link_gts_now : f.link_speed_gts;
  const int width = s.link_width_now > 0 ? s.link_width_now : f.link_width;
  FW_TRY(writer_.Write(dir + "/current_link_speed", PcieSpeed(gts) + "\n"));
  FW_TRY(writer_.Write(dir + "/current_link_width", std::to_string(width) + "\n"));
  return Status::Ok();
}

Status Simulator::WritePciAer(const PciFunction& f) {
  if (f.pci_class == 0x060400) return Status::Ok();  // bridges: no aer_dev_* files here
  // drivers/pci/pcie/aer.c aer_stats_dev_attr: one line per error type, then the total.
  // aer_burst counts its correctable errors as RxErr (a marginal channel) and its nonfatal
  // ones as CmpltTO.
  const auto& [cor, nonfatal] = pci_aer_[static_cast<size_t>(&f - node_.functions.data())];
  const std::string c = std::to_string(cor), n = std::to_string(nonfatal);
  const std::string dir = "sys/devices/" + f.path;
  FW_TRY(writer_.Write(dir + "/aer_dev_correctable",
                       "RxErr " + c +
                           "\nBadTLP 0\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\n"
                           "CorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR " +
                           c + "\n"));
  FW_TRY(writer_.Write(dir + "/aer_dev_nonfatal",
                       "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO " + n +
                           "\nCmpltAbrt 0\nUnxCmplt 0\nRxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\n"
                           "ACSViol 0\nTOTAL_ERR_NONFATAL " +
                           n + "\n"));
  FW_TRY(writer_.Write(dir + "/aer_dev_fatal",
                       "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\n"
                       "UnxCmplt 0\nRxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\n"
                       "TOTAL_ERR_FATAL 0\n"));
  return Status::Ok();
}

Status Simulator::WriteGlobal() {
  TreeWriter& w = writer_;
  for (const PciFunction& f : node_.functions) {
    const std::string dir = "sys/devices/" + f.path;
    FW_TRY(WritePciAttributes(f));
    if (!f.driver.empty()) {
      FW_TRY(w.MakeDirs("sys/bus/pci/drivers/" + f.driver));
      FW_TRY(w.Symlink(dir + "/driver", UpTo("devices/" + f.path) + "bus/pci/drivers/" + f.driver));
    }
    FW_TRY(w.Symlink("sys/bus/pci/devices/" + f.bdf, "../../../devices/" + f.path));
  }
  // The loaded modules (GPUDirect RDMA: nvidia_peermem) and every function's config space.
  FW_TRY(WriteNodeConfig());
  FW_TRY(w.MakeDirs("sys/class/net"));
  FW_TRY(w.MakeDirs("sys/class/infiniband"));
  FW_TRY(w.MakeDirs("sys/class/hwmon"));
  FW_TRY(w.MakeDirs("ethtool"));
  FW_TRY(w.MakeDirs("proc"));
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
  FW_TRY(w.Write(dev + "/node_guid", p.node_guid + "\n"));
  FW_TRY(w.Write(dev + "/sys_image_guid", p.node_guid + "\n"));
  FW_TRY(w.Write(dev + "/hca_type", p.part + "\n"));
  FW_TRY(w.Write(dev + "/hw_rev", "0\n"));
  FW_TRY(w.Write(dev + "/board_id", p.board_id + "\n"));
  FW_TRY(w.Write(dev + "/node_desc", node_.spec.hostname + " " + p.rdma_device + "\n"));
  FW_TRY(w.Symlink(dev + "/device", "../../../" + f.bdf));
  FW_TRY(w.Symlink("sys/class/infiniband/" + p.rdma_device, "../../" + ps.dev_dir));
  // The verbs node of the device (drivers/infiniband/core/uverbs_main.c: uverbsN, its ibdev),
  // which the jobs collector maps a process's /dev/infiniband/uverbsN to.
  const std::string uverbs = "uverbs" + std::to_string(UverbsIndex(p.rdma_device));
  const std::string uverbs_dir = "devices/" + f.path + "/infiniband_verbs/" + uverbs;
  FW_TRY(w.Write("sys/" + uverbs_dir + "/ibdev", p.rdma_device + "\n"));
  FW_TRY(w.Write("sys/" + uverbs_dir + "/abi_version", "1\n"));
  FW_TRY(w.Symlink("sys/class/infiniband_verbs/" + uverbs, "../../" + uverbs_dir));
  const std::string port = dev + "/ports/" + std::to_string(p.port_num);
  const bool ethernet = p.link_layer == LinkLayer::kEthernet;
  FW_TRY(w.Write(port + "/link_layer", std::string(LinkLayerName(p.link_layer)) + "\n"));
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
  FW_TRY(w.Write(net + "/address",
                 (ethernet ? p.mac
                           : "00:00:10:87:fe:80:00:00:00:00:00:00:" + p.mac.substr(0, 9) +
                                 "03:00:" + p.mac.substr(9)) +
                     "\n"));
  FW_TRY(w.Write(net + "/addr_assign_type", "0\n"));
  FW_TRY(w.Write(net + "/ifindex", std::to_string(p.ifindex + 100 * ps.generation) + "\n"));
  FW_TRY(w.Write(net + "/type", ethernet ? "1\n" : "32\n"));
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
  FW_TRY(
      w.Write("sys/" + hw_rel + "/temp2_label", "Module" + std::to_string(p.module_number) + "\n"));
  return Status::Ok();
}

int Simulator::UverbsIndex(const std::string& rdma_device) const {
  // One node per RDMA device, numbered in the order the devices first appear.
  std::vector<std::string> seen;
  for (const auto& port : ports_) {
    const std::string& device = port->port->rdma_device;
    if (std::find(seen.begin(), seen.end(), device) == seen.end()) seen.push_back(device);
    if (device == rdma_device) break;
  }
  return static_cast<int>(seen.size()) - 1;
}

Status Simulator::Unplug(PortState& ps) {
  const Port& p = *ps.port;
  FW_TRY(writer_.Remove("sys/class/net/" + p.netdev));
  FW_TRY(writer_.Remove("sys/class/infiniband/" + p.rdma_device));
  FW_TRY(writer_.Remove("sys/class/infiniband_verbs/uverbs" +
                        std::to_string(UverbsIndex(p.rdma_device))));
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
  if (!on_disk) {
    FW_TRY(WriteStatic(ps));
    ps.config_dirty = true;  // a new tree (first write, or back after an unplug)
  }
  if (ps.config_dirty) {
    FW_TRY(WritePortConfig(ps));
    ps.config_dirty = false;
  }
  FW_TRY(w.Write("sys/" + ps.net_dir + "/ifindex",
                 std::to_string(p.ifindex + 100 * ps.generation) + "\n"));
  FW_TRY(WriteLinkFiles(ps));
  const std::string port = "sys/" + ps.dev_dir + "/ports/" + std::to_string(p.port_num);
  const bool ethernet = p.link_layer == LinkLayer::kEthernet;
  for (int c = 0; c < kPmaCount; ++c) {
    FW_TRY(w.WriteU64(port + "/counters/" + PmaName(c), PmaPrinted(c, ps.pma[c])));
  }
  for (int c = 0; c < kHwCount; ++c) {
    FW_TRY(w.WriteU64(port + "/hw_counters/" + kHwCounters[c], ps.hw[c]));
  }
  const std::string net = "sys/" + ps.net_dir;
  FW_TRY(w.Write(net + "/carrier", ps.Carrier() ? "1\n" : "0\n"));
  FW_TRY(w.Write(net + "/operstate", ps.Carrier() ? "up\n" : "down\n"));
  FW_TRY(w.WriteU64(net + "/carrier_changes", ps.carrier_changes));
  FW_TRY(w.WriteU64(net + "/carrier_up_count", ps.carrier_up));
  FW_TRY(w.WriteU64(net + "/carrier_down_count", ps.carrier_down));
  for (int s = 0; s < kNetStatCount; ++s) {
    FW_TRY(w.WriteU64(net + "/statistics/" + NetStatName(s), PrintedNet(ps, s)));
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

Status Simulator::WritePeers() {
  TreeWriter& w = writer_;
  FW_TRY(w.MakeDirs("smp"));
  FW_TRY(w.MakeDirs("lldp"));
  for (const Port& p : node_.ports) {
    const LeafPort leaf = Leaf(p);
    if (p.link_layer == LinkLayer::kInfiniBand) {
      const std::string dir = "smp/" + p.rdma_device + "/" + std::to_string(p.port_num);
      FW_TRY(w.Write(dir + "/nodeinfo", SmpNodeInfoText(p, leaf)));
      FW_TRY(w.Write(dir + "/nodedesc", SmpNodeDescText(p, leaf)));
    } else {
      FW_TRY(w.Write("lldp/" + p.netdev, LldpKeyValueText(node_, p, leaf)));
    }
  }
  return Status::Ok();
}

Status Simulator::WriteInitial() {
  FW_TRY(WriteGlobal());
  FW_TRY(WritePeers());
  for (auto& ps : ports_) FW_TRY(WritePort(*ps));
  return FlushKmsg();  // creates the kernel log (empty at t = 0)
}

}  // namespace fabricwatch::sim
