#pragma once
// The series budget (issue 26; README "Series budget"): what /metrics exports by default.
//
// One agent is cheap on its node; the fleet pays for its series in the time-series database
// (an 8-port RoCE node exported about 4,400 series before the budget: 13.5 million for 4,096
// nodes). Collectors still collect everything and the detectors and the status page read every
// family from the snapshots; only the exposition is trimmed, family by family, by the rules of
// SeriesBudgetRules() (series_budget_rules.cc: each family declares its rule, with its reason,
// MetricDesc::budget). `--metrics.include=NAME` exports one family whole again, `--metrics.all`
// every family.
//
// Thread-safety: none; one render at a time (RenderCache renders single-flight).

#include <prometheus/metric_family.h>

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/metric_sink.h"
#include "base/status.h"
#include "exporter/http/render.h"

namespace fabricwatch::exporter {

// The rules themselves are declared with each family (base/metric_sink.h ExportRule,
// MetricDesc::budget).
using ExportRule = ::fabricwatch::ExportRule;

std::string_view ExportRuleName(ExportRule rule);

struct FamilyBudgetRule {
  std::string_view family;
  ExportRule rule;
  std::string_view why;
};

// Every family the budget trims, sorted by name; families not listed are exported whole. Read
// from the families' declarations (MetricDesc::budget) in the collectors' and the detectors'
// metric tables (series_budget_rules.cc), not from a list of names.
std::span<const FamilyBudgetRule> SeriesBudgetRules();

// The family whose labels `rule` reads from every family it trims (they share them: the netdev
// and priority of a per-priority rule), or nullptr for a rule that reads no label. The reads are
// checked against this family's descriptor when they compile, and the test of the rules holds
// every family under the rule to its labels.
const MetricDesc* ExportRuleShape(ExportRule rule);

// README "Series budget" (generated, fabricwatch --help-metrics): the table of the rules.
std::string SeriesBudgetMarkdown();

struct SeriesBudgetOptions {
  bool all = false;                  // --metrics.all: no budget
  std::vector<std::string> include;  // --metrics.include: family names, or prefixes ending in '*'
};

class SeriesBudget final : public SeriesFilter {
 public:
  // An include entry that names no family of the rules is an error naming it (a typo would
  // otherwise bring nothing back, silently).
  static Result<SeriesBudget> Create(const SeriesBudgetOptions& options);

  void Prepare(const std::vector<const prometheus::MetricFamily*>& families) override;
  bool WantFamily(std::string_view name) const override;
  bool WantSample(const prometheus::MetricFamily& family,
                  const prometheus::ClientMetric& sample) override;

 private:
  SeriesBudget() = default;
  bool Sticky(const prometheus::MetricFamily& family, const prometheus::ClientMetric& sample,
              bool nonzero);

  std::unordered_map<std::string_view, ExportRule> rules_;  // the rules in force
  // Hashes of (family, labels) of series that were non-zero once. Bounded: cleared past
  // kMaxSticky (a churn of device names must not grow it without end).
  std::unordered_set<uint64_t> sticky_;
  // "netdev/priority" of the sample, in key_ (no allocation once it has grown).
  const std::string& PriorityKey(const prometheus::ClientMetric& sample);

  // "device/port" of the sample, in key_.
  const std::string& PortKey(const prometheus::ClientMetric& sample);

  std::set<std::string, std::less<>> active_priorities_;    // PriorityKey()s
  std::set<std::string, std::less<>> lossless_priorities_;  // PriorityKey()s with PFC on
  std::set<std::string, std::less<>> infiniband_ports_;     // PortKey()s
  std::string key_;
};

}  // namespace fabricwatch::exporter
