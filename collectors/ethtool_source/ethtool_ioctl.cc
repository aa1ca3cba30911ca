#include "collectors/ethtool_source/ethtool_ioctl.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <span>
#include <string_view>

#include "collectors/ethtool_source/ethtool_module_pages.h"
#include "collectors/ethtool_source/link_modes.h"

namespace fabricwatch::sys {
namespace {

// ---------------------------------------------------------- legacy ioctl (UAPI linux/ethtool.h)

// Fixed-part layouts the code relies on (docs/reference.md §3.1; identical on x86-64 and arm64).
static_assert(offsetof(ethtool_sset_info, sset_mask) == 8 &&
              offsetof(ethtool_sset_info, data) == 16);
static_assert(offsetof(ethtool_gstrings, len) == 8 && offsetof(ethtool_gstrings, data) == 12);
static_assert(offsetof(ethtool_stats, n_stats) == 4 && offsetof(ethtool_stats, data) == 8);
static_assert(offsetof(ethtool_drvinfo, n_stats) == 180 && sizeof(ethtool_drvinfo) == 196);
static_assert(offsetof(ethtool_tunable, len) == 12 && offsetof(ethtool_tunable, data) == 16);
static_assert(ETH_GSTRING_LEN == 32 && ETH_SS_STATS == 1);
static_assert(ETHTOOL_PFC_PREVENTION_TOUT == 3 && ETHTOOL_TUNABLE_U16 == 2);

// Room past the count for a driver whose count grows between GSSET_INFO and GSTRINGS/GSTATS:
// kernels before the 2025 len/n_stats check write the driver's *current* count whatever the caller
// asked for (K net/ethtool/ioctl.c ethtool_get_strings / ethtool_get_stats), so the buffer must
// absorb a growth (mlx5 adds ~40 per-priority counters when PFC is enabled). Newer kernels answer a
// mismatching request with 0 entries instead.
uint32_t WithHeadroom(uint32_t count) { return count + count / 2 + 64; }

Status IoctlStatus(int neg_errno, std::string_view request, const std::string& netdev) {
  return FromErrno(-neg_errno, "netdev " + netdev + ": ioctl SIOCETHTOOL " + std::string(request));
}

// ETHTOOL_GMODULEINFO types and the largest linear image of each (UAPI linux/ethtool.h).
static_assert(ETH_MODULE_SFF_8079 == 1 && ETH_MODULE_SFF_8472 == 2 && ETH_MODULE_SFF_8636 == 3 &&
              ETH_MODULE_SFF_8436 == 4 && ETH_MODULE_SFF_8472_LEN == 512 &&
              ETH_MODULE_SFF_8636_MAX_LEN == 640);
static_assert(offsetof(ethtool_modinfo, type) == 4 && offsetof(ethtool_modinfo, eeprom_len) == 8 &&
              sizeof(ethtool_modinfo) == 44);
static_assert(offsetof(ethtool_eeprom, offset) == 8 && offsetof(ethtool_eeprom, len) == 12 &&
              sizeof(ethtool_eeprom) == 16);

// struct ethtool_link_settings: the fixed part (48 bytes) then three masks of
// link_mode_masks_nwords u32 each (supported, advertising, lp_advertising); nwords is an s8.
static_assert(offsetof(ethtool_link_settings, speed) == 4 &&
              offsetof(ethtool_link_settings, link_mode_masks_nwords) == 15 &&
              offsetof(ethtool_link_settings, link_mode_masks) == 48 &&
              sizeof(ethtool_link_settings) == 48);
constexpr size_t kMaxLinkModeWords = 127;

}  // namespace

bool ValidNetdevName(const std::string& netdev) {
  return !netdev.empty() && netdev.size() < IFNAMSIZ && netdev.find('/') == std::string::npos;
}

Status BadNetdevName(const std::string& netdev) {
  return Status(StatusCode::kNotFound, "netdev \"" + netdev + "\": not a valid interface name",
                ENODEV);
}

// ---------------------------------------------------------------- SocketEthtoolIoctl

Result<std::unique_ptr<SocketEthtoolIoctl>> SocketEthtoolIoctl::Open() {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) return Error(FromErrno(errno, "socket(AF_INET, SOCK_DGRAM) for SIOCETHTOOL"));
  return std::unique_ptr<SocketEthtoolIoctl>(new SocketEthtoolIoctl(std::move(fd)));
}

