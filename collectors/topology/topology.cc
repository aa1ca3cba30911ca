#include "collectors/topology/topology.h"

#include <array>
#include <cerrno>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collectors/core/transition_log.h"
#include "base/value_parse.h"
#include "collectors/sys/sysfs.h"
#include "collectors/topology/pci_config.h"
#include "collectors/topology/topology_metrics.h"
#include "collectors/topology/topology_parse.h"

namespace fabricwatch::topology {
namespace {

constexpr MetricDesc kPairInfo{
    "fabric_topology_gpu_nic_link_info",
    "PCIe path type between a GPU and a NIC, as nvidia-smi topo -m names it: PIX (at most one "
    "bridge on each side below their common switch), PXB (several bridges, no host bridge), "
    "PHB (through their shared host bridge), NODE (different host bridges of one NUMA node), "
    "SYS (across NUMA nodes). Derived from sysfs alone. Constant 1.",
    MetricKind::kInfo,
    {"gpu", "nic", "rdma_device", "level"},
    {},
    {ExportRule::kOff,
     "the same GPU x NIC matrix as fabric_topology_gpu_nic_distance, as a label"}};
constexpr MetricDesc kRemote{
    "fabric_topology_gpu_nic_remote",
    "1 if the GPU's nearest NIC is NODE or SYS (no NIC shares its host bridge: GPUDirect RDMA "
    "traffic crosses the CPU interconnect), else 0. Absent when the host has no NIC.",
    MetricKind::kGauge,
    {"gpu"}};
constexpr MetricDesc kSameIommuGroup{
    "fabric_topology_gpu_nic_same_iommu_group",
    "For a GPU-NIC pair below a common PCIe switch (PIX/PXB) with an active IOMMU: 1 if both "
    "are in one IOMMU group (peer-to-peer can route inside the switch), 0 if the groups "
    "differ (ACS isolates them and P2P is redirected through the root complex).",
    MetricKind::kGauge, kPairLabels};
constexpr MetricDesc kDowntrained{
    "fabric_pcie_link_downtrained",
    "1 if the current link speed or width is below the function's maximum, else 0. GPUs "
    "downshift speed at idle, so alert on width, or on speed only under load. A bridge port "
    "whose maximum exceeds what its partner supports (a Gen4 card in a Gen5 slot) reads 1.",
    MetricKind::kGauge,
    kLinkLabels,
    {},
    {ExportRule::kNonZero, "a flag per PCI function, 0 while the link runs at its maximum"}};
constexpr MetricDesc kIommuGroup{
    "fabric_pcie_iommu_group_info",
    "IOMMU group of the function (iommu_group link) and the group's domain type "
    "(identity = passthrough, DMA/DMA-FQ = translated). Absent without an IOMMU. Constant 1.",
    MetricKind::kInfo,
    {"device", "role", "iommu_group", "iommu_type"}};

constexpr MetricDesc kAllMetrics[] = {
    kGpuInfo,        kNicInfo,    kPairInfo,   kPairDistance, kNearest,    kRemote,
    kSameIommuGroup, kDeviceInfo, kSpeed,      kMaxSpeed,     kWidth,      kMaxWidth,
    kDowntrained,    kAer,        kIommuGroup, kPeermem,      kMaxPayload, kMaxPayloadSupported,
    kMaxReadRequest, kAcsControl, kAcsCapable};

constexpr std::string_view kRoleGpu = "gpu";
constexpr std::string_view kRoleNic = "nic";
constexpr std::string_view kRoleBridge = "bridge";

// A function that is gone (hot-unplug between the listing and the read) or a file the kernel
// does not create for it: omitted without counting an error.
bool IsAbsent(const Status& status) {
  return status.sys_errno() == ENOENT || status.sys_errno() == ENODEV ||
         status.code() == StatusCode::kNotFound;
}

struct Function {
  std::string bdf;
  std::string dir;  // sysfs-relative directory: devices/pciDDDD:BB/.../<bdf>
  PciPath pci;
  uint32_t vendor = 0;
  uint32_t class_code = 0;
  DeviceKind kind = DeviceKind::kOther;
};

struct Endpoint2 {
  const Function* function = nullptr;
  std::string_view role;
  std::string device_id;
  std::optional<int> numa_node;
  std::string local_cpulist;
  std::string rdma_device;
  std::string netdev;
  std::string iommu_group;
};

std::string Join(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    if (!out.empty()) out += ",";
    out += name;
  }
  return out;
}

class TopologyCollector final : public Collector {
 public:
  explicit TopologyCollector(const CollectorContext& context)
      : sysfs_(context.sysfs), logger_(context.logger), transitions_(context.logger) {}

