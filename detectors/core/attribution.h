#pragma once
// Attribution (issue 24, docs/design.md §5.10): who else a finding concerns. After each
// evaluation the detector engine hands every finding to Attribute(), which fills
//   Finding::peer  "peer_name peer_port" of the neighbour at the far end of the finding's port,
//                  from the peer collector's fabric_port_peer_info;
//   Finding::jobs  "scheduler:job" of the jobs whose processes hold the finding's RDMA device
//                  open, from the jobs collector's fabric_device_job_info.
// A finding names its port as {device, port} (IB), {netdev} (RoCE), or {device, netdev}
// (driver_fault); the node model (detectors/core/node_model.h) joins netdev <-> device/port, so a
// netdev finding gets its device's jobs and a device finding its netdev's peer. A device-wide
// finding of a multi-port device has no one neighbour: it gets the device's jobs only. Nothing
// known: the fields stay empty (never a placeholder).

#include "detectors/core/detector.h"
#include "detectors/core/node_model.h"

namespace fabricwatch::detect {

void Attribute(Finding& finding, const NodeModel& node);

}  // namespace fabricwatch::detect
