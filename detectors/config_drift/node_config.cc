#include "detectors/config_drift/node_config.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "collectors/ethtool/ethtool_metrics.h"
#include "collectors/netdev/netdev_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/topology/topology_metrics.h"

namespace fabricwatch::detect::drift {
namespace {

constexpr MetricInput kInputs[] = {
    {rdma::kPortState, {"device", "port"}},
    {rdma::kPortActiveMtu, {"device", "port"}},
    {rdma::kPortMaxMtu, {"device", "port"}},
    {netdev::kMtu, {"netdev"}},
    {ethtool::kPfcEnabled, {"netdev", "priority"}},
    {ethtool::kQosTrust, {"netdev", "trust"}},
    {ethtool::kQosDscpMap, {"netdev", "map"}},
    {ethtool::kPfcStormTimeout, {"netdev"}},
    {ethtool::kPauseEnabled, {"netdev", "direction"}},
    {ethtool::kEcnEnabled, {"netdev", "priority", "role"}},
    {ethtool::kPrioBytes, {"netdev", "priority", "direction"}},
    {topology::kDeviceInfo, {"device", "role", "upstream"}},
    {topology::kMaxPayload, {"device", "role"}},
    {topology::kMaxReadRequest, {"device", "role"}},
    {topology::kAcsControl, {"device", "role", "control"}},
    {topology::kNearest, {"gpu", "nic", "level"}},
    {topology::kGpuInfo, {"gpu", "vendor_id"}},
    {topology::kNicInfo, {"nic", "rdma_device"}},
    {topology::kPeermem, {"module"}},
};

// A priority label "0".."7" as an index, or nullopt.
std::optional<size_t> Priority(std::string_view label) {
  if (label.size() != 1 || label[0] < '0' || label[0] > '7') return std::nullopt;
  return static_cast<size_t>(label[0] - '0');
}

std::optional<int> WholeNumber(double value) {
  if (!std::isfinite(value) || value < 0 || value > 1e9) return std::nullopt;
  return static_cast<int>(std::lround(value));
}

class Builder {
 public:
  explicit Builder(NodeConfig& out) : out_(out) {}

  PortConfig& Port(std::string_view netdev) {
    auto it = ports_.find(netdev);
    if (it == ports_.end()) it = ports_.emplace(std::string(netdev), PortConfig{}).first;
    it->second.netdev = it->first;
    return it->second;
  }
  bool Known(std::string_view netdev) const { return ports_.contains(netdev); }
  // The fabric port a sample of Family names by its netdev, or nullptr for another netdev.
  template <const auto& Family>
  PortConfig* FabricPortOf(const prometheus::ClientMetric& m) {
    const std::string_view netdev = Label<Family>(m, "netdev");
    return Known(netdev) ? &Port(netdev) : nullptr;
  }
  // The PCI function a sample of the topology family Family names (labels device, role).
  template <const auto& Family>
  PciFunction& FunctionOf(const prometheus::ClientMetric& m) {
    const std::string bdf(Label<Family>(m, "device"));
    PciFunction& f = out_.functions[bdf];
    f.bdf = bdf;
    if (f.role.empty()) f.role = Label<Family>(m, "role");
    return f;
  }

  // The RDMA ports from the node model: an Ethernet port's netdev is a fabric port; a port that
  // reports its active IB MTU is checked for it.
  void Rdma(const NodeModel& node) {
    for (const RdmaPort& port : node.ports()) {
      if (port.ethernet() && !port.netdev.empty()) Port(port.netdev).roce = true;
      if (!port.active_mtu) continue;
      out_.rdma_ports.push_back({port.id.device, port.id.PortLabel(), port.netdev,
                                 port.link_layer_text, port.state, port.active_mtu, port.max_mtu});
    }
  }

  void Ethtool(const Families& families) {
    // PFC first: a netdev that reports it is a fabric port even without the rdma collector.
    ForEachSample(families, ethtool::kPfcEnabled, [&](const prometheus::ClientMetric& m, double v) {
      // A sample without its netdev is no port a finding could name.
      if (auto prio = Priority(Label<ethtool::kPfcEnabled>(m, "priority"));
          prio && !Label<ethtool::kPfcEnabled>(m, "netdev").empty()) {
        Port(Label<ethtool::kPfcEnabled>(m, "netdev")).pfc[*prio] = v != 0;
      }
    });
    // The rest only for the fabric ports (FabricPortOf).
    ForEachSample(families, ethtool::kQosTrust, [&](const prometheus::ClientMetric& m, double) {
      if (PortConfig* p = FabricPortOf<ethtool::kQosTrust>(m))
        p->trust = Label<ethtool::kQosTrust>(m, "trust");
    });
    ForEachSample(families, ethtool::kQosDscpMap, [&](const prometheus::ClientMetric& m, double) {
      if (PortConfig* p = FabricPortOf<ethtool::kQosDscpMap>(m))
        p->dscp_map = Label<ethtool::kQosDscpMap>(m, "map");
    });
    ForEachSample(
        families, ethtool::kPfcStormTimeout, [&](const prometheus::ClientMetric& m, double v) {
          if (PortConfig* p = FabricPortOf<ethtool::kPfcStormTimeout>(m); p && std::isfinite(v)) {
            p->storm_timeout_seconds = v;
          }
        });
    ForEachSample(
        families, ethtool::kPauseEnabled, [&](const prometheus::ClientMetric& m, double v) {
          PortConfig* p = FabricPortOf<ethtool::kPauseEnabled>(m);
          if (p == nullptr) return;
          const std::string_view direction = Label<ethtool::kPauseEnabled>(m, "direction");
          if (direction == "rx") p->pause_rx = v != 0;
          if (direction == "tx") p->pause_tx = v != 0;
        });
    ForEachSample(families, ethtool::kEcnEnabled, [&](const prometheus::ClientMetric& m, double v) {
      PortConfig* p = FabricPortOf<ethtool::kEcnEnabled>(m);
      auto prio = Priority(Label<ethtool::kEcnEnabled>(m, "priority"));
      const std::string_view role = Label<ethtool::kEcnEnabled>(m, "role");
      if (p == nullptr || !prio || (role != "np" && role != "rp")) return;
      p->ecn[*prio][role == "np" ? 0 : 1] = v != 0;
    });
    ForEachSample(families, ethtool::kPrioBytes, [&](const prometheus::ClientMetric& m, double v) {
      PortConfig* p = FabricPortOf<ethtool::kPrioBytes>(m);
      auto prio = Priority(Label<ethtool::kPrioBytes>(m, "priority"));
      if (p == nullptr || !prio || !std::isfinite(v) || v < 0) return;
      p->priority_bytes[*prio] = p->priority_bytes[*prio].value_or(0) + v;
    });
  }

