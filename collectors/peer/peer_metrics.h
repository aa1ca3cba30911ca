#pragma once
// The peer collector's family (issue 24, docs/design.md §5.10): the far end of each fabric port,
// read by the detector engine's attribution, the alerts (a group_left join) and the status page.

#include "collectors/core/metric_sink.h"

namespace fabricwatch::peer {

inline constexpr MetricDesc kPeerInfo{
    "fabric_port_peer_info",
    "The neighbour at the far end of the port: peer_name (LLDP system name or IB node "
    "description), peer_port (LLDP port id or IB port number), peer_id (LLDP chassis id or IB "
    "node GUID), and where it was learned (source: lldpd, lldp, smp). Absent when no neighbour is "
    "known. Constant 1.",
    MetricKind::kInfo,
    {"device", "port", "netdev", "peer_name", "peer_port", "peer_id", "source"}};

}  // namespace fabricwatch::peer
