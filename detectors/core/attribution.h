#pragma once
// Attribution (issue 24, docs/design.md §5.10): who else a finding concerns. After each
// evaluation the detector engine hands every finding to Annotate(), which fills
//   Finding::peer  "peer_name peer_port" of the neighbour at the far end of the finding's port,
//                  from the peer collector's fabric_port_peer_info;
//   Finding::jobs  "scheduler:job" of the jobs whose processes hold the finding's RDMA device
//                  open, from the jobs collector's fabric_device_job_info.
// A finding names its port as {device, port} (IB), {netdev} (RoCE), or {device, netdev}
// (driver_fault): the rdma collector's fabric_rdma_port_info joins netdev <-> device/port, so a
// netdev finding gets its device's jobs and a device finding its netdev's peer. Nothing known:
// the fields stay empty (never a placeholder).
//
// Thread-safety: none (the engine's thread).

#include <prometheus/metric_family.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "detectors/core/detector.h"

namespace fabricwatch::detect {

class Attribution {
 public:
  // The collectors whose snapshots Observe() wants (besides the detectors' inputs).
  static std::vector<std::string> Inputs();

  void Observe(std::string_view collector, const std::vector<prometheus::MetricFamily>& families);
  void Annotate(Finding& finding) const;

 private:
  struct Port {
    std::string device, port, netdev;
  };
  std::vector<Port> ports_;                            // rdma: netdev <-> device/port
  std::map<std::string, std::string> peer_by_netdev_;  // "name port"
  std::map<std::pair<std::string, std::string>, std::string> peer_by_port_;  // (device, port)
  std::map<std::string, std::set<std::string>> jobs_by_device_;              // "scheduler:job"
};

}  // namespace fabricwatch::detect