  void Netdev(const Families& families) {
    ForEachSample(families, netdev::kMtu, [&](const prometheus::ClientMetric& m, double v) {
      const std::string_view netdev = Label<netdev::kMtu>(m, "netdev");
      if (Known(netdev)) Port(netdev).mtu = WholeNumber(v);
    });
  }

  void Topology(const Families& families) {
    ForEachSample(families, topology::kDeviceInfo, [&](const prometheus::ClientMetric& m, double) {
      FunctionOf<topology::kDeviceInfo>(m).upstream = Label<topology::kDeviceInfo>(m, "upstream");
    });
    ForEachSample(families, topology::kMaxPayload,
                  [&](const prometheus::ClientMetric& m, double v) {
                    FunctionOf<topology::kMaxPayload>(m).max_payload = WholeNumber(v);
                  });
    ForEachSample(families, topology::kMaxReadRequest,
                  [&](const prometheus::ClientMetric& m, double v) {
                    FunctionOf<topology::kMaxReadRequest>(m).max_read_request = WholeNumber(v);
                  });
    ForEachSample(families, topology::kAcsControl,
                  [&](const prometheus::ClientMetric& m, double v) {
                    const std::string_view control = Label<topology::kAcsControl>(m, "control");
                    if (control == "request_redirect")
                      FunctionOf<topology::kAcsControl>(m).request_redirect = v != 0;
                    if (control == "completion_redirect")
                      FunctionOf<topology::kAcsControl>(m).completion_redirect = v != 0;
                  });
    ForEachSample(families, topology::kNearest, [&](const prometheus::ClientMetric& m, double) {
      out_.nearest.push_back({std::string(Label<topology::kNearest>(m, "gpu")),
                              std::string(Label<topology::kNearest>(m, "nic")),
                              std::string(Label<topology::kNearest>(m, "level"))});
    });
    ForEachSample(families, topology::kGpuInfo, [&](const prometheus::ClientMetric& m, double) {
      out_.nvidia_gpu |= Label<topology::kGpuInfo>(m, "vendor_id") == "0x10de";
    });
    ForEachSample(families, topology::kNicInfo, [&](const prometheus::ClientMetric& m, double) {
      out_.rdma_nic |= !Label<topology::kNicInfo>(m, "rdma_device").empty();
    });
    ForEachSample(families, topology::kPeermem, [&](const prometheus::ClientMetric& m, double v) {
      out_.gpudirect_modules[std::string(Label<topology::kPeermem>(m, "module"))] = v != 0;
    });
  }

  void Finish() {
    for (auto& [netdev, port] : ports_) out_.ports.push_back(std::move(port));
  }

 private:
  NodeConfig& out_;
  std::map<std::string, PortConfig, std::less<>> ports_;
};

}  // namespace

bool PortConfig::AnyPfc() const {
  return std::any_of(pfc.begin(), pfc.end(), [](const auto& on) { return on.value_or(false); });
}

NodeConfig BuildNodeConfig(const ConfigSources& sources) {
  NodeConfig config;
  Builder builder(config);
  if (sources.node != nullptr) builder.Rdma(*sources.node);
  if (sources.ethtool != nullptr) builder.Ethtool(*sources.ethtool);
  if (sources.netdev != nullptr) builder.Netdev(*sources.netdev);
  if (sources.topology != nullptr) builder.Topology(*sources.topology);
  builder.Finish();
  return config;
}

std::span<const MetricInput> ConfigInputs() { return kInputs; }

std::vector<std::string> UpstreamChain(const NodeConfig& config, const std::string& bdf) {
  std::vector<std::string> chain;
  std::string at = bdf;
  for (int step = 0; step < 32; ++step) {
    auto it = config.functions.find(at);
    if (it == config.functions.end()) break;
    if (std::find(chain.begin(), chain.end(), at) != chain.end()) break;  // a loop
    chain.push_back(at);
    at = it->second.upstream;
  }
  return chain;
}

}  // namespace fabricwatch::detect::drift
