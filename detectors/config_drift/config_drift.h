#pragma once
// config_drift: the lossless-fabric, MTU and GPUDirect settings that silently cost bandwidth
// (issue 21, README "Configuration drift", docs/detection.md §9.12). None of them moves a counter
// until traffic suffers, so they are checked continuously, as the collectors report them.
//
// Inputs: ethtool (PFC enabled per priority, trust, DSCP map, storm-prevention timeout, global
// pause, RoCE ECN), netdev (MTU), rdma (which netdevs are RoCE ports; the IB MTU, port state
// and netdev of each RDMA port), topology (GPUs, NICs, the bridges between them, MPS, MRRS, ACS
// control, the GPUDirect RDMA module).
//
// The expected value of a setting comes, in this order, from
//   config    the detector's options (roce-priority, mtu, ib-mtu, trust): authoritative;
//   siblings  the strict majority of the node's RoCE ports (more than half agree; for ib_mtu
//             the ACTIVE RDMA ports of the same link layer);
//   traffic   the priority that carries the port's RoCE traffic (the most bytes, priorities
//             1-7), for PFC on a port whose siblings give no majority.
// A node where every port agrees and nothing is configured raises nothing: with no lossless
// intent (no priority PFC-enabled on any port, no roce-priority) nothing about PFC, ECN or
// storm prevention is expected.
//
// Findings: severity warning, drain-eligible only with drain-eligible: true. Entity labels
// (docs/design.md §5.5) and the `setting` label:
//   setting=pfc               {netdev, priority}  PFC off on the RoCE priority, or on a priority
//                                                 the siblings (or the configuration) leave off
//   setting=ecn               {netdev, priority, role=np|rp}  ECN off on a PFC-enabled priority
//   setting=trust             {netdev}            trust pcp/dscp unlike the config or siblings
//   setting=dscp_map          {netdev}            DSCP -> priority map unlike the siblings
//   setting=storm_prevention  {netdev}            PFC on, storm-prevention timeout 0 (off) or
//                                                 above storm-prevention-max
//   setting=global_pause      {netdev}            802.3x rx or tx pause on while PFC is on
//   setting=mtu               {netdev}            MTU unlike the config or the siblings
//   setting=ib_mtu            {device, port[, netdev]}  active IB MTU (ibv_query_port) of an
//                                                 ACTIVE RDMA port unlike ib-mtu or the siblings;
//                                                 netdev where fabric_rdma_port_info names one
//   setting=gpudirect_module  {}                  nvidia_peermem / nv_peer_mem not loaded while
//                                                 NVIDIA GPUs and RDMA NICs are present
//   setting=acs_redirect      {device, role=bridge}  ACS P2P request or completion redirect on a
//                                                 bridge between a GPU and its nearest NIC below
//                                                 their common switch
//   setting=max_payload       {device, role}      MPS of a function unlike the rest of its
//                                                 GPU-NIC path
//   setting=max_read_request  {device, role}      MRRS of a GPU or NIC unlike the same-role
//                                                 functions on the node's GPU-NIC paths
// Each finding's reason names the entity, the setting, the value seen, the value expected and
// where the expectation came from; evidence carries observed and expected as numbers
// (fabric_anomaly_value = observed). A finding needs its condition for hold-for (settings pass
// through transient states while an operator reconfigures a port) and clears after clear-for.
//
// Exported: fabric_config_setting_drifted{subject, setting} per checked (port or function,
// setting): 1 while the setting differs from its expectation (before hold-for), 0 while it agrees
// — the dashboard's configuration matrix. subject is the netdev, the PCI address,
// "<device>/<port>" (ib_mtu), or "node".

#include <memory>
#include <span>

#include "base/metric_sink.h"
#include "base/status.h"
#include "detectors/core/detector.h"
#include "detectors/core/inputs.h"
#include "detectors/core/options.h"

namespace fabricwatch::detect {

std::span<const DetectorOptionSpec> ConfigDriftDetectorOptions();
std::span<const MetricDesc> ConfigDriftDetectorMetrics();
std::span<const MetricInput> ConfigDriftDetectorInputs();
Result<std::unique_ptr<Detector>> MakeConfigDriftDetector(const DetectorOptions& options);
// The factory's checks of `options` without building the detector (config validation).
Status ValidateConfigDriftDetectorOptions(const DetectorOptions& options);

}  // namespace fabricwatch::detect
