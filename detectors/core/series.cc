#include "detectors/core/series.h"

#include <cmath>

namespace fabricwatch::detect {

const prometheus::MetricFamily* FindFamily(const SnapshotView& snapshot, std::string_view name) {
  for (const prometheus::MetricFamily& family : snapshot.families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

std::string_view LabelValue(const prometheus::ClientMetric& metric, std::string_view name) {
  for (const auto& label : metric.label) {
    if (label.name == name) return label.value;
  }
  return {};
}

double SampleValue(const prometheus::MetricFamily& family, const prometheus::ClientMetric& metric) {
  switch (family.type) {
    case prometheus::MetricType::Counter:
      return metric.counter.value;
    case prometheus::MetricType::Gauge:
      return metric.gauge.value;
    default:
      return metric.untyped.value;
  }
}

uint64_t CounterValue(const prometheus::MetricFamily& family,
                      const prometheus::ClientMetric& metric, double scale) {
  const double value = SampleValue(family, metric) * scale;
  if (!std::isfinite(value) || value <= 0) return 0;
  if (value >= 1.8e19) return UINT64_MAX;
  return static_cast<uint64_t>(value + 0.5);
}

}  // namespace fabricwatch::detect
