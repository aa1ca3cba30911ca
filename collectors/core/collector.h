#pragma once
// The Collector interface and the context a collector is built from.
//
// A collector has a stable snake_case name: the same string is the flag --collector.<name>, the
// `collector` label of the self-metrics, its logger, its folder, its tests and fixtures.
// Construction does no device I/O and never throws; Collect() is called on the collector's own
// cadence by the scheduler, always from the same thread, and returns:
//   - OK            samples were emitted (possibly with partial errors recorded in the sink);
//   - kNoData       the source is absent on this host (no device, EOPNOTSUPP): quiet;
//   - another code  the collection failed as a whole.
// One bad device or port never aborts the others: record it with sink.RecordError() and go on.
// Missing values are omitted, never reported as 0.

#include <spdlog/logger.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/metric_sink.h"
#include "base/status.h"
#include "base/clock.h"
#include "collectors/core/roots.h"

namespace fabricwatch {

namespace sys {
class SysFs;
class LinkEventLog;
class RdmaPortEventLog;
class EthtoolSource;
class KmsgCursor;
}  // namespace sys

// Collector options: the YAML keys of `collectors.<name>` merged with the flags
// --collector.<name>.<key>; the factory validates and converts them.
using CollectorOptions = std::map<std::string, std::string, std::less<>>;

// The value of option `key`, or "" when it is not set.
inline std::string OptionValue(const CollectorOptions& options, std::string_view key) {
  auto it = options.find(key);
  return it == options.end() ? std::string() : it->second;
}

struct CollectorContext {
  const sys::SysFs& sysfs;
  // Shared rtnetlink link-event log; null when the listener is not running (replay roots).
  sys::LinkEventLog* link_events = nullptr;
  // Shared libibverbs port-event log; null when the listener is not running (replay roots).
  sys::RdmaPortEventLog* rdma_events = nullptr;
  // ethtool data: the kernel, or the --path.ethtool replay directory (whose netdevs are its
  // subdirectories, not class/net: EthtoolSource::HasOwnNetdevs). Null: collectors that need it
  // report no data.
  sys::EthtoolSource* ethtool = nullptr;
  const Clock& clock;
  std::shared_ptr<spdlog::logger> logger;
  const CollectorOptions& options;
  // The collector's configured sampling interval (a collector that spreads slow reads over its
  // runs needs it).
  std::chrono::milliseconds interval{1000};
  // Where the node's data comes from: the sysfs root, the ethtool replay, whether it is this
  // host's /sys, and the replay paths of the sources this collector declares
  // (CollectorInfo::sources; roots.PathOf(kMySource)).
  Roots roots = {};
  // The kmsg collector's saved position in the kernel log across restarts (null: start at the
  // end of the log).
  sys::KmsgCursor* kmsg_cursor = nullptr;
  // Tells the agent's privilege log that the kernel refused a privileged feature (README
  // "Privileges"); true when that log reports it (then the collector need not warn again).
  // Null: nobody tracks privileges (tests, tools).
  std::function<bool(std::string_view feature, const Status& status)> privilege_refused = {};
};

// How a collector whose source can tell when it has data is woken (kmsg: /dev/kmsg poll(), an
// inotify watch of a replay file; issue 40 item 3). The scheduler asks after each collection.
struct CollectorReadiness {
  // poll() reports it readable (POLLIN) when the source has new data; -1: none. Collect()
  // drains it (reads the records, the inotify events), so it is quiet after a full read.
  int fd = -1;
  // The last collection left data unread (a bounded read): collect again after the debounce.
  bool backlog = false;
  // True: collect when `fd` or `backlog` says so, at most once per interval, and otherwise only
  // every kEventDrivenFallback (exporter/pipeline/scheduler.h); with fd -1, the source is
  // absent or refused and retried at that slow cadence. False: the interval alone.
  bool event_driven = false;
};

class Collector {
 public:
  virtual ~Collector() = default;
  virtual Status Collect(MetricSink& sink) = 0;
  // Called on the collector's thread after each Collect().
  virtual CollectorReadiness Readiness() { return {}; }
};

}  // namespace fabricwatch
