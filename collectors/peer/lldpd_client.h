#pragma once
// Neighbours from a running lldpd through liblldpctl (Debian liblldpctl-dev, lldpd 1.0), the
// `lldpd` source of the `peer` collector (issue 24, docs/design.md §5.10).
//
// One query: connect to lldpd's control socket (default /run/lldpd.socket, lldpd -u), list its
// interfaces (lldpctl_get_interfaces), and for each the neighbours of its port
// (lldpctl_k_port_neighbors): chassis id and subtype, system name and description, the first
// management address, port id and subtype, port description, TTL. liblldpctl formats the ids
// itself (a MAC as aa:bb:.., an address as text). The socket is ours, not the library's default
// transport, so that every read and write is bounded by the query's timeout (the default one
// blocks without limit) and the fd has an RAII owner.
//
// lldpd stores what the peer sent as it came: a neighbour whose strings are not valid UTF-8 or
// exceed 255 bytes is skipped and counted, as the frame parser (lldp_frame.h) would reject it.
// More than one neighbour on an interface: the first lldpd lists is kept.
//
// Errors: kUnavailable "no lldpd at <socket>" when nothing listens there (ENOENT, ECONNREFUSED),
// kPermissionDenied when the socket refuses us (it is root:_lldpd 0660), kDeadlineExceeded when
// lldpd does not answer in time, kUnavailable for a liblldpctl error (its message appended).
// liblldpctl.so.4 is loaded when a query first reaches a listening lldpd, not linked
// (collectors/sys/shared_library.h, docs/libraries.md): without it such a query is kUnavailable
// naming the library, logged once.
// Thread-safety: each call has its own connection; calls may run concurrently.

#include <chrono>
#include <map>
#include <string>

#include "base/status.h"
#include "collectors/peer/lldp_frame.h"

namespace fabricwatch::peer {

inline constexpr std::string_view kDefaultLldpdSocket = "/run/lldpd.socket";

struct LldpdQueryOptions {
  std::string socket_path = std::string(kDefaultLldpdSocket);
  std::chrono::milliseconds timeout{2000};  // for the whole query
};

struct LldpdNeighbors {
  std::map<std::string, LldpNeighbor, std::less<>> by_netdev;
  size_t rejected = 0;  // neighbours skipped for strings that are not valid UTF-8 or too long
};

Result<LldpdNeighbors> QueryLldpdNeighbors(const LldpdQueryOptions& options = {});

}  // namespace fabricwatch::peer
