#pragma once
// The ethtool collector's link settings (EthtoolSource::LinkSettingsOf): the families of
// ethtool_metrics.h (speed, lanes, fastest supported and advertised mode, autoneg) and
// fabric_ethtool_link_info, and the cache that reads each netdev at most once per
// link-settings-interval and exports the values read last in between (the kernel source costs two
// netlink round trips per netdev).
//
// Thread-safety: the collector's thread.

#include <chrono>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/metric_sink.h"
#include "collectors/ethtool_source/ethtool.h"

namespace fabricwatch::ethtool {

// The link-settings families, for the collector's metric table.
std::span<const MetricDesc> LinkMetrics();

// The series of `settings` for `netdev`: each family only where its value is known; speeds in
// bytes per second (Mb/s × 1e6 / 8).
void EmitLinkSettings(const std::string& netdev, const sys::LinkSettings& settings,
                      MetricSink& sink);

class LinkSettingsCache {
 public:
  explicit LinkSettingsCache(std::chrono::milliseconds interval) : interval_(interval) {}

  // The settings of `netdev` to export at `now`: those read last when that read is younger than
  // the interval, else what `source` answers now (kept when it succeeds; a failure is returned
  // and asked again at the next call).
  Result<const sys::LinkSettings*> Get(const std::string& netdev, sys::EthtoolSource& source,
                                       std::chrono::system_clock::time_point now);
  // Forgets every netdev not in `netdevs`.
  void Retain(const std::vector<std::string>& netdevs);
  // The requests made to the source since the last call (device reads of kind
  // link_settings_query, collectors/core/device_reads.h).
  size_t TakeReads() { return std::exchange(reads_, 0); }

 private:
  struct Entry {
    std::chrono::system_clock::time_point read_at;
    sys::LinkSettings settings;
  };
  std::chrono::milliseconds interval_;
  std::map<std::string, Entry, std::less<>> entries_;
  size_t reads_ = 0;
};

}  // namespace fabricwatch::ethtool
