#pragma once
// EthtoolSource: where the ethtool collector's data comes from — the kernel (legacy ioctl for
// driver statistics, generic netlink for pause/FEC/link-state, DCB netlink for PFC config), or a
// replay directory (--path.ethtool, docs/design.md §5) for tests, the simulator and offline
// analysis.
//
// Every method answers for one netdev. "Not supported" is an expected answer (veth has no pause
// stats, old kernels have no ethtool netlink family): it is Status code kUnimplemented (or
// kNoData), which callers log once at debug and never count as an error.
//
// Thread-safety: a source is used by one collector thread.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace fabricwatch::sys {

// The most driver statistics fabricwatch reads for one netdev, whatever the source: what one
// netdev may cost in memory is bounded by it (a statistic costs about 150 bytes across the
// source, the parsed table and the collector's plan, so 32768 is about 5 MB). Real drivers
// report a few hundred (ice, bnxt_en) to a few thousand (mlx5 with many channels and traffic
// classes). A netdev that reports more gets an error naming it, and none of its driver
// statistics are exported (a partial table would be a different table each time the driver
// reordered it); its other data (FEC, pause, PFC, module) is unaffected. README "Collectors".
inline constexpr size_t kMaxStatisticsPerNetdev = 32768;

// One driver statistic as ETHTOOL_GSTRINGS(ETH_SS_STATS) names it and ETHTOOL_GSTATS reads it.
struct EthtoolStat {
  std::string name;
  uint64_t value = 0;
};

// Global IEEE 802.3x pause (ETHTOOL_MSG_PAUSE_GET with ETHTOOL_FLAG_STATS; the
// ETHTOOL_GPAUSEPARAM ioctl; a replay pause file, the text of `ethtool -a`): the configuration
// and the standard counters. Each is empty when the source does not report it.
struct PauseInfo {
  std::optional<bool> autoneg;     // ETHTOOL_A_PAUSE_AUTONEG
  std::optional<bool> rx_enabled;  // ETHTOOL_A_PAUSE_RX: honour received pause frames
  std::optional<bool> tx_enabled;  // ETHTOOL_A_PAUSE_TX: send pause frames
  std::optional<uint64_t> tx_frames;
  std::optional<uint64_t> rx_frames;
};

// FEC (ETHTOOL_MSG_FEC_GET with ETHTOOL_FLAG_STATS). Each array: [0] total, [1..n] per lane.
struct FecStats {
  std::string active_mode;  // "none", "rs", "baser", "llrs", "" if unknown
  std::vector<uint64_t> corrected_blocks;
  std::vector<uint64_t> uncorrectable_blocks;
  std::vector<uint64_t> corrected_bits;
};

// ETHTOOL_MSG_LINKSTATE_GET with ETHTOOL_FLAG_STATS.
struct LinkState {
  std::optional<bool> link;
  std::optional<uint32_t> ext_down_count;  // kernel 6.2+, drivers with get_link_ext_stats
  std::optional<uint8_t> ext_state;        // why the link is down, while it is down
};

// The link settings of a netdev, as `ethtool <netdev>` shows them: ETHTOOL_MSG_LINKMODES_GET and
// ETHTOOL_MSG_LINKINFO_GET (the ETHTOOL_GLINKSETTINGS ioctl where the kernel has no ethtool
// netlink family), or the replay file DIR/<netdev>/link. Each optional is empty, and each string
// or list empty, when the source does not say.
struct LinkSettings {
  // Current speed in Mb/s; empty while unknown (link down: the kernel's SPEED_UNKNOWN, 0, and
  // 65535, which ethtool also prints as "Unknown!").
  std::optional<uint32_t> speed_mbps;
  // Lanes of the current mode (ETHTOOL_A_LINKMODES_LANES, kernel 5.11+; not in the ioctl).
  std::optional<uint32_t> lanes;
  std::string duplex;  // "full", "half", "" when unknown
  std::optional<bool> autoneg;
  // Whether the link is up ("Link detected:"). Only the replay source fills it: the kernel
  // source's two requests do not carry it (LinkStateOf() has it).
  std::optional<bool> link_detected;
  // The connector as ethtool names it: "Twisted Pair", "AUI", "BNC", "MII", "FIBRE",
  // "Direct Attach Copper", "None", "Other"; "" when unknown.
  std::string port;
  // Link-mode names (collectors/ethtool_source/link_modes.h), in bit order (kernel) or file order
  // (replay): what the port supports and what it advertises.
  std::vector<std::string> supported_modes;
  std::vector<std::string> advertised_modes;
  // The fastest of those modes in Mb/s, from the link-mode table (the name parsed only for a
  // mode the table does not know); empty when no mode with a known speed is listed.
  std::optional<uint32_t> max_supported_speed_mbps;
  std::optional<uint32_t> max_advertised_speed_mbps;
};