  Status Collect(MetricSink& sink) override;

 private:
  void Fail(MetricSink& sink, const std::string& key, const Status& status) {
    sink.RecordError(status);
    transitions_.Failed(key, status);
  }
  // A small attribute; nullopt when absent (quietly) or unreadable (counted).
  std::optional<std::string> ReadAttr(const std::string& relative, MetricSink& sink) {
    auto text = sysfs_.ReadString(relative);
    if (!text) {
      if (!IsAbsent(text.error())) Fail(sink, relative, text.error());
      return std::nullopt;
    }
    return *text;
  }
  // class/infiniband or class/net: PCI address -> names whose `device` link points at it.
  std::map<std::string, std::set<std::string>> ClassDevices(const std::string& cls,
                                                            MetricSink& sink);
  std::optional<Function> Resolve(const std::string& bdf, MetricSink& sink);
  Endpoint2 Describe(const Function& function, std::string_view role, MetricSink& sink);
  void EmitFunction(const Endpoint2& e, const std::string& upstream, MetricSink& sink);
  void EmitPciConfig(const Function& f, const LabelPair& d, const LabelPair& r, MetricSink& sink);
  // The parts of one collection, in order.
  void EmitEndpoints(const std::vector<Endpoint2>& gpus, const std::vector<Endpoint2>& nics,
                     MetricSink& sink);
  void EmitPairs(const std::vector<Endpoint2>& gpus, const std::vector<Endpoint2>& nics,
                 MetricSink& sink);
  void EmitLinkHealth(const std::vector<Function>& functions, const std::vector<Endpoint2>& gpus,
                      const std::vector<Endpoint2>& nics, MetricSink& sink);
  void EmitPeermem(const std::vector<Endpoint2>& gpus, MetricSink& sink);

