#include "exporter/pages/status_page.h"

#include <unistd.h>

#include "collectors/sys/link_events.h"
#include "collectors/sys/verbs_events.h"
#include "exporter/pages/status_html.h"

namespace fabricwatch::exporter {
namespace {

// As many link events as the page shows, from each log (the page merges and cuts them).
constexpr size_t kEventsRead = 30;

}  // namespace

std::string NodeHostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "unknown";
  return name;
}

status::StatusInputs GatherStatusInputs(const RouteSources& sources, const AgentFamilies& families,
                                        const std::string& hostname, detect::TimePoint now) {
  status::StatusInputs inputs;
  inputs.hostname = hostname;
  inputs.sysfs_root = sources.config.roots.sysfs;
  inputs.now = now;
  inputs.families = families.all;
  detect::NodeModelBuilder node;
  for (const auto& snapshot : families.snapshots)
    node.Observe(snapshot->collector, snapshot->families);
  inputs.node = node.Current();
  inputs.collectors = sources.self_metrics.Collectors();
  // `now` is wall time; the engine's and the listeners' times are the agent's clock's, shown
  // rebased by its offset (base/agent_clock.h).
  const auto offset = ShownWallOffset(sources);
  inputs.anomalies = ShownAnomalies(sources);
  if (sources.transitions != nullptr) {
    inputs.transitions = sources.transitions->Recent(now - offset);
    for (auto& t : inputs.transitions) t = detect::ToWall(std::move(t), offset);
  }
  if (sources.link_events != nullptr) {
    inputs.link_events = sources.link_events->Recent(kEventsRead);
    for (auto& event : inputs.link_events) event.time += offset;
    inputs.link_events_listening = sources.link_events->listening();
  }
  if (sources.rdma_events != nullptr) {
    inputs.rdma_events = sources.rdma_events->Recent(kEventsRead);
    for (auto& event : inputs.rdma_events) event.time += offset;
    inputs.rdma_events_listening = sources.rdma_events->listening();
  }
  return inputs;
}

std::unique_ptr<RenderCache> MakeStatusCache(const RouteSources& sources) {
  return std::make_unique<RenderCache>(
      [sources, hostname = NodeHostname()] {
        const AgentFamilies families = GatherFamilies(sources);
        const status::StatusInputs inputs =
            GatherStatusInputs(sources, families, hostname, std::chrono::system_clock::now());
        return status::RenderStatusPage(status::BuildStatusModel(inputs));
      },
      kStatusRenderMaxAge);
}

}  // namespace fabricwatch::exporter
