#pragma once
// KernelEthtool: the EthtoolSource that asks the running kernel (reference.md §3, §4.5).
//
// Sources:
// - Statistics(): legacy SIOCETHTOOL ioctl. ETHTOOL_GSSET_INFO(ETH_SS_STATS) for the count
//   (fallback ETHTOOL_GDRVINFO.n_stats), ETHTOOL_GSTRINGS cached per netdev, ETHTOOL_GSTATS into
//   a reused buffer (K net/ethtool/ioctl.c).
// - Pause(), Fec(), LinkStateOf(): generic netlink family "ethtool" (5.6+), PAUSE_GET, FEC_GET
//   and LINKSTATE_GET with ETHTOOL_FLAG_STATS (K net/ethtool/{pause,fec,linkstate}.c). When the
//   kernel rejects the flag with EINVAL (LINKSTATE before 6.2) the request is repeated without
//   it, and the flag is not sent again for that message.
// - StandardStats(): the same family, STATS_GET (5.13+; header nest is attribute 2) for the groups
//   eth-phy, eth-mac, eth-ctrl and rmon as a compact bitset, without ETHTOOL_FLAG_STATS (the
//   message's header policy does not take it) (K net/ethtool/stats.c).
// - Pfc(): rtnetlink RTM_GETDCB / DCB_CMD_IEEE_GET, struct ieee_pfc (K net/dcb/dcbnl.c).
// - PfcStormTimeoutMs(): ETHTOOL_GTUNABLE ETHTOOL_PFC_PREVENTION_TOUT (u16 ms; mlx5).
// - ModuleEeprom(): the same family, MODULE_EEPROM_GET (5.13+; needs CAP_NET_ADMIN), one half page
//   per request as ModulePagesToRead() plans them (K net/ethtool/eeprom.c; the kernel itself falls
//   back to the driver's legacy get_module_info/get_module_eeprom when the driver has no by-page
//   op). When the family is absent, or the kernel has no such command (EOPNOTSUPP, 5.6-5.12) while
//   the legacy ioctl works, ETHTOOL_GMODULEINFO + ETHTOOL_GMODULEEEPROM read the linear image
//   instead, which for SFF-8079/8472 (256/512) and SFF-8636/8436 (256/640) already is the flat
//   image (reference.md §3.1); CMIS modules have no ioctl type. Once the ioctl has answered where
//   netlink said EOPNOTSUPP, netlink is not tried again for modules.
//
// "Not supported" is StatusCode::kUnimplemented, and nothing is logged here:
// - Statistics(): EOPNOTSUPP, or a driver without an ETH_SS_STATS set (loopback). A count of 0
//   is an empty vector.
// - Pause(): no "ethtool" family, EOPNOTSUPP (no get_pauseparam: veth), or a reply without the
//   stats nest (kernel < 5.10). A driver without get_pause_stats answers OK with both optionals
//   empty; a counter the driver does not fill is an empty optional.
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
// Sockets belong to the network namespace of the thread that calls Create().
// Thread-safety: one collector thread (EthtoolSource contract).

#include <linux/netlink.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "collectors/core/status.h"
#include "collectors/sys/ethtool.h"
#include "collectors/sys/unique_fd.h"

struct nl_msg;  // libnl-3

namespace fabricwatch::sys {

// The seam between KernelEthtool and the SIOCETHTOOL ioctl, so tests can play a driver.
class EthtoolIoctl {
 public:
  virtual ~EthtoolIoctl() = default;
  // SIOCETHTOOL on `netdev` with `cmd`: a command buffer whose first u32 is an ETHTOOL_* command
  // and whose size fits what that command writes back. Returns 0 or -errno.
  virtual int Call(const std::string& netdev, void* cmd) = 0;
  // The ifindex of `netdev` (SIOCGIFINDEX), or -errno. Used to notice a netdev that was replaced
  // under the same name, whose cached string table is stale.
  virtual int IfIndex(const std::string& netdev) = 0;
};

// The production seam: ioctl() on one AF_INET/SOCK_DGRAM socket.
class SocketEthtoolIoctl final : public EthtoolIoctl {
 public:
  static Result<std::unique_ptr<SocketEthtoolIoctl>> Open();
  int Call(const std::string& netdev, void* cmd) override;
  int IfIndex(const std::string& netdev) override;

