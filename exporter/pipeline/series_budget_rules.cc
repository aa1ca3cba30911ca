// The rules of the series budget (series_budget.h), gathered from the families' own declarations:
// each MetricDesc carries its rule and reason (MetricDesc::budget, base/metric_sink.h),
// set in the contract header or metric table of the collector or detector that declares the
// family. A family that declares none is exported whole. Counted on the simulator's 8-port nodes
// (tools/fabricsim presets hgx-roce and hgx-ib; README "Series budget" has the figures).
// Principles:
//   - error counters stay, zero or not: rate() and increase() need a series before the first
//     error, or the first error is lost;
//   - a flag (1 = something wrong) is exported once it is, or was, raised: absent reads as 0
//     in every shipped rule and panel (`== 1`, `max by`, `or`);
//   - per-priority families keep the priorities that matter: PFC on, or traffic seen;
//   - static values and values that repeat another family stay inside the agent, where the
//     detectors and the status page read them: a finding names the drift, the threshold or the
//     limit when it matters.
// dashboards_budget_test (tests/unit/exporter/pipeline/series_budget_test.cc) fails when a shipped
// rule or panel names a family that is off here.

#include <algorithm>
#include <vector>

#include "collectors/registry.h"
#include "detectors/registry.h"
#include "exporter/pipeline/self_metrics.h"
#include "exporter/pipeline/series_budget.h"

namespace fabricwatch::exporter {
namespace {

void AddDeclared(std::span<const MetricDesc> metrics, std::vector<FamilyBudgetRule>& rules) {
  for (const MetricDesc& desc : metrics) {
    if (desc.budget.rule == ExportRule::kAll) continue;
    rules.push_back({desc.name, desc.budget.rule, desc.budget.why});
  }
}

// Every family of the agent's own, the registered collectors' and the detectors' that declares a
// rule, sorted by name; a family two tables list (a shared descriptor) counts once.
std::vector<FamilyBudgetRule> DeclaredRules() {
  std::vector<FamilyBudgetRule> rules;
  AddDeclared(SelfMetricDescs(), rules);
  for (const CollectorInfo& info : CollectorRegistry()) AddDeclared(info.metrics, rules);
  for (const detect::DetectorInfo& info : detect::DetectorRegistry()) {
    AddDeclared(info.metrics, rules);
  }
  std::stable_sort(rules.begin(), rules.end(),
                   [](const auto& a, const auto& b) { return a.family < b.family; });
  rules.erase(std::unique(rules.begin(), rules.end(),
                          [](const auto& a, const auto& b) { return a.family == b.family; }),
              rules.end());
  return rules;
}

}  // namespace

std::span<const FamilyBudgetRule> SeriesBudgetRules() {
  static const std::vector<FamilyBudgetRule> rules = DeclaredRules();
  return rules;
}

}  // namespace fabricwatch::exporter
