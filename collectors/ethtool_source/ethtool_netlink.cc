#include "collectors/ethtool_source/ethtool_netlink.h"

#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>

#include "collectors/ethtool_source/ethtool_netlink_parse.h"
#include "collectors/ethtool_source/ethtool_netlink_uapi.h"

namespace fabricwatch::sys {
namespace {

constexpr auto kReplyDeadline = std::chrono::seconds(1);
constexpr size_t kReceiveBufferBytes = 32 * 1024;  // single-device GET replies are < 4 KiB

std::string NlError(int err, std::string_view what) {
  return std::string(what) + ": " + nl_geterror(err);
}

}  // namespace

NlMessage BuildEthtoolGetRequest(uint16_t family, uint8_t cmd, const std::string& netdev,
                                 uint32_t flags) {
  NlMessage msg(nlmsg_alloc(), &nlmsg_free);
  nlattr* header = nullptr;
  if (!msg ||
      genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST, cmd,
                  kEthtoolGenlVersion) == nullptr ||
      (header = nla_nest_start(msg.get(), kHeaderNest)) == nullptr ||
      nla_put_string(msg.get(), kHeaderDevName, netdev.c_str()) < 0 ||
      (flags != 0 && nla_put_u32(msg.get(), kHeaderFlags, flags) < 0) ||
      nla_nest_end(msg.get(), header) < 0) {
    return NlMessage(nullptr, &nlmsg_free);
  }
  return msg;
}

NlMessage BuildStandardStatsRequest(uint16_t family, const std::string& netdev) {
  NlMessage msg(nlmsg_alloc(), &nlmsg_free);
  if (!msg || genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST,
                          kMsgStatsGet, kEthtoolGenlVersion) == nullptr) {
    return NlMessage(nullptr, &nlmsg_free);
  }
  // nla_nest_start() sets NLA_F_NESTED (libnl >= 3.5), which the kernel's strict nested parsing
  // of both nests requires (K lib/nlattr.c __nla_parse: "NLA_F_NESTED is missing").
  const uint32_t groups = kStatsGroupMask;
  nlattr* header = nla_nest_start(msg.get(), kStatsHeader);
  if (header == nullptr || nla_put_string(msg.get(), kHeaderDevName, netdev.c_str()) < 0 ||
      nla_nest_end(msg.get(), header) < 0) {
    return NlMessage(nullptr, &nlmsg_free);
  }
  nlattr* bitset = nla_nest_start(msg.get(), kStatsGroups);
  if (bitset == nullptr || nla_put_flag(msg.get(), kBitsetNomask) < 0 ||
      nla_put_u32(msg.get(), kBitsetSize, kStatsGroupBits) < 0 ||
      nla_put(msg.get(), kBitsetValue, sizeof(groups), &groups) < 0 ||
      nla_nest_end(msg.get(), bitset) < 0) {
    return NlMessage(nullptr, &nlmsg_free);
  }
  return msg;
}

NlMessage BuildModuleEepromRequest(uint16_t family, const std::string& netdev,
                                   const ModulePageRead& read) {
  NlMessage msg(nlmsg_alloc(), &nlmsg_free);
  if (!msg || genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST,
                          kMsgModuleEepromGet, kEthtoolGenlVersion) == nullptr) {
    return NlMessage(nullptr, &nlmsg_free);
  }
  nlattr* header = nla_nest_start(msg.get(), kModuleEepromHeader);
  if (header == nullptr || nla_put_string(msg.get(), kHeaderDevName, netdev.c_str()) < 0 ||
      nla_nest_end(msg.get(), header) < 0 ||
      nla_put_u32(msg.get(), kModuleEepromOffset, read.offset) < 0 ||
      nla_put_u32(msg.get(), kModuleEepromLength, read.length) < 0 ||
      nla_put_u8(msg.get(), kModuleEepromPage, read.page) < 0 ||
      nla_put_u8(msg.get(), kModuleEepromBank, read.bank) < 0 ||
      nla_put_u8(msg.get(), kModuleEepromI2cAddress, read.i2c_address) < 0) {
    return NlMessage(nullptr, &nlmsg_free);
  }
  return msg;
}

