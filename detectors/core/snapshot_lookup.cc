#include "detectors/core/snapshot_lookup.h"

#include <cmath>

namespace fabricwatch::detect {

const prometheus::MetricFamily* FindFamily(const Families& families, const MetricDesc& desc) {
  for (const prometheus::MetricFamily& family : families) {
    if (family.name == desc.name) return &family;
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

std::optional<double> FindValue(const Families& families, const MetricDesc& desc,
                                LabelMatch match) {
  const prometheus::MetricFamily* family = FindFamily(families, desc);
  if (family == nullptr) return std::nullopt;
  for (const prometheus::ClientMetric& metric : family->metric) {
    if (LabelsMatch(metric, match)) return SampleValue(*family, metric);
  }
  return std::nullopt;
}

const prometheus::MetricFamily* FindFamily(const SnapshotView& snapshot, const MetricDesc& desc) {
  return FindFamily(snapshot.families, desc);
}

std::string_view LabelOr(const prometheus::ClientMetric& metric, std::string_view name) {
  return LabelValue(metric, name).value_or(std::string_view());
}

uint64_t CounterValue(const prometheus::MetricFamily& family,
                      const prometheus::ClientMetric& metric, double scale) {
  const double value = SampleValue(family, metric) * scale;
  if (!std::isfinite(value) || value <= 0) return 0;
  if (value >= 1.8e19) return UINT64_MAX;
  return static_cast<uint64_t>(value + 0.5);
}

}  // namespace fabricwatch::detect
