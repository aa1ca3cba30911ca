#include "detectors/core/snapshot_lookup.h"

namespace fabricwatch::detect {

const prometheus::MetricFamily* FindFamily(const Families& families, std::string_view name) {
  for (const prometheus::MetricFamily& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

double SampleValue(const prometheus::MetricFamily& family, const prometheus::ClientMetric& metric) {
  switch (family.type) {
    case prometheus::MetricType::Counter:
      return metric.counter.value;
    case prometheus::MetricType::Untyped:
      return metric.untyped.value;
    default:
      return metric.gauge.value;
  }
}

std::optional<std::string_view> LabelValue(const prometheus::ClientMetric& metric,
                                           std::string_view name) {
  for (const prometheus::ClientMetric::Label& label : metric.label) {
    if (label.name == name) return std::string_view(label.value);
  }
  return std::nullopt;
}

bool LabelsMatch(const prometheus::ClientMetric& metric, LabelMatch match) {
  for (const auto& [name, value] : match) {
    std::optional<std::string_view> actual = LabelValue(metric, name);
    if (!actual || *actual != value) return false;
  }
  return true;
}

std::optional<double> FindValue(const Families& families, std::string_view name, LabelMatch match) {
  const prometheus::MetricFamily* family = FindFamily(families, name);
  if (family == nullptr) return std::nullopt;
  for (const prometheus::ClientMetric& metric : family->metric) {
    if (LabelsMatch(metric, match)) return SampleValue(*family, metric);
  }
  return std::nullopt;
}

}  // namespace fabricwatch::detect
