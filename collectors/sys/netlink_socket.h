#pragma once
// One libnl socket for a kernel netlink family, as the ethtool and RDMA netlink clients use it
// (docs/reference.md §3.2, §2.3): one reply per request, bounded waits, the kernel's error text.

#include <netlink/netlink.h>

#include <memory>
#include <string_view>

#include "base/status.h"

namespace fabricwatch::sys {

using NlSock = std::unique_ptr<nl_sock, void (*)(nl_sock*)>;
// A socket connected to `protocol` (NETLINK_GENERIC through genl_connect), with auto-ACK off (an
// ACK would only sit in the buffer until the next read), SO_RCVTIMEO 1 s (a kernel that never
// answers must not block a collector thread for good) and, best effort, the kernel's reason for
// an error as text without the echoed request (NETLINK_EXT_ACK/CAP_ACK, 4.12+). Errors read
// "<what> connect: <libnl's text>".
Result<NlSock> ConnectNetlink(int protocol, std::string_view what);

}  // namespace fabricwatch::sys
