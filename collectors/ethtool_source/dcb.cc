#include "collectors/ethtool_source/dcb.h"

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

#include "collectors/ethtool_source/ethtool_netlink_parse.h"

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
// struct dcb_app: selector u8 @0, priority u8 @1, protocol u16 @2.
static_assert(sizeof(dcb_app) == 4 && offsetof(dcb_app, protocol) == 2 &&
              DCB_ATTR_IEEE_APP_TABLE == 3 && DCB_ATTR_IEEE_APP == 1 &&
              IEEE_8021QAZ_APP_SEL_DSCP == 5 && IEEE_8021QAZ_APP_SEL_ETHERTYPE == 1);

// The APP table: DSCP entries give the DSCP → priority map (and with it the trust state, as
// mlnx_qos and mlx5's en_dcbnl.c decide it: any DSCP entry means trust dscp); the ethertype-0
// entry is the default priority mlnx_qos --defltprio sets (docs/reference.md §4.5, §4.6).
void ParseAppTable(const nlattr* table, PfcConfig& out) {
  bool any_dscp = false;
  const nlattr* app = nullptr;
  int remaining = 0;
  nla_for_each_nested(app, table, remaining) {
    if (nla_type(app) != DCB_ATTR_IEEE_APP || nla_len(app) < static_cast<int>(sizeof(dcb_app))) {
      continue;
    }
    dcb_app entry{};
    std::memcpy(&entry, nla_data(app), sizeof(entry));
    if (entry.priority >= kDcbPriorities) continue;
    if (entry.selector == IEEE_8021QAZ_APP_SEL_DSCP && entry.protocol < out.dscp_priority.size()) {
      out.dscp_priority[entry.protocol] = entry.priority;
      any_dscp = true;
    } else if (entry.selector == IEEE_8021QAZ_APP_SEL_ETHERTYPE && entry.protocol == 0) {
      out.default_priority = entry.priority;
    }
  }
  out.trust = any_dscp ? "dscp" : "pcp";
}

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
  if (const nlattr* table = ieee[DCB_ATTR_IEEE_APP_TABLE]) ParseAppTable(table, out);
  return out;
}

}  // namespace fabricwatch::sys
