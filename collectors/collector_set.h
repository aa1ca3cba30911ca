#pragma once
// Building the registered collectors: the one loop over CollectorRegistry() that the agent
// (exporter/agent.cc), the simulator pipeline, fabricbench and the tests share. Each collector
// gets the sources its registry entry declares (CollectorInfo::reads_*), its own ethtool source
// when it reads one (a source serves one thread), its options with the spec's defaults, and its
// logger.

#include <spdlog/logger.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "collectors/core/collector.h"
#include "collectors/registry.h"
#include "base/status.h"
#include "collectors/ethtool_source/ethtool.h"

namespace fabricwatch {

// Where the collectors' inputs come from, for one build.
struct CollectorSources {
  const sys::SysFs& sysfs;
  const Clock& clock;
  // Shared event logs; null when their listener is not running (replay roots, config check).
  sys::LinkEventLog* link_events = nullptr;
  sys::RdmaPortEventLog* rdma_events = nullptr;
  // Makes the ethtool source of one collector that reads it; null (or a null result): those
  // collectors report no data.
  std::function<std::unique_ptr<sys::EthtoolSource>()> new_ethtool;
  // The logger of collector `name`.
  std::function<std::shared_ptr<spdlog::logger>(std::string_view name)> logger;
  // The node's roots with every --path.<source> given; each collector gets the replays of the
  // sources it declares (CollectorInfo::sources) and no other.
  Roots roots = {};
  // The kmsg collector's saved position in the kernel log (CollectorContext).
  sys::KmsgCursor* kmsg_cursor = nullptr;
  // Tells the agent's privilege log that the kernel refused a privileged feature (README
  // "Privileges"); true when that log reports it (then the collector need not warn again).
  // Null: nobody tracks privileges (tests, tools).
  std::function<bool(std::string_view feature, const Status& status)> privilege_refused = {};
};

// How one collector is to run; nullopt from a selector leaves the collector out.
struct CollectorSelection {
  CollectorOptions options;
  std::chrono::milliseconds interval;
};
using CollectorSelector = std::function<std::optional<CollectorSelection>(const CollectorInfo&)>;

// The spec's default options of a collector.
CollectorOptions DefaultOptions(const CollectorInfo& info);
// The registry's defaults: collectors enabled by default, at their default interval, with the
// spec's default options.
std::optional<CollectorSelection> DefaultSelection(const CollectorInfo& info);

struct BuiltCollector {
  const CollectorInfo* info = nullptr;
  std::chrono::milliseconds interval{0};
  std::shared_ptr<spdlog::logger> logger;
  // Declared before the collector, so the collector (which reads it) goes first.
  std::unique_ptr<sys::EthtoolSource> ethtool;
  std::unique_ptr<Collector> collector;
};

// `roots` with only the replays of the sources `info` declares: what the collector is given, so it
// reads its own sources and no other's.
Roots OwnRoots(const CollectorInfo& info, const Roots& roots);

// Builds, in registry order, every collector `select` chooses. The first factory error fails the
// build with the collector's name in its message.
Result<std::vector<BuiltCollector>> BuildCollectors(const CollectorSources& sources,
                                                    const CollectorSelector& select);

}  // namespace fabricwatch
