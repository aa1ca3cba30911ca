#include "collectors/collector_set.h"

#include <string>

namespace fabricwatch {
Roots OwnRoots(const CollectorInfo& info, const Roots& roots) {
  Roots own{.sysfs = roots.sysfs, .ethtool = roots.ethtool, .host = roots.host, .replays = {}};
  for (const SourceSpec& source : info.sources) {
    std::string replay = roots.Replay(source);
    if (!replay.empty()) own.SetReplay(source, std::move(replay));
  }
  return own;
}

CollectorOptions DefaultOptions(const CollectorInfo& info) {
  CollectorOptions options;
  for (const CollectorOptionSpec& option : info.options) {
    if (!option.default_value.empty()) {
      options.emplace(std::string(option.key), std::string(option.default_value));
    }
  }
  return options;
}

std::optional<CollectorSelection> DefaultSelection(const CollectorInfo& info) {
  if (!info.enabled_by_default) return std::nullopt;
  return CollectorSelection{.options = DefaultOptions(info), .interval = info.default_interval};
}

Result<std::vector<BuiltCollector>> BuildCollectors(const CollectorSources& sources,
                                                    const CollectorSelector& select) {
  std::vector<BuiltCollector> built;
  for (const CollectorInfo& info : CollectorRegistry()) {
    std::optional<CollectorSelection> selection = select(info);
    if (!selection) continue;
    BuiltCollector& out = built.emplace_back();
    out.info = &info;
    out.interval = selection->interval;
    out.logger = sources.logger(info.name);
    if (info.reads_ethtool && sources.new_ethtool) out.ethtool = sources.new_ethtool();
    CollectorContext context{
        .sysfs = sources.sysfs,
        .link_events = info.reads_link_events ? sources.link_events : nullptr,
        .rdma_events = info.reads_rdma_port_events ? sources.rdma_events : nullptr,
        .ethtool = out.ethtool.get(),
        .clock = sources.clock,
        .logger = out.logger,
        .options = selection->options,
        .interval = selection->interval,
        .roots = OwnRoots(info, sources.roots),
        .kmsg_cursor = sources.kmsg_cursor,
        .privilege_refused = sources.privilege_refused};
    auto collector = info.factory(context);
    if (!collector) {
      return Error(collector.error().WithContext("collector " + std::string(info.name)));
    }
    out.collector = std::move(*collector);
  }
  return built;
}

}  // namespace fabricwatch