int SocketEthtoolIoctl::Call(const std::string& netdev, void* cmd) {
  if (!ValidNetdevName(netdev)) return -ENODEV;
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, netdev.data(), netdev.size());
  ifr.ifr_data = static_cast<char*>(cmd);
  return ::ioctl(fd_.get(), SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

int SocketEthtoolIoctl::IfIndex(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return -ENODEV;
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, netdev.data(), netdev.size());
  if (::ioctl(fd_.get(), SIOCGIFINDEX, &ifr) < 0) return -errno;
  return ifr.ifr_ifindex;
}

// ---------------------------------------------------------------- driver statistics

Result<uint32_t> EthtoolIoctlStatistics::StatsCount(const std::string& netdev) {
  // ETHTOOL_GSSET_INFO: the kernel clears the bits of sets it cannot count and writes one u32 per
  // remaining bit (K net/ethtool/ioctl.c ethtool_get_sset_info).
  std::array<uint64_t, 3> buffer{};  // 16-byte header + data[1], 8-byte aligned
  ethtool_sset_info info{};
  info.cmd = ETHTOOL_GSSET_INFO;
  info.sset_mask = 1ull << ETH_SS_STATS;
  std::memcpy(buffer.data(), &info, sizeof(info));
  int rc = ioctl_.Call(netdev, buffer.data());
  if (rc == 0) {
    std::memcpy(&info, buffer.data(), sizeof(info));
    if ((info.sset_mask & (1ull << ETH_SS_STATS)) == 0) {
      return Error(StatusCode::kUnimplemented,
                   "netdev " + netdev + ": the driver has no statistics (no ETH_SS_STATS set)");
    }
    uint32_t count;
    std::memcpy(&count,
                reinterpret_cast<const char*>(buffer.data()) + offsetof(ethtool_sset_info, data),
                sizeof(count));
    return count;
  }
  if (rc != -EOPNOTSUPP && rc != -EINVAL) {
    return Error(IoctlStatus(rc, "ETHTOOL_GSSET_INFO", netdev));
  }
  // Kernels before 2.6.33 have no GSSET_INFO: ETHTOOL_GDRVINFO.n_stats.
  ethtool_drvinfo drvinfo{};
  drvinfo.cmd = ETHTOOL_GDRVINFO;
  if (rc = ioctl_.Call(netdev, &drvinfo); rc != 0) {
    return Error(IoctlStatus(rc, "ETHTOOL_GDRVINFO", netdev));
  }
  return drvinfo.n_stats;
}

Result<EthtoolIoctlStatistics::Fetch> EthtoolIoctlStatistics::FetchNames(const std::string& netdev,
                                                                         uint32_t count,
                                                                         StatsCache& cache) {
  // Transient: names are fetched again only when the count or the ifindex changes.
  const uint32_t capacity = WithHeadroom(count);
  const size_t bytes = sizeof(ethtool_gstrings) + size_t{capacity} * ETH_GSTRING_LEN;
  std::vector<uint64_t> buffer((bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t));
  ethtool_gstrings header{};
  header.cmd = ETHTOOL_GSTRINGS;
  header.string_set = ETH_SS_STATS;
  header.len = count;  // what we expect: newer kernels answer 0 entries if it is stale
  std::memcpy(buffer.data(), &header, sizeof(header));
  if (int rc = ioctl_.Call(netdev, buffer.data()); rc != 0) {
    return Error(IoctlStatus(rc, "ETHTOOL_GSTRINGS", netdev));
  }
  std::memcpy(&header, buffer.data(), sizeof(header));
  cache.names.clear();
  if (header.len != count) return Fetch::kCountChanged;
  const char* data = reinterpret_cast<const char*>(buffer.data()) + sizeof(ethtool_gstrings);
  cache.names.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    const char* name = data + size_t{i} * ETH_GSTRING_LEN;
    cache.names.emplace_back(name, strnlen(name, ETH_GSTRING_LEN));
  }
  return Fetch::kOk;
}

