#pragma once
// Device reads per sample (issue 40 item 4): how many reads of each kind that reaches a NIC's
// driver or firmware a collector made in its last sample, so that the cost a sample puts on the
// NIC is visible (fabricwatch_collector_device_reads{collector,kind}, and fabricbench).
//
// What each kind costs on the kernel side (docs/reference.md §1.4, §1.5; README "Performance"):
//   - pma_counter_file: a counters/ or counters_ext/ file. K drivers/infiniband/core/sysfs.c
//     show_pma_counter → get_perf_mad → the driver's process_mad: one PerfMgt MAD per read, on
//     mlx5 one firmware command (K drivers/infiniband/hw/mlx5/mad.c process_pma_cmd: a PPCNT
//     register read for PortCounters, QUERY_VPORT_COUNTER for PortCountersExtended). Nothing is
//     cached: a port's 16-21 files are 16-21 commands per sample.
//   - hw_counter_file: a hw_counters/ file. core/sysfs.c hw_stat_port_show → update_hw_stats:
//     the driver's get_hw_stats (on mlx5 several firmware commands: Q counters, congestion
//     statistics, PPCNT) when the port's cached values are older than its `lifespan` (10 ms by
//     default), else the cached value. Reads spread over more than a lifespan each refresh.
//   - hw_counter_netlink_request: one RDMA_NLDEV_CMD_STAT_GET for a port. K core/nldev.c
//     stat_get_doit_default_counter calls get_hw_stats once for all the port's counters.
//   - port_query: ib_query_port, the driver's query_port (on mlx5 firmware commands: HCA vport
//     context, PTYS). Every read of a port's state, phys_state, rate, lid or sm_lid file
//     (core/sysfs.c state_show, rate_show, ... each call ib_query_port), and each
//     ibv_query_port of the MTU (uverbs ib_uverbs_query_port). link_layer, the GID table and the
//     device's attribute files are served from the kernel's own memory: not counted.
//   - netdev_statistics_file: a class/net/<netdev>/statistics/ file. K net/core/net-sysfs.c
//     netstat_show → dev_get_stats → the driver's ndo_get_stats64, for the whole table each time
//     (mlx5e answers from its cached counters and, without firmware monitor counters, queues its
//     background refresh, K mlx5/core/en_main.c mlx5e_get_stats). operstate, carrier, flags, mtu
//     and the carrier counters are the kernel's own: not counted.
//   - link_settings_query: __ethtool_get_link_ksettings, the driver's get_link_ksettings (mlx5e:
//     a PTYS register read, a firmware command). A netdev's speed or duplex file
//     (net-sysfs.c speed_show, duplex_show) and the ethtool collector's link settings request.
//   - ethtool_stats_request: the driver statistics of a netdev, ETHTOOL_GSTATS (K
//     net/ethtool/ioctl.c ethtool_get_stats → get_ethtool_stats; on mlx5e every statistics group's
//     update, several firmware commands), or a replay file standing for it.
//   - ethtool_query: another ethtool request of a netdev that the driver answers: FEC, link state,
//     standard statistics, pause, the PFC storm tunable (ETHTOOL_MSG_*_GET with statistics,
//     ETHTOOL_GTUNABLE).
//   - dcb_request: DCB_CMD_IEEE_GET (K net/dcb/dcbnl.c dcbnl_ieee_fill → the driver's
//     ieee_getpfc, which on mlx5e reads the per-priority PFC counters: PPCNT).
//   - module_eeprom_page: a 128-byte half page of a transceiver's memory (K net/ethtool/eeprom.c,
//     one ETHTOOL_MSG_MODULE_EEPROM_GET each; the driver reads it over the module's I2C bus, on
//     mlx5 through MCIA register reads).
//   - hwmon_file: an mlx5 hwmon temperature file (K drivers/net/ethernet/mellanox/mlx5/core/
//     hwmon.c mlx5_hwmon_read: an MTMP register read per file).
//
// The counts live in the collector (reset at the start of its sample, emitted at its end): no
// global, no allocation (a fixed array).

#include <array>
#include <cstdint>
#include <string_view>

#include "base/metric_sink.h"

namespace fabricwatch {

enum class DeviceRead : uint8_t {
  kPmaCounterFile,
  kHwCounterFile,
  kHwCounterNetlinkRequest,
  kPortQuery,
  kNetdevStatisticsFile,
  kLinkSettingsQuery,
  kEthtoolStatsRequest,
  kEthtoolQuery,
  kDcbRequest,
  kModuleEepromPage,
  kHwmonFile,
};
inline constexpr size_t kDeviceReadKinds = 11;

// The `kind` label value of each DeviceRead, in enum order.
inline constexpr std::array<std::string_view, kDeviceReadKinds> kDeviceReadNames = {
    "pma_counter_file",
    "hw_counter_file",
    "hw_counter_netlink_request",
    "port_query",
    "netdev_statistics_file",
    "link_settings_query",
    "ethtool_stats_request",
    "ethtool_query",
    "dcb_request",
    "module_eeprom_page",
    "hwmon_file"};

constexpr std::string_view DeviceReadName(DeviceRead kind) {
  return kDeviceReadNames[static_cast<size_t>(kind)];
}

inline constexpr MetricDesc kDeviceReads{
    "fabricwatch_collector_device_reads",
    "Reads that reach a NIC's driver or firmware in the collector's last sample, by kind: "
    "pma_counter_file (one PMA MAD each), hw_counter_file (a driver query unless the kernel's "
    "cached values are fresh), hw_counter_netlink_request (one driver query per port), port_query "
    "(ib_query_port), netdev_statistics_file, link_settings_query, ethtool_stats_request, "
    "ethtool_query, dcb_request, module_eeprom_page (128 bytes over the module's I2C bus), "
    "hwmon_file. A kind appears once the collector has used it.",
    MetricKind::kGauge,
    {"collector", "kind"},
    {},
    {ExportRule::kOff,
     "about 11 series per node (collector x kind of read that reaches a NIC's driver or "
     "firmware) that change only when the ports do; tools/bench/run.sh reports them per node, and "
     "--metrics.include exports them where the NIC's command load is in question"}};

class DeviceReadCounts {
 public:
  void Add(DeviceRead kind, uint64_t n = 1) {
    counts_[static_cast<size_t>(kind)] += n;
    if (n > 0) used_ |= 1u << static_cast<unsigned>(kind);
  }
  // A new sample: the counts start from zero; the kinds used so far stay exported (at 0), so a
  // series does not come and go with a sample that happened not to read it.
  void Reset() { counts_.fill(0); }
  uint64_t count(DeviceRead kind) const { return counts_[static_cast<size_t>(kind)]; }
  bool used(DeviceRead kind) const { return (used_ >> static_cast<unsigned>(kind)) & 1u; }
  uint64_t total() const {
    uint64_t sum = 0;
    for (uint64_t n : counts_) sum += n;
    return sum;
  }
  // fabricwatch_collector_device_reads of each kind used so far. Allocates nothing once the
  // sink's storage holds the series (docs/design.md §8).
  void Emit(std::string_view collector, MetricSink& sink) const {
    for (size_t i = 0; i < kDeviceReadKinds; ++i) {
      if (((used_ >> i) & 1u) == 0) continue;
      sink.Add(kDeviceReads, {{"collector", collector}, {"kind", kDeviceReadNames[i]}},
               static_cast<double>(counts_[i]));
    }
  }

 private:
  std::array<uint64_t, kDeviceReadKinds> counts_{};
  uint32_t used_ = 0;  // bit i: kind i was read in some sample
};

}  // namespace fabricwatch
