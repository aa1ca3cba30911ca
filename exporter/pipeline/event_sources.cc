#include "exporter/pipeline/event_sources.h"

#include "collectors/registry.h"
#include "exporter/collector_sources.h"
#include "exporter/logging.h"

namespace fabricwatch::exporter {
namespace {

// True when an enabled collector's registry entry asks for the source.
bool Wanted(const Config& config, bool CollectorInfo::*reads) {
  for (const CollectorInfo& info : CollectorRegistry()) {
    auto it = config.collectors.find(info.name);
    if (info.*reads && it != config.collectors.end() && it->second.enabled) return true;
  }
  return false;
}

}  // namespace

EventSources::EventSources(const Config& config, const Clock& clock) {
  if (config.config_check) return;
  auto log = GetLogger("main");
  const bool host = ResolvedRoots(config).host;
  if (Wanted(config, &CollectorInfo::reads_link_events)) {
    if (host) {
      link_log_ = std::make_unique<sys::LinkEventLog>();
      auto started = sys::LinkEventListener::Start(*link_log_, GetLogger("link_events"), &clock);
      if (started) {
        link_listener_ = std::move(*started);
      } else {
        log->warn("link-event listener not started, flaps are seen by polling only: {}",
                  started.error().ToString());
      }
    } else {
      // No log at all (not one reporting "listener down"): a replay root has no kernel events,
      // and fabricwatch_link_listener_up is not exported, as for the verbs listener.
      log->info("--path.sysfs is a replay root: the rtnetlink link-event listener is off");
    }
  }
  if (host && Wanted(config, &CollectorInfo::reads_rdma_port_events)) {
    rdma_log_ = std::make_unique<sys::RdmaPortEventLog>();
    auto started = sys::VerbsPortListener::Start(*rdma_log_, GetLogger("verbs_events"), &clock);
    if (started) {
      verbs_listener_ = std::move(*started);
    } else {
      log->warn(
          "libibverbs port-event listener not started, IB port state comes from polling "
          "only: {}",
          started.error().ToString());
      rdma_log_.reset();
    }
  }
}

EventSources::~EventSources() { Stop(); }

void EventSources::Stop() {
  link_listener_.reset();
  verbs_listener_.reset();
}

}  // namespace fabricwatch::exporter
