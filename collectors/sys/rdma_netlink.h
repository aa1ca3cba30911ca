#pragma once
// RdmaNetlink: the NETLINK_RDMA socket of the rdma collector's hw-counter path (issue 34): the
// ibdev index of each device (RDMA_NLDEV_CMD_GET dump: netlink names devices by index, sysfs by
// name) and one RDMA_NLDEV_CMD_STAT_GET request per port that returns all of the port's
// hw_counters at once, where sysfs needs one read per counter file. Messages are built and parsed
// by rdma_netlink_parse.h; the socket is libnl-3's, opened like EthtoolNetlink's
// (ethtool_netlink.h): no auto-ACK, extended ACKs, each exchange bounded by 1 s in all.
//
// Steady state allocates nothing: the request is written into a member array and the reply is
// received into a member buffer, which the counters' names point into until the next request.
// Sockets belong to the network namespace of the thread that opens them; the RDMA subsystem
// answers for the devices of that namespace (K drivers/infiniband/core/device.c
// ib_device_get_by_index, in exclusive netns mode).
// Thread-safety: one thread (the rdma collector's).

#include <linux/netlink.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/sys/netlink_socket.h"
#include "base/status.h"
#include "collectors/sys/rdma_netlink_parse.h"

struct nl_sock;  // libnl-3

namespace fabricwatch::sys {

class RdmaNetlink {
 public:
  RdmaNetlink();
  ~RdmaNetlink();
  RdmaNetlink(const RdmaNetlink&) = delete;
  RdmaNetlink& operator=(const RdmaNetlink&) = delete;

  // Opens the socket unless it is open: kUnavailable when the kernel refuses (no NETLINK_RDMA:
  // CONFIG_INFINIBAND off or ib_core not loaded gives EPROTONOSUPPORT).
  Status Open();

  // Every RDMA device of this network namespace with its ibdev index (one dump). A dump that
  // fails is an error, never a short list: the errno of its NLMSG_DONE (ParseRdmaDumpDone), or of
  // an NLMSG_ERROR. A dump not read to its NLMSG_DONE closes the socket (the kernel would answer
  // the next dump EBUSY); the next request opens a new one.
  Result<std::vector<RdmaDeviceIndex>> ListDevices();

  // All hw counters of port `port` of the device with index `dev_index`, named `device`, into
  // `out`: one request, one reply. The names point into the receive buffer, valid until the next
  // request. Errors: the kernel's errno (EINVAL for a port without hw counters or an unknown
  // index, EOPNOTSUPP, EMSGSIZE when the counters do not fit the kernel's reply buffer),
  // kDeadlineExceeded when no reply comes within 1 s (the whole exchange: send, waits and
  // receives), kInvalidArgument for a malformed reply, kFailedPrecondition (IsRdmaDeviceMismatch)
  // when the reply names another device: the index is stale, list the devices again.
  Status PortHwCounters(uint32_t dev_index, uint32_t port, std::string_view device,
                        std::vector<RdmaHwCounter>& out);

  // Requests sent so far.
  uint64_t requests() const { return requests_; }

 private:
  // Sends `length` bytes of request_ and receives into rx_ until `handle(const nlmsghdr*)` returns
  // true (done) or an error for a message of this request's sequence number.
  template <typename Handle>
  Status Transact(size_t length, std::string_view context, Handle&& handle);

  NlSock sock_;
  std::vector<uint64_t> rx_;  // 8-byte aligned receive buffer
  std::array<std::byte, kRdmaStatGetRequestBytes> request_{};
  uint32_t seq_ = 0;
  uint64_t requests_ = 0;
};

}  // namespace fabricwatch::sys