Result<EthtoolIoctlStatistics::Fetch> EthtoolIoctlStatistics::FetchValues(const std::string& netdev,
                                                                          uint32_t count,
                                                                          StatsCache& cache) {
  // values[0] is the 8-byte struct ethtool_stats header, values[1 + i] is stat i.
  const size_t needed = 1 + size_t{WithHeadroom(count)};
  if (cache.values.size() < needed) cache.values.resize(needed);
  ethtool_stats header{};
  header.cmd = ETHTOOL_GSTATS;
  header.n_stats = count;
  std::memcpy(cache.values.data(), &header, sizeof(header));
  if (int rc = ioctl_.Call(netdev, cache.values.data()); rc != 0) {
    return Error(IoctlStatus(rc, "ETHTOOL_GSTATS", netdev));
  }
  std::memcpy(&header, cache.values.data(), sizeof(header));
  return header.n_stats == count ? Fetch::kOk : Fetch::kCountChanged;
}

void EthtoolIoctlStatistics::PruneCache() {
  // Netdevs come and go (container veths): entries of names that no longer resolve to the same
  // device are dropped when the cache has doubled since the last pass, so the work is amortised.
  if (stats_cache_.size() < prune_at_) return;
  std::erase_if(stats_cache_, [this](const auto& entry) {
    return ioctl_.IfIndex(entry.first) != entry.second.ifindex;
  });
  prune_at_ = std::max(kMinPruneAt, 2 * stats_cache_.size());
}

Status EthtoolIoctlStatistics::Read(const std::string& netdev, std::vector<EthtoolStat>& stats) {
  const int ifindex = ioctl_.IfIndex(netdev);
  if (ifindex < 0) {
    stats_cache_.erase(netdev);
    return FromErrno(-ifindex, "netdev " + netdev + ": SIOCGIFINDEX");
  }
  auto it = stats_cache_.find(netdev);
  if (it == stats_cache_.end()) {
    PruneCache();
    it = stats_cache_.emplace(netdev, StatsCache{}).first;
  }
  StatsCache& cache = it->second;
  if (cache.ifindex != ifindex) {  // a new device under this name: its table is unknown
    cache.ifindex = ifindex;
    cache.names.clear();
  }
  // The driver's count can change between any two calls (mlx5: PFC enabled, channels added). A
  // mismatch restarts the sequence once with fresh names; a second one gives up for this tick
  // rather than pair names and values of different tables.
  std::string changes;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto count = StatsCount(netdev);
    if (!count) return count.error();
    if (*count == 0) {
      stats.clear();
      return Status::Ok();
    }
    // Bounded before anything is allocated for the table (the kernel's own limit is
    // S32_MAX / 8, K net/ethtool/ioctl.c).
    if (*count > kMaxStatisticsPerNetdev) {
      stats_cache_.erase(netdev);
      return Status(StatusCode::kInvalidArgument,
                    "netdev " + netdev + ": the driver reports " + std::to_string(*count) +
                        " statistics, more than the " + std::to_string(kMaxStatisticsPerNetdev) +
                        " fabricwatch reads per netdev; its driver statistics are not exported");
    }
    if (cache.names.size() != *count) {
      auto fetched = FetchNames(netdev, *count, cache);
      if (!fetched) return fetched.error();
      if (*fetched == Fetch::kCountChanged) {
        changes += (changes.empty() ? "" : ", ") + std::to_string(*count) + " before GSTRINGS";
        continue;
      }
    }
    auto fetched = FetchValues(netdev, *count, cache);
    if (!fetched) return fetched.error();
    if (*fetched == Fetch::kCountChanged) {
      changes += (changes.empty() ? "" : ", ") + std::to_string(*count) + " before GSTATS";
      cache.names.clear();  // the table these names belong to is gone
      continue;
    }
    stats.resize(*count);
    // A table that shrank a lot gives its memory back; one of the same size keeps it.
    if (stats.capacity() > 2 * stats.size() + 64) stats.shrink_to_fit();
    for (uint32_t i = 0; i < *count; ++i) {
      stats[i].name = cache.names[i];  // copy-assigned: the previous sample's storage is reused
      stats[i].value = cache.values[1 + i];
    }
    return Status::Ok();
  }
  return Status(StatusCode::kUnavailable,
                "netdev " + netdev + ": the driver's statistics count kept changing (" + changes +
                    "); skipped this time",
                EAGAIN);
}

// ---------------------------------------------------------------- tunable, module EEPROM

