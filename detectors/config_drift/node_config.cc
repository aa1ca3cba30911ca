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
    {"rdma", &rdma::kPortInfo, {"device", "port", "link_layer", "netdev"}},
    {"rdma", &rdma::kPortState, {"device", "port"}},
    {"rdma", &rdma::kPortActiveMtu, {"device", "port"}},
    {"rdma", &rdma::kPortMaxMtu, {"device", "port"}},
    {"netdev", &netdev::kMtu, {"netdev"}},
    {"ethtool", &ethtool::kPfcEnabled, {"netdev", "priority"}},
    {"ethtool", &ethtool::kQosTrust, {"netdev", "trust"}},
    {"ethtool", &ethtool::kQosDscpMap, {"netdev", "map"}},
    {"ethtool", &ethtool::kPfcStormTimeout, {"netdev"}},
    {"ethtool", &ethtool::kPauseEnabled, {"netdev", "direction"}},
    {"ethtool", &ethtool::kEcnEnabled, {"netdev", "priority", "role"}},
    {"ethtool", &ethtool::kPrioBytes, {"netdev", "priority", "direction"}},
    {"topology", &topology::kDeviceInfo, {"device", "role", "upstream"}},
    {"topology", &topology::kMaxPayload, {"device", "role"}},
    {"topology", &topology::kMaxReadRequest, {"device", "role"}},
    {"topology", &topology::kAcsControl, {"device", "role", "control"}},
    {"topology", &topology::kNearest, {"gpu", "nic", "level"}},
    {"topology", &topology::kGpuInfo, {"gpu", "vendor_id"}},
    {"topology", &topology::kNicInfo, {"nic", "rdma_device"}},
    {"topology", &topology::kPeermem, {"module"}},
};

