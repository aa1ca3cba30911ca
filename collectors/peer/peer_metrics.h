#pragma once
// The peer collector's family (issue 24, docs/design.md §5.10): the far end of each fabric port,
// read by the detector engine's attribution, the alerts (a group_left join) and the status page.

#include "collectors/core/collector_family.h"
#include "base/metric_sink.h"

namespace fabricwatch::peer {

// The collector that exports the families below: its name in the collector registry
// (collectors/registry.cc), in --collector.peer and in Snapshot::collector.
inline constexpr std::string_view kCollector = "peer";
// Its families carry it in their type (collectors/core/collector_family.h).
using Family = FamilyOf<kCollector>;

inline constexpr Family kPeerInfo{
    "fabric_port_peer_info",
    "The neighbour at the far end of the port: peer_name (LLDP system name, else chassis id; IB "
    "node description, else node GUID), peer_port (LLDP: the port as the switch names it, the "
    "port id, or its description when the id is a MAC, an address or a numeric local id such as "
    "a Junos ifIndex; IB port number), peer_id (LLDP chassis id or IB node GUID), and where it "
    "was learned (source: lldpd, lldp, smp). Absent when no neighbour is known. Constant 1.",
    MetricKind::kInfo,
    {"device", "port", "netdev", "peer_name", "peer_port", "peer_id", "source"}};

// The reasons are fixed lists (peer::LldpKeyValueSkipName and kLldpUnreadable; kSmpMalformed and
// kSmpNoDescription in peer.cc): the label set is bounded.
inline constexpr Family kPeerBadRecords{
    "fabric_port_peer_bad_records",
    "Neighbour records of the latest collection that could not be used whole, by source and "
    "reason. source=lldpd (the lldpctl -f keyvalue text of --path.lldp), each skipped while the "
    "file's other neighbours are kept: incomplete (no chassis id or port id: a block cut short), "
    "malformed (a lldp. line that is not lldp.<netdev>.<field>=value), invalid_utf8, too_long "
    "(a value over 255 bytes), bad_ttl, unreadable (a port's file that could not be read, or over "
    "1 MiB: none of its neighbours). source=smp: malformed (a NodeInfo that cannot be read: "
    "no peer), no_description (NodeInfo without its NodeDescription: the peer is exported with "
    "its GUID as peer_name). Each is also logged when it starts and when it ends.",
    MetricKind::kGauge,
    {"source", "reason"}};

}  // namespace fabricwatch::peer
