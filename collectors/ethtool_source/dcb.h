#pragma once
// DCB over rtnetlink (docs/reference.md §4.5; K net/dcb/dcbnl.c): the RTM_GETDCB / DCB_CMD_IEEE_GET
// request for one netdev and the pure parser of its reply (struct ieee_pfc: the IEEE 802.1Qaz PFC
// configuration and per-priority PFC frame counters; the APP table's DSCP → priority map, trust
// state and default priority). libnl-route has no DCB objects, so both are
// built by hand. KernelEthtool::Pfc() sends the request on EthtoolNetlink's rtnetlink socket.
//
// Thread-safety: stateless functions; safe from any thread.

#include <linux/netlink.h>

#include <string>

#include "base/status.h"
#include "collectors/ethtool_source/ethtool.h"
#include "collectors/ethtool_source/ethtool_netlink.h"

namespace fabricwatch::sys {

// RTM_GETDCB with struct dcbmsg {AF_UNSPEC, DCB_CMD_IEEE_GET} and DCB_ATTR_IFNAME `netdev`. Null
// when libnl cannot allocate or the name does not fit.
NlMessage BuildDcbIeeeRequest(const std::string& netdev);

// RTM_GETDCB reply to DCB_CMD_IEEE_GET. kUnimplemented without DCB_ATTR_IEEE_PFC. Takes one
// complete netlink message as the kernel sends it and never reads outside it.
Result<PfcConfig> ParseDcbIeeeReply(const nlmsghdr* msg);

}  // namespace fabricwatch::sys
