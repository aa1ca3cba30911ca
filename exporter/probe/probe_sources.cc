#include "exporter/probe/probe_sources.h"

#include "collectors/jobs/jobs_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "detectors/core/snapshot_lookup.h"
#include "detectors/link_degraded/expectation.h"
#include "detectors/link_degraded/manifest.h"
#include "detectors/link_degraded/port_shape.h"

namespace fabricwatch::probe {

JobsOnDevice JobsFromStore(const exporter::SnapshotStore& store) {
  return [&store](const std::string& device) -> std::optional<std::vector<std::string>> {
    std::shared_ptr<const exporter::Snapshot> jobs = store.Latest("jobs");
    if (jobs == nullptr) return std::nullopt;
    std::vector<std::string> out;
    detect::ForEachSample(jobs->families, jobs::kDeviceJobInfo,
                          [&](const prometheus::ClientMetric& metric, double) {
                            if (detect::LabelOr(metric, "device") != device) return;
                            // "slurm:1234", as attribution names a job (Finding::jobs).
                            out.push_back(std::string(detect::LabelOr(metric, "scheduler")) + ":" +
                                          std::string(detect::LabelOr(metric, "job_id")));
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
    auto latest = [&](const char* name) { return store.Latest(name); };
    const auto rdma = latest("rdma");
    if (rdma == nullptr) return 0;
    const auto netdev = latest("netdev");
    const auto ethtool = latest("ethtool");
    const auto topology = latest("topology");
    const std::string number = std::to_string(port.port);
    const std::optional<double> reported = detect::FindValue(
        rdma->families, rdma::kPortRate, {{"device", port.device}, {"port", number}});
    const detect::shape::NodeShape shape = detect::shape::BuildShape(
        {&rdma->families, netdev ? &netdev->families : nullptr,
         ethtool ? &ethtool->families : nullptr, topology ? &topology->families : nullptr});
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