Result<uint32_t> ReadPfcStormTimeoutMs(EthtoolIoctl& ioctl, const std::string& netdev) {
  // struct ethtool_tunable (16 bytes) followed by the u16 value (K net/ethtool/ioctl.c
  // ethtool_get_tunable copies tuna.len bytes after the header).
  std::array<uint64_t, 3> buffer{};
  ethtool_tunable tunable{};
  tunable.cmd = ETHTOOL_GTUNABLE;
  tunable.id = ETHTOOL_PFC_PREVENTION_TOUT;
  tunable.type_id = ETHTOOL_TUNABLE_U16;
  tunable.len = sizeof(uint16_t);
  std::memcpy(buffer.data(), &tunable, sizeof(tunable));
  if (int rc = ioctl.Call(netdev, buffer.data()); rc != 0) {
    if (rc == -EINVAL) {
      // ethtool_tunable_valid() rejects an id the kernel does not know, and drivers' get_tunable
      // answer EINVAL for ids they do not handle: both mean "not here".
      return Error(Status(StatusCode::kUnimplemented,
                          "netdev " + netdev +
                              ": ioctl SIOCETHTOOL ETHTOOL_GTUNABLE PFC_PREVENTION_TOUT: not "
                              "supported by the driver (EINVAL)",
                          EINVAL));
    }
    return Error(IoctlStatus(rc, "ETHTOOL_GTUNABLE PFC_PREVENTION_TOUT", netdev));
  }
  uint16_t value;
  std::memcpy(&value, reinterpret_cast<const char*>(buffer.data()) + sizeof(ethtool_tunable),
              sizeof(value));
  // 0 = PFC_STORM_PREVENTION_DISABLE; mlx5 reports the resolved timeout, never
  // PFC_STORM_PREVENTION_AUTO (0xffff), which is a value to set (UAPI linux/ethtool.h).
  return uint32_t{value};
}

Result<PauseInfo> ReadPauseParamIoctl(EthtoolIoctl& ioctl, const std::string& netdev) {
  static_assert(sizeof(ethtool_pauseparam) == 16 && offsetof(ethtool_pauseparam, tx_pause) == 12);
  ethtool_pauseparam param{};
  param.cmd = ETHTOOL_GPAUSEPARAM;
  if (int rc = ioctl.Call(netdev, &param); rc != 0) {
    return Error(IoctlStatus(rc, "ETHTOOL_GPAUSEPARAM", netdev));
  }
  PauseInfo info;  // no statistics: those exist only in the netlink reply
  info.autoneg = param.autoneg != 0;
  info.rx_enabled = param.rx_pause != 0;
  info.tx_enabled = param.tx_pause != 0;
  return info;
}

Result<LinkSettings> ReadLinkSettingsIoctl(EthtoolIoctl& ioctl, const std::string& netdev) {
  constexpr size_t kFixedWords = sizeof(ethtool_link_settings) / sizeof(uint32_t);
  std::array<uint32_t, kFixedWords + 3 * kMaxLinkModeWords> buffer{};
  ethtool_link_settings fixed{};
  fixed.cmd = ETHTOOL_GLINKSETTINGS;  // nwords 0: the handshake (K net/ethtool/ioctl.c)
  std::memcpy(buffer.data(), &fixed, sizeof(fixed));
  if (int rc = ioctl.Call(netdev, buffer.data()); rc != 0) {
    return Error(IoctlStatus(rc, "ETHTOOL_GLINKSETTINGS", netdev));
  }
  std::memcpy(&fixed, buffer.data(), sizeof(fixed));
  const int nwords = -fixed.link_mode_masks_nwords;
  if (fixed.cmd != ETHTOOL_GLINKSETTINGS || nwords <= 0) {
    return Error(StatusCode::kInternal, "netdev " + netdev +
                                            ": ioctl SIOCETHTOOL ETHTOOL_GLINKSETTINGS: no "
                                            "handshake answer (link_mode_masks_nwords " +
                                            std::to_string(fixed.link_mode_masks_nwords) + ")");
  }
  buffer.fill(0);
  fixed = ethtool_link_settings{};
  fixed.cmd = ETHTOOL_GLINKSETTINGS;
  fixed.link_mode_masks_nwords = static_cast<int8_t>(nwords);
  std::memcpy(buffer.data(), &fixed, sizeof(fixed));
  if (int rc = ioctl.Call(netdev, buffer.data()); rc != 0) {
    return Error(IoctlStatus(rc, "ETHTOOL_GLINKSETTINGS", netdev));
  }
  std::memcpy(&fixed, buffer.data(), sizeof(fixed));
  if (fixed.link_mode_masks_nwords != nwords) {
    return Error(StatusCode::kInternal, "netdev " + netdev +
                                            ": ioctl SIOCETHTOOL ETHTOOL_GLINKSETTINGS: "
                                            "link_mode_masks_nwords changed to " +
                                            std::to_string(fixed.link_mode_masks_nwords));
  }
  LinkSettings out;
  out.speed_mbps = KnownLinkSpeed(fixed.speed);
  out.duplex = std::string(LinkDuplexName(fixed.duplex));
  out.port = std::string(LinkPortName(fixed.port));
  out.autoneg = fixed.autoneg != AUTONEG_DISABLE;
  const auto words = static_cast<size_t>(nwords);
  const std::span<const uint32_t> masks(buffer.data() + kFixedWords, 2 * words);
  AddLinkModeBits(masks.subspan(0, words), static_cast<uint32_t>(words * 32), out.supported_modes,
                  out.max_supported_speed_mbps);
  AddLinkModeBits(masks.subspan(words, words), static_cast<uint32_t>(words * 32),
                  out.advertised_modes, out.max_advertised_speed_mbps);
  return out;
}