  const sys::SysFs& sysfs_;
  std::shared_ptr<spdlog::logger> logger_;
  TransitionLog transitions_;
  std::array<uint8_t, 4096> config_{};  // one function's config space (PCI_CFG_SPACE_EXP_SIZE)
};

std::map<std::string, std::set<std::string>> TopologyCollector::ClassDevices(const std::string& cls,
                                                                             MetricSink& sink) {
  std::map<std::string, std::set<std::string>> out;
  auto names = sysfs_.ListDir(cls);
  if (!names) {
    if (!IsAbsent(names.error())) Fail(sink, cls, names.error());
    return out;
  }
  for (const std::string& name : *names) {
    auto bdf = sysfs_.ReadLinkBasename(cls + "/" + name + "/device");
    // Virtual netdevs have no device link; a non-PCI parent (scif, rxe) is no PCI function.
    if (!bdf) {
      if (!IsAbsent(bdf.error()) && bdf.error().sys_errno() != EINVAL) {
        Fail(sink, cls + "/" + name + "/device", bdf.error());
      }
      continue;
    }
    if (SplitPciPath("pci0000:00/" + *bdf)) {
      out[*bdf].insert(name);
      continue;
    }
    // The parent is a bus device below a PCI function (virtio-net: .../0000:00:03.0/virtio0):
    // the nearest PCI function above the class entry owns it.
    if (auto link = sysfs_.ReadLink(cls + "/" + name)) {
      if (auto path = NormalizeLinkTarget(cls, *link)) {
        if (auto owner = EnclosingPciFunction(*path)) out[*owner].insert(name);
      }
    }
  }
  return out;
}

std::optional<Function> TopologyCollector::Resolve(const std::string& bdf, MetricSink& sink) {
  const std::string link = "bus/pci/devices/" + bdf;
  auto target = sysfs_.ReadLink(link);
  if (!target) {
    if (IsAbsent(target.error())) {
      logger_->debug("PCI function {} vanished during the walk", bdf);
    } else {
      Fail(sink, link, target.error());
    }
    return std::nullopt;
  }
  Function f;
  f.bdf = bdf;
  auto dir = NormalizeLinkTarget("bus/pci/devices", *target);
  if (dir && dir->starts_with("/")) {
    // An absolute link (a hand-made replay tree): keep it relative to its "devices/" part.
    size_t at = dir->find("/devices/");
    if (at == std::string::npos) {
      dir = Error(StatusCode::kInvalidArgument, "absolute link outside devices/: " + *dir);
    } else {
      dir = dir->substr(at + 1);
    }
  }
  if (!dir) {
    Fail(sink, link, dir.error().WithContext(sysfs_.Path(link)));
    return std::nullopt;
  }
  f.dir = *dir;
  auto pci = SplitPciPath(f.dir);
  if (!pci || pci->chain.back() != bdf) {
    Fail(sink, link,
         Status(StatusCode::kInvalidArgument,
                sysfs_.Path(link) + ": link target is not a PCI device path: " + *target));
    return std::nullopt;
  }
  f.pci = std::move(*pci);
  for (auto [file, out] : {std::pair{"class", &f.class_code}, {"vendor", &f.vendor}}) {
    const std::string relative = f.dir + "/" + file;
    auto text = sysfs_.ReadString(relative);
    if (!text) {
      if (IsAbsent(text.error())) {
        logger_->debug("PCI function {} vanished during the walk", bdf);
      } else {
        Fail(sink, relative, text.error());
      }
      return std::nullopt;
    }
    auto value = ParsePciHex(*text, sysfs_.Path(relative));
    if (!value) {
      Fail(sink, relative, value.error());
      return std::nullopt;
    }
    *out = *value;
  }
  f.kind = ClassifyDevice(f.vendor, f.class_code);
  return f;
}

Endpoint2 TopologyCollector::Describe(const Function& function, std::string_view role,
                                      MetricSink& sink) {
  Endpoint2 e;
  e.function = &function;
  e.role = role;
  const std::string& dir = function.dir;
  if (auto text = ReadAttr(dir + "/device", sink)) {
    if (auto id = ParsePciHex(*text, sysfs_.Path(dir + "/device"))) {
      e.device_id = HexId(*id, 4);
    } else {
      Fail(sink, dir + "/device", id.error());
    }
  }
  if (role == kRoleBridge) return e;
  if (auto text = ReadAttr(dir + "/numa_node", sink)) {
    if (auto node = ParseInt64(*text, sysfs_.Path(dir + "/numa_node"))) {
      if (*node >= 0 && *node <= std::numeric_limits<int>::max()) {
        e.numa_node = static_cast<int>(*node);
      }
    } else {
      Fail(sink, dir + "/numa_node", node.error());
    }
  }
  if (auto text = ReadAttr(dir + "/local_cpulist", sink)) e.local_cpulist = *text;
  return e;
}

void TopologyCollector::EmitFunction(const Endpoint2& e, const std::string& upstream,
                                     MetricSink& sink) {
  const Function& f = *e.function;
  const LabelPair d{"device", f.bdf};
  const LabelPair r{"role", e.role};
  sink.AddInfo(kDeviceInfo, {d,
                             r,
                             {"vendor_id", HexId(f.vendor, 4)},
                             {"device_id", e.device_id},
                             {"pci_class", HexId(f.class_code, 6)},
                             {"upstream", upstream},
                             {"host_bridge", f.pci.host_bridge}});

  auto speed = [&](const char* file) -> std::optional<double> {
    const std::string relative = f.dir + "/" + file;
    auto text = ReadAttr(relative, sink);
    if (!text) return std::nullopt;
    auto value = ParseLinkSpeed(*text, sysfs_.Path(relative));
    if (!value) {
      Fail(sink, relative, value.error());
      return std::nullopt;
    }
    return *value;  // nullopt for "Unknown": no link or a speed the kernel cannot name
  };
  auto width = [&](const char* file) -> std::optional<double> {
    const std::string relative = f.dir + "/" + file;
    auto text = ReadAttr(relative, sink);
    if (!text) return std::nullopt;
    auto value = ParseUint64(*text, sysfs_.Path(relative));
    if (!value || *value > 64) {
      Fail(sink, relative,
           value ? Status(StatusCode::kInvalidArgument,
                          sysfs_.Path(relative) + ": link width out of range: " + *text)
                 : value.error());
      return std::nullopt;
    }
    return static_cast<double>(*value);
  };
  const auto cur_speed = speed("current_link_speed");
  const auto max_speed = speed("max_link_speed");
  const auto cur_width = width("current_link_width");
  const auto max_width = width("max_link_width");
  if (cur_speed) sink.Add(kSpeed, {d, r}, *cur_speed);
  if (max_speed) sink.Add(kMaxSpeed, {d, r}, *max_speed);
  if (cur_width) sink.Add(kWidth, {d, r}, *cur_width);
  if (max_width) sink.Add(kMaxWidth, {d, r}, *max_width);
  const bool speed_known = cur_speed && max_speed;
  const bool width_known = cur_width && max_width;
  if (speed_known || width_known) {
    const bool down =
        (speed_known && *cur_speed < *max_speed) || (width_known && *cur_width < *max_width);
    sink.Add(kDowntrained, {d, r}, down ? 1 : 0);
  }

  for (auto [file, severity] : {std::pair{"aer_dev_correctable", "correctable"},
                                {"aer_dev_nonfatal", "nonfatal"},
                                {"aer_dev_fatal", "fatal"}}) {
    const std::string relative = f.dir + "/" + file;
    auto text = ReadAttr(relative, sink);
    if (!text) continue;
    auto stats = ParseAerStats(*text, sysfs_.Path(relative));
    if (!stats) {
      Fail(sink, relative, stats.error());
      continue;
    }
    sink.Add(kAer, {d, r, {"severity", severity}}, static_cast<double>(stats->total));
  }

  if (!e.iommu_group.empty()) {
    std::string type;
    if (auto text = ReadAttr("kernel/iommu_groups/" + e.iommu_group + "/type", sink)) {
      type = *text;
    }
    sink.AddInfo(kIommuGroup, {d, r, {"iommu_group", e.iommu_group}, {"iommu_type", type}});
  }
  EmitPciConfig(f, d, r, sink);
}

// <function>/config (pci_config.h): MPS, MRRS and ACS. A buffer cut short by privilege leaves
// the families it does not reach absent; a device that reads all ones, a short file or a
// broken capability list is counted, and what was decoded before the break is still exported.
void TopologyCollector::EmitPciConfig(const Function& f, const LabelPair& d, const LabelPair& r,
                                      MetricSink& sink) {
  const std::string relative = f.dir + "/config";
  auto n = sysfs_.ReadBinary(relative, config_);
  if (!n) {
    if (!IsAbsent(n.error())) Fail(sink, relative, n.error());
    return;
  }
  auto config = ParsePciConfig(std::span<const uint8_t>(config_.data(), *n), sysfs_.Path(relative));
  if (!config) {
    Fail(sink, relative, config.error());
    return;
  }
  if (config->problem) Fail(sink, relative, *config->problem);
  if (config->max_payload) sink.Add(kMaxPayload, {d, r}, *config->max_payload);
  if (config->max_payload_supported) {
    sink.Add(kMaxPayloadSupported, {d, r}, *config->max_payload_supported);
  }
  if (config->max_read_request) sink.Add(kMaxReadRequest, {d, r}, *config->max_read_request);
  if (config->acs_control && config->acs_capability) {
    for (const AcsBit& bit : kAcsBits) {
      const LabelPair c{"control", bit.name};
      sink.Add(kAcsControl, {d, r, c}, (*config->acs_control & bit.mask) ? 1 : 0);
      sink.Add(kAcsCapable, {d, r, c}, (*config->acs_capability & bit.mask) ? 1 : 0);
    }
  }
}

Status TopologyCollector::Collect(MetricSink& sink) {
  auto bdfs = sysfs_.ListDir("bus/pci/devices");
  if (!bdfs) {
    if (IsAbsent(bdfs.error())) {
      return Status(StatusCode::kNoData, sysfs_.Path("bus/pci/devices") + " does not exist");
    }
    return bdfs.error();
  }
  std::vector<Function> functions;
  functions.reserve(bdfs->size());
  for (const std::string& bdf : *bdfs) {
    if (!SplitPciPath("pci0000:00/" + bdf)) continue;  // not a PCI address
    if (auto f = Resolve(bdf, sink)) functions.push_back(std::move(*f));
  }
  const auto rdma = ClassDevices("class/infiniband", sink);
  const auto netdevs = ClassDevices("class/net", sink);

  // GPUs and NICs, in PCI address order (the listing is sorted).
  std::vector<Endpoint2> gpus, nics;
  for (const Function& f : functions) {
    const bool rdma_capable = rdma.contains(f.bdf);
    if (f.kind == DeviceKind::kGpu) {
      gpus.push_back(Describe(f, kRoleGpu, sink));
    } else if (f.kind == DeviceKind::kNic || rdma_capable) {
      // An SR-IOV VF sits where its PF sits; listing every VF multiplies the pairs.
      if (auto physfn = sysfs_.ReadLink(f.dir + "/physfn")) continue;
      Endpoint2 e = Describe(f, kRoleNic, sink);
      if (rdma_capable) e.rdma_device = Join(rdma.at(f.bdf));
      if (auto it = netdevs.find(f.bdf); it != netdevs.end()) e.netdev = Join(it->second);
      nics.push_back(std::move(e));
    }
  }
  if (gpus.empty() && nics.empty()) {
    transitions_.EndCollection();
    if (sink.error_count() > 0) return Status::Ok();
    return Status(StatusCode::kNoData,
                  "no GPU or NIC among the PCI functions of " + sysfs_.Path("bus/pci/devices"));
  }
  for (std::vector<Endpoint2>* list : {&gpus, &nics}) {
    for (Endpoint2& e : *list) {
      if (auto group = sysfs_.ReadLinkBasename(e.function->dir + "/iommu_group")) {
        e.iommu_group = *group;
      }
    }
  }

  EmitEndpoints(gpus, nics, sink);
  EmitPairs(gpus, nics, sink);
  EmitLinkHealth(functions, gpus, nics, sink);
  EmitPeermem(gpus, sink);
  transitions_.EndCollection();
  return Status::Ok();
}

void TopologyCollector::EmitEndpoints(const std::vector<Endpoint2>& gpus,
                                      const std::vector<Endpoint2>& nics, MetricSink& sink) {
  auto numa_label = [](const Endpoint2& e) {
    return e.numa_node ? std::to_string(*e.numa_node) : std::string();
  };
  for (const Endpoint2& g : gpus) {
    sink.AddInfo(kGpuInfo, {{"gpu", g.function->bdf},
                            {"vendor_id", HexId(g.function->vendor, 4)},
                            {"device_id", g.device_id},
                            {"host_bridge", g.function->pci.host_bridge},
                            {"numa_node", numa_label(g)},
                            {"local_cpulist", g.local_cpulist}});
  }
  for (const Endpoint2& n : nics) {
    sink.AddInfo(kNicInfo, {{"nic", n.function->bdf},
                            {"vendor_id", HexId(n.function->vendor, 4)},
                            {"device_id", n.device_id},
                            {"rdma_device", n.rdma_device},
                            {"netdev", n.netdev},
                            {"host_bridge", n.function->pci.host_bridge},
                            {"numa_node", numa_label(n)},
                            {"local_cpulist", n.local_cpulist}});
  }
}

void TopologyCollector::EmitPairs(const std::vector<Endpoint2>& gpus,
                                  const std::vector<Endpoint2>& nics, MetricSink& sink) {
  // Pairs, nearest NIC and the remote flag.
  bool any_rdma = false;
  for (const Endpoint2& n : nics) any_rdma |= !n.rdma_device.empty();
  for (const Endpoint2& g : gpus) {
    const Endpoint a{g.function->pci, g.numa_node};
    std::vector<std::pair<const Endpoint2*, Level>> levels;
    for (const Endpoint2& n : nics) {
      const Level level = Classify(a, Endpoint{n.function->pci, n.numa_node});
      levels.emplace_back(&n, level);
      const LabelPair gl{"gpu", g.function->bdf};
      const LabelPair nl{"nic", n.function->bdf};
      const LabelPair rl{"rdma_device", n.rdma_device};
      sink.AddInfo(kPairInfo, {gl, nl, rl, {"level", LevelName(level)}});
      sink.Add(kPairDistance, {gl, nl, rl}, LevelDistance(level));
      if ((level == Level::kPix || level == Level::kPxb) && !g.iommu_group.empty() &&
          !n.iommu_group.empty()) {
        sink.Add(kSameIommuGroup, {gl, nl, rl}, g.iommu_group == n.iommu_group ? 1 : 0);
      }
    }
    std::optional<Level> nearest;
    for (const auto& [n, level] : levels) {
      if (any_rdma && n->rdma_device.empty()) continue;
      if (!nearest || LevelDistance(level) < LevelDistance(*nearest)) nearest = level;
    }
    if (!nearest) continue;
    for (const auto& [n, level] : levels) {
      if ((any_rdma && n->rdma_device.empty()) || level != *nearest) continue;
      sink.AddInfo(kNearest, {{"gpu", g.function->bdf},
                              {"nic", n->function->bdf},
                              {"rdma_device", n->rdma_device},
                              {"level", LevelName(level)}});
    }
    sink.Add(kRemote, {{"gpu", g.function->bdf}},
             *nearest == Level::kNode || *nearest == Level::kSys ? 1 : 0);
  }
}

void TopologyCollector::EmitLinkHealth(const std::vector<Function>& functions,
                                       const std::vector<Endpoint2>& gpus,
                                       const std::vector<Endpoint2>& nics, MetricSink& sink) {
  // Link health: every GPU and NIC, and each bridge on their paths (once).
  std::map<std::string, const Function*> by_bdf;
  for (const Function& f : functions) by_bdf.emplace(f.bdf, &f);
  auto upstream_of = [](const Function& f) {
    return f.pci.chain.size() >= 2 ? f.pci.chain[f.pci.chain.size() - 2] : f.pci.host_bridge;
  };
  std::set<std::string> bridges;
  for (const std::vector<Endpoint2>* list : {&gpus, &nics}) {
    for (const Endpoint2& e : *list) {
      EmitFunction(e, upstream_of(*e.function), sink);
      const auto& chain = e.function->pci.chain;
      for (size_t i = 0; i + 1 < chain.size(); ++i) bridges.insert(chain[i]);
    }
  }
  for (const std::string& bdf : bridges) {
    auto it = by_bdf.find(bdf);
    if (it == by_bdf.end()) continue;  // vanished, unreadable (counted), or not listed
    Endpoint2 e = Describe(*it->second, kRoleBridge, sink);
    if (auto group = sysfs_.ReadLinkBasename(it->second->dir + "/iommu_group")) {
      e.iommu_group = *group;
    }
    EmitFunction(e, upstream_of(*it->second), sink);
  }
}

void TopologyCollector::EmitPeermem(const std::vector<Endpoint2>& gpus, MetricSink& sink) {
  // GPUDirect RDMA: only meaningful with an NVIDIA GPU, and only knowable when the tree has a
  // module/ directory (replay roots often do not).
  bool nvidia = false;
  for (const Endpoint2& g : gpus) nvidia |= g.function->vendor == 0x10de;
  if (nvidia && sysfs_.ListDir("module")) {
    for (const char* module : {"nvidia_peermem", "nv_peer_mem"}) {
      sink.Add(kPeermem, {{"module", module}},
               sysfs_.ListDir(std::string("module/") + module) ? 1 : 0);
    }
  }
}

}  // namespace

std::span<const MetricDesc> TopologyMetrics() { return kAllMetrics; }
std::span<const CollectorOptionSpec> TopologyOptions() { return {}; }

Result<std::unique_ptr<Collector>> NewTopologyCollector(const CollectorContext& context) {
  return std::unique_ptr<Collector>(new TopologyCollector(context));
}

}  // namespace fabricwatch::topology