EthtoolNetlink::EthtoolNetlink()
    : genl_(nullptr, &nl_socket_free),
      route_(nullptr, &nl_socket_free),
      rx_(kReceiveBufferBytes / sizeof(uint64_t)) {}

EthtoolNetlink::~EthtoolNetlink() = default;

Status EthtoolNetlink::EnsureSocket(NlSock& out, int protocol, std::string_view what) {
  if (out) return Status::Ok();
  auto sock = ConnectNetlink(protocol, what);
  if (!sock) return sock.error();
  out = std::move(*sock);
  return Status::Ok();
}

Status EthtoolNetlink::EnsureGenlSocket() {
  return EnsureSocket(genl_, NETLINK_GENERIC, "generic netlink");
}

Status EthtoolNetlink::EnsureRouteSocket() {
  return EnsureSocket(route_, NETLINK_ROUTE, "rtnetlink");
}

Result<const nlmsghdr*> EthtoolNetlink::RouteTransact(nl_msg* msg, const std::string& context) {
  return Transact(route_.get(), msg, context);
}

Result<const nlmsghdr*> EthtoolNetlink::Transact(nl_sock* sock, nl_msg* msg,
                                                 const std::string& context) {
  ++requests_;
  if (int err = nl_send_auto(sock, msg); err < 0) {
    return Error(StatusCode::kUnavailable, NlError(err, context + ": send"));
  }
  const uint32_t seq = nlmsg_hdr(msg)->nlmsg_seq;
  const int fd = nl_socket_get_fd(sock);
  const auto deadline = std::chrono::steady_clock::now() + kReplyDeadline;
  auto* buffer = reinterpret_cast<char*>(rx_.data());
  const size_t size = rx_.size() * sizeof(uint64_t);
  for (;;) {
    ssize_t n = ::recv(fd, buffer, size, MSG_TRUNC);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return Error(
            Status(StatusCode::kDeadlineExceeded, context + ": no reply within 1 s", ETIMEDOUT));
      }
      return Error(FromErrno(errno, context + ": recv"));
    }
    if (static_cast<size_t>(n) > size) {
      // Cannot happen for single-device GET replies; grow so the next request fits.
      rx_.resize((static_cast<size_t>(n) + sizeof(uint64_t) - 1) / sizeof(uint64_t));
      return Error(StatusCode::kInternal,
                   context + ": reply of " + std::to_string(n) + " bytes truncated");
    }
    int len = static_cast<int>(n);
    for (auto* hdr = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(hdr, len);
         hdr = NLMSG_NEXT(hdr, len)) {
      if (hdr->nlmsg_seq != seq) continue;  // a late answer to an abandoned request
      if (hdr->nlmsg_type == NLMSG_ERROR) {
        auto error = ParseNetlinkError(hdr);
        if (!error) return Error(MalformedReply(context, "NLMSG_ERROR"));
        if (error->error == 0) continue;  // an ACK (none requested); the reply is separate
        return Error(NetlinkErrorStatus(*error, context));
      }
      if (hdr->nlmsg_type == NLMSG_DONE || hdr->nlmsg_type == NLMSG_NOOP) continue;
      return hdr;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Error(
          Status(StatusCode::kDeadlineExceeded, context + ": no reply within 1 s", ETIMEDOUT));
    }
  }
}