Status ModuleEepromFailure(EthtoolIoctl& ioctl, const Status& error, const std::string& netdev,
                           bool first_read) {
  const bool exists = error.sys_errno() != ENODEV || ioctl.IfIndex(netdev) >= 0;
  return ModuleEepromErrorStatus(error, first_read, exists);
}

Result<std::vector<uint8_t>> ReadModuleEepromIoctl(EthtoolIoctl& ioctl, const std::string& netdev) {
  ethtool_modinfo info{};
  info.cmd = ETHTOOL_GMODULEINFO;
  if (int rc = ioctl.Call(netdev, &info); rc != 0) {
    return Error(
        ModuleEepromFailure(ioctl, IoctlStatus(rc, "ETHTOOL_GMODULEINFO", netdev), netdev, true));
  }
  uint32_t max_len = 0;
  switch (info.type) {
    case ETH_MODULE_SFF_8079:
      max_len = ETH_MODULE_SFF_8079_LEN;
      break;
    case ETH_MODULE_SFF_8472:
      max_len = ETH_MODULE_SFF_8472_LEN;
      break;
    case ETH_MODULE_SFF_8636:
    case ETH_MODULE_SFF_8436:
      max_len = ETH_MODULE_SFF_8636_MAX_LEN;
      break;
    default:
      return Error(Status(StatusCode::kUnimplemented,
                          "netdev " + netdev + ": ioctl SIOCETHTOOL ETHTOOL_GMODULEINFO: type " +
                              std::to_string(info.type) + " has no known linear layout"));
  }
  if (info.eeprom_len == 0 || info.eeprom_len > max_len) {
    return Error(
        Status(StatusCode::kInternal,
               "netdev " + netdev + ": ioctl SIOCETHTOOL ETHTOOL_GMODULEINFO: eeprom_len " +
                   std::to_string(info.eeprom_len) + " for module type " +
                   std::to_string(info.type) + " (at most " + std::to_string(max_len) + ")"));
  }
  // struct ethtool_eeprom then data[eeprom_len]: the kernel reads the whole linear image in one
  // call (K net/ethtool/ioctl.c ethtool_get_any_eeprom loops over it in PAGE_SIZE chunks).
  std::vector<uint64_t> buffer((sizeof(ethtool_eeprom) + info.eeprom_len + 7) / 8);
  ethtool_eeprom eeprom{};
  eeprom.cmd = ETHTOOL_GMODULEEEPROM;
  eeprom.offset = 0;
  eeprom.len = info.eeprom_len;
  std::memcpy(buffer.data(), &eeprom, sizeof(eeprom));
  if (int rc = ioctl.Call(netdev, buffer.data()); rc != 0) {
    return Error(
        ModuleEepromFailure(ioctl, IoctlStatus(rc, "ETHTOOL_GMODULEEEPROM", netdev), netdev, true));
  }
  const auto* data = reinterpret_cast<const uint8_t*>(buffer.data()) + sizeof(ethtool_eeprom);
  return std::vector<uint8_t>(data, data + info.eeprom_len);
}

}  // namespace fabricwatch::sys
