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

const prometheus::MetricFamily* FindFamily(const SnapshotView& snapshot, const MetricDesc& desc) {
  return FindFamily(snapshot.families, desc);
}

uint64_t CounterValue(const prometheus::MetricFamily& family,
                      const prometheus::ClientMetric& metric, double scale) {
  const double value = SampleValue(family, metric) * scale;
  if (!std::isfinite(value) || value <= 0) return 0;
  if (value >= 1.8e19) return UINT64_MAX;
  return static_cast<uint64_t>(value + 0.5);
}

}  // namespace fabricwatch::detect
