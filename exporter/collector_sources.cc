#include "exporter/collector_sources.h"

#include <utility>

#include "collectors/ethtool_source/ethtool_kernel.h"
#include "collectors/ethtool_source/ethtool_replay.h"
#include "exporter/logging.h"
#include "exporter/pipeline/event_sources.h"

namespace fabricwatch::exporter {
namespace {

// ethtool data: a replay directory when --path.ethtool is set; else the kernel (with its
// permission errors reported to `privileges`), but only for the host's own netdevs.
std::function<std::unique_ptr<sys::EthtoolSource>()> EthtoolSourceFactory(
    const Config& config, const sys::FileSystem& filesystem, PrivilegeLog& privileges) {
  if (!config.roots.ethtool.empty()) {
    return [&config, &filesystem]() -> std::unique_ptr<sys::EthtoolSource> {
      return std::make_unique<sys::ReplayEthtool>(config.roots.ethtool, filesystem);
    };
  }
  // The kernel only for the host's own netdevs: a replay sysfs root names netdevs this kernel
  // does not have.
  if (!ResolvedRoots(config).host) return {};
  return [&privileges, warned = false]() mutable -> std::unique_ptr<sys::EthtoolSource> {
    auto kernel = sys::KernelEthtool::Create();
    if (kernel) return WatchPermissions(std::move(*kernel), privileges);
    if (!std::exchange(warned, true)) {
      GetLogger("main")->warn("ethtool kernel interface unavailable: {}",
                              kernel.error().ToString());
    }
    return nullptr;
  };
}

}  // namespace

Roots ResolvedRoots(const Config& config) {
  Roots roots = config.roots;
  roots.host = IsHostSysfs(roots.sysfs);
  return roots;
}

std::vector<const PrivilegeNeed*> FeaturesInUse(const Config& config) {
  const Roots roots = ResolvedRoots(config);
  std::vector<const PrivilegeNeed*> in_use;
  for (const PrivilegeNeed* need : PrivilegeNeeds()) {
    auto c = config.collectors.find(std::string(need->collector));
    if (c == config.collectors.end() || !c->second.enabled) continue;
    if (need->in_use != nullptr && !need->in_use(roots)) continue;
    in_use.push_back(need);
  }
  return in_use;
}

CollectorSources ConfiguredCollectorSources(const Config& config, const SourceParts& parts) {
  return CollectorSources{
      .sysfs = parts.sysfs,
      .clock = parts.clock,
      .link_events = parts.link_events,
      .rdma_events = parts.rdma_events,
      .new_ethtool = EthtoolSourceFactory(config, parts.filesystem, parts.privileges),
      .logger = [](std::string_view name) { return GetLogger(std::string(name)); },
      .roots = ResolvedRoots(config),
      .kmsg_cursor = parts.kmsg_cursor,
      .privilege_refused =
          [privileges = &parts.privileges](std::string_view feature, const Status& status) {
            return privileges->Refused(feature, status);
          }};
}

CollectorSelector ConfiguredCollectors(const Config& config) {
  return [&config](const CollectorInfo& info) -> std::optional<CollectorSelection> {
    const CollectorConfig& c = config.collectors.at(std::string(info.name));
    return c.enabled ? std::optional<CollectorSelection>({c.options, c.interval}) : std::nullopt;
  };
}

detect::DetectorSelector ConfiguredDetectors(const Config& config) {
  return [&config](const detect::DetectorInfo& info) -> std::optional<detect::DetectorOptions> {
    const DetectorConfig& d = config.detectors.at(std::string(info.name));
    return d.enabled ? std::optional<detect::DetectorOptions>(d.options) : std::nullopt;
  };
}

}  // namespace fabricwatch::exporter
