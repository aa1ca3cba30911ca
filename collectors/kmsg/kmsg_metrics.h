#pragma once
// The kmsg collector's families (issue 23, docs/design.md §5.2): the contract the driver_fault
// and link_flap detectors, the alerts and the dashboards read, defined once here.
//
// Every label value is bounded: `event` is a name from the pattern table
// (collectors/kmsg/kmsg_patterns.h), never raw log text; `driver` is one of the table's fabric
// drivers; `device` is an RDMA device and `netdev` a netdev of this host, each found through
// sysfs, and either may be "" when the function has none (an Ethernet-only NIC has no RDMA
// device; a function with several netdevs names none unless the line does).

#include "collectors/core/collector_family.h"
#include "base/metric_sink.h"

namespace fabricwatch::kmsg {

// The collector that exports the families below: its name in the collector registry
// (collectors/registry.cc), in --collector.kmsg and in Snapshot::collector.
inline constexpr std::string_view kCollector = "kmsg";
// Its families carry it in their type (collectors/core/collector_family.h).
using Family = FamilyOf<kCollector>;

inline constexpr Family kEvents{
    "fabric_kernel_events_total",
    "Kernel log records of fabric drivers that matched a pattern of the table (event), per RDMA "
    "device and netdev the record's PCI function or name maps to, since the agent started "
    "reading (from the end of the log, or from the sequence kept in the state file).",
    MetricKind::kCounter,
    {"device", "netdev", "event"}};
inline constexpr Family kEventLast{
    "fabric_kernel_event_last_timestamp_seconds",
    "Wall-clock time of the newest record of the event (from its printk timestamp and the boot "
    "time; for a --path.kmsg replay, the time the record was read).",
    MetricKind::kGauge,
    {"device", "netdev", "event"}};
inline constexpr Family kUnknownLines{
    "fabric_kernel_log_unknown_lines_total",
    "Records at warning or worse from a fabric driver (mlx5_core, mlx5_ib, ib_core, ...) that "
    "matched no pattern of the table: a driver saying something the table does not know.",
    MetricKind::kCounter,
    {"driver"}};
inline constexpr Family kRecords{"fabric_kernel_log_records_total",
                                 "Kernel log records read (every record, matched or not).",
                                 MetricKind::kCounter,
                                 {}};
inline constexpr Family kLostRecords{
    "fabric_kernel_log_lost_records_total",
    "Records overwritten in the kernel ring before the agent read them (the EPIPE gap of "
    "/dev/kmsg, or a jump in the sequence numbers of a replay file).",
    MetricKind::kCounter,
    {}};
inline constexpr Family kSkippedRecords{
    "fabric_kernel_log_skipped_records_total",
    "Records skipped, by reason: too_long (over 1 KB of message or 8 KB of record), "
    "invalid_utf8, malformed (a prefix that is not a record), orphan_continuation (a KEY=value "
    "line with no record), unmapped_device (a matching record about something of this host that is "
    "no fabric function: a GPU's or a bridge's AER, a netdev or device that is gone), "
    "no_device_named (a matching record of a generic printer, such as AER, that names no "
    "function; a fabric driver's record that names none is the node's or its one device's), "
    "rotated (a replay file truncated or replaced while read: the "
    "partial record at the cut).",
    MetricKind::kCounter,
    {"reason"}};

}  // namespace fabricwatch::kmsg
