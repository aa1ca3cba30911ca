#pragma once
// What the registry says of one collector (collectors/registry.h lists them): its name, options,
// families, factory and the sources and events it reads.

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "collectors/core/collector.h"
#include "collectors/core/roots.h"

namespace fabricwatch {

struct CollectorOptionSpec {
  std::string_view key;  // --collector.<name>.<key> and YAML collectors.<name>.<key>
  std::string_view help;
  std::string_view default_value;  // empty = unset
};

// One capability a collector's feature needs (linux/capability.h numbers), declared in the
// collector's folder: the agent logs it and exports fabricwatch_privilege_missing (README
// "Privileges", exporter/privileges.h).
struct PrivilegeNeed {
  std::string_view capability;  // "CAP_NET_ADMIN"
  int number;                   // its bit in the capability sets
  std::string_view feature;     // the `feature` label: "module_eeprom"
  std::string_view collector;   // the collector whose feature it is (its registry name)
  std::string_view loses;       // what is not exported without it (for the log line)
  // Whether the feature is used with these roots: a replay needs no capability. Null: always.
  bool (*in_use)(const Roots& roots) = nullptr;
};

struct CollectorInfo {
  std::string_view name;
  std::string_view description;
  bool enabled_by_default;
  std::chrono::milliseconds default_interval;
  std::span<const CollectorOptionSpec> options;
  std::span<const MetricDesc> metrics;
  // Validates ctx.options (InvalidArgument naming the option) and builds the collector.
  std::function<Result<std::unique_ptr<Collector>>(const CollectorContext&)> factory;
  // The sources it reads besides sysfs and ethtool, declared in its folder: each makes the flag
  // --path.<name> and reaches the collector in CollectorContext::roots (collectors/core/roots.h).
  std::span<const SourceSpec> sources = {};
  // The capabilities its features need, declared in its folder (README "Privileges").
  std::span<const PrivilegeNeed> privileges = {};
  // The collector reads CollectorContext::ethtool. Each such collector gets a source of its own:
  // collectors run on their own threads, and a kernel source's sockets and a replay source's
  // scratch buffers serve one thread (EthtoolSource contract).
  bool reads_ethtool = false;
  // The collector reads CollectorContext::link_events (rtnetlink carrier events): the agent
  // starts the listener when such a collector is enabled on the host's own /sys.
  bool reads_link_events = false;
  // The collector reads CollectorContext::rdma_events (libibverbs port events), likewise.
  bool reads_rdma_port_events = false;
  // The agent wakes the collector when a finding is raised (jobs: which jobs a new finding
  // hurts is looked up at once, not at the next interval).
  bool wakes_on_raised_finding = false;
  // The shortest time between two collections that events wake (0: no bound), so that a
  // flapping port cannot turn into a storm of queries.
  std::chrono::milliseconds min_wake_gap{0};
};

}  // namespace fabricwatch
