#pragma once
// What the agent's ProbeRunner reads from the collectors' latest snapshots (issue 37 part 3),
// apart from the runner so that the runner stays testable with plain callables:
//   - the jobs on an RDMA device: the jobs collector's fabric_device_job_info, the family the
//     engine's attribution reads (detectors/core/attribution.h);
//   - a port's expected rate: link_degraded's expectation of the port (the --shape.file manifest,
//     else what same-model siblings run at: detectors/link_degraded/expectation.h), else the rate
//     the port reports (fabric_rdma_port_rate_bytes_per_second).
// The learned history of link_degraded stays inside the detector (its state); the siblings'
// best rate is the part of the learned shape that needs no history.
//
// Thread-safety: the callables read the store (itself thread-safe) and a manifest loaded once.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exporter/pipeline/snapshot_store.h"
#include "exporter/probe/probe_runner.h"

namespace fabricwatch::probe {

// The RDMA ports of the node: <sysfs_root>/class/infiniband/<device>/ports/<n>, sorted; none
// when the directory is absent or unreadable.
std::vector<PortRef> ListRdmaPorts(const std::string& sysfs_root);

// hooks.confirm_with_probe: a loopback probe turns the packets around inside the HCA, so it does
// not cover the cable; a wire finding (link_flap, ber_growth) on a port whose HCA is healthy is
// then suppressed_probe_healthy. The warning the agent logs at start when any of `ports` has no
// probe.partners entry; nullopt when every port has one (or there is none).
std::optional<std::string> LoopbackOnlyWarning(const std::vector<PortRef>& ports,
                                               const ProbeConfig& config);

// nullopt when the jobs collector has not reported (off, or not yet).
JobsOnDevice JobsFromStore(const exporter::SnapshotStore& store);
// `shape_file`: --shape.file, "" for none; one that does not load is ignored (link_degraded
// reports it).
ExpectedRate ExpectedRateFromStore(const exporter::SnapshotStore& store,
                                   const std::string& shape_file);

}  // namespace fabricwatch::probe
