#pragma once
// The legacy SIOCETHTOOL ioctl path of KernelEthtool (docs/reference.md §3.1; K
// net/ethtool/ioctl.c): the seam tests play a driver behind, and what KernelEthtool reads through
// it — driver statistics (ETHTOOL_GSSET_INFO, GSTRINGS, GSTATS), the PFC storm-prevention tunable
// (ETHTOOL_GTUNABLE) and the module's linear EEPROM image (ETHTOOL_GMODULEINFO, GMODULEEEPROM).
// Error conventions are KernelEthtool's (ethtool_kernel.h).
//
// Thread-safety: one thread (KernelEthtool's).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "collectors/ethtool_source/ethtool.h"
#include "collectors/sys/unique_fd.h"

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

// A name SIOCETHTOOL can be asked about: not empty, shorter than IFNAMSIZ, no '/'.
bool ValidNetdevName(const std::string& netdev);
// kNotFound (ENODEV) for a name that is not ValidNetdevName().
Status BadNetdevName(const std::string& netdev);

// All driver statistics of a netdev: ETHTOOL_GSSET_INFO(ETH_SS_STATS) for the count (fallback
// ETHTOOL_GDRVINFO.n_stats), ETHTOOL_GSTRINGS cached per netdev (fetched again when the count or
// the ifindex changes), ETHTOOL_GSTATS into a reused buffer. A count that changes between the calls
// restarts the sequence once; a second change is kUnavailable (EAGAIN) rather than names paired
// with the values of another table.
class EthtoolIoctlStatistics {
 public:
  // `ioctl` must outlive this object.
  explicit EthtoolIoctlStatistics(EthtoolIoctl& ioctl) : ioctl_(ioctl) {}

  // As EthtoolSource::ReadStatistics, for a ValidNetdevName().
  Status Read(const std::string& netdev, std::vector<EthtoolStat>& stats);

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

  EthtoolIoctl& ioctl_;
  std::unordered_map<std::string, StatsCache> stats_cache_;
  size_t prune_at_ = kMinPruneAt;
};

// ETHTOOL_GTUNABLE ETHTOOL_PFC_PREVENTION_TOUT (u16 ms; mlx5) of a ValidNetdevName(): 0 means
// prevention is disabled. EOPNOTSUPP and EINVAL (an id the kernel or driver does not know) are
// kUnimplemented.
Result<uint32_t> ReadPfcStormTimeoutMs(EthtoolIoctl& ioctl, const std::string& netdev);

// The global pause settings of a ValidNetdevName() through ETHTOOL_GPAUSEPARAM, for kernels
// without the ethtool netlink family (no statistics). EOPNOTSUPP (no get_pauseparam: veth) is
// kUnimplemented.
Result<PauseInfo> ReadPauseParamIoctl(EthtoolIoctl& ioctl, const std::string& netdev);

// The link settings of a ValidNetdevName() through ETHTOOL_GLINKSETTINGS (kernel 4.6+), for
// kernels without the ethtool netlink family: the handshake call (0 mask words; the kernel answers
// with minus the number it uses), then the real one. Speed, duplex, port, autoneg and the
// supported and advertised modes; no lanes (not in struct ethtool_link_settings). EOPNOTSUPP (no
// get_link_ksettings) is kUnimplemented.
Result<LinkSettings> ReadLinkSettingsIoctl(EthtoolIoctl& ioctl, const std::string& netdev);

// The module's linear image of a ValidNetdevName(): ETHTOOL_GMODULEINFO, then
// ETHTOOL_GMODULEEEPROM for all of it in one call. For SFF-8079/8472 (256/512 bytes) and
// SFF-8636/8436 (256/640) that already is the flat image (docs/reference.md §3.1); any other type
// is kUnimplemented. Failures go through ModuleEepromFailure().
Result<std::vector<uint8_t>> ReadModuleEepromIoctl(EthtoolIoctl& ioctl, const std::string& netdev);

// ModuleEepromErrorStatus() for a failed module read of `netdev`. ENODEV is also the kernel's
// answer for a netdev name it does not know (ethnl header parsing, dev_ethtool): only a netdev that
// still exists (SIOCGIFINDEX through `ioctl`) makes it "no module".
Status ModuleEepromFailure(EthtoolIoctl& ioctl, const Status& error, const std::string& netdev,
                           bool first_read);

}  // namespace fabricwatch::sys