 private:
  explicit SocketEthtoolIoctl(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

// ---------------------------------------------------------------- pure reply parsers
// Each takes one complete netlink message as the kernel sends it (header included, nlmsg_len
// bytes readable) and never reads outside it.

// An NLMSG_ERROR message: the (negative) error, 0 for an ACK, and the extended-ACK text
// (NLMSGERR_ATTR_MSG) when the kernel sent one. nullopt if `msg` is not a well-formed error.
struct NetlinkError {
  int error = 0;
  std::string extack;
};
std::optional<NetlinkError> ParseNetlinkError(const nlmsghdr* msg);

// CTRL_CMD_NEWFAMILY reply → CTRL_ATTR_FAMILY_ID.
Result<uint16_t> ParseGenlFamilyId(const nlmsghdr* msg);

// ETHTOOL_MSG_PAUSE_GET_REPLY. kUnimplemented when the stats nest is absent.
Result<PauseStats> ParsePauseReply(const nlmsghdr* msg);
// ETHTOOL_MSG_FEC_GET_REPLY.
Result<FecStats> ParseFecReply(const nlmsghdr* msg);
// ETHTOOL_MSG_LINKSTATE_GET_REPLY.
Result<LinkState> ParseLinkStateReply(const nlmsghdr* msg);
// RTM_GETDCB reply to DCB_CMD_IEEE_GET. kUnimplemented without DCB_ATTR_IEEE_PFC.
Result<PfcConfig> ParseDcbIeeeReply(const nlmsghdr* msg);

// Link-mode bit index of an ETHTOOL_A_FEC_ACTIVE value → "none", "rs", "baser", "llrs", or "".
std::string_view FecModeName(uint32_t link_mode_bit);

// ETHTOOL_MSG_STATS_GET_REPLY → the counters of the groups eth-phy, eth-mac, eth-ctrl and rmon,
// in reply order, named as the kernel's string sets ETH_SS_STATS_ETH_PHY/_MAC/_CTRL/_RMON name
// them (what `ethtool -S --all-groups` prints after "<group>-"). RMON histograms (HIST_RX/_TX),
// pads and attributes this build does not know are ignored. A counter index past the built-in
// tables (a newer kernel's counter) or a group id other than 0-3 is skipped and added to
// `*skipped` when it is not null: names are static, so there is nothing to call it by.
// kUnimplemented when the reply holds no counter (no group, or only empty ones); kInvalidArgument
// when it is malformed (a group without ETHTOOL_A_STATS_GRP_ID, a counter that is not 8 bytes, a
// truncated attribute).
Result<std::vector<StandardStat>> ParseStandardStatsReply(const nlmsghdr* msg,
                                                          uint64_t* skipped = nullptr);

// The names ParseStandardStatsReply gives: the group of ETHTOOL_A_STATS_GRP_ID `group_id` and its
// counter `index` (UAPI linux/ethtool_netlink.h enum ETHTOOL_A_STATS_*). "" when not known here.
std::string_view StandardStatsGroupName(uint32_t group_id);
std::string_view StandardStatName(uint32_t group_id, uint32_t index);

// An ETHTOOL_MSG_STATS_GET request of generic netlink family `family` for `netdev`, ready for
// nl_send_auto(): ETHTOOL_A_STATS_HEADER (2) nest with ETHTOOL_A_HEADER_DEV_NAME, then
// ETHTOOL_A_STATS_GROUPS (3) as a compact bitset nest: NOMASK, SIZE 4, VALUE u32 0xf (groups 0-3).
// Null when libnl cannot allocate or the name does not fit.
using NlMessage = std::unique_ptr<nl_msg, void (*)(nl_msg*)>;
NlMessage BuildStandardStatsRequest(uint16_t family, const std::string& netdev);

// ---------------------------------------------------------------- module EEPROM

// One ETHTOOL_MSG_MODULE_EEPROM_GET read: `length` bytes from `offset` of page `page` (bank `bank`)
// behind I2C address `i2c_address`, stored at `image_offset` of the flat image (design.md §5).
// offset + length never crosses 128 (the kernel's half-page rule, K net/ethtool/eeprom.c
// eeprom_parse_request), and a page other than 0 is only read at offset 128.
struct ModulePageRead {
  uint8_t i2c_address = 0x50;
  uint8_t page = 0;
  uint8_t bank = 0;
  uint8_t offset = 0;    // 0: lower half (page 0), 128: upper half
  uint8_t length = 128;  // 1-128
  uint16_t image_offset = 0;
  friend bool operator==(const ModulePageRead&, const ModulePageRead&) = default;
};

// The reads that make up the flat image, in image order, given `known`: the image read so far
// (empty, the lower page, or more). Each call plans with what it is given, so a caller reads the
// first entry whose image_offset is at or past known.size() and asks again (reference.md §5):
// - always: lower page (0x50, page 0, offset 0) at 0;
// - SFF-8472 (identifier 0x03): A0h upper (0x50, page 0, offset 128) at 128; when A0h byte 92 bit 6
//   (DDM implemented) is set, A2h (0x51, page 0) offset 0 at 256 and offset 128 at 384;
// - SFF-8636/8436 (0x0C, 0x0D, 0x11): page 00h at 128; unless lower byte 2 bit 2 (Flat_mem) is set:
//   page 01h at 256 when page 00h byte 195 bit 6 says it exists, page 02h at 384 when bit 7 does
//   (both unknown, so skipped, until page 00h is known), and page 03h (thresholds) at 512. A
//   skipped page is a gap the caller fills with zeros, so page 03h stays at 512;
// - CMIS (0x18, 0x19, 0x1B, 0x1E, 0x1F, 0x20): page 00h at 128; unless lower byte 2 bit 7 (flat
//   memory) is set: pages 01h, 02h, 10h, 11h of bank 0 at 256, 384, 512, 640;
// - any other identifier (or none yet known): upper page 00h at 128.
// A condition byte that `known` does not hold counts as clear.
std::vector<ModulePageRead> ModulePagesToRead(std::span<const uint8_t> known);

// Assembles the flat image with `read`, one ModulePagesToRead() entry at a time; after a short read
// the rest of that half page is asked for again. `read` returns the bytes (at most part.length) or
// the failure, with its errno. Rules: a failure of the lower page (image_offset 0) is returned as
// is; a later page that fails with EINVAL or EOPNOTSUPP before any byte, or reads no byte, ends the
// image there (those pages are absent); a page read short ends the image after its bytes; any
// other failure is returned. kNoData when the lower page reads no byte at all. The image is at
// most 768 bytes and a skipped optional page (SFF-8636 01h/02h) is zeros.
using ModuleReader = std::function<Result<std::vector<uint8_t>>(const ModulePageRead& part)>;
Result<std::vector<uint8_t>> ReadModuleImage(const ModuleReader& read);

// ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY → the bytes of ETHTOOL_A_MODULE_EEPROM_DATA (the kernel sends
// what the driver read, which may be fewer than asked). kInvalidArgument when malformed: no DATA,
// or more than `requested` bytes.
Result<std::vector<uint8_t>> ParseModuleEepromReply(const nlmsghdr* msg, uint32_t requested);

// An ETHTOOL_MSG_MODULE_EEPROM_GET request: header nest (1) with the netdev name, OFFSET and
// LENGTH (u32), PAGE, BANK and I2C_ADDRESS (u8). Null when libnl cannot allocate.
NlMessage BuildModuleEepromRequest(uint16_t family, const std::string& netdev,
                                   const ModulePageRead& read);

// The status ModuleEeprom() gives for a failed read (`error` as the netlink or ioctl path built it,
// errno and extack text in it): kNoData for the "no module" answers listed above (`first_read`: the
// lower page, or ETHTOOL_GMODULEINFO; `netdev_exists`: SIOCGIFINDEX found the netdev), otherwise
// `error` unchanged.
Status ModuleEepromErrorStatus(const Status& error, bool first_read, bool netdev_exists);

// ---------------------------------------------------------------- the source

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
  Result<PauseStats> Pause(const std::string& netdev) override;
  Result<FecStats> Fec(const std::string& netdev) override;
  Result<LinkState> LinkStateOf(const std::string& netdev) override;
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
  // Per netdev: the string table and the GSTATS buffer, reused while the count is unchanged.
  struct StatsCache {
    int ifindex = 0;
    std::vector<std::string> names;  // names.size() is the count they were fetched for
    std::vector<uint64_t> values;    // struct ethtool_stats + data[], with headroom
  };
  // Outcome of one GSTRINGS or GSTATS call: the driver's count moved since GSSET_INFO.
  enum class Fetch { kOk, kCountChanged };

  static constexpr size_t kMinPruneAt = 64;
  void PruneCache();
  Result<uint32_t> StatsCount(const std::string& netdev);
  Result<Fetch> FetchNames(const std::string& netdev, uint32_t count, StatsCache& cache);
  Result<Fetch> FetchValues(const std::string& netdev, uint32_t count, StatsCache& cache);
  // Netlink first, the legacy ioctl where the kernel lacks MODULE_EEPROM_GET.
  Result<std::vector<uint8_t>> ModuleEepromEitherPath(const std::string& netdev);
  Result<std::vector<uint8_t>> ModuleEepromNetlink(const std::string& netdev);
  Result<std::vector<uint8_t>> ModuleEepromIoctl(const std::string& netdev);
  Status ModuleError(const Status& error, const std::string& netdev, bool first_read);

  struct Netlink;  // libnl sockets, defined in the .cc
  std::unique_ptr<EthtoolIoctl> ioctl_;
  std::unique_ptr<Netlink> netlink_;
  std::unordered_map<std::string, StatsCache> stats_cache_;
  size_t prune_at_ = kMinPruneAt;
  uint64_t standard_stats_skipped_ = 0;
  // MODULE_EEPROM_GET answered EOPNOTSUPP where the ioctl worked: the kernel lacks the command.
  bool module_eeprom_via_ioctl_ = false;
};

}  // namespace fabricwatch::sys
