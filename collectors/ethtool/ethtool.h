#pragma once
// Collector `ethtool`: NIC driver statistics, PFC and pause, PHY/FEC errors, PFC/ECN config.
//
// Sources (docs/reference.md §3–4):
//   driver statistics  ETHTOOL_GSSET_INFO / GSTRINGS / GSTATS (one GSTATS call per netdev), or
//                      DIR/<netdev>/statistics (`ethtool -S` text) with --path.ethtool=DIR
//   802.3x pause       ETHTOOL_MSG_PAUSE_GET with ETHTOOL_FLAG_STATS (kernel 5.10+)
//   FEC                ETHTOOL_MSG_FEC_GET with ETHTOOL_FLAG_STATS (kernel 5.13+), per lane
//   link down counter  ETHTOOL_MSG_LINKSTATE_GET ETHTOOL_A_LINKSTATE_EXT_DOWN_CNT (kernel 6.2+)
//   standard groups    ETHTOOL_MSG_STATS_GET eth-phy, eth-mac, eth-ctrl, rmon (kernel 5.13+)
//   PFC configuration  RTM_GETDCB DCB_CMD_IEEE_GET (struct ieee_pfc: pfc_en, requests, indications)
//   PFC storm timeout  ETHTOOL_GTUNABLE ETHTOOL_PFC_PREVENTION_TOUT (mlx5)
//   link settings      ETHTOOL_MSG_LINKMODES_GET + LINKINFO_GET (ETHTOOL_GLINKSETTINGS without the
//                      netlink family), or DIR/<netdev>/link (`ethtool <netdev>` text): speed,
//                      lanes, fastest supported/advertised mode, autoneg, duplex and port, read
//                      every link-settings-interval (10s) and exported again in between
//                      (collectors/ethtool/ethtool_link.h)
//   RoCE ECN enables   <sysfs>/class/net/<netdev>/ecn/roce_{np,rp}/enable/<prio> (MLNX_OFED only)
// Vendor statistic names (mlx5 first, bnxt_en, ice/i40e) are normalised into labelled families
// (collectors/ethtool/ethtool_names.h); everything else is available through an opt-in
// passthrough (--collector.ethtool.metrics-include) as fabric_ethtool_<sanitised name>.
// "Not supported" (veth, old kernels, drivers without DCB) and "no data" (a replay netdev without a
// link file) are expected: logged once at debug, asked again after a minute.
// Interfaces: by default every netdev with a PCI parent or an RDMA device (not lo, bridges,
// veth); device-include replaces that rule. In replay mode, every netdev directory of DIR.

#include <memory>
#include <span>

#include "collectors/core/collector.h"
#include "collectors/core/collector_info.h"

namespace fabricwatch::ethtool {

std::span<const MetricDesc> EthtoolMetrics();
std::span<const CollectorOptionSpec> EthtoolOptions();
Result<std::unique_ptr<Collector>> NewEthtoolCollector(const CollectorContext& context);

}  // namespace fabricwatch::ethtool
