#pragma once
// The PCIe checks of config_drift (issue 21, README "Configuration drift") on the paths between
// each GPU and its nearest NICs (fabric_topology_gpu_nearest_nic_info):
//   acs_redirect      a bridge below the GPU's and NIC's common ancestor (PIX/PXB paths: the
//                     switch ports peer-to-peer traffic enters) with ACS P2P Request Redirect or
//                     Completion Redirect on: the traffic goes up through the root complex
//                     (PCIe Base spec, ACS Control register; docs/reference.md);
//   max_payload       a function whose Max_Payload_Size differs from the strict majority of its
//                     path (GPU, bridges, NIC), or, without a majority, from the path's largest;
//   max_read_request  a GPU or NIC whose Max_Read_Request_Size differs from the strict majority
//                     of the same-role functions on the node's GPU-NIC paths (only requesters
//                     issue read requests, so bridges are not compared).
// A function on several paths is reported once.
//
// Thread-safety: values only.

#include "detectors/config_drift/drift_checks.h"

namespace fabricwatch::detect::drift {

void CheckPcie(const NodeConfig& config, DriftReport& report);

}  // namespace fabricwatch::detect::drift
