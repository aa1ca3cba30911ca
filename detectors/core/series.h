#pragma once
// Reading the collectors' families out of a snapshot: detectors address series by the metric
// names and labels of the README metric reference, never by collector internals.

#include <cstdint>
#include <string_view>

#include <prometheus/metric_family.h>

#include "detectors/core/detector.h"

namespace fabricwatch::detect {

const prometheus::MetricFamily* FindFamily(const SnapshotView& snapshot, std::string_view name);
// The label's value, or "" when the sample does not carry it.
std::string_view LabelValue(const prometheus::ClientMetric& metric, std::string_view name);
// The sample's value whatever the family type (counter, gauge, untyped).
double SampleValue(const prometheus::MetricFamily& family, const prometheus::ClientMetric& metric);
// A counter sample as an integer for CounterTracker: `scale` converts the exported unit back to
// the device's integer unit (pause seconds × 1e6 = the driver's microseconds). Negative or
// non-finite values give 0.
uint64_t CounterValue(const prometheus::MetricFamily& family,
                      const prometheus::ClientMetric& metric, double scale = 1);

}  // namespace fabricwatch::detect
