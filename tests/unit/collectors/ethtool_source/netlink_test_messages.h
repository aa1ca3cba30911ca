#pragma once
// Netlink messages as the kernel builds them, for the tests of the pure reply parsers
// (ethtool_netlink_parse_test.cc, dcb_test.cc).

#include <linux/dcbnl.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include <cstdint>
#include <memory>

namespace fabricwatch::sys {

using Msg = std::unique_ptr<nl_msg, decltype(&nlmsg_free)>;

// A reply as the kernel builds it: genl header, request-header nest, then the payload.
inline Msg GenlReply(uint8_t cmd) {
  Msg msg(nlmsg_alloc(), &nlmsg_free);
  genlmsg_put(msg.get(), 1234, 5, 0x1d, 0, 0, cmd, 1);
  nlattr* header = nla_nest_start(msg.get(), 1);
  nla_put_u32(msg.get(), 1, 3);          // ETHTOOL_A_HEADER_DEV_INDEX
  nla_put_string(msg.get(), 2, "eth0");  // ETHTOOL_A_HEADER_DEV_NAME
  nla_nest_end(msg.get(), header);
  return msg;
}

inline void PutPad(nl_msg* msg, int type) { nla_put(msg, type, 0, nullptr); }
// The kernel keeps empty nests; libnl's nla_nest_end() drops them, so put one by hand.
inline void PutEmptyNest(nl_msg* msg, int type) { nla_put(msg, type | NLA_F_NESTED, 0, nullptr); }

// An RTM_GETDCB reply to DCB command `cmd` for eth0, before its DCB_ATTR_IEEE nest.
inline Msg DcbReply(uint8_t cmd) {
  Msg msg(nlmsg_alloc_simple(RTM_GETDCB, 0), &nlmsg_free);
  dcbmsg header{};
  header.dcb_family = AF_UNSPEC;
  header.cmd = cmd;
  nlmsg_append(msg.get(), &header, sizeof(header), NLMSG_ALIGNTO);
  nla_put_string(msg.get(), DCB_ATTR_IFNAME, "eth0");
  return msg;
}

}  // namespace fabricwatch::sys
