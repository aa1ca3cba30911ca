#include "detectors/core/attribution.h"

#include <string_view>

namespace fabricwatch::detect {

void Attribute(Finding& finding, const NodeModel& node) {
  std::string_view device, netdev;
  for (const auto& [key, value] : finding.entity) {
    if (key == "device") device = value;
    if (key == "netdev") netdev = value;
  }
  finding.peer.clear();
  const RdmaPort* port = node.PortNamedBy(finding.entity);
  if (port != nullptr) {
    if (device.empty()) device = port->id.device;
    if (const Peer* peer = node.PeerOf(*port)) finding.peer = peer->Text();
  } else if (const Peer* peer = node.PeerOfNetdev(netdev)) {
    // A netdev with no RDMA port (a plain Ethernet port the peer collector saw by LLDP).
    finding.peer = peer->Text();
  }
  finding.jobs = node.JobsOn(device);
}

}  // namespace fabricwatch::detect