// A priority label "0".."7" as an index, or nullopt.
std::optional<size_t> Priority(std::optional<std::string_view> label) {
  if (!label || label->size() != 1 || (*label)[0] < '0' || (*label)[0] > '7') return std::nullopt;
  return static_cast<size_t>((*label)[0] - '0');
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

  void Rdma(const Families& families) {
    ForEachSample(families, rdma::kPortInfo, [&](const prometheus::ClientMetric& m, double) {
      const std::string_view netdev = LabelOr(m, "netdev");
      if (!netdev.empty() && LabelOr(m, "link_layer") == "Ethernet") Port(netdev).roce = true;
    });
    // The IB MTU per RDMA port, joined to the port's facts by (device, port).
    ForEachSample(families, rdma::kPortActiveMtu, [&](const prometheus::ClientMetric& m, double v) {
      RdmaPort(m).active_mtu = WholeNumber(v);
    });
    auto known = [&](const prometheus::ClientMetric& m) -> RdmaPortConfig* {
      auto it =
          rdma_ports_.find({std::string(LabelOr(m, "device")), std::string(LabelOr(m, "port"))});
      return it == rdma_ports_.end() ? nullptr : &it->second;
    };
    ForEachSample(families, rdma::kPortMaxMtu, [&](const prometheus::ClientMetric& m, double v) {
      if (RdmaPortConfig* p = known(m)) p->max_mtu = WholeNumber(v);
    });
    ForEachSample(families, rdma::kPortState, [&](const prometheus::ClientMetric& m, double v) {
      if (RdmaPortConfig* p = known(m)) p->state = WholeNumber(v);
    });
    ForEachSample(families, rdma::kPortInfo, [&](const prometheus::ClientMetric& m, double) {
      if (RdmaPortConfig* p = known(m)) {
        p->netdev = LabelOr(m, "netdev");
        p->link_layer = LabelOr(m, "link_layer");
      }
    });
  }

  void Ethtool(const Families& families) {
    // PFC first: a netdev that reports it is a fabric port even without the rdma collector.
    ForEachSample(families, ethtool::kPfcEnabled, [&](const prometheus::ClientMetric& m, double v) {
      // A sample without its netdev is no port a finding could name.
      if (auto prio = Priority(LabelValue(m, "priority")); prio && !LabelOr(m, "netdev").empty()) {
        Port(LabelOr(m, "netdev")).pfc[*prio] = v != 0;
      }
    });
    // The rest only for the fabric ports.
    auto port = [&](const prometheus::ClientMetric& m) -> PortConfig* {
      const std::string_view netdev = LabelOr(m, "netdev");
      return Known(netdev) ? &Port(netdev) : nullptr;
    };
    ForEachSample(families, ethtool::kQosTrust, [&](const prometheus::ClientMetric& m, double) {
      if (PortConfig* p = port(m)) p->trust = LabelOr(m, "trust");
    });
    ForEachSample(families, ethtool::kQosDscpMap, [&](const prometheus::ClientMetric& m, double) {
      if (PortConfig* p = port(m)) p->dscp_map = LabelOr(m, "map");
    });
    ForEachSample(families, ethtool::kPfcStormTimeout,
                  [&](const prometheus::ClientMetric& m, double v) {
                    if (PortConfig* p = port(m); p && std::isfinite(v)) {
                      p->storm_timeout_seconds = v;
                    }
                  });
    ForEachSample(families, ethtool::kPauseEnabled,
                  [&](const prometheus::ClientMetric& m, double v) {
                    PortConfig* p = port(m);
                    if (p == nullptr) return;
                    const std::string_view direction = LabelOr(m, "direction");
                    if (direction == "rx") p->pause_rx = v != 0;
                    if (direction == "tx") p->pause_tx = v != 0;
                  });
    ForEachSample(families, ethtool::kEcnEnabled, [&](const prometheus::ClientMetric& m, double v) {
      PortConfig* p = port(m);
      auto prio = Priority(LabelValue(m, "priority"));
      const std::string_view role = LabelOr(m, "role");
      if (p == nullptr || !prio || (role != "np" && role != "rp")) return;
      p->ecn[*prio][role == "np" ? 0 : 1] = v != 0;
    });
    ForEachSample(families, ethtool::kPrioBytes, [&](const prometheus::ClientMetric& m, double v) {
      PortConfig* p = port(m);
      auto prio = Priority(LabelValue(m, "priority"));
      if (p == nullptr || !prio || !std::isfinite(v) || v < 0) return;
      p->priority_bytes[*prio] = p->priority_bytes[*prio].value_or(0) + v;
    });
  }

  void Netdev(const Families& families) {
    ForEachSample(families, netdev::kMtu, [&](const prometheus::ClientMetric& m, double v) {
      const std::string_view netdev = LabelOr(m, "netdev");
      if (Known(netdev)) Port(netdev).mtu = WholeNumber(v);
    });
  }

  void Topology(const Families& families) {
    auto function = [&](const prometheus::ClientMetric& m) -> PciFunction& {
      const std::string bdf(LabelOr(m, "device"));
      PciFunction& f = out_.functions[bdf];
      f.bdf = bdf;
      if (f.role.empty()) f.role = LabelOr(m, "role");
      return f;
    };
    ForEachSample(families, topology::kDeviceInfo, [&](const prometheus::ClientMetric& m, double) {
      function(m).upstream = LabelOr(m, "upstream");
    });
    ForEachSample(families, topology::kMaxPayload,
                  [&](const prometheus::ClientMetric& m, double v) {
                    function(m).max_payload = WholeNumber(v);
                  });
    ForEachSample(families, topology::kMaxReadRequest,
                  [&](const prometheus::ClientMetric& m, double v) {
                    function(m).max_read_request = WholeNumber(v);
                  });
    ForEachSample(families, topology::kAcsControl,
                  [&](const prometheus::ClientMetric& m, double v) {
                    const std::string_view control = LabelOr(m, "control");
                    if (control == "request_redirect") function(m).request_redirect = v != 0;
                    if (control == "completion_redirect") function(m).completion_redirect = v != 0;
                  });
    ForEachSample(families, topology::kNearest, [&](const prometheus::ClientMetric& m, double) {
      out_.nearest.push_back({std::string(LabelOr(m, "gpu")), std::string(LabelOr(m, "nic")),
                              std::string(LabelOr(m, "level"))});
    });
    ForEachSample(families, topology::kGpuInfo, [&](const prometheus::ClientMetric& m, double) {
      out_.nvidia_gpu |= LabelOr(m, "vendor_id") == "0x10de";
    });
    ForEachSample(families, topology::kNicInfo, [&](const prometheus::ClientMetric& m, double) {
      out_.rdma_nic |= !LabelOr(m, "rdma_device").empty();
    });
    ForEachSample(families, topology::kPeermem, [&](const prometheus::ClientMetric& m, double v) {
      out_.gpudirect_modules[std::string(LabelOr(m, "module"))] = v != 0;
    });
  }

  void Finish() {
    for (auto& [netdev, port] : ports_) out_.ports.push_back(std::move(port));
    for (auto& [key, port] : rdma_ports_) out_.rdma_ports.push_back(std::move(port));
  }

 private:
  RdmaPortConfig& RdmaPort(const prometheus::ClientMetric& m) {
    std::pair<std::string, std::string> key{LabelOr(m, "device"), LabelOr(m, "port")};
    auto it = rdma_ports_.find(key);
    if (it == rdma_ports_.end()) {
      RdmaPortConfig port;
      port.device = key.first;
      port.port = key.second;
      it = rdma_ports_.emplace(std::move(key), std::move(port)).first;
    }
    return it->second;
  }

  NodeConfig& out_;
  std::map<std::string, PortConfig, std::less<>> ports_;
  std::map<std::pair<std::string, std::string>, RdmaPortConfig> rdma_ports_;
};

}  // namespace

bool PortConfig::AnyPfc() const {
  return std::any_of(pfc.begin(), pfc.end(), [](const auto& on) { return on.value_or(false); });
}

NodeConfig BuildNodeConfig(const ConfigSources& sources) {
  NodeConfig config;
  Builder builder(config);
  if (sources.rdma != nullptr) builder.Rdma(*sources.rdma);
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
