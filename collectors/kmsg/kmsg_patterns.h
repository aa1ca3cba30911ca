#pragma once
// The table of kernel log patterns (issue 23; docs/reference.md §9 has the lines, their printers
// and their sources). Data, not code: one row per pattern, each with the event name it counts as,
// the severity, what the driver_fault detector does with it, and where the text comes from.
//
// A pattern is up to three fragments that must occur in the message in that order (after the
// \xNN escapes are undone). Fragments, not regular expressions: the `func:line:(pid N):` tag of
// mlx5 lines changes with every build, so the stable words are matched and the rest skipped; and
// a flood of 10,000 lines per second must cost little (no backtracking, no allocation).
// The first matching row wins, so the specific rows (ACCESS_REG before any command failure) come
// first. Where the kernel reworded a line (AER in 2025, module errors, health), both spellings
// have a row.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace fabricwatch::kmsg {

enum class EventSeverity { kInfo, kWarning, kCritical };
std::string_view EventSeverityName(EventSeverity severity);

// What the driver_fault detector makes of an event (detectors/driver_fault/driver_fault.h).
enum class EventClass {
  kFatal,           // critical, drain-eligible: the function is lost or about to be
  kCommandTimeout,  // warning when repeated, critical when it persists
  kModule,          // warning about the transceiver module, with its identity
  kDegraded,        // warning: the function works but is degraded or recovering (a transmit
                    // timeout, a reset it came back from), held like a module warning
  kNoisy,           // a finding only when it floods (one device, one event, many lines)
  kLinkCause,       // link up/down and unplug lines: evidence for link_flap, never a finding
  kCountOnly,       // counted only
};

struct KernelEventPattern {
  std::string_view event;  // snake_case, the `event` label
  EventSeverity severity;
  EventClass event_class;
  std::string_view fragments[3];  // in order; empty ones are unused
  std::string_view source;        // the kernel file or document the text was read in
  // Where the text names the function the line is about when that is not the printer's prefix:
  // the words a PCI address or netdev follows ("received from " in an AER line the Root Port
  // prints; "NETDEV WATCHDOG: " before the netdev in the pre-6.9 watchdog line). Empty: the
  // prefix (`<driver> <bdf>[ <netdev>]: `) or the DEVICE= field names it.
  std::string_view subject_after = {};
  // The event this row counts as when the record's priority is warning or milder (4..7): the
  // mlx5 health buffer is printed at the firmware's own severity (health.c print_health_info,
  // mlx5_log since 5.17), and a syndrome at WARNING is not a lost function. Empty: the row's event
  // whatever the priority.
  std::string_view milder_event = {};
};

std::span<const KernelEventPattern> KernelEventPatterns();

// The first row whose fragments all occur in `message` in order; nullptr when none. A row of a
// driver's own source (PciDriverOfPattern) does not match a line another PCI driver printed
// ("ena 0000:00:05.0: Device isn't ready, abort com init" is ENA's, not EFA's, whose efa_com.c
// was derived from ENA's and shares its words).
const KernelEventPattern* MatchKernelEvent(std::string_view message);

// MatchKernelEvent, then the row's milder_event when `priority` (0 emerg .. 7 debug) is warning
// or milder.
const KernelEventPattern* MatchKernelEvent(std::string_view message, uint8_t priority);

// The row of an event name; nullptr if none. Every row of one event name has the same severity
// and class (a test holds the table to it), so the first row answers for all of them: a
// detector that reads only the event name cannot mistake a warning for a critical.
const KernelEventPattern* FindKernelEvent(std::string_view event);

// The PCI driver whose functions a row's line is about, from the kernel file the row cites
// ("drivers/net/ethernet/mellanox/mlx5/" and "drivers/infiniband/hw/mlx5/" are mlx5_core's
// functions, "drivers/infiniband/hw/efa/" efa's); nullopt for rows of generic printers (AER,
// the netdev watchdog, the driver core), whose driver is the line's first word if anything.
// A line that names no function is attributed by this driver (collectors/kmsg/kmsg_entity.h).
std::optional<std::string_view> PciDriverOfPattern(const KernelEventPattern& pattern);

// The fabric drivers whose unmatched warning-or-worse lines are counted by driver: the first
// word of the message when it is one of these ("mlx5_core 0000:3b:00.0: ...", or "mlx5_core: "
// of a pr_* line that names no device).
std::span<const std::string_view> FabricDrivers();
std::optional<std::string_view> FabricDriverOf(std::string_view message);
// The PCI driver of FabricDriverOf's driver (mlx5_ib → mlx5_core, irdma → ice, bnxt_re → bnxt_en).
std::optional<std::string_view> FabricPciDriverOf(std::string_view message);

}  // namespace fabricwatch::kmsg
