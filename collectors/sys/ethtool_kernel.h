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
// A netdev that does not exist is kNotFound (ENODEV). A netlink request the kernel does not
// answer within 1 s is kDeadlineExceeded. Messages carry the netdev, the request, errno text and
// the kernel's extended-ACK text when it sent one.
//
// Sockets belong to the network namespace of the thread that calls Create().
// Thread-safety: one collector thread (EthtoolSource contract).

#include <linux/netlink.h>

#include <cstdint>
#include <memory>
#include <optional>
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

  Result<std::vector<EthtoolStat>> Statistics(const std::string& netdev) override;
  Result<PauseStats> Pause(const std::string& netdev) override;
  Result<FecStats> Fec(const std::string& netdev) override;
  Result<LinkState> LinkStateOf(const std::string& netdev) override;
  Result<PfcConfig> Pfc(const std::string& netdev) override;
  Result<uint32_t> PfcStormTimeoutMs(const std::string& netdev) override;
  Result<std::vector<StandardStat>> StandardStats(const std::string& netdev) override;

  // Netlink requests sent so far (generic netlink and rtnetlink), for tests and self-metrics.
  uint64_t netlink_requests() const;
  // Standard-statistics counters skipped so far because this build has no name for them (a newer
  // kernel's counter index or group): for a debug log or self-metric.
  uint64_t standard_stats_skipped() const { return standard_stats_skipped_; }
  // Tests: an ethtool GET of command `cmd` (header nest attribute 1) down the same path as Pause(),
  // Fec() and LinkStateOf(). True when the answered request carried ETHTOOL_FLAG_STATS.
  Result<bool> EthtoolGetForTesting(const std::string& netdev, uint8_t cmd);

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

  struct Netlink;  // libnl sockets, defined in the .cc
  std::unique_ptr<EthtoolIoctl> ioctl_;
  std::unique_ptr<Netlink> netlink_;
  std::unordered_map<std::string, StatsCache> stats_cache_;
  size_t prune_at_ = kMinPruneAt;
  uint64_t standard_stats_skipped_ = 0;
};

}  // namespace fabricwatch::sys
