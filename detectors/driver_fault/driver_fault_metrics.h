#pragma once
// The contract of the driver_fault detector (issue 36; CONTRIBUTING.md "Adding a detector"): its
// evidence families, which the status page and the series budget read through these constants
// rather than by name, and its declaration for the generic code (detectors/core/declaration.h),
// which registry.cc passes on as DetectorInfo::declaration.

#include "base/metric_sink.h"
#include "detectors/core/declaration.h"

namespace fabricwatch::detect::driver_fault {

inline constexpr MetricDesc kWindowLines{
    "fabric_driver_fault_window_lines",
    "Kernel log lines of the event on the entity within the window driver_fault judges it by "
    "(fatal-hold, cmd-timeout-window, module-hold or flood-window).",
    MetricKind::kGauge,
    {"device", "netdev", "event"}};

// It raises on the kernel log's lines themselves: one look makes its findings, and `fabricwatch
// check` rereads the whole log instead of restoring its saved history.
inline constexpr DetectorDeclaration kDeclaration{
    .one_look = true,
    .reads_kernel_log = true,
};

}  // namespace fabricwatch::detect::driver_fault
