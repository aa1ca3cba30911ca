#include "detectors/core/finding_merge.h"

#include <algorithm>

namespace fabricwatch::detect {

std::vector<Finding> MergeFindings(std::vector<Finding> signals) {
  std::vector<Finding> merged;
  for (Finding& signal : signals) {
    auto same = std::find_if(merged.begin(), merged.end(), [&](const Finding& f) {
      return f.severity == signal.severity && f.entity == signal.entity;
    });
    if (same == merged.end()) {
      merged.push_back(std::move(signal));
      continue;
    }
    same->reason += "; " + signal.reason;
    same->drain_eligible = same->drain_eligible || signal.drain_eligible;
    for (Evidence& evidence : signal.evidence) {
      const bool known = std::any_of(same->evidence.begin(), same->evidence.end(),
                                     [&](const Evidence& e) { return e.name == evidence.name; });
      if (!known) same->evidence.push_back(std::move(evidence));
    }
  }
  return merged;
}

}  // namespace fabricwatch::detect
