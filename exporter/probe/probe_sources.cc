#include "exporter/probe/probe_sources.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "collectors/ethtool/ethtool_metrics.h"
#include "collectors/jobs/jobs_metrics.h"
#include "collectors/netdev/netdev_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/topology/topology_metrics.h"
#include "detectors/core/snapshot_lookup.h"
#include "detectors/link_degraded/expectation.h"
#include "detectors/link_degraded/manifest.h"
#include "detectors/link_degraded/port_shape.h"

namespace fabricwatch::probe {

std::vector<PortRef> ListRdmaPorts(const std::string& sysfs_root) {
  std::vector<PortRef> ports;
  std::error_code ec;
  const std::filesystem::path root = std::filesystem::path(sysfs_root) / "class" / "infiniband";
  for (const auto& device : std::filesystem::directory_iterator(root, ec)) {
    std::error_code port_ec;
    for (const auto& port : std::filesystem::directory_iterator(device.path() / "ports", port_ec)) {
      if (auto ref = ParsePortText(device.path().filename().string() + "/" +
                                   port.path().filename().string())) {
        ports.push_back(std::move(*ref));
      }
    }
  }
  std::sort(ports.begin(), ports.end());
  return ports;
}

std::optional<std::string> LoopbackOnlyWarning(const std::vector<PortRef>& ports,
                                               const ProbeConfig& config) {
  std::vector<std::string> loopback;
  for (const PortRef& port : ports) {
    if (!config.partners.contains(port)) loopback.push_back(PortText(port));
  }
  if (loopback.empty()) return std::nullopt;
  return fmt::format(
      "loopback probes do not cover the cable: {} {} no probe.partners entry, so "
      "hooks.confirm_with_probe probes {} by loopback through the HCA, and a link_flap or "
      "ber_growth warning there is suppressed (suppressed_probe_healthy) whenever the HCA is "
      "healthy, even when the cable is at fault; configure probe.partners (a second port of the "
      "node on the same fabric) to probe the wire (docs/design.md §5.11)",
      fmt::join(loopback, ", "), loopback.size() == 1 ? "has" : "have",
      loopback.size() == 1 ? "it" : "them");
}

JobsOnDevice JobsFromStore(const exporter::SnapshotStore& store) {
  return [&store](const std::string& device) -> std::optional<std::vector<std::string>> {
    std::shared_ptr<const exporter::Snapshot> jobs = store.Latest(jobs::kCollector);
    if (jobs == nullptr) return std::nullopt;
    std::vector<std::string> out;
    detect::ForEachSample(jobs->families, jobs::kDeviceJobInfo,
                          [&](const prometheus::ClientMetric& metric, double) {
                            auto label = [&](LabelOf<jobs::kDeviceJobInfo> name) {
                              return std::string(Label<jobs::kDeviceJobInfo>(metric, name));
                            };
                            if (label("device") != device) return;
                            // "slurm:1234", as attribution names a job (Finding::jobs).
                            out.push_back(label("scheduler") + ":" + label("job_id"));
                          });
    return out;
  };
}

ExpectedRate ExpectedRateFromStore(const exporter::SnapshotStore& store,
                                   const std::string& shape_file) {
  std::shared_ptr<const detect::shape::Manifest> manifest;
  if (!shape_file.empty()) {
    if (auto loaded = detect::shape::LoadManifest(shape_file); loaded) {
      manifest = std::make_shared<const detect::shape::Manifest>(std::move(*loaded));
    }
  }
  return [&store, manifest](const PortRef& port) -> double {
    const auto rdma = store.Latest(rdma::kCollector);
    if (rdma == nullptr) return 0;
    const std::string number = std::to_string(port.port);
    const std::optional<double> reported = detect::FindValue<rdma::kPortRate>(
        rdma->families, {{"device", port.device}, {"port", number}});
    detect::NodeModelBuilder node;
    for (std::string_view collector : detect::NodeModelBuilder::Collectors()) {
      if (const auto snapshot = store.Latest(collector))
        node.Observe(collector, snapshot->families);
    }
    const detect::shape::NodeShape shape = detect::shape::BuildShape(node.model());
    std::optional<double> expected_gbps;
    const detect::shape::ExpectationModel model;  // no history: manifest and siblings
    for (const auto& [key, expectation] : model.Expect(shape, manifest.get())) {
      const detect::shape::PortShape* shaped = shape.Find(key);
      if (shaped != nullptr && shaped->device == port.device &&
          key.port == static_cast<int>(port.port)) {
        expected_gbps = expectation.rate_gbps.value;
      }
    }
    return ExpectedProbeRate(expected_gbps, reported);
  };
}

}  // namespace fabricwatch::probe
