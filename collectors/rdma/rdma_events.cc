#include "collectors/rdma/rdma_events.h"

#include <chrono>
#include <string>

#include "collectors/rdma/rdma_metrics.h"

namespace fabricwatch::rdma {
namespace {

constexpr MetricDesc kPortEventsRepeated{
    "fabric_rdma_port_events_repeated_total",
    "port_active/port_err events that repeated the port's last state event (no transition, not "
    "in fabric_rdma_port_events_total): soft-RoCE (rxe) sends port_active twice for one "
    "admin-up of its netdev (NETDEV_UP, then NETDEV_CHANGE). Present once a repeat was seen.",
    MetricKind::kCounter,
    {"device", "port", "event"}};
constexpr MetricDesc kPortLastEvent{
    "fabric_rdma_port_last_event_timestamp_seconds",
    "Unix time of the last libibverbs asynchronous event of the port.",
    MetricKind::kGauge,
    {"device", "port"}};
constexpr MetricDesc kVerbsListenerUp{
    "fabricwatch_verbs_listener_up",
    "1 while the libibverbs port-event listener runs (it also runs with no device, waiting "
    "for hot-plug); 0 if it stopped.",
    MetricKind::kGauge,
    {}};
constexpr MetricDesc kVerbsDevicesOpen{
    "fabricwatch_verbs_devices_open",
    "RDMA devices whose asynchronous events the listener receives; 0 when libibverbs sees no "
    "device or provider, in which case port state comes from sysfs polling alone.",
    MetricKind::kGauge,
    {}};

constexpr MetricDesc kPortEventMetrics[] = {kPortEvents, kPortEventsRepeated, kPortLastEvent,
                                            kVerbsListenerUp, kVerbsDevicesOpen};

}  // namespace

std::span<const MetricDesc> PortEventMetrics() { return kPortEventMetrics; }

void EmitPortEvents(const sys::RdmaPortEventLog& log, const PortEventCounts& counts,
                    MetricSink& sink) {
  sink.Add(kVerbsListenerUp, {}, log.listening() ? 1 : 0);
  sink.Add(kVerbsDevicesOpen, {}, static_cast<double>(log.devices_open()));
  for (const auto& [key, count] : counts) {
    const auto& [device, port, event] = key;
    sink.Add(kPortEvents, {{"device", device}, {"port", std::to_string(port)}, {"event", event}},
             static_cast<double>(count));
  }
  for (const auto& [key, count] : log.RepeatedCounts()) {
    const auto& [device, port, event] = key;
    sink.Add(kPortEventsRepeated,
             {{"device", device}, {"port", std::to_string(port)}, {"event", event}},
             static_cast<double>(count));
  }
  for (const auto& [key, time] : log.LastEvent()) {
    sink.Add(kPortLastEvent, {{"device", key.first}, {"port", std::to_string(key.second)}},
             std::chrono::duration<double>(time.time_since_epoch()).count());
  }
}

}  // namespace fabricwatch::rdma
