#pragma once
// KernelEthtool: the EthtoolSource that asks the running kernel (docs/reference.md §3, §4.5).
//
// Sources:
// - Statistics(): legacy SIOCETHTOOL ioctl. ETHTOOL_GSSET_INFO(ETH_SS_STATS) for the count
//   (fallback ETHTOOL_GDRVINFO.n_stats), ETHTOOL_GSTRINGS cached per netdev, ETHTOOL_GSTATS into
//   a reused buffer (K net/ethtool/ioctl.c).
// - Pause(), Fec(), LinkStateOf(): generic netlink family "ethtool" (5.6+), PAUSE_GET, FEC_GET
//   and LINKSTATE_GET with ETHTOOL_FLAG_STATS (K net/ethtool/{pause,fec,linkstate}.c). When the
//   kernel rejects the flag with EINVAL (LINKSTATE before 6.2) the request is repeated without
//   it, and the flag is not sent again for that message. Pause() also reads the pause settings
//   (autoneg, rx, tx) of the same reply; without the family, ETHTOOL_GPAUSEPARAM (no statistics).
// - StandardStats(): the same family, STATS_GET (5.13+; header nest is attribute 2) for the groups
//   eth-phy, eth-mac, eth-ctrl and rmon as a compact bitset, without ETHTOOL_FLAG_STATS (the
//   message's header policy does not take it) (K net/ethtool/stats.c).
// - LinkSettingsOf(): the same family, LINKMODES_GET with ETHTOOL_FLAG_COMPACT_BITSETS (speed,
//   lanes, duplex, autoneg, supported and advertised modes) then LINKINFO_GET (port), without
//   ETHTOOL_FLAG_STATS (their header policy does not take it; K net/ethtool/linkmodes.c,
//   linkinfo.c). Two round trips, unprivileged. When the family is absent, ETHTOOL_GLINKSETTINGS
//   instead (no lanes).
// - Pfc(): rtnetlink RTM_GETDCB / DCB_CMD_IEEE_GET, struct ieee_pfc (K net/dcb/dcbnl.c).
// - PfcStormTimeoutMs(): ETHTOOL_GTUNABLE ETHTOOL_PFC_PREVENTION_TOUT (u16 ms; mlx5).
// - ModuleEeprom(): the same family, MODULE_EEPROM_GET (5.13+; needs CAP_NET_ADMIN), one half page
//   per request as ModulePagesToRead() plans them (K net/ethtool/eeprom.c; the kernel itself falls
//   back to the driver's legacy get_module_info/get_module_eeprom when the driver has no by-page
//   op). When the family is absent, or the kernel has no such command (EOPNOTSUPP, 5.6-5.12) while
//   the legacy ioctl works, ETHTOOL_GMODULEINFO + ETHTOOL_GMODULEEEPROM read the linear image
//   instead, which for SFF-8079/8472 (256/512) and SFF-8636/8436 (256/640) already is the flat
//   image (docs/reference.md §3.1); CMIS modules have no ioctl type. Once the ioctl has answered
//   where netlink said EOPNOTSUPP, netlink is not tried again for modules.
//
// "Not supported" is StatusCode::kUnimplemented, and nothing is logged here:
// - Statistics(): EOPNOTSUPP, or a driver without an ETH_SS_STATS set (loopback). A count of 0
//   is an empty vector.
// - Pause(): EOPNOTSUPP (no get_pauseparam: veth; netlink or ioctl), or a reply with neither the
//   settings nor the stats nest. A reply without the stats nest (kernel < 5.10) or a driver
//   without get_pause_stats answers OK with the counters empty; a counter the driver does not
//   fill is an empty optional.
// - Fec(): no family, EOPNOTSUPP (no get_fecparam: veth). Otherwise OK; active_mode is "" when
//   no mode is active or the bit is unknown, an array is empty when it is not reported.
// - LinkStateOf(): no family, EOPNOTSUPP. Otherwise OK with optionals: `link` empty when the
//   driver cannot tell, `ext_down_count` empty before 6.2 or without get_link_ext_stats (veth),
//   `ext_state` only while the link is down.
// - StandardStats(): no family, EOPNOTSUPP (kernel < 5.13: genetlink has no such command), or a
//   reply without a single counter: no group in it, or only empty groups, which is what the
//   kernel sends for a driver without get_eth_{phy,mac,ctrl}_stats / get_rmon_stats (veth,
//   virtio_net). Otherwise the counters in reply order (group by group); a counter the driver
//   does not fill is absent, and one this build has no name for is skipped and counted in
//   standard_stats_skipped().
// - LinkSettingsOf(): EOPNOTSUPP (no get_link_ksettings) from LINKMODES_GET, or from the ioctl
//   where the family is absent. A LINKINFO_GET that fails that way leaves the port unknown.
//   link_detected is never set (LinkStateOf() has it).
// - Pfc(): EOPNOTSUPP (no dcbnl_ops: veth), or a reply without DCB_ATTR_IEEE_PFC.
//   requests/indications are set whenever the kernel sends the whole struct ieee_pfc; drivers
//   that do not count PFC frames leave them 0 (dcbnl zeroes the struct first).
// - PfcStormTimeoutMs(): EOPNOTSUPP (no get_tunable, or mlx5 without the stall-detect
//   capability) and EINVAL (a get_tunable that does not know this id).
// - ModuleEeprom(): EOPNOTSUPP from both paths (veth, virtio_net: no module ops at all). "No module
//   in the cage" is StatusCode::kNoData, which is as good as the driver's errno
//   (ModuleEepromErrorStatus): ENODEV while the netdev exists (K drivers/net/phy/sfp.c:
//   SFP_F_PRESENT clear), EIO / ENXIO / EREMOTEIO on the first read (mlx5: the MCIA register access
//   fails, K drivers/net/ethernet/mellanox/mlx5/core/port.c mlx5_query_mcia; I2C drivers: no ACK, K
//   Documentation/i2c/fault-codes.rst), EINVAL with bnxt_en's "Transceiver module not inserted"
//   extack, and a first read that returns no bytes. A failure on a later page: EINVAL or EOPNOTSUPP
//   (the kernel's fallback refuses an offset past the legacy eeprom_len; a driver that has no such
//   page) ends the image before that page; anything else fails the call. EPERM (no CAP_NET_ADMIN)
//   is kPermissionDenied.
// A netdev that does not exist is kNotFound (ENODEV). A netlink request the kernel does not
// answer within 1 s is kDeadlineExceeded. Messages carry the netdev, the request, errno text and
// the kernel's extended-ACK text when it sent one.
//
// The parts, each in its own file: the ioctl path (ethtool_ioctl.h), the netlink sockets and the
// requests sent on them (ethtool_netlink.h), the pure reply parsers (ethtool_netlink_parse.h),
// module EEPROM page planning (ethtool_module_pages.h) and DCB (dcb.h). This class glues them.
//
// Sockets belong to the network namespace of the thread that calls Create().
// Thread-safety: one collector thread (EthtoolSource contract).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "collectors/ethtool_source/ethtool.h"

