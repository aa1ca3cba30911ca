#pragma once
// The series budget (issue 26; README "Series budget"): what /metrics exports by default.
//
// One agent is cheap on its node; the fleet pays for its series in the time-series database
// (an 8-port RoCE node exported about 4,400 series before the budget: 13.5 million for 4,096
// nodes). Collectors still collect everything and the detectors and the status page read every
// family from the snapshots; only the exposition is trimmed, family by family, by the rules of
// SeriesBudgetRules() (series_budget_rules.cc), each with its reason. `--metrics.include=NAME`
// exports one family whole again, `--metrics.all` every family.
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

#include "collectors/core/status.h"
#include "exporter/http/render.h"

namespace fabricwatch::exporter {

enum class ExportRule {
  // Not exported: detectors, findings and the status page carry what it says, or it is static
  // and of no use in a query.
  kOff,
  // A flag or a level: only series that are, or once were, non-zero (sticky, so a series that
  // returns to 0 shows the 0). Absent reads as 0 in every shipped rule and panel.
  kNonZero,
  // Per priority (labels netdev and priority): only the priorities of a netdev that have PFC on
  // (fabric_pfc_enabled 1) or that ever carried traffic (a non-zero
  // fabric_ethtool_priority_{bytes,packets}_total); sticky.
  kActivePriority,
  // PCIe: the GPUs' and NICs' own functions (label role gpu or nic), not the bridges on their
  // paths; a bridge whose link trains below its maximum still shows in
  // fabric_pcie_link_downtrained (kNonZero).
  kEndpoints,
  // Per priority: only the priorities with PFC on (fabric_pfc_enabled 1), the lossless ones
  // where a drop or a missing ECN setting is a fault; sticky.
  kLosslessPriority,
  // Per RDMA port (labels device and port): only InfiniBand ports (fabric_rdma_port_info
  // link_layer); IBA counters a RoCE port does not maintain.
  kInfiniBand,
  // Thresholds (label threshold): the alarm levels only; a crossed warning level shows in the
  // module's own warning flag.
  kAlarmThresholds,
};

std::string_view ExportRuleName(ExportRule rule);

struct FamilyBudgetRule {
  std::string_view family;
  ExportRule rule;
  std::string_view why;
};

// Every family the budget trims, sorted by name; families not listed are exported whole.
std::span<const FamilyBudgetRule> SeriesBudgetRules();

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
