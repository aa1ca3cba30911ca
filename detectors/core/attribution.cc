#include "detectors/core/attribution.h"

#include "collectors/jobs/jobs_metrics.h"
#include "collectors/peer/peer_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "detectors/core/snapshot_lookup.h"

namespace fabricwatch::detect {
namespace {

std::string Label(const prometheus::ClientMetric& metric, std::string_view name) {
  return std::string(LabelValue(metric, name).value_or(""));
}

std::string EntityLabel(const Finding& finding, std::string_view name) {
  for (const auto& [key, value] : finding.entity) {
    if (key == name) return value;
  }
  return "";
}

}  // namespace

std::vector<std::string> Attribution::Inputs() { return {"rdma", "peer", "jobs"}; }

void Attribution::Observe(std::string_view collector,
                          const std::vector<prometheus::MetricFamily>& families) {
  if (collector == "rdma") {
    ports_.clear();
    ForEachSample(families, rdma::kPortInfo, [&](const prometheus::ClientMetric& m, double) {
      ports_.push_back({Label(m, "device"), Label(m, "port"), Label(m, "netdev")});
    });
  } else if (collector == "peer") {
    peer_by_netdev_.clear();
    peer_by_port_.clear();
    ForEachSample(families, peer::kPeerInfo, [&](const prometheus::ClientMetric& m, double) {
      const std::string peer = Label(m, "peer_name") + " " + Label(m, "peer_port");
      if (const std::string netdev = Label(m, "netdev"); !netdev.empty()) {
        peer_by_netdev_[netdev] = peer;
      }
      if (const std::string device = Label(m, "device"); !device.empty()) {
        peer_by_port_[{device, Label(m, "port")}] = peer;
      }
    });
  } else if (collector == "jobs") {
    jobs_by_device_.clear();
    ForEachSample(families, jobs::kDeviceJobInfo, [&](const prometheus::ClientMetric& m, double) {
      jobs_by_device_[Label(m, "device")].insert(Label(m, "scheduler") + ":" + Label(m, "job_id"));
    });
  }
}

void Attribution::Annotate(Finding& finding) const {
  std::string device = EntityLabel(finding, "device");
  std::string port = EntityLabel(finding, "port");
  std::string netdev = EntityLabel(finding, "netdev");
  // Complete the port from the rdma join: a RoCE finding names only its netdev, a driver_fault
  // finding its device and netdev.
  for (const Port& p : ports_) {
    if (!netdev.empty() && p.netdev == netdev && (device.empty() || device == p.device)) {
      if (device.empty()) device = p.device;
      if (port.empty()) port = p.port;
      break;
    }
    if (netdev.empty() && !device.empty() && p.device == device &&
        (port.empty() || p.port == port)) {
      netdev = p.netdev;
      if (port.empty()) port = p.port;
      break;
    }
  }
  finding.peer.clear();
  if (auto it = peer_by_port_.find({device, port}); !device.empty() && it != peer_by_port_.end()) {
    finding.peer = it->second;
  } else if (auto n = peer_by_netdev_.find(netdev); !netdev.empty() && n != peer_by_netdev_.end()) {
    finding.peer = n->second;
  }
  finding.jobs.clear();
  if (auto it = jobs_by_device_.find(device); !device.empty() && it != jobs_by_device_.end()) {
    finding.jobs.assign(it->second.begin(), it->second.end());
  }
}

}  // namespace fabricwatch::detect
