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
    {rdma::kDeviceInfo, {"device", "fw_ver", "hca_type", "board_id", "pci_address"}},
    {rdma::kPortInfo, {"device", "port", "link_layer", "netdev", "speed"}},
    {rdma::kPortState, {"device", "port"}},
    {rdma::kPortPhysState, {"device", "port"}},
    {rdma::kPortSmLid, {"device", "port"}},
    {rdma::kPortRate, {"device", "port"}},
    {rdma::kPortLanes, {"device", "port"}},
    {rdma::kPortLaneSpeed, {"device", "port"}},
    {netdev::kMtu, {"netdev"}},
    {netdev::kSpeed, {"netdev"}},
    {ethtool::kLinkSpeed, {"netdev"}},
    {ethtool::kLinkLanes, {"netdev"}},
    {ethtool::kLinkSupportedMaxSpeed, {"netdev"}},
    {topology::kSpeed, {"device", "role"}},
    {topology::kMaxSpeed, {"device", "role"}},
    {topology::kWidth, {"device", "role"}},
    {topology::kMaxWidth, {"device", "role"}},
    {topology::kPairDistance, {"gpu", "nic"}},
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

// A netdev's link in the units of the shape (Gb/s), from the node model.
struct PerNetdev {
  std::optional<int> mtu;
  std::optional<double> net_speed_gbps, eth_speed_gbps, supported_max_gbps;
  std::optional<int> eth_lanes;
};

// A reported speed in bytes per second as Gb/s; none unless positive (a down link reports none).
std::optional<double> Gbps(const std::optional<double>& bytes_per_second) {
  if (!bytes_per_second || !(*bytes_per_second > 0)) return std::nullopt;
  return *bytes_per_second / kBytesPerGbit;
}

std::optional<int> Positive(const std::optional<int>& value) {
  return value && *value > 0 ? value : std::nullopt;
}

PerNetdev NetdevOf(const NetdevLink& link) {
  return {Positive(link.mtu), Gbps(link.speed_bytes_per_second),
          Gbps(link.ethtool_speed_bytes_per_second), Gbps(link.supported_max_bytes_per_second),
          Positive(link.ethtool_lanes)};
}

// The NIC function's PCIe link and its nearest GPU: the smallest distance wins; among equals the
// lowest PCI address, so the choice does not depend on the order of the samples.
void ApplyFunction(PortShape& port, const NodeModel& node) {
  const PciFunction* function = node.Function(port.key.pci_address);
  if (function != nullptr && function->role == "nic") {
    auto gts = [](const std::optional<double>& transfers) -> std::optional<double> {
      if (!transfers || !(*transfers > 0)) return std::nullopt;
      return *transfers / 1e9;
    };
    port.pcie_speed_gts = gts(function->speed_transfers_per_second);
    port.pcie_max_speed_gts = gts(function->max_speed_transfers_per_second);
    port.pcie_width = function->width;
    port.pcie_max_width = function->max_width;
  }
  const GpuNicDistance* nearest = nullptr;
  for (const GpuNicDistance& pair : node.gpu_nic_distances()) {
    if (pair.nic != port.key.pci_address) continue;
    if (nearest == nullptr || pair.distance < nearest->distance ||
        (pair.distance == nearest->distance && pair.gpu < nearest->gpu)) {
      nearest = &pair;
    }
  }
  if (nearest != nullptr && !nearest->gpu.empty()) {
    port.nearest_gpu = nearest->gpu;
    port.gpu_level = std::string(LevelName(nearest->distance));
  }
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

NodeShape BuildShape(const NodeModel& node) {
  NodeShape shape;
  // The newest rdma snapshot reported no ports: no shape (every port's checks stay as they are
  // until it reports them again).
  if (!node.ports_reported()) return shape;
  for (const RdmaPort& rdma_port : node.ports()) {
    PortShape p;
    p.device = rdma_port.id.device;
    p.key.port = static_cast<int>(rdma_port.id.port);
    p.link_layer = rdma_port.link_layer_text;
    p.netdev = rdma_port.netdev;
    if (!p.ethernet()) p.lane_speed = rdma_port.lane_speed_name;
    if (const RdmaDevice* device = node.Device(p.device)) {
      p.firmware = device->firmware;
      p.board_id = device->board_id;
      p.hca_type = device->hca_type;
      p.key.pci_address = device->pci_address;
    }
    if (p.key.pci_address.empty()) p.key.pci_address = p.device;
    p.state = rdma_port.state;
    p.phys_state = rdma_port.phys_state;
    p.sm_lid = rdma_port.sm_lid;
    p.width = rdma_port.lanes;
    p.rate_gbps = Gbps(rdma_port.rate_bytes_per_second);
    p.lane_gbps = Gbps(rdma_port.lane_speed_bytes_per_second);
    const NetdevLink* link = p.netdev.empty() ? nullptr : node.Netdev(p.netdev);
    const std::optional<PerNetdev> per_netdev =
        link != nullptr ? std::optional(NetdevOf(*link)) : std::nullopt;
    if (per_netdev) p.mtu = per_netdev->mtu;
    if (p.ethernet()) ApplyEthernet(p, per_netdev ? &*per_netdev : nullptr);
    if (!p.rate_gbps) p.lane_speed.clear();  // a down port's generation name is stale
    ApplyFunction(p, node);
    shape.ports.push_back(std::move(p));
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