namespace fabricwatch::sys {

class EthtoolIoctl;            // ethtool_ioctl.h: the SIOCETHTOOL seam
class EthtoolIoctlStatistics;  // ethtool_ioctl.h
class EthtoolNetlink;          // ethtool_netlink.h

class KernelEthtool final : public EthtoolSource {
 public:
  // Production: the SIOCETHTOOL socket, a generic-netlink socket and an rtnetlink socket, all in
  // the calling thread's network namespace. Fails only when the ioctl socket cannot be opened;
  // netlink sockets that cannot be opened are retried on use.
  static Result<std::unique_ptr<KernelEthtool>> Create();
  // Tests: statistics and the tunable go through `ioctl`; netlink requests still go to the kernel.
  explicit KernelEthtool(std::unique_ptr<EthtoolIoctl> ioctl);
  ~KernelEthtool() override;

  KernelEthtool(const KernelEthtool&) = delete;
  KernelEthtool& operator=(const KernelEthtool&) = delete;

  Status ReadStatistics(const std::string& netdev, std::vector<EthtoolStat>& stats) override;
  Result<PauseInfo> Pause(const std::string& netdev) override;
  Result<FecStats> Fec(const std::string& netdev) override;
  Result<LinkState> LinkStateOf(const std::string& netdev) override;
  Result<LinkSettings> LinkSettingsOf(const std::string& netdev) override;
  Result<PfcConfig> Pfc(const std::string& netdev) override;
  Result<uint32_t> PfcStormTimeoutMs(const std::string& netdev) override;
  Result<std::vector<StandardStat>> StandardStats(const std::string& netdev) override;
  Status ReadModuleEeprom(const std::string& netdev, std::vector<uint8_t>& image) override;

  // Netlink requests sent so far (generic netlink and rtnetlink), for tests and self-metrics.
  uint64_t netlink_requests() const;
  // Standard-statistics counters skipped so far because this build has no name for them (a newer
  // kernel's counter index or group): for a debug log or self-metric.
  uint64_t standard_stats_skipped() const { return standard_stats_skipped_; }
  // Tests: an ethtool GET of command `cmd` (header nest attribute 1) down the same path as Pause(),
  // Fec() and LinkStateOf(). True when the answered request carried ETHTOOL_FLAG_STATS.
  Result<bool> EthtoolGetForTesting(const std::string& netdev, uint8_t cmd);
  // Tests: ModuleEeprom() goes straight to the ioctl seam, as after netlink answered EOPNOTSUPP
  // where the ioctl worked.
  void UseIoctlForModulesForTesting();

 private:
  // Netlink first, the legacy ioctl where the kernel lacks MODULE_EEPROM_GET.
  Result<std::vector<uint8_t>> ModuleEepromEitherPath(const std::string& netdev);
  Result<std::vector<uint8_t>> ModuleEepromNetlink(const std::string& netdev);

  std::unique_ptr<EthtoolIoctl> ioctl_;
  std::unique_ptr<EthtoolIoctlStatistics> statistics_;  // through ioctl_
  std::unique_ptr<EthtoolNetlink> netlink_;
  uint64_t standard_stats_skipped_ = 0;
  // MODULE_EEPROM_GET answered EOPNOTSUPP where the ioctl worked: the kernel lacks the command.
  bool module_eeprom_via_ioctl_ = false;
};

}  // namespace fabricwatch::sys
