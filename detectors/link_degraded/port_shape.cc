#include "detectors/link_degraded/port_shape.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "collectors/ethtool/ethtool_metrics.h"
#include "collectors/netdev/netdev_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/topology/topology_metrics.h"

namespace fabricwatch::detect::shape {
namespace {

constexpr double kBytesPerGbit = 1e9 / 8.0;

constexpr MetricInput kInputs[] = {
    {"rdma", &rdma::kDeviceInfo, {"device", "fw_ver", "hca_type", "board_id", "pci_address"}},
    {"rdma", &rdma::kPortInfo, {"device", "port", "link_layer", "netdev", "speed"}},
    {"rdma", &rdma::kPortState, {"device", "port"}},
    {"rdma", &rdma::kPortPhysState, {"device", "port"}},
    {"rdma", &rdma::kPortSmLid, {"device", "port"}},
    {"rdma", &rdma::kPortRate, {"device", "port"}},
    {"rdma", &rdma::kPortLanes, {"device", "port"}},
    {"rdma", &rdma::kPortLaneSpeed, {"device", "port"}},
    {"netdev", &netdev::kMtu, {"netdev"}},
    {"netdev", &netdev::kSpeed, {"netdev"}},
    {"ethtool", &ethtool::kLinkSpeed, {"netdev"}},
    {"ethtool", &ethtool::kLinkLanes, {"netdev"}},
    {"ethtool", &ethtool::kLinkSupportedMaxSpeed, {"netdev"}},
    {"topology", &topology::kSpeed, {"device", "role"}},
    {"topology", &topology::kMaxSpeed, {"device", "role"}},
    {"topology", &topology::kWidth, {"device", "role"}},
    {"topology", &topology::kMaxWidth, {"device", "role"}},
    {"topology", &topology::kPairDistance, {"gpu", "nic"}},
};

// nvmlGpuTopologyLevel_t as the topology collector exports it (fabric_topology_gpu_nic_distance).
std::string_view LevelName(double distance) {
  static constexpr std::pair<int, std::string_view> kLevels[] = {
      {10, "PIX"}, {20, "PXB"}, {30, "PHB"}, {40, "NODE"}, {50, "SYS"}};
  for (const auto& [value, name] : kLevels) {
    if (std::lround(distance) == value) return name;
  }
  return "";
}

// A value that is a whole number of units (lanes, LIDs, MTU bytes) and fits an int.
std::optional<int> WholeNumber(double value) {
  if (!std::isfinite(value) || value < 0 || value > 1e9) return std::nullopt;
  return static_cast<int>(std::lround(value));
}

struct DeviceFacts {
  std::string firmware, board_id, hca_type, pci_address;
};

struct PerNetdev {
  std::optional<int> mtu;
  std::optional<double> net_speed_gbps, eth_speed_gbps, supported_max_gbps;
  std::optional<int> eth_lanes;
};

struct PerFunction {
  std::optional<double> speed_gts, max_speed_gts;
  std::optional<int> width, max_width;
  std::string gpu;
  double distance = 0;
};

std::map<std::string, DeviceFacts> ReadDevices(const Families& rdma) {
  std::map<std::string, DeviceFacts> devices;
  ForEachSample(rdma, rdma::kDeviceInfo, [&](const prometheus::ClientMetric& m, double) {
    devices[std::string(LabelOr(m, "device"))] = {
        std::string(LabelOr(m, "fw_ver")), std::string(LabelOr(m, "board_id")),
        std::string(LabelOr(m, "hca_type")), std::string(LabelOr(m, "pci_address"))};
  });
  return devices;
}

std::map<std::string, PerNetdev> ReadNetdevs(const ShapeSources& sources) {
  std::map<std::string, PerNetdev> netdevs;
  auto gbps = [&](const Families* families, const MetricDesc& desc,
                  std::optional<double> PerNetdev::*field) {
    if (families == nullptr) return;
    ForEachSample(*families, desc, [&](const prometheus::ClientMetric& m, double v) {
      if (std::isfinite(v) && v > 0)
        netdevs[std::string(LabelOr(m, "netdev"))].*field = v / kBytesPerGbit;
    });
  };
  auto whole = [&](const Families* families, const MetricDesc& desc,
                   std::optional<int> PerNetdev::*field) {
    if (families == nullptr) return;
    ForEachSample(*families, desc, [&](const prometheus::ClientMetric& m, double v) {
      if (auto n = WholeNumber(v); n && *n > 0)
        netdevs[std::string(LabelOr(m, "netdev"))].*field = n;
    });
  };
  gbps(sources.netdev, netdev::kSpeed, &PerNetdev::net_speed_gbps);
  whole(sources.netdev, netdev::kMtu, &PerNetdev::mtu);
  gbps(sources.ethtool, ethtool::kLinkSpeed, &PerNetdev::eth_speed_gbps);
  gbps(sources.ethtool, ethtool::kLinkSupportedMaxSpeed, &PerNetdev::supported_max_gbps);
  whole(sources.ethtool, ethtool::kLinkLanes, &PerNetdev::eth_lanes);
  return netdevs;
}

std::map<std::string, PerFunction> ReadFunctions(const Families* topology_families) {
  std::map<std::string, PerFunction> functions;
  if (topology_families == nullptr) return functions;
  const Families& families = *topology_families;
  auto nic = [&](const prometheus::ClientMetric& m) -> PerFunction* {
    if (LabelOr(m, "role") != "nic") return nullptr;
    return &functions[std::string(LabelOr(m, "device"))];
  };
  ForEachSample(families, topology::kSpeed, [&](const prometheus::ClientMetric& m, double v) {
    if (PerFunction* f = nic(m); f && v > 0) f->speed_gts = v / 1e9;
  });
  ForEachSample(families, topology::kMaxSpeed, [&](const prometheus::ClientMetric& m, double v) {
    if (PerFunction* f = nic(m); f && v > 0) f->max_speed_gts = v / 1e9;
  });
  ForEachSample(families, topology::kWidth, [&](const prometheus::ClientMetric& m, double v) {
    if (PerFunction* f = nic(m)) f->width = WholeNumber(v);
  });
  ForEachSample(families, topology::kMaxWidth, [&](const prometheus::ClientMetric& m, double v) {
    if (PerFunction* f = nic(m)) f->max_width = WholeNumber(v);
  });
  ForEachSample(families, topology::kPairDistance,
                [&](const prometheus::ClientMetric& m, double v) {
                  PerFunction& f = functions[std::string(LabelOr(m, "nic"))];
                  std::string gpu(LabelOr(m, "gpu"));
                  // The smallest distance wins; among equals the lowest PCI address, so the
                  // choice does not depend on the order of the samples.
                  if (f.gpu.empty() || v < f.distance || (v == f.distance && gpu < f.gpu)) {
                    f.gpu = std::move(gpu);
                    f.distance = v;
                  }
                });
  return functions;
}

// The RDMA port's own values, keyed by (device, port).
void ReadPortValues(const Families& rdma,
                    std::map<std::pair<std::string, std::string>, PortShape>& ports) {
  auto port_of = [&](const prometheus::ClientMetric& m) -> PortShape* {
    auto it = ports.find({std::string(LabelOr(m, "device")), std::string(LabelOr(m, "port"))});
    return it == ports.end() ? nullptr : &it->second;
  };
  auto whole = [&](const MetricDesc& desc, std::optional<int> PortShape::*field) {
    ForEachSample(rdma, desc, [&](const prometheus::ClientMetric& m, double v) {
      if (PortShape* p = port_of(m)) p->*field = WholeNumber(v);
    });
  };
  whole(rdma::kPortState, &PortShape::state);
  whole(rdma::kPortPhysState, &PortShape::phys_state);
  whole(rdma::kPortSmLid, &PortShape::sm_lid);
  whole(rdma::kPortLanes, &PortShape::width);
  ForEachSample(rdma, rdma::kPortRate, [&](const prometheus::ClientMetric& m, double v) {
    if (PortShape* p = port_of(m); p && std::isfinite(v) && v > 0) p->rate_gbps = v / kBytesPerGbit;
  });
  ForEachSample(rdma, rdma::kPortLaneSpeed, [&](const prometheus::ClientMetric& m, double v) {
    if (PortShape* p = port_of(m); p && std::isfinite(v) && v > 0) p->lane_gbps = v / kBytesPerGbit;
  });
}

// Ethernet ports: the link is what ethtool says (the RoCE rate's width and generation are
// synthetic, docs/reference.md §1.3); the RoCE rate stays only as the last resort for the speed.
void ApplyEthernet(PortShape& port, const PerNetdev* net) {
  port.lane_speed.clear();
  port.width.reset();
  port.lane_gbps.reset();
  if (net == nullptr) return;
  if (net->eth_speed_gbps) {
    port.rate_gbps = net->eth_speed_gbps;
  } else if (net->net_speed_gbps) {
    port.rate_gbps = net->net_speed_gbps;
  }
  port.supported_max_gbps = net->supported_max_gbps;
  if (net->eth_lanes && *net->eth_lanes > 0) {
    port.width = net->eth_lanes;
    if (port.rate_gbps) port.lane_gbps = *port.rate_gbps / *net->eth_lanes;
  }
}

}  // namespace

std::string PortKey::Text() const { return pci_address + "/" + std::to_string(port); }

const PortShape* NodeShape::Find(const PortKey& key) const {
  auto it = std::lower_bound(ports.begin(), ports.end(), key,
                             [](const PortShape& p, const PortKey& k) { return p.key < k; });
  return it != ports.end() && it->key == key ? &*it : nullptr;
}

std::span<const MetricInput> ShapeInputs() { return kInputs; }

NodeShape BuildShape(const ShapeSources& sources) {
  NodeShape shape;
  if (sources.rdma == nullptr) return shape;
  const Families& rdma_families = *sources.rdma;
  const std::map<std::string, DeviceFacts> devices = ReadDevices(rdma_families);
  const std::map<std::string, PerNetdev> netdevs = ReadNetdevs(sources);
  const std::map<std::string, PerFunction> functions = ReadFunctions(sources.topology);

  std::map<std::pair<std::string, std::string>, PortShape> ports;
  ForEachSample(rdma_families, rdma::kPortInfo, [&](const prometheus::ClientMetric& m, double) {
    PortShape p;
    p.device = std::string(LabelOr(m, "device"));
    const std::string port_label(LabelOr(m, "port"));
    // A sample without its device or port names no port: a finding on it would name nothing.
    if (p.device.empty() || port_label.empty()) return;
    auto number = WholeNumber(std::atof(port_label.c_str()));
    p.key.port = number.value_or(0);
    p.link_layer = std::string(LabelOr(m, "link_layer"));
    p.netdev = std::string(LabelOr(m, "netdev"));
    if (!p.ethernet()) p.lane_speed = std::string(LabelOr(m, "speed"));
    auto device = devices.find(p.device);
    if (device != devices.end()) {
      p.firmware = device->second.firmware;
      p.board_id = device->second.board_id;
      p.hca_type = device->second.hca_type;
      p.key.pci_address = device->second.pci_address;
    }
    if (p.key.pci_address.empty()) p.key.pci_address = p.device;
    ports.emplace(std::pair{p.device, port_label}, std::move(p));
  });
  ReadPortValues(rdma_families, ports);

  for (auto& [id, port] : ports) {
    auto net = netdevs.find(port.netdev);
    const PerNetdev* per_netdev = net == netdevs.end() ? nullptr : &net->second;
    if (per_netdev != nullptr) port.mtu = per_netdev->mtu;
    if (port.ethernet()) ApplyEthernet(port, per_netdev);
    if (!port.rate_gbps) port.lane_speed.clear();  // a down port's generation name is stale
    auto function = functions.find(port.key.pci_address);
    if (function != functions.end()) {
      const PerFunction& f = function->second;
      port.pcie_speed_gts = f.speed_gts;
      port.pcie_width = f.width;
      port.pcie_max_speed_gts = f.max_speed_gts;
      port.pcie_max_width = f.max_width;
      port.nearest_gpu = f.gpu;
      if (!f.gpu.empty()) port.gpu_level = std::string(LevelName(f.distance));
    }
    shape.ports.push_back(std::move(port));
  }
  std::sort(shape.ports.begin(), shape.ports.end(),
            [](const PortShape& a, const PortShape& b) { return a.key < b.key; });
  return shape;
}

std::string ShapeToYaml(const NodeShape& shape, std::string_view hostname) {
  YAML::Emitter out;
  out << YAML::Comment(
      "fabricwatch fabric shape of " + std::string(hostname) +
      ": every fabric port as the agent sees it now.\nA valid --shape.file manifest: keep it "
      "for a node of this SKU, and delete the\nfields (or ports) that should not be pinned "
      "(README \"Fabric shape\").");
  out << YAML::BeginMap << YAML::Key << "ports" << YAML::Value << YAML::BeginSeq;
  for (const PortShape& p : shape.ports) {
    out << YAML::BeginMap;
    auto text = [&](const char* key, const std::string& value) {
      if (!value.empty()) out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << value;
    };
    auto number = [&](const char* key, const auto& value) {
      if (value) out << YAML::Key << key << YAML::Value << *value;
    };
    text("pci_address", p.key.pci_address);
    out << YAML::Key << "port" << YAML::Value << p.key.port;
    text("device", p.device);
    text("netdev", p.netdev);
    text("link_layer", p.link_layer);
    if (p.state) text("state", std::string(StateName(*p.state)));
    number("rate_gbps", p.rate_gbps);
    number("width", p.width);
    text("lane_speed", p.lane_speed);
    number("lane_gbps", p.lane_gbps);
    number("supported_max_gbps", p.supported_max_gbps);
    number("mtu", p.mtu);
    text("firmware", p.firmware);
    text("board_id", p.board_id);
    text("hca_type", p.hca_type);
    number("pcie_speed_gts", p.pcie_speed_gts);
    number("pcie_width", p.pcie_width);
    text("nearest_gpu", p.nearest_gpu);
    text("gpu_level", p.gpu_level);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace fabricwatch::detect::shape
