#pragma once
// The netlink channel of KernelEthtool (docs/reference.md §3.2, §4.5): a generic-netlink socket for
// the "ethtool" family (5.6+) and an rtnetlink socket for DCB, each opened on first use, one
// request in flight at a time; and the ethtool requests sent over it. Replies are parsed by
// ethtool_netlink_parse.h and dcb.h; error conventions are KernelEthtool's (ethtool_kernel.h).
//
// Sockets belong to the network namespace of the thread that opens them.
// Thread-safety: one thread (KernelEthtool's).

#include <linux/netlink.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/sys/netlink_socket.h"
#include "base/status.h"
#include "collectors/ethtool_source/ethtool_module_pages.h"

struct nl_msg;   // libnl-3
struct nl_sock;  // libnl-3

namespace fabricwatch::sys {

// A libnl message, ready for nl_send_auto(); null when it could not be built.
using NlMessage = std::unique_ptr<nl_msg, void (*)(nl_msg*)>;

// An ethtool GET request of command `cmd` for `netdev`: the request header nest (attribute 1) with
// ETHTOOL_A_HEADER_DEV_NAME, and ETHTOOL_A_HEADER_FLAGS when `flags` is not 0. Null when libnl
// cannot allocate.
NlMessage BuildEthtoolGetRequest(uint16_t family, uint8_t cmd, const std::string& netdev,
                                 uint32_t flags);

// An ETHTOOL_MSG_STATS_GET request of generic netlink family `family` for `netdev`, ready for
// nl_send_auto(): ETHTOOL_A_STATS_HEADER (2) nest with ETHTOOL_A_HEADER_DEV_NAME, then
// ETHTOOL_A_STATS_GROUPS (3) as a compact bitset nest: NOMASK, SIZE 4, VALUE u32 0xf (groups 0-3).
// Null when libnl cannot allocate or the name does not fit.
NlMessage BuildStandardStatsRequest(uint16_t family, const std::string& netdev);

// An ETHTOOL_MSG_MODULE_EEPROM_GET request: header nest (1) with the netdev name, OFFSET and
// LENGTH (u32), PAGE, BANK and I2C_ADDRESS (u8). Null when libnl cannot allocate.
NlMessage BuildModuleEepromRequest(uint16_t family, const std::string& netdev,
                                   const ModulePageRead& read);

class EthtoolNetlink {
 public:
  EthtoolNetlink();
  ~EthtoolNetlink();
  EthtoolNetlink(const EthtoolNetlink&) = delete;
  EthtoolNetlink& operator=(const EthtoolNetlink&) = delete;

  // Open the generic-netlink / rtnetlink socket unless it is open: kUnavailable when the kernel
  // refuses the connection.
  Status EnsureGenlSocket();
  Status EnsureRouteSocket();

  // Each request returns the reply with its sequence number: a pointer into the receive buffer,
  // valid until the next request. Replies to earlier requests that timed out are skipped by
  // sequence number; a request the kernel does not answer within 1 s is kDeadlineExceeded; an
  // error answer is its errno's status with the kernel's extended-ACK text.

  // An ethtool GET request (command `cmd`, `name` for messages) for one netdev with
  // ETHTOOL_FLAG_STATS, or without it once the kernel has rejected the flag for this command
  // (docs/reference.md §3.2: EINVAL from the header policy). `*sent_stats`, when not null: whether
  // the answered request carried the flag. kUnimplemented when the kernel has no "ethtool" family.
  Result<const nlmsghdr*> EthtoolGet(const std::string& netdev, uint8_t cmd, std::string_view name,
                                     bool* sent_stats = nullptr);
  // An ethtool GET request of command `cmd` with exactly the header flags `flags` (no stats-flag
  // retry): for messages whose header policy has no ETHTOOL_FLAG_STATS (LINKMODES, LINKINFO).
  Result<const nlmsghdr*> EthtoolGetWithFlags(const std::string& netdev, uint8_t cmd,
                                              std::string_view name, uint32_t flags);
  // ETHTOOL_MSG_STATS_GET for one netdev (no ETHTOOL_FLAG_STATS: not in its header policy).
  Result<const nlmsghdr*> StandardStatsGet(const std::string& netdev);
  // One ETHTOOL_MSG_MODULE_EEPROM_GET read (its header policy takes no flags); `context` names it
  // in messages.
  Result<const nlmsghdr*> ModuleEepromGet(const std::string& netdev, const ModulePageRead& read,
                                          const std::string& context);
  // `msg` on the rtnetlink socket, which EnsureRouteSocket() opened.
  Result<const nlmsghdr*> RouteTransact(nl_msg* msg, const std::string& context);

  // True once the kernel said it has no "ethtool" family: every ethtool request is then
  // kUnimplemented, and callers with an ioctl fallback use it.
  bool family_missing() const { return family_missing_; }

  // Requests sent so far, on both sockets.
  uint64_t requests() const { return requests_; }

 private:
  // Opens a socket of netlink `protocol` into `sock` unless it is open.
  static Status EnsureSocket(NlSock& sock, int protocol, std::string_view what);
  Result<const nlmsghdr*> Transact(nl_sock* sock, nl_msg* msg, const std::string& context);
  // Resolves the "ethtool" family id once.
  Status EnsureFamily();

  NlSock genl_;
  NlSock route_;
  std::vector<uint64_t> rx_;
  uint16_t family_ = 0;          // "ethtool" genl family id, 0 until resolved
  bool family_missing_ = false;  // the kernel has no such family: every request is kUnimplemented
  // Commands whose request header rejected ETHTOOL_FLAG_STATS (EINVAL): sent without it since.
  std::array<bool, 256> stats_flag_rejected_{};
  uint64_t requests_ = 0;
};

}  // namespace fabricwatch::sys
