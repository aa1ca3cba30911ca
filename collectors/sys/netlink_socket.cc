#include "collectors/sys/netlink_socket.h"

#include <linux/netlink.h>
#include <netlink/genl/genl.h>
#include <sys/socket.h>

#include <string>

namespace fabricwatch::sys {

Result<NlSock> ConnectNetlink(int protocol, std::string_view what) {
  NlSock sock(nl_socket_alloc(), &nl_socket_free);
  if (!sock) return Error(StatusCode::kInternal, std::string(what) + ": nl_socket_alloc failed");
  nl_socket_disable_auto_ack(sock.get());
  const int err =
      protocol == NETLINK_GENERIC ? genl_connect(sock.get()) : nl_connect(sock.get(), protocol);
  if (err < 0) {
    return Error(StatusCode::kUnavailable, std::string(what) + " connect: " + nl_geterror(err));
  }
  const int fd = nl_socket_get_fd(sock.get());
  constexpr timeval kReplyTimeout{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &kReplyTimeout, sizeof(kReplyTimeout));
  int one = 1;
  setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
  setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
  return sock;
}

}  // namespace fabricwatch::sys
