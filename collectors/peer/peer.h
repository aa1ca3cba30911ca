#pragma once
// Collector `peer`: the neighbour at the far end of each fabric port (issue 24, docs/design.md
// §5.10), exported as fabric_port_peer_info (collectors/peer/peer_metrics.h).
//   InfiniBand  a one-hop directed-route NodeInfo + NodeDescription query through umad
//               (collectors/peer/smp_query.h) when a port is first seen ACTIVE, when it comes back
//               ACTIVE, and every `smp-refresh`; never per sample. --path.smp=DIR replays the
//               smpquery text instead (collectors/peer/smp_text.h).
//   Ethernet    LLDP (collectors/peer/peer_lldp.h): a running lldpd through liblldpctl, else
//               the agent's passive listener (CAP_NET_RAW); --path.lldp=DIR replays
//               `lldpctl -f keyvalue` text. A neighbour expires with its TTL.
// Without access to /dev/infiniband/umad*, lldpd or CAP_NET_RAW, those peers are absent and that
// is logged once.

#include <memory>
#include <span>

#include "collectors/core/collector.h"
#include "collectors/core/collector_info.h"

namespace fabricwatch::peer {

// Replays of the neighbours, in place of umad queries and lldpd (a replay root has neither).
inline constexpr SourceSpec kSmpReplay{
    .name = "smp",
    .help =
        "Replay directory of InfiniBand neighbours: DIR/<device>/<port>/nodeinfo and nodedesc "
        "with the text of smpquery -D nodeinfo|nodedesc 0,<port>, instead of umad queries"};
inline constexpr SourceSpec kLldpReplay{
    .name = "lldp",
    .help =
        "Replay directory of LLDP neighbours: DIR/<netdev> with the text of lldpctl -f "
        "keyvalue <netdev>"};

std::span<const CollectorOptionSpec> PeerOptions();
std::span<const SourceSpec> PeerSources();
std::span<const MetricDesc> PeerMetrics();
Result<std::unique_ptr<Collector>> NewPeerCollector(const CollectorContext& context);

}  // namespace fabricwatch::peer
