#include "exporter/pipeline/series_budget.h"

#include <algorithm>

#include "collectors/ethtool/ethtool_metrics.h"
#include "collectors/optics/optics_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/topology/topology_metrics.h"
#include "detectors/core/snapshot_lookup.h"

namespace fabricwatch::exporter {
namespace {

// Past this many remembered series the sticky set starts again (each once non-zero series is
// shown again at its next non-zero value); ten times the largest node's exposition.
constexpr size_t kMaxSticky = 100'000;

// FNV-1a over the family name and the label pairs, with separators that cannot occur in names.
uint64_t SeriesHash(const prometheus::MetricFamily& family,
                    const prometheus::ClientMetric& sample) {
  uint64_t hash = 14695981039346656037ull;
  auto mix = [&hash](std::string_view text) {
    for (unsigned char c : text) {
      hash ^= c;
      hash *= 1099511628211ull;
    }
    hash ^= 0xff;  // not a byte of UTF-8 text: "ab","c" and "a","bc" differ
    hash *= 1099511628211ull;
  };
  mix(family.name);
  for (const auto& label : sample.label) {
    mix(label.name);
    mix(label.value);
  }
  return hash;
}

bool Matches(std::string_view pattern, std::string_view family) {
  if (pattern.ends_with('*')) return family.starts_with(pattern.substr(0, pattern.size() - 1));
  return pattern == family;
}

constexpr std::string_view kPriorityTraffic[] = {ethtool::kPrioBytes.name,
                                                 ethtool::kPrioPackets.name};

// The families a rule trims share the labels it reads; it reads them as labels of its shape
// (ExportRuleShape), a family that has them in the same places, and series_budget_test checks
// that every family under the rule declares them.
constexpr const auto& kPriorityShape = ethtool::kPfcEnabled;        // netdev, priority
constexpr const auto& kPortShape = rdma::kPortState;                // device, port
constexpr const auto& kEndpointShape = topology::kSpeed;            // device, role
constexpr const auto& kThresholdShape = optics::kRxPowerThreshold;  // netdev, threshold

}  // namespace

std::string_view ExportRuleName(ExportRule rule) {
  switch (rule) {
    case ExportRule::kAll:
      return "all";
    case ExportRule::kOff:
      return "off";
    case ExportRule::kNonZero:
      return "non-zero series";
    case ExportRule::kActivePriority:
      return "active priorities";
    case ExportRule::kEndpoints:
      return "GPUs and NICs";
    case ExportRule::kLosslessPriority:
      return "PFC priorities";
    case ExportRule::kInfiniBand:
      return "InfiniBand ports";
    case ExportRule::kAlarmThresholds:
      return "alarm thresholds";
  }
  return "off";
}

Result<SeriesBudget> SeriesBudget::Create(const SeriesBudgetOptions& options) {
  SeriesBudget budget;
  if (options.all) return budget;
  for (const FamilyBudgetRule& rule : SeriesBudgetRules()) budget.rules_[rule.family] = rule.rule;
  for (const std::string& pattern : options.include) {
    size_t matched = 0;
    for (const FamilyBudgetRule& rule : SeriesBudgetRules()) {
      if (Matches(pattern, rule.family)) matched += budget.rules_.erase(rule.family);
    }
    if (matched == 0) {
      return Error(StatusCode::kInvalidArgument,
                   "--metrics.include: \"" + pattern +
                       "\" names no family the series budget trims (README \"Series budget\" "
                       "lists them; every other family is exported whole)");
    }
  }
  return budget;
}

void SeriesBudget::Prepare(const std::vector<const prometheus::MetricFamily*>& families) {
  if (rules_.empty()) return;
  if (sticky_.size() > kMaxSticky) sticky_.clear();
  for (const prometheus::MetricFamily* family : families) {
    if (family->name == rdma::kPortInfo.name) {
      for (const prometheus::ClientMetric& sample : family->metric) {
        if (Label<rdma::kPortInfo>(sample, "link_layer") == "InfiniBand" &&
            !infiniband_ports_.contains(PortKey(sample))) {
          infiniband_ports_.insert(key_);
        }
      }
      continue;
    }
    const bool pfc = family->name == ethtool::kPfcEnabled.name;
    const bool traffic = std::find(std::begin(kPriorityTraffic), std::end(kPriorityTraffic),
                                   family->name) != std::end(kPriorityTraffic);
    if (!pfc && !traffic) continue;
    for (const prometheus::ClientMetric& sample : family->metric) {
      if (detect::SampleValue(*family, sample) == 0) continue;
      // Sticky: a priority that carried traffic once stays, so its counters keep their history.
      if (!active_priorities_.contains(PriorityKey(sample))) active_priorities_.insert(key_);
      if (pfc && !lossless_priorities_.contains(key_)) lossless_priorities_.insert(key_);
    }
  }
}

const std::string& SeriesBudget::PriorityKey(const prometheus::ClientMetric& sample) {
  // "netdev/priority": a netdev name holds no '/' (dev_valid_name, net/core/dev.c).
  key_.assign(Label<kPriorityShape>(sample, "netdev"));
  key_ += '/';
  key_ += Label<kPriorityShape>(sample, "priority");
  return key_;
}

const std::string& SeriesBudget::PortKey(const prometheus::ClientMetric& sample) {
  key_.assign(Label<kPortShape>(sample, "device"));
  key_ += '/';
  key_ += Label<kPortShape>(sample, "port");
  return key_;
}

bool SeriesBudget::WantFamily(std::string_view name) const {
  auto it = rules_.find(name);
  return it == rules_.end() || it->second != ExportRule::kOff;
}

bool SeriesBudget::Sticky(const prometheus::MetricFamily& family,
                          const prometheus::ClientMetric& sample, bool nonzero) {
  const uint64_t hash = SeriesHash(family, sample);
  if (nonzero) {
    sticky_.insert(hash);
    return true;
  }
  return sticky_.contains(hash);
}

bool SeriesBudget::WantSample(const prometheus::MetricFamily& family,
                              const prometheus::ClientMetric& sample) {
  auto it = rules_.find(family.name);
  if (it == rules_.end()) return true;
  switch (it->second) {
    case ExportRule::kAll:
      return true;
    case ExportRule::kOff:
      return false;
    case ExportRule::kNonZero:
      return Sticky(family, sample, detect::SampleValue(family, sample) != 0);
    case ExportRule::kActivePriority:
      return active_priorities_.contains(PriorityKey(sample));
    case ExportRule::kEndpoints:
      return Label<kEndpointShape>(sample, "role") != "bridge";
    case ExportRule::kLosslessPriority:
      return lossless_priorities_.contains(PriorityKey(sample));
    case ExportRule::kInfiniBand:
      return infiniband_ports_.contains(PortKey(sample));
    case ExportRule::kAlarmThresholds: {
      const std::string_view threshold = Label<kThresholdShape>(sample, "threshold");
      return threshold == "high_alarm" || threshold == "low_alarm";
    }
  }
  return true;
}

const MetricDesc* ExportRuleShape(ExportRule rule) {
  switch (rule) {
    case ExportRule::kAll:
    case ExportRule::kOff:
    case ExportRule::kNonZero:
      return nullptr;
    case ExportRule::kActivePriority:
    case ExportRule::kLosslessPriority:
      return &kPriorityShape;
    case ExportRule::kEndpoints:
      return &kEndpointShape;
    case ExportRule::kInfiniBand:
      return &kPortShape;
    case ExportRule::kAlarmThresholds:
      return &kThresholdShape;
  }
  return nullptr;
}

std::string SeriesBudgetMarkdown() {
  std::string out = "| family | exported by default | why |\n|---|---|---|\n";
  for (const FamilyBudgetRule& rule : SeriesBudgetRules()) {
    std::string why(rule.why);
    std::replace(why.begin(), why.end(), '|', '/');
    out += "| `" + std::string(rule.family) + "` | " + std::string(ExportRuleName(rule.rule)) +
           " | " + why + " |\n";
  }
  return out + "\n";
}

}  // namespace fabricwatch::exporter