// DCB (RTM_GETDCB, DCB_CMD_IEEE_GET): IEEE PFC configuration and per-priority PFC counters.
struct PfcConfig {
  std::optional<uint8_t> pfc_cap;                    // traffic classes that can be PFC-enabled
  std::optional<uint8_t> enabled_mask;               // bit i = PFC enabled on priority i
  std::optional<std::vector<uint64_t>> requests;     // PFC frames sent, per priority (8)
  std::optional<std::vector<uint64_t>> indications;  // PFC frames received, per priority (8)
  // The IEEE APP table (DCB_ATTR_IEEE_APP_TABLE; a replay qos file: its dscp2prio rows). Trust
  // is "dscp" when the table maps any DSCP (selector 5) and "pcp" when it maps none — the rule
  // mlnx_qos and upstream mlx5 follow (docs/reference.md §4.6) — or the trust state the qos file
  // prints; "" when the source does not say.
  std::string trust;
  std::array<std::optional<uint8_t>, 64> dscp_priority{};  // DSCP → priority
  std::optional<uint8_t> default_priority;                 // APP selector 1 (ethertype) protocol 0
};

// One counter of the standard statistics groups (ETHTOOL_MSG_STATS_GET, kernel 5.13+): group
// "eth-phy", "eth-mac", "eth-ctrl" or "rmon", and the IEEE 802.3 / RFC 2819 counter name, e.g.
// "FrameCheckSequenceErrors". Both views point at static storage.
struct StandardStat {
  std::string_view group;
  std::string_view name;
  uint64_t value = 0;
};

class EthtoolSource {
 public:
  virtual ~EthtoolSource() = default;

  // Whether the source names its own netdevs (a replay directory: its subdirectories). Collectors
  // then read those netdevs rather than choosing them from the sysfs root's class/net.
  virtual bool HasOwnNetdevs() const { return false; }
  // The source's netdevs, sorted; kUnimplemented for a source without HasOwnNetdevs().
  virtual Result<std::vector<std::string>> Netdevs() const {
    return tl::unexpected<Status>(
        Status(StatusCode::kUnimplemented, "this ethtool source has no netdev listing"));
  }
  // What Netdevs() is made from, listed into `names` (sorted, its strings' storage reused), for a
  // collector to compare sample to sample and ask Netdevs() again only when it changed
  // (ListingWatch). kUnimplemented for a source without HasOwnNetdevs().
  virtual Status ListNetdevEntries(std::vector<std::string>& names) const {
    names.clear();
    return Status(StatusCode::kUnimplemented, "this ethtool source has no netdev listing");
  }
  // False for a source that has no form for Fec(), LinkStateOf() and StandardStats() (a replay
  // directory): they would all answer kUnimplemented, so collectors do not ask. Pfc(), Pause(),
  // PfcStormTimeoutMs(), LinkSettingsOf() and ReadModuleEeprom() are asked of every source (a
  // replay directory answers from DIR/<netdev>/qos, pause, tunables, link, module-eeprom).
  virtual bool HasLinkQueries() const { return true; }

