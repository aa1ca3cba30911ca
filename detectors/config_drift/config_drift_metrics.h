#pragma once
// The contract of the config_drift detector (issue 36; CONTRIBUTING.md "Adding a detector"): its
// evidence families, which the status page and the series budget read through these constants
// rather than by name, and its declaration for the generic code (detectors/core/declaration.h),
// which registry.cc passes on as DetectorInfo::declaration.

#include "base/metric_sink.h"
#include "detectors/core/declaration.h"

namespace fabricwatch::detect::config_drift {

inline constexpr MetricDesc kDrifted{
    "fabric_config_setting_drifted",
    "1 while the setting of the subject (a fabric netdev, a PCI function, an RDMA port as "
    "<device>/<port>, or node) differs from "
    "its expectation (configuration, sibling majority, or traffic; before hold-for), 0 while "
    "it agrees; absent where the setting is not reported. The configuration matrix of "
    "README \"Configuration drift\".",
    MetricKind::kGauge,
    {"subject", "setting"},
    {},
    {ExportRule::kNonZero,
     "one series per checked setting of every port and PCI function (129 on hgx-roce), 0 while in "
     "line; the drifted ones are what a query wants, and config_drift's findings name them"}};

inline constexpr std::string_view kOneLookHolds[] = {"hold-for"};
// Never drain-eligible by escalation: a misconfigured port degrades rather than breaks.
inline constexpr DetectorDeclaration kDeclaration{
    .one_look = true,
    .one_look_holds = kOneLookHolds,
};

}  // namespace fabricwatch::detect::config_drift
