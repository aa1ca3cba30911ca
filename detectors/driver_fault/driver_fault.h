#pragma once
// driver_fault: faults that only the fabric driver's kernel log shows (issue 23; the lines and
// their sources: docs/reference.md §9; the table: collectors/kmsg/kmsg_patterns.cc).
//
// Reads the kmsg collector's log events (base/log_events.h) and, for the module's
// identity, optics' fabric_optics_info. Per entity (RDMA device and netdev of the PCI function
// the line is about), by the pattern's class (kmsg::EventClass):
//   critical, drain-eligible  kFatal: firmware fatal error, health compromised or syndrome, PCI
//                             slot unavailable, cold reset required, health recovery failed,
//                             fatal or inaccessible AER, ports powered down for slot power;
//                             held `fatal-hold` (1h) after the last such line;
//   warning                   kCommandTimeout: ≥ cmd-timeout-count (3) in cmd-timeout-window
//                             (10m); critical, not drained, when that lasts
//                             cmd-timeout-escalate-after (30m);
//   warning                   kModule: module high temperature, bad or shorted cable, power
//                             budget, bus stuck, no EEPROM, unsupported, device sensors hot, slot
//                             power low; held `module-hold` (10m) after the last line; the reason
//                             names the module (vendor, part, serial) when optics read it;
//   warning                   kNoisy (ACCESS_REG and other command failures, QP/CQ errors,
//                             correctable and non-fatal AER): only a flood, ≥ flood-count (100)
//                             lines of one event in flood-window (1m) — one finding with the
//                             count, never one per line (the ConnectX-7 ACCESS_REG flood, gpud
//                             #1164).
// Link up/down and module plug lines (kLinkCause) are link_flap's evidence, never findings here.
// One finding per entity, at the highest severity; the other signals join its reason. Each
// finding carries the newest lines behind it (Finding::log) for /api/v1/anomalies.
// State (line counts, times and lines per entity) is kept in the state file: the kmsg collector
// resumes after the last record it read, so the lines are not seen again after a restart.

#include <memory>
#include <span>

#include "base/metric_sink.h"
#include "base/status.h"
#include "detectors/core/detector.h"
#include "detectors/core/inputs.h"
#include "detectors/core/options.h"

namespace fabricwatch::detect {

std::span<const DetectorOptionSpec> DriverFaultDetectorOptions();
std::span<const MetricDesc> DriverFaultDetectorMetrics();
std::span<const MetricInput> DriverFaultDetectorInputs();
Result<std::unique_ptr<Detector>> MakeDriverFaultDetector(const DetectorOptions& options);
// The factory's checks of `options` without building the detector (config validation).
Status ValidateDriverFaultDetectorOptions(const DetectorOptions& options);

}  // namespace fabricwatch::detect
