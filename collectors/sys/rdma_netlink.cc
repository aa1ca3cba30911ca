#include "collectors/sys/rdma_netlink.h"

#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>

namespace fabricwatch::sys {
namespace {

constexpr auto kReplyDeadline = std::chrono::seconds(1);
// An mlx5 port's ~70 counters make a reply of about 3 KiB (an entry is ~40 bytes: its nest, a
// name of ~20 bytes and the padded u64); the kernel builds a reply in one NLMSG_DEFAULT_SIZE skb
// (about a page), so a reply never exceeds that, and a dump message holds one device.
constexpr size_t kReceiveBufferBytes = 32 * 1024;

Status Timeout(std::string_view context) {
  return Status(StatusCode::kDeadlineExceeded, std::string(context) + ": no reply within 1 s",
                ETIMEDOUT);
}

}  // namespace

RdmaNetlink::RdmaNetlink()
    : sock_(nullptr, &nl_socket_free), rx_(kReceiveBufferBytes / sizeof(uint64_t)) {}

RdmaNetlink::~RdmaNetlink() = default;

Status RdmaNetlink::Open() {
  if (sock_) return Status::Ok();
  // SO_RCVTIMEO is a backstop only here: Transact polls with the time left.
  auto sock = ConnectNetlink(NETLINK_RDMA, "RDMA netlink (NETLINK_RDMA)");
  if (!sock) return sock.error();
  sock_ = std::move(*sock);
  return Status::Ok();
}

template <typename Handle>
Status RdmaNetlink::Transact(size_t length, std::string_view context, Handle&& handle) {
  ++requests_;
  const int fd = nl_socket_get_fd(sock_.get());
  for (;;) {
    if (::send(fd, request_.data(), length, 0) >= 0) break;
    if (errno != EINTR) return FromErrno(errno, std::string(context) + ": send");
  }
  const uint32_t seq = seq_;
  // The whole exchange is bounded by kReplyDeadline: each wait is a poll() for the time left,
  // then a recv that does not block (SO_RCVTIMEO alone would allow ~2x the deadline).
  const auto deadline = std::chrono::steady_clock::now() + kReplyDeadline;
  auto* buffer = reinterpret_cast<char*>(rx_.data());
  const size_t size = rx_.size() * sizeof(uint64_t);
  for (;;) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Timeout(context);
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return FromErrno(errno, std::string(context) + ": poll");
    }
    if (ready == 0) return Timeout(context);
    const ssize_t n = ::recv(fd, buffer, size, MSG_TRUNC | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return FromErrno(errno, std::string(context) + ": recv");
    }
    if (static_cast<size_t>(n) > size) {
      // Not expected (see kReceiveBufferBytes); grow so that the next request fits.
      rx_.resize((static_cast<size_t>(n) + sizeof(uint64_t) - 1) / sizeof(uint64_t));
      return Status(StatusCode::kInternal,
                    std::string(context) + ": reply of " + std::to_string(n) + " bytes truncated");
    }
    int len = static_cast<int>(n);
    for (auto* hdr = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(hdr, len);
         hdr = NLMSG_NEXT(hdr, len)) {
      if (hdr->nlmsg_seq != seq) continue;  // a late answer to an abandoned request
      if (hdr->nlmsg_type == NLMSG_NOOP) continue;
      Status status = Status::Ok();
      if (handle(hdr, status)) return status;
    }
  }
}

Result<std::vector<RdmaDeviceIndex>> RdmaNetlink::ListDevices() {
  if (Status s = Open(); !s.ok()) return Error(s);
  const size_t length = BuildRdmaDeviceDumpRequest(request_, ++seq_);
  std::vector<RdmaDeviceIndex> devices;
  bool done = false;
  Status s = Transact(length, "RDMA netlink GET dump", [&](const nlmsghdr* msg, Status& out) {
    if (msg->nlmsg_type == NLMSG_DONE) {
      done = true;
      out = ParseRdmaDumpDone(msg, "RDMA netlink GET dump");
      return true;
    }
    auto device = ParseRdmaDeviceMessage(msg);
    if (!device) {
      out = device.error();
      return true;
    }
    devices.push_back(std::move(*device));
    return false;
  });
  // A dump left before its NLMSG_DONE (timeout, a malformed message, an error) may still run in
  // the kernel for this socket, which answers the next dump EBUSY (K net/netlink/af_netlink.c
  // __netlink_dump_start: cb_running): the socket is closed, and Open() makes a new one.
  if (!done) sock_.reset();
  if (!s.ok()) return Error(s);
  return devices;
}

Status RdmaNetlink::PortHwCounters(uint32_t dev_index, uint32_t port, std::string_view device,
                                   std::vector<RdmaHwCounter>& out) {
  out.clear();
  if (Status s = Open(); !s.ok()) return s;
  const size_t length = BuildRdmaStatGetRequest(request_, ++seq_, dev_index, port);
  return Transact(length, "RDMA netlink STAT_GET", [&](const nlmsghdr* msg, Status& status) {
    if (msg->nlmsg_type == NLMSG_DONE) return false;
    status = ParseRdmaStatReply(msg, dev_index, port, out, device);
    return true;
  });
}

}  // namespace fabricwatch::sys
