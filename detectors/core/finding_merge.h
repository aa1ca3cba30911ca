#pragma once
// MergeFindings: one Finding per (severity, entity).
//
// A finding's identity is (detector, severity, entity) (detector.h, docs/design.md §5) and the
// entity labels have no slot for the sub-signal, so when two sub-detectors of one detector fire on
// the same entity at the same severity (thermal level and thermal projection, say) they must become
// one finding. The first signal in input order is primary (its value is fabric_anomaly_value);
// the reasons are joined with "; ", the evidence concatenated (first occurrence of a name wins),
// drain_eligible is true if any signal is. Output order follows first appearance.

#include <vector>

#include "detectors/core/detector.h"

namespace fabricwatch::detect {

std::vector<Finding> MergeFindings(std::vector<Finding> signals);

}  // namespace fabricwatch::detect