  // All driver statistics of `netdev`, in driver order (one GSTATS call in kernel mode), into
  // `stats`: its contents are replaced (unspecified after an error) and the storage of its names
  // reused, so a caller that keeps the vector from sample to sample allocates nothing while the
  // driver's table stays the same (docs/design.md §8).
  virtual Status ReadStatistics(const std::string& netdev, std::vector<EthtoolStat>& stats) = 0;
  // The same into a new vector.
  Result<std::vector<EthtoolStat>> Statistics(const std::string& netdev) {
    std::vector<EthtoolStat> stats;
    if (Status status = ReadStatistics(netdev, stats); !status.ok()) return Error(status);
    return stats;
  }
  virtual Result<PauseInfo> Pause(const std::string& netdev) = 0;
  virtual Result<FecStats> Fec(const std::string& netdev) = 0;
  virtual Result<LinkState> LinkStateOf(const std::string& netdev) = 0;
  virtual Result<PfcConfig> Pfc(const std::string& netdev) = 0;
  // The PFC storm-prevention timeout (ETHTOOL_GTUNABLE, ETHTOOL_PFC_PREVENTION_TOUT, mlx5), in
  // milliseconds; 0 means prevention is disabled.
  virtual Result<uint32_t> PfcStormTimeoutMs(const std::string& netdev) = 0;
  // The standard statistics groups the driver fills (no RMON histograms). Sources without them
  // (replay directories, kernels before 5.13, drivers that fill none) answer kUnimplemented.
  virtual Result<std::vector<StandardStat>> StandardStats(const std::string& netdev) {
    return tl::unexpected<Status>(
        Status(StatusCode::kUnimplemented, "standard statistics of " + netdev + ": not available"));
  }
  // The link settings of `netdev` (unprivileged). kUnimplemented where the source has no such
  // data (the default; a driver without get_link_ksettings), kNoData where a replay directory
  // has no link file for the netdev, kNotFound for a netdev that does not exist.
  virtual Result<LinkSettings> LinkSettingsOf(const std::string& netdev) {
    return tl::unexpected<Status>(
        Status(StatusCode::kUnimplemented, "link settings of " + netdev + ": not available"));
  }
  // The same into `settings`, whose storage is reused: a source that can tell the settings did
  // not change (the replay source: the same file text) assigns the same values again, which
  // allocates nothing, so a collector that keeps `settings` per netdev stays allocation-free in
  // steady state (docs/design.md §8). `settings` is unspecified after an error.
  virtual Status ReadLinkSettings(const std::string& netdev, LinkSettings& settings) {
    auto read = LinkSettingsOf(netdev);
    if (!read) return read.error();
    settings = std::move(*read);
    return Status::Ok();
  }
  // The plugged transceiver module's memory as the flat image of docs/design.md §5 (what
  // optics::DecodeModuleImage reads): SFF-8472 A0h then A2h (≤ 512 bytes); SFF-8636/8436 lower page
  // then upper pages 00h, 01h, 02h, 03h (≤ 640; a page the module does not advertise is zeros when
  // a later one follows); CMIS lower page then pages 00h, 01h, 02h, 10h, 11h of bank 0 (≤ 768). A
  // shorter image means the later pages are absent (flat memory, no diagnostics).
  // Status codes: kNoData when the cage is empty (as far as the driver says so: see
  // KernelEthtool), kUnimplemented when the driver cannot read modules at all (veth, virtio_net)
  // or the source has no module data, kPermissionDenied without CAP_NET_ADMIN, kNotFound for a
  // netdev that does not exist.
  // Reads into `image`: its contents are replaced (empty after an error) and its storage reused,
  // so a caller that keeps the vector allocates nothing per read where the source allows it
  // (the replay source; the kernel's netlink path builds libnl messages per page).
  virtual Status ReadModuleEeprom(const std::string& netdev, std::vector<uint8_t>& image) {
    image.clear();
    return Status(StatusCode::kUnimplemented, "module EEPROM of " + netdev + ": not available");
  }
  // The same into a new vector.
  Result<std::vector<uint8_t>> ModuleEeprom(const std::string& netdev) {
    std::vector<uint8_t> image;
    if (Status status = ReadModuleEeprom(netdev, image); !status.ok()) return Error(status);
    return image;
  }
  // Problems the last Statistics() or LinkSettingsOf() call survived without failing (a malformed
  // line in a replay file): what parsed was returned, these are counted as errors by the
  // collector.
  virtual std::vector<Status> TakeWarnings() { return {}; }
};

}  // namespace fabricwatch::sys
