#pragma once
// Where the rdma collector reads a port's hw_counters from (issue 34): one RDMA netlink
// RDMA_NLDEV_CMD_STAT_GET request per port (collectors/sys/rdma_netlink.h; kernel v5.3+,
// drivers/infiniband/core/nldev.c stat_get_doit_default_counter), or one sysfs read per
// ports/<n>/hw_counters/<name> file. Same names, same values: the kernel fills both from the
// driver's get_hw_stats() plus the bound counters (core/sysfs.c print_hw_stat).
//
// Option hw-counters-source: auto (default) uses netlink where the kernel answers it for the port
// and the sysfs files otherwise; netlink is the same but logs a fallback as a warning; sysfs never
// opens the socket. A replay root (--path.sysfs other than the host's /sys) is always read from
// its files: netlink would describe this host, not the tree. A port falls back to its files, with
// one log line naming the directory, when the kernel answers an error (EOPNOTSUPP, EINVAL,
// EMSGSIZE, no NETLINK_RDMA, ...) or a counter name that the sysfs directory does not list;
// nothing is lost: that sample is read from the files. A counter the directory lists but the reply
// leaves out (an optional counter disabled with `rdma statistic set`, v5.16+) is read from its
// file. Which source a port uses is fabricwatch_rdma_hw_stats_source{device,port,source}.

#include <spdlog/logger.h>

#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/metric_sink.h"
#include "base/status.h"
#include "collectors/sys/rdma_netlink.h"

namespace fabricwatch::rdma {

enum class HwCounterSource { kAuto, kNetlink, kSysfs };
// "auto", "netlink" or "sysfs"; kInvalidArgument naming `flag` otherwise.
Result<HwCounterSource> ParseHwCounterSource(std::string_view text, std::string_view flag);

inline constexpr MetricDesc kHwCounterSource{
    "fabricwatch_rdma_hw_stats_source",
    "1 for the source the port's hw_counters are read from: source=\"netlink\" (one RDMA netlink "
    "STAT_GET request per port, kernel 5.3+) or source=\"sysfs\" (one read per "
    "ports/<n>/hw_counters file: replay roots, option hw-counters-source=sysfs, or the kernel "
    "did not answer). Ports without hw_counters have no series.",
    MetricKind::kGauge,
    {"device", "port", "source"}};

// The choice for one port, pure so that it is tested apart: netlink only with a mode other than
// sysfs, the host's own /sys, a successful probe (`probe`: the first STAT_GET of the port) and
// every reply name among `sysfs_names` (the port's hw_counters files, sorted). `reason` says why
// sysfs when netlink is false.
struct HwSourceDecision {
  bool netlink = false;
  std::string reason;
};
HwSourceDecision DecideHwCounterSource(HwCounterSource mode, bool live_sysfs, const Status& probe,
                                       std::span<const std::string> sysfs_names,
                                       std::span<const sys::RdmaHwCounter> reply);

// After a reply named another device than the one asked (IsRdmaDeviceMismatch): the device's
// index in a new dump (`indexes`, `dump` its status) into `index`; the dump's error, or kNotFound
// when it does not list `device` (`stale`: the index that answered for another one).
Status FindDeviceIndex(std::span<const std::pair<std::string, uint32_t>> indexes,
                       const Status& dump, const std::string& device, uint32_t stale,
                       uint32_t& index);

// Per-port state, kept in the collector's port.
struct HwNetlinkPort {
  bool netlink = false;  // this port's counters come from netlink
  bool sampled = false;  // `reply` holds this sample's counters
  uint32_t dev_index = 0;
  uint32_t port = 0;
  std::string dir;                        // the sysfs hw_counters directory (for messages)
  std::vector<std::string> names;         // its files, sorted
  std::vector<sys::RdmaHwCounter> reply;  // reused from sample to sample
};

class HwCounterNetlink {
 public:
  HwCounterNetlink(HwCounterSource mode, bool live_sysfs, std::shared_ptr<spdlog::logger> logger);

  // Before a rediscovery: the ibdev indexes, by one RDMA_NLDEV_CMD_GET dump (not in sysfs mode or
  // on a replay root).
  void BeginDiscovery();
  // The state of one port: `names` its hw_counters files (any order), `dir` their directory
  // (absolute, for messages). Probes the port once when netlink may be used.
  HwNetlinkPort DiscoverPort(const std::string& device, const std::string& port,
                             std::vector<std::string> names, std::string dir);
  // Before a port's counters are collected: its one request. On an error or an unknown name the
  // port falls back to sysfs until the next rediscovery probes it again (one log line per port for
  // the life of the collector) and this sample is read from the files. A reply that names another
  // device (its ibdev index was reused after a delete and re-add) is not used: this sample reads
  // the files, the indexes are dumped again, and the next sample asks the device's new index.
  // True when a request was sent (a device read, collectors/core/device_reads.h).
  bool Sample(const std::string& device, HwNetlinkPort& port);
  // The value of counter `name` from this sample's reply; false when the caller must read the
  // file. `slot` is a hint (the counter's position in the last reply), updated.
  static bool Value(const HwNetlinkPort& port, std::string_view name, int& slot, uint64_t& value);
  // fabricwatch_rdma_hw_stats_source for a port with hw counters.
  static void Emit(const std::string& device, const std::string& port, const HwNetlinkPort& state,
                   MetricSink& sink);

 private:
  void FallBack(const std::string& device, HwNetlinkPort& port, const std::string& reason);
  void Reindex(const std::string& device, HwNetlinkPort& port, const Status& mismatch);

  HwCounterSource mode_;
  bool live_sysfs_;
  std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<sys::RdmaNetlink> netlink_;              // null in sysfs mode and on replay roots
  std::vector<std::pair<std::string, uint32_t>> indexes_;  // device name → ibdev index
  Status dump_status_ = Status::Ok();
  std::set<std::string> logged_;  // "<device>/<port>" whose fallback was logged
};

}  // namespace fabricwatch::rdma
