#pragma once
// Least privilege: which capability each feature of the agent needs, whether this process holds
// it, and what the kernel answered (README "Privileges", docs/design.md §10).
//
// Detection is up front, from the effective set in /proc/self/status (proc(5), `CapEff`), and
// is confirmed at the first refusal: a capability in CapEff can still be refused (a user
// namespace that does not own the network namespace, an LSM), and a refused feature is reported
// missing whatever CapEff said. Each missing privilege gets ONE log line (at start, or at the
// first refusal when CapEff claimed it) and the gauge
// fabricwatch_privilege_missing{capability,feature}; everything else keeps working.
//
//   PrivilegeLog log(FeaturesInUse(...), EffectiveCapabilities(filesystem), logger);
//   auto source = WatchPermissions(std::move(kernel_ethtool), log);  // reports EPERM
//   log.Export(sink);                                                 // in /metrics
//
// Thread-safety: PrivilegeLog is internally synchronised (collector threads report refusals,
// HTTP threads export).

#include <spdlog/logger.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/metric_sink.h"
#include "base/status.h"
#include "collectors/core/collector_info.h"
#include "collectors/ethtool_source/ethtool.h"
#include "collectors/sys/filesystem.h"

namespace fabricwatch::exporter {

// Every capability a collector's feature needs, as the collectors declare them
// (CollectorInfo::privileges, collectors/core/roots.h PrivilegeNeed), in registry order.
std::span<const PrivilegeNeed* const> PrivilegeNeeds();

// The effective capability set (`CapEff:`, hexadecimal) of a /proc/<pid>/status text.
Result<uint64_t> ParseEffectiveCapabilities(std::string_view proc_status);
// ParseEffectiveCapabilities of /proc/self/status.
Result<uint64_t> EffectiveCapabilities(const sys::FileSystem& filesystem);

// The agent's privilege family: the status page reads it (exporter/pages/status_model.cc).
inline constexpr MetricDesc kPrivilegeMissing{
    "fabricwatch_privilege_missing",
    "1 when a feature in use lacks the capability it needs: the capability is not in the "
    "effective set, or the kernel refused a read for lack of it (EPERM); 0 when it is held. "
    "One series per feature in use (README \"Privileges\").",
    MetricKind::kGauge,
    {"capability", "feature"}};

class PrivilegeLog {
 public:
  // `in_use`: the needs of the features this agent runs (entries of PrivilegeNeeds()).
  // `effective`: the effective set, or an error when it could not be read (then a feature is
  // reported missing only once it is refused). Logs one line per capability missing from it.
  PrivilegeLog(std::vector<const PrivilegeNeed*> in_use, const Result<uint64_t>& effective,
               std::shared_ptr<spdlog::logger> logger);
  PrivilegeLog(const PrivilegeLog&) = delete;
  PrivilegeLog& operator=(const PrivilegeLog&) = delete;

  // A read of `feature` was refused with `status` (kPermissionDenied): the feature is missing
  // its capability from now on; logged once unless the start already said so.
  // Returns whether `feature` is a privileged feature in use (then this log has said it, once).
  bool Refused(std::string_view feature, const Status& status);
  // True when `feature` is in use and lacks its capability (up front or refused).
  bool Missing(std::string_view feature) const;
  // fabricwatch_privilege_missing for every feature in use.
  void Export(MetricSink& sink) const;

  static std::span<const MetricDesc> Metrics();

 private:
  struct Entry {
    const PrivilegeNeed* need;
    bool held;     // in the effective set at start (true when the set was unreadable)
    bool refused;  // a read was refused since
    bool logged;   // its one line is written
  };
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
  std::shared_ptr<spdlog::logger> log_;
  const bool effective_known_;
};

// `source` with every module EEPROM read that the kernel refuses (kPermissionDenied) reported to
// `log` as a refusal of "module_eeprom". `log` must outlive the result.
std::unique_ptr<sys::EthtoolSource> WatchPermissions(std::unique_ptr<sys::EthtoolSource> source,
                                                     PrivilegeLog& log);

}  // namespace fabricwatch::exporter
