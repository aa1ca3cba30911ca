#include "collectors/sys/dcb.h"

#include <linux/dcbnl.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <string_view>

#include "collectors/sys/ethtool_netlink_parse.h"

namespace fabricwatch::sys {
namespace {

// UAPI linux/dcbnl.h layouts the code relies on.
static_assert(DCB_CMD_IEEE_GET == 21 && DCB_ATTR_IFNAME == 1 && DCB_ATTR_IEEE == 13 &&
              DCB_ATTR_IEEE_PFC == 2 && RTM_GETDCB == 78);
static_assert(sizeof(dcbmsg) == 4);
// struct ieee_pfc: pfc_cap@0, pfc_en@1, mbc@2, delay@4, requests[8]@8, indications[8]@72.
static_assert(offsetof(ieee_pfc, pfc_en) == 1 && offsetof(ieee_pfc, requests) == 8 &&
              offsetof(ieee_pfc, indications) == 72 && sizeof(ieee_pfc) == 136);
constexpr int kDcbPriorities = IEEE_8021QAZ_MAX_TCS;  // 8

}  // namespace

NlMessage BuildDcbIeeeRequest(const std::string& netdev) {
  NlMessage msg(nlmsg_alloc_simple(RTM_GETDCB, NLM_F_REQUEST), &nlmsg_free);
  dcbmsg header{};
  header.dcb_family = AF_UNSPEC;
  header.cmd = DCB_CMD_IEEE_GET;
  if (!msg || nlmsg_append(msg.get(), &header, sizeof(header), NLMSG_ALIGNTO) < 0 ||
      nla_put_string(msg.get(), DCB_ATTR_IFNAME, netdev.c_str()) < 0) {
    return NlMessage(nullptr, &nlmsg_free);
  }
  return msg;
}

Result<PfcConfig> ParseDcbIeeeReply(const nlmsghdr* msg) {
  constexpr std::string_view kWhat = "RTM_GETDCB DCB_CMD_IEEE_GET reply";
  if (msg->nlmsg_type != RTM_GETDCB || msg->nlmsg_len < NLMSG_LENGTH(sizeof(dcbmsg))) {
    return Error(MalformedReply(kWhat, "type " + std::to_string(msg->nlmsg_type)));
  }
  dcbmsg header;
  std::memcpy(&header, NLMSG_DATA(msg), sizeof(header));
  if (header.cmd != DCB_CMD_IEEE_GET) {
    return Error(MalformedReply(kWhat, "command " + std::to_string(header.cmd)));
  }
  std::array<nlattr*, DCB_ATTR_MAX + 1> tb{};
  if (int err =
          nlmsg_parse(const_cast<nlmsghdr*>(msg), sizeof(dcbmsg), tb.data(), DCB_ATTR_MAX, nullptr);
      err < 0) {
    return Error(MalformedReply(kWhat, nl_geterror(err)));
  }
  if (tb[DCB_ATTR_IEEE] == nullptr) {
    return Error(StatusCode::kUnimplemented, "DCB: no IEEE 802.1Qaz attributes in the reply");
  }
  std::array<nlattr*, DCB_ATTR_IEEE_MAX + 1> ieee{};
  if (int err = nla_parse_nested(ieee.data(), DCB_ATTR_IEEE_MAX, tb[DCB_ATTR_IEEE], nullptr);
      err < 0) {
    return Error(MalformedReply(kWhat, nl_geterror(err)));
  }
  const nlattr* pfc_attr = ieee[DCB_ATTR_IEEE_PFC];
  if (pfc_attr == nullptr) {
    return Error(StatusCode::kUnimplemented,
                 "DCB: the driver reports no IEEE PFC (no ieee_getpfc)");
  }
  const size_t len = static_cast<size_t>(nla_len(pfc_attr));
  if (len < offsetof(ieee_pfc, mbc)) return Error(MalformedReply(kWhat, "short DCB_ATTR_IEEE_PFC"));
  ieee_pfc pfc{};
  std::memcpy(&pfc, nla_data(pfc_attr), std::min(len, sizeof(pfc)));
  PfcConfig out;
  out.pfc_cap = pfc.pfc_cap;
  out.enabled_mask = pfc.pfc_en;
  if (len >= offsetof(ieee_pfc, indications)) {
    out.requests.emplace(pfc.requests, pfc.requests + kDcbPriorities);
  }
  if (len >= sizeof(ieee_pfc)) {
    out.indications.emplace(pfc.indications, pfc.indications + kDcbPriorities);
  }
  return out;
}

}  // namespace fabricwatch::sys
