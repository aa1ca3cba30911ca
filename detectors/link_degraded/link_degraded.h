#pragma once
// link_degraded: fabric ports that fall short of the node's shape — the faults that sit still and
// move no counter (issue 20, README "Fabric shape").
//
// Inputs: the shape (detectors/link_degraded/port_shape.h: rdma, netdev, ethtool, topology
// families) and the expectation (expectation.h: --shape.file manifest, the majority of
// same-model siblings, each port's own past best from the state file). Evaluated on every rdma
// snapshot (1 s), with the latest netdev, ethtool and topology families.
//
// Findings (identity: detector, severity, entity; entity {device, port} for InfiniBand ports,
// {netdev} for RoCE ports, {device} for firmware, none for a manifest group's count):
//   critical  width loss: fewer lanes than expected (4X -> 2X or 1X), for degraded-for;
//   warning   speed loss: a lower lane speed than expected (NDR -> HDR), or for an Ethernet port
//             without a lane count a lower speed than expected, for degraded-for; an Ethernet
//             port with no siblings is also held to its fastest supported link mode;
//   critical  stuck: an InfiniBand port never seen up, its physical link up (LinkUp) but logically
//             INIT or ARMED (sm_lid 0: no subnet manager), for stuck-for;
//   critical  down: a port never seen up that should be up (manifest state ACTIVE, or up on most
//             same-model siblings with its port number on other cards), for down-for;
//   critical  missing: an HCA port that the manifest lists or the state file has seen, absent,
//             for missing-for; fewer ports than a manifest group's count;
//   warning   netdev missing: a port whose netdev was seen before has none, for missing-for;
//   warning   firmware (or board, HCA type, link layer) that differs from the majority of the
//             same-board siblings or from the manifest, for degraded-for;
//   critical / warning  a NIC's PCIe link width / speed below the manifest, while the link runs
//             at the function's own maximum (below its maximum, pcie_degraded reports it: one
//             fault, one finding).
// Coordination with link_flap: every outage of a port that has ever been up (the state file's
// history included) is link_flap's (sustained down, flapping, downtime budget; it keeps its own
// seen-up state across restarts). link_degraded raises down and stuck only for a port never seen
// up — a cable missing since the node was built, a port stuck in INIT since boot — and link_flap
// counts no downtime for such a port: one fault, one finding.
// A port trains for a few seconds through lower rates: every finding needs its condition to
// hold for its hold time, and clears after clear-for of health. Severity critical is
// drain-eligible by default (drain-severity).

#include <memory>
#include <span>

#include "base/metric_sink.h"
#include "base/status.h"
#include "detectors/core/detector.h"
#include "detectors/core/inputs.h"
#include "detectors/core/options.h"

namespace fabricwatch::detect {

std::span<const DetectorOptionSpec> LinkDegradedDetectorOptions();
std::span<const MetricDesc> LinkDegradedDetectorMetrics();
// The collector families it reads (detectors/core/inputs.h): the shape's (port_shape.h).
std::span<const MetricInput> LinkDegradedDetectorInputs();
Result<std::unique_ptr<Detector>> MakeLinkDegradedDetector(const DetectorOptions& options);
// The factory's checks of `options` without building the detector (config validation).
Status ValidateLinkDegradedDetectorOptions(const DetectorOptions& options);

}  // namespace fabricwatch::detect
