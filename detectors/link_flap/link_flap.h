#pragma once
// link_flap: flapping and outages of netdevs and InfiniBand ports (docs/detection.md §2.2, §8).
//
// Down events, per entity, from every source that sees them — deduplicated, because one real
// down shows up in several places:
//   netdev   rtnetlink carrier-down events (event-driven, collectors/sys/link_events.h),
//            fabric_netdev_carrier_down_changes_total (u32, wraps), fabric_ethtool_link_down_
//            events_total (mlx5 link_down_events_phy);
//   IB port  fabric_rdma_port_state leaving ACTIVE, fabric_rdma_port_link_downed_total (8-bit,
//            saturates);
//   both     libibverbs port_err events (fabric_rdma_port_events_total event="port_err", one
//            per transition: the listener drops rxe's repeats) of the IB port, or of the RoCE
//            port whose netdev it is. RoCE ports (link_layer Ethernet) are their netdev's
//            business, and a RoCE netdev's finding names its RDMA port too (device, port and
//            netdev labels; the lowest device/port when several share the netdev, as the last
//            fabric_rdma_port_info said: a sample without it changes no name); an
//            IPoIB netdev (the netdev label of an IB port's fabric_rdma_port_info) is its
//            port's: it is tracked, but only the port raises — one fault, one finding (and one
//            drain), and a module unplug on the netdev puts the port in maintenance.
// A sighting from one source confirms the oldest unconfirmed down of another source within
// `match-window`; only unmatched sightings are new downs. Counter arithmetic goes through
// CounterTracker (resets, wraps, saturation, §0.2), so none of them invents a down.
//
// Findings per entity, only the highest severity reported (identity = detector, severity,
// entity); a flapping reason says which sources saw the downs ("seen by netlink carrier events
// 6/6, verbs port_err events 6/6"):
//   critical (drain-eligible)  hard flapping: ≥ hard-count downs in hard-window (5 in 10 s,
//                              errdisable [S14]); the episode lasts until the flap penalty
//                              decays below `reuse` — the penalty clears it by itself;
//                              or sustained down: a port seen up is down ≥ down-after (30 s);
//   warning                    slow flapping ≥ slow-count in slow-window (2 in 6 h, NHC2005
//                              [S15]); flap penalty ≥ suppress until < reuse (AIED/BGP
//                              dampening [S17][S18]); downtime in downtime-window ≥ the NCCL
//                              budget (7.5 s in 1 h [S58][S59]), counted only once the port
//                              has been up (a port down or stuck since boot had no outage: it
//                              is link_degraded's);
//   critical (not drained)     micro-flapping that held for micro-flap-escalate-after (30 m);
//   warning                    IB micro-flaps: ≥ micro-flap-count (3) in micro-flap-window (10 m),
//                              each a successful link error recovery (fabric_rdma_port_link_
//                              error_recoveries_total: the PHY retrained without going down,
//                              IBTA LinkErrorRecoveryCounter) or a link_downed increment the
//                              port state never showed within match-window (a down+up shorter
//                              than the poll; a down the state showed is counted once, as a
//                              down, never as a micro-flap); clears when the window has fewer;
//   info (never drained)       maintenance: a module unplug (fabric_ethtool_module_events_total
//                              event="unplug") — downs within maintenance-window before or after
//                              it are not counted, and no other finding is raised meanwhile.
// Kernel log lines (collector kmsg) within cause-window name the cause of any finding ("; cause:
// module unplugged (kernel log)") and go to its log evidence; a "Cable unplugged" line starts
// maintenance like the ethtool unplug counter. They never raise a finding themselves.
// Netlink events of netdevs the netdev collector does not report (its device filter) are
// ignored. A device that disappears (hot-unplug) is not "down": its outage state is dropped and
// its counters re-baseline when it comes back.

#include <memory>
#include <span>

#include "base/metric_sink.h"
#include "base/status.h"
#include "detectors/core/detector.h"
#include "detectors/core/inputs.h"
#include "detectors/core/options.h"

namespace fabricwatch::detect {

std::span<const DetectorOptionSpec> LinkFlapDetectorOptions();
std::span<const MetricDesc> LinkFlapDetectorMetrics();
// The collector families it reads (detectors/core/inputs.h).
std::span<const MetricInput> LinkFlapDetectorInputs();
Result<std::unique_ptr<Detector>> MakeLinkFlapDetector(const DetectorOptions& options);
// The factory's checks of `options` without building the detector (config validation).
Status ValidateLinkFlapDetectorOptions(const DetectorOptions& options);

}  // namespace fabricwatch::detect
