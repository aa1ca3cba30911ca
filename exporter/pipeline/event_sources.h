#pragma once
// The kernel event listeners the enabled collectors declare they read (CollectorInfo::
// reads_link_events, reads_rdma_port_events): rtnetlink carrier events and libibverbs port
// events. They describe this host's kernel, so they start only when --path.sysfs is the host's
// own /sys, never for a replay root, and not for --config.check. A listener that cannot start is
// logged and its collector falls back to polling.

#include <spdlog/logger.h>

#include <memory>

#include "collectors/sys/link_events.h"
#include "collectors/sys/verbs_events.h"
#include "exporter/config/config.h"

namespace fabricwatch::exporter {

class EventSources {
 public:
  // The listeners stamp events with `clock` (the agent's; it must outlive them).
  EventSources(const Config& config, const Clock& clock);
  ~EventSources();

  // Null when not running.
  sys::LinkEventLog* link_log() const { return link_log_.get(); }
  sys::RdmaPortEventLog* rdma_log() const { return rdma_log_.get(); }

  // Stops the listeners (each returns within its poll timeout); the logs stay readable.
  void Stop();

 private:
  std::unique_ptr<sys::LinkEventLog> link_log_;
  std::unique_ptr<sys::LinkEventListener> link_listener_;
  std::unique_ptr<sys::RdmaPortEventLog> rdma_log_;
  std::unique_ptr<sys::VerbsPortListener> verbs_listener_;
};

}  // namespace fabricwatch::exporter
