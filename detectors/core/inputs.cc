#include "detectors/core/inputs.h"

#include <algorithm>

namespace fabricwatch::detect {
namespace {

bool HasLabel(const LabelNames& labels, std::string_view name) {
  return std::find(labels.begin(), labels.end(), name) != labels.end();
}

bool SameLabels(const LabelNames& a, const LabelNames& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace

std::vector<std::string> InputCollectors(std::span<const MetricInput> inputs) {
  std::vector<std::string> collectors;
  for (const MetricInput& input : inputs) {
    if (std::find(collectors.begin(), collectors.end(), input.collector) == collectors.end()) {
      collectors.emplace_back(input.collector);
    }
  }
  return collectors;
}

std::vector<std::string> CheckMetricInputs(std::string_view detector,
                                           std::span<const MetricInput> inputs,
                                           const CollectorMetricsLookup& collector_metrics) {
  std::vector<std::string> problems;
  const std::string who(detector);
  for (const MetricInput& input : inputs) {
    const std::string family(input.desc->name);
    auto table = collector_metrics(input.collector);
    if (!table) {
      problems.push_back(who + " reads " + family + " from collector '" +
                         std::string(input.collector) + "', which is not registered");
      continue;
    }
    auto exported = std::find_if(table->begin(), table->end(), [&](const MetricDesc& desc) {
      return desc.name == input.desc->name;
    });
    if (exported == table->end()) {
      problems.push_back(who + " reads " + family + ", which collector '" +
                         std::string(input.collector) + "' does not export");
      continue;
    }
    if (exported->kind != input.desc->kind) {
      problems.push_back(who + " reads " + family + " with another kind than collector '" +
                         std::string(input.collector) + "' exports");
    }
    if (!SameLabels(exported->labels, input.desc->labels)) {
      problems.push_back(who + " reads " + family + " with another label set than collector '" +
                         std::string(input.collector) + "' exports");
    }
    for (std::string_view label : input.labels) {
      if (!HasLabel(exported->labels, label)) {
        problems.push_back(who + " reads label '" + std::string(label) + "' of " + family +
                           ", which has no such label");
      }
    }
  }
  return problems;
}

}  // namespace fabricwatch::detect
