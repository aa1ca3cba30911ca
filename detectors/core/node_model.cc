#include "detectors/core/node_model.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "collectors/ethtool/ethtool_metrics.h"
#include "collectors/jobs/jobs_metrics.h"
#include "collectors/netdev/netdev_metrics.h"
#include "collectors/optics/optics_metrics.h"
#include "collectors/peer/peer_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/topology/topology_metrics.h"
#include "detectors/core/snapshot_lookup.h"

namespace fabricwatch::detect {
namespace {

using prometheus::ClientMetric;

// A whole number of units (lanes, LIDs, MTU enum values) that fits an int; NaN, negative and
// absurd values are no value.
std::optional<int> WholeNumber(double value) {
  if (!std::isfinite(value) || value < 0 || value > 1e9) return std::nullopt;
  return static_cast<int>(std::lround(value));
}

std::optional<double> Finite(double value) {
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

std::string_view EntityValue(const EntityLabels& entity, std::string_view name) {
  for (const auto& [key, value] : entity) {
    if (key == name) return value;
  }
  return {};
}

// apply(function, value) for every sample of the PCIe link family Family (labels device, role).
template <const auto& Family, typename Apply>
void PciLinkValue(const std::vector<prometheus::MetricFamily>& families,
                  std::map<std::string, PciFunction>& functions, Apply&& apply) {
  ForEachSample(families, Family, [&](const ClientMetric& m, double value) {
    const std::string address(Label<Family>(m, "device"));
    if (address.empty()) return;
    PciFunction& f = functions[address];
    f.address = address;
    if (f.role.empty()) f.role = Label<Family>(m, "role");
    apply(f, value);
  });
}

constexpr std::string_view kModelCollectors[] = {
    rdma::kCollector,     netdev::kCollector, ethtool::kCollector, optics::kCollector,
    topology::kCollector, peer::kCollector,   jobs::kCollector};

constexpr MetricInput kInputs[] = {
    {rdma::kPortInfo, {"device", "port", "link_layer", "netdev", "speed"}},
    {rdma::kDeviceInfo, {"device", "fw_ver", "board_id", "hca_type", "node_guid", "pci_address"}},
    {rdma::kPortState, {"device", "port"}},
    {rdma::kPortPhysState, {"device", "port"}},
    {rdma::kPortSmLid, {"device", "port"}},
    {rdma::kPortLanes, {"device", "port"}},
    {rdma::kPortRate, {"device", "port"}},
    {rdma::kPortLaneSpeed, {"device", "port"}},
    {rdma::kPortActiveMtu, {"device", "port"}},
    {rdma::kPortMaxMtu, {"device", "port"}},
    {netdev::kMtu, {"netdev"}},
    {netdev::kSpeed, {"netdev"}},
    {ethtool::kLinkSpeed, {"netdev"}},
    {ethtool::kLinkSupportedMaxSpeed, {"netdev"}},
    {ethtool::kLinkLanes, {"netdev"}},
    {optics::kPresent, {"netdev"}},
    {optics::kInfo, {"netdev", "serial"}},
    {topology::kDeviceInfo, {"device", "role", "upstream", "host_bridge"}},
    {topology::kSpeed, {"device", "role"}},
    {topology::kMaxSpeed, {"device", "role"}},
    {topology::kWidth, {"device", "role"}},
    {topology::kMaxWidth, {"device", "role"}},
    {topology::kPairDistance, {"gpu", "nic"}},
    {peer::kPeerInfo, {"device", "port", "netdev", "peer_name", "peer_port", "source"}},
    {jobs::kDeviceJobInfo, {"device", "scheduler", "job_id"}},
};

}  // namespace

std::span<const MetricInput> NodeModelBuilder::Inputs() { return kInputs; }

const NodeModel& EmptyNodeModel() {
  static const NodeModel kEmpty;
  return kEmpty;
}

std::optional<PortId> PortId::FromLabels(std::string_view device, std::string_view port) {
  if (device.empty() || port.empty()) return std::nullopt;
  uint32_t number = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (error != std::errc() || end != port.data() + port.size()) return std::nullopt;
  return PortId{std::string(device), number};
}

const RdmaPort* NodeModel::Port(const PortId& id) const {
  auto it = std::lower_bound(ports_.begin(), ports_.end(), id,
                             [](const RdmaPort& p, const PortId& key) { return p.id < key; });
  return it != ports_.end() && it->id == id ? &*it : nullptr;
}

const RdmaPort* NodeModel::PortOfNetdev(std::string_view netdev) const {
  if (netdev.empty()) return nullptr;
  // ports_ is sorted, so the first match is the lowest port.
  for (const RdmaPort& port : ports_) {
    if (port.netdev == netdev) return &port;
  }
  return nullptr;
}

const RdmaPort* NodeModel::PortNamedBy(const EntityLabels& entity) const {
  const std::string_view device = EntityValue(entity, "device");
  const std::string_view port = EntityValue(entity, "port");
  const std::string_view netdev = EntityValue(entity, "netdev");
  if (!port.empty()) {
    const std::optional<PortId> id = PortId::FromLabels(device, port);
    return id ? Port(*id) : nullptr;
  }
  if (!netdev.empty()) {
    for (const RdmaPort& p : ports_) {
      if (p.netdev == netdev && (device.empty() || p.id.device == device)) return &p;
    }
    return nullptr;
  }
  if (device.empty()) return nullptr;
  const RdmaPort* only = nullptr;
  for (const RdmaPort& p : ports_) {
    if (p.id.device != device) continue;
    if (only != nullptr) return nullptr;  // a device-wide entity of a multi-port device
    only = &p;
  }
  return only;
}

const RdmaDevice* NodeModel::Device(std::string_view name) const {
  for (const RdmaDevice& device : devices_) {
    if (device.name == name) return &device;
  }
  return nullptr;
}

const NetdevLink* NodeModel::Netdev(std::string_view name) const {
  auto it = netdevs_.find(name);
  return it == netdevs_.end() ? nullptr : &it->second;
}

const Module* NodeModel::ModuleOf(std::string_view netdev) const {
  auto it = modules_.find(netdev);
  return it == modules_.end() ? nullptr : &it->second;
}

const PciFunction* NodeModel::Function(std::string_view address) const {
  for (const PciFunction& function : functions_) {
    if (function.address == address) return &function;
  }
  return nullptr;
}

const Peer* NodeModel::PeerOf(const RdmaPort& port) const {
  if (auto it = peer_by_port_.find(port.id); it != peer_by_port_.end()) return &it->second;
  return PeerOfNetdev(port.netdev);
}

const Peer* NodeModel::PeerOfNetdev(std::string_view netdev) const {
  if (netdev.empty()) return nullptr;
  auto it = peer_by_netdev_.find(netdev);
  return it == peer_by_netdev_.end() ? nullptr : &it->second;
}

std::vector<std::string> NodeModel::JobsOn(std::string_view device) const {
  auto it = jobs_by_device_.find(device);
  if (device.empty() || it == jobs_by_device_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

RdmaPort* NodeModelBuilder::MutablePort(const PortId& id) {
  return const_cast<RdmaPort*>(model_.Port(id));  // model_ is this builder's own
}

template <const auto& Family, typename Apply>
void NodeModelBuilder::PortValue(const std::vector<prometheus::MetricFamily>& families,
                                 Apply&& apply) {
  ForEachSample(families, Family, [&](const ClientMetric& m, double value) {
    const std::optional<PortId> id = PortIdOf<Family>(m);
    if (!id) return;
    if (RdmaPort* port = MutablePort(*id)) apply(*port, value);
  });
}

namespace {

struct Source {
  std::string_view collector;
  void (NodeModelBuilder::*observe)(const std::vector<prometheus::MetricFamily>&);
};

}  // namespace

// The builder's sources, one line each; the Observe* members are private, so the table lives in
// a member function.
bool NodeModelBuilder::Observe(std::string_view collector,
                               const std::vector<prometheus::MetricFamily>& families) {
  const Source sources[] = {
      {rdma::kCollector, &NodeModelBuilder::ObserveRdma},
      {netdev::kCollector, &NodeModelBuilder::ObserveNetdev},
      {ethtool::kCollector, &NodeModelBuilder::ObserveEthtool},
      {optics::kCollector, &NodeModelBuilder::ObserveOptics},
      {topology::kCollector, &NodeModelBuilder::ObserveTopology},
      {peer::kCollector, &NodeModelBuilder::ObservePeer},
      {jobs::kCollector, &NodeModelBuilder::ObserveJobs},
  };
  for (const Source& source : sources) {
    if (source.collector != collector) continue;
    (this->*source.observe)(families);
    published_.reset();
    return true;
  }
  return false;
}

std::shared_ptr<const NodeModel> NodeModelBuilder::Current() {
  if (!published_) published_ = std::make_shared<const NodeModel>(model_);
  return published_;
}

std::span<const std::string_view> NodeModelBuilder::Collectors() { return kModelCollectors; }

void NodeModelBuilder::ObserveRdma(const std::vector<prometheus::MetricFamily>& families) {
  std::vector<RdmaPort>& ports = model_.ports_;
  model_.ports_reported_ = FindFamily(families, rdma::kPortInfo) != nullptr;
  if (model_.ports_reported_) {
    ports.clear();
    ForEachSample(families, rdma::kPortInfo, [&](const ClientMetric& m, double) {
      // A sample without its device or port names no port: a finding on it would name nothing.
      std::optional<PortId> id = PortId::FromLabels(Label<rdma::kPortInfo>(m, "device"),
                                                    Label<rdma::kPortInfo>(m, "port"));
      if (!id) return;
      RdmaPort port;
      port.id = std::move(*id);
      port.link_layer_text = Label<rdma::kPortInfo>(m, "link_layer");
      port.link_layer =
          port.link_layer_text == "Ethernet" ? LinkLayer::kEthernet : LinkLayer::kInfiniBand;
      port.netdev = Label<rdma::kPortInfo>(m, "netdev");
      port.lane_speed_name = Label<rdma::kPortInfo>(m, "speed");
      ports.push_back(std::move(port));
    });
    std::stable_sort(ports.begin(), ports.end(),
                     [](const RdmaPort& a, const RdmaPort& b) { return a.id < b.id; });
    // Two samples for one port (a malformed snapshot): the first stays.
    ports.erase(std::unique(ports.begin(), ports.end(),
                            [](const RdmaPort& a, const RdmaPort& b) { return a.id == b.id; }),
                ports.end());
  }
  // Every value comes from this snapshot: one it lacks is unknown, not the last one seen.
  for (RdmaPort& port : ports) {
    RdmaPort identity;
    identity.id = std::move(port.id);
    identity.link_layer = port.link_layer;
    identity.link_layer_text = std::move(port.link_layer_text);
    identity.netdev = std::move(port.netdev);
    identity.lane_speed_name = std::move(port.lane_speed_name);
    port = std::move(identity);
  }
  PortValue<rdma::kPortState>(families, [](RdmaPort& p, double v) { p.state = WholeNumber(v); });
  PortValue<rdma::kPortPhysState>(families,
                                  [](RdmaPort& p, double v) { p.phys_state = WholeNumber(v); });
  PortValue<rdma::kPortSmLid>(families, [](RdmaPort& p, double v) { p.sm_lid = WholeNumber(v); });
  PortValue<rdma::kPortLanes>(families, [](RdmaPort& p, double v) { p.lanes = WholeNumber(v); });
  PortValue<rdma::kPortRate>(families,
                             [](RdmaPort& p, double v) { p.rate_bytes_per_second = Finite(v); });
  PortValue<rdma::kPortLaneSpeed>(
      families, [](RdmaPort& p, double v) { p.lane_speed_bytes_per_second = Finite(v); });
  PortValue<rdma::kPortActiveMtu>(families,
                                  [](RdmaPort& p, double v) { p.active_mtu = WholeNumber(v); });
  PortValue<rdma::kPortMaxMtu>(families, [](RdmaPort& p, double v) { p.max_mtu = WholeNumber(v); });

  model_.devices_.clear();
  ForEachSample(families, rdma::kDeviceInfo, [&](const ClientMetric& m, double) {
    using D = LabelOf<rdma::kDeviceInfo>;
    auto label = [&](D name) { return std::string(Label<rdma::kDeviceInfo>(m, name)); };
    RdmaDevice device{label("device"),   label("fw_ver"),    label("board_id"),
                      label("hca_type"), label("node_guid"), label("pci_address")};
    if (!device.name.empty()) model_.devices_.push_back(std::move(device));
  });
}

void NodeModelBuilder::ObserveNetdev(const std::vector<prometheus::MetricFamily>& families) {
  for (auto& [name, link] : model_.netdevs_) {
    link.mtu.reset();
    link.speed_bytes_per_second.reset();
  }
  ForEachSample(families, netdev::kMtu, [&](const ClientMetric& m, double v) {
    const std::string_view name = Label<netdev::kMtu>(m, "netdev");
    if (!name.empty()) model_.netdevs_[std::string(name)].mtu = WholeNumber(v);
  });
  ForEachSample(families, netdev::kSpeed, [&](const ClientMetric& m, double v) {
    const std::string_view name = Label<netdev::kSpeed>(m, "netdev");
    if (!name.empty()) model_.netdevs_[std::string(name)].speed_bytes_per_second = Finite(v);
  });
  ForgetSilentNetdevs();
}

void NodeModelBuilder::ObserveEthtool(const std::vector<prometheus::MetricFamily>& families) {
  for (auto& [name, link] : model_.netdevs_) {
    link.ethtool_speed_bytes_per_second.reset();
    link.supported_max_bytes_per_second.reset();
    link.ethtool_lanes.reset();
  }
  ForEachSample(families, ethtool::kLinkSpeed, [&](const ClientMetric& m, double v) {
    const std::string_view name = Label<ethtool::kLinkSpeed>(m, "netdev");
    if (!name.empty())
      model_.netdevs_[std::string(name)].ethtool_speed_bytes_per_second = Finite(v);
  });
  ForEachSample(families, ethtool::kLinkSupportedMaxSpeed, [&](const ClientMetric& m, double v) {
    const std::string_view name = Label<ethtool::kLinkSupportedMaxSpeed>(m, "netdev");
    if (!name.empty())
      model_.netdevs_[std::string(name)].supported_max_bytes_per_second = Finite(v);
  });
  ForEachSample(families, ethtool::kLinkLanes, [&](const ClientMetric& m, double v) {
    const std::string_view name = Label<ethtool::kLinkLanes>(m, "netdev");
    if (!name.empty()) model_.netdevs_[std::string(name)].ethtool_lanes = WholeNumber(v);
  });
  ForgetSilentNetdevs();
}

// A netdev neither collector reports any more (a container's veth that is gone) leaves the model,
// so the model does not grow with every netdev the node ever had.
void NodeModelBuilder::ForgetSilentNetdevs() {
  std::erase_if(model_.netdevs_, [](const auto& entry) {
    const NetdevLink& link = entry.second;
    return !link.mtu && !link.speed_bytes_per_second && !link.ethtool_speed_bytes_per_second &&
           !link.supported_max_bytes_per_second && !link.ethtool_lanes;
  });
  for (auto& [name, link] : model_.netdevs_) link.name = name;
}

void NodeModelBuilder::ObserveOptics(const std::vector<prometheus::MetricFamily>& families) {
  model_.modules_.clear();
  ForEachSample(families, optics::kPresent, [&](const ClientMetric& m, double v) {
    const std::string_view name = Label<optics::kPresent>(m, "netdev");
    if (name.empty() || !std::isfinite(v)) return;
    Module& module = model_.modules_[std::string(name)];
    module.netdev = name;
    module.present = v != 0;
  });
  ForEachSample(families, optics::kInfo, [&](const ClientMetric& m, double) {
    const std::string_view name = Label<optics::kInfo>(m, "netdev");
    if (name.empty()) return;
    Module& module = model_.modules_[std::string(name)];
    module.netdev = name;
    module.serial = Label<optics::kInfo>(m, "serial");
  });
}

void NodeModelBuilder::ObserveTopology(const std::vector<prometheus::MetricFamily>& families) {
  std::map<std::string, PciFunction> functions;
  ForEachSample(families, topology::kDeviceInfo, [&](const ClientMetric& m, double) {
    const std::string address(Label<topology::kDeviceInfo>(m, "device"));
    if (address.empty()) return;
    PciFunction& f = functions[address];
    f.address = address;
    f.role = Label<topology::kDeviceInfo>(m, "role");
    f.upstream = Label<topology::kDeviceInfo>(m, "upstream");
    f.host_bridge = Label<topology::kDeviceInfo>(m, "host_bridge");
  });
  // The link families carry the role too: a function the info family missed still gets one.
  PciLinkValue<topology::kSpeed>(families, functions, [](PciFunction& f, double v) {
    f.speed_transfers_per_second = Finite(v);
  });
  PciLinkValue<topology::kMaxSpeed>(families, functions, [](PciFunction& f, double v) {
    f.max_speed_transfers_per_second = Finite(v);
  });
  PciLinkValue<topology::kWidth>(families, functions,
                                 [](PciFunction& f, double v) { f.width = WholeNumber(v); });
  PciLinkValue<topology::kMaxWidth>(families, functions,
                                    [](PciFunction& f, double v) { f.max_width = WholeNumber(v); });
  model_.functions_.clear();
  for (auto& [address, function] : functions) model_.functions_.push_back(std::move(function));

  model_.distances_.clear();
  ForEachSample(families, topology::kPairDistance, [&](const ClientMetric& m, double v) {
    if (!std::isfinite(v)) return;
    model_.distances_.push_back({std::string(Label<topology::kPairDistance>(m, "gpu")),
                                 std::string(Label<topology::kPairDistance>(m, "nic")), v});
  });
}

void NodeModelBuilder::ObservePeer(const std::vector<prometheus::MetricFamily>& families) {
  model_.peer_by_port_.clear();
  model_.peer_by_netdev_.clear();
  ForEachSample(families, peer::kPeerInfo, [&](const ClientMetric& m, double) {
    const Peer peer{std::string(Label<peer::kPeerInfo>(m, "peer_name")),
                    std::string(Label<peer::kPeerInfo>(m, "peer_port")),
                    std::string(Label<peer::kPeerInfo>(m, "source"))};
    if (const std::string_view netdev = Label<peer::kPeerInfo>(m, "netdev"); !netdev.empty()) {
      model_.peer_by_netdev_[std::string(netdev)] = peer;
    }
    if (auto id = PortId::FromLabels(Label<peer::kPeerInfo>(m, "device"),
                                     Label<peer::kPeerInfo>(m, "port"))) {
      model_.peer_by_port_[std::move(*id)] = peer;
    }
  });
}

void NodeModelBuilder::ObserveJobs(const std::vector<prometheus::MetricFamily>& families) {
  model_.jobs_by_device_.clear();
  ForEachSample(families, jobs::kDeviceJobInfo, [&](const ClientMetric& m, double) {
    const std::string_view device = Label<jobs::kDeviceJobInfo>(m, "device");
    if (device.empty()) return;
    model_.jobs_by_device_[std::string(device)].insert(
        std::string(Label<jobs::kDeviceJobInfo>(m, "scheduler")) + ":" +
        std::string(Label<jobs::kDeviceJobInfo>(m, "job_id")));
  });
}

}  // namespace fabricwatch::detect
