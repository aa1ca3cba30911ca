#pragma once
// The node one hop from a local InfiniBand port, asked through umad (issue 24, docs/design.md
// §5.10): a directed-route SubnGet(NodeInfo) and SubnGet(NodeDescription) to the path "0,<port>"
// — what `smpquery -C <device> -P <port> -D nodeinfo 0,<port>` does — with libibmad from
// rdma-core. One query per port on discovery and on a port up event, never per sample.
// libibmad.so.5 is loaded on the first query, not linked (docs/libraries.md): without it every
// query fails with kUnavailable naming the library and the package (libibmad5), logged once.
//
// Opening /dev/infiniband/umadN needs read-write access to it (root, or a udev rule); without it
// the query fails with kPermissionDenied and the caller reports the peer absent, once.
// Not run on InfiniBand hardware here: tests use the smpquery text (collectors/peer/smp_text.h).

#include <chrono>
#include <optional>
#include <string>

#include "base/status.h"
#include "collectors/peer/smp_text.h"

namespace fabricwatch::peer {

struct SmpNeighbor {
  SmpNodeInfo info;
  std::string description;
  // Set when the NodeInfo came back but the NodeDescription did not (no reply, a corrupt or hostile
  // text): the neighbour is still known by its GUID, which ibnetdiscover and the SM name too.
  std::optional<Status> description_error;
};

// Queries the neighbour of `device` port `port`; `timeout` per MAD.
Result<SmpNeighbor> QuerySmpNeighbor(const std::string& device, int port,
                                     std::chrono::milliseconds timeout);

}  // namespace fabricwatch::peer
