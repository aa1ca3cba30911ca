#pragma once
// The collector inputs a configuration selects, shared by the agent (exporter/agent.cc) and
// `fabricwatch check` (exporter/check/check.cc), so both build the same collectors from the
// registry (collectors/collector_set.h) and the same detectors from theirs.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectors/collector_set.h"
#include "collectors/ethtool_source/ethtool.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/kmsg_cursor.h"
#include "detectors/registry.h"
#include "exporter/config/config.h"
#include "exporter/privileges.h"

namespace fabricwatch::exporter {

// The configuration's roots, with `host` measured now: whether --path.sysfs is this host's /sys.
Roots ResolvedRoots(const Config& config);

// The privileged features this configuration uses: an enabled collector's feature whose source
// is the kernel (a replay needs no capability).
std::vector<const PrivilegeNeed*> FeaturesInUse(const Config& config);

// What the collector sources are made of; every reference must outlive the collectors.
struct SourceParts {
  const sys::SysFs& sysfs;
  const Clock& clock;
  const sys::FileSystem& filesystem;
  PrivilegeLog& privileges;
  sys::KmsgCursor* kmsg_cursor = nullptr;
  sys::LinkEventLog* link_events = nullptr;  // null: no listener (replay, one-shot runs)
  sys::RdmaPortEventLog* rdma_events = nullptr;
};

// The sources of `config`'s collectors: replay paths or the host's kernel interfaces, the
// ethtool source factory (kernel refusals reported to `parts.privileges`), loggers from
// exporter/logging.h. `config` must outlive the result.
CollectorSources ConfiguredCollectorSources(const Config& config, const SourceParts& parts);

// The collectors and detectors `config` enables, with their options (BuildCollectors and
// detect::BuildDetectors selectors). `config` must outlive them.
CollectorSelector ConfiguredCollectors(const Config& config);
detect::DetectorSelector ConfiguredDetectors(const Config& config);

}  // namespace fabricwatch::exporter