// Resolves the "ethtool" family once. Done by hand rather than with genl_ctrl_resolve(), which
// reports a receive timeout as -NLE_OBJ_NOTFOUND: a stuck kernel at start-up would otherwise
// disable netlink for the life of the process. The kernel answers ENOENT for a missing family.
Status EthtoolNetlink::EnsureFamily() {
  if (family_missing_) {
    return Status(StatusCode::kUnimplemented,
                  "generic netlink family \"ethtool\" is absent (kernel < 5.6 or "
                  "CONFIG_ETHTOOL_NETLINK off)");
  }
  if (family_ != 0) return Status::Ok();
  if (Status s = EnsureGenlSocket(); !s.ok()) return s;
  NlMessage msg(nlmsg_alloc(), &nlmsg_free);
  if (!msg ||
      genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, GENL_ID_CTRL, 0, NLM_F_REQUEST,
                  CTRL_CMD_GETFAMILY, 1) == nullptr ||
      nla_put_string(msg.get(), CTRL_ATTR_FAMILY_NAME, kEthtoolGenlName) < 0) {
    return Status(StatusCode::kInternal, "generic netlink CTRL_CMD_GETFAMILY: cannot build");
  }
  auto reply = Transact(genl_.get(), msg.get(), "generic netlink CTRL_CMD_GETFAMILY ethtool");
  if (!reply) {
    if (reply.error().sys_errno() == ENOENT) {
      family_missing_ = true;
      return EnsureFamily();
    }
    return reply.error();
  }
  auto id = ParseGenlFamilyId(*reply);
  if (!id) return id.error();
  family_ = *id;
  return Status::Ok();
}

Result<const nlmsghdr*> EthtoolNetlink::StandardStatsGet(const std::string& netdev) {
  const std::string context = "netdev " + netdev + ": ethtool netlink STATS_GET";
  if (Status s = EnsureFamily(); !s.ok()) return Error(s.WithContext(context));
  NlMessage msg = BuildStandardStatsRequest(family_, netdev);
  if (!msg) return Error(StatusCode::kInternal, context + ": cannot build the request");
  return Transact(genl_.get(), msg.get(), context);
}

Result<const nlmsghdr*> EthtoolNetlink::ModuleEepromGet(const std::string& netdev,
                                                        const ModulePageRead& read,
                                                        const std::string& context) {
  if (Status s = EnsureFamily(); !s.ok()) return Error(s.WithContext(context));
  NlMessage msg = BuildModuleEepromRequest(family_, netdev, read);
  if (!msg) return Error(StatusCode::kInternal, context + ": cannot build the request");
  return Transact(genl_.get(), msg.get(), context);
}

Result<const nlmsghdr*> EthtoolNetlink::EthtoolGet(const std::string& netdev, uint8_t cmd,
                                                   std::string_view name, bool* sent_stats) {
  const std::string context = "netdev " + netdev + ": ethtool netlink " + std::string(name);
  if (Status s = EnsureFamily(); !s.ok()) return Error(s.WithContext(context));
  bool with_stats = !stats_flag_rejected_[cmd];
  for (;;) {
    NlMessage msg = BuildEthtoolGetRequest(family_, cmd, netdev, with_stats ? kFlagStats : 0);
    if (!msg) return Error(StatusCode::kInternal, context + ": cannot build the request");
    auto reply = Transact(genl_.get(), msg.get(), context);
    if (!reply && with_stats && reply.error().sys_errno() == EINVAL) {
      with_stats = false;
      continue;
    }
    if (reply && !with_stats) stats_flag_rejected_[cmd] = true;
    if (sent_stats != nullptr) *sent_stats = with_stats;
    return reply;
  }
}

Result<const nlmsghdr*> EthtoolNetlink::EthtoolGetWithFlags(const std::string& netdev, uint8_t cmd,
                                                            std::string_view name, uint32_t flags) {
  const std::string context = "netdev " + netdev + ": ethtool netlink " + std::string(name);
  if (Status s = EnsureFamily(); !s.ok()) return Error(s.WithContext(context));
  NlMessage msg = BuildEthtoolGetRequest(family_, cmd, netdev, flags);
  if (!msg) return Error(StatusCode::kInternal, context + ": cannot build the request");
  return Transact(genl_.get(), msg.get(), context);
}

}  // namespace fabricwatch::sys
