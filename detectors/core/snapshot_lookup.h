#pragma once
// Looking up samples in one collector snapshot (SnapshotView::families) by family and labels.
// A family is named by the collector's own MetricDesc (collectors/<name>/<name>_metrics.h), never
// by a string, so a renamed or mistyped family is a compile error, and the detector's
// MetricInput declarations (detectors/core/inputs.h) are checked against the collectors' tables.
// Collectors build their families through MetricSink, so a family has one type and every sample
// carries the family's full label set in its descriptor order.
//
// Cost: FindFamily is a linear scan over the snapshot's families (a few dozen); detectors call
// it a handful of times per snapshot and then walk the family's samples once.

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "detectors/core/detector.h"

namespace fabricwatch::detect {

using Families = std::vector<prometheus::MetricFamily>;
using LabelMatch = std::initializer_list<std::pair<std::string_view, std::string_view>>;

// The family `desc` describes, or nullptr when the snapshot has none.
const prometheus::MetricFamily* FindFamily(const Families& families, const MetricDesc& desc);

// The sample's value for the family's type (counter, gauge, untyped; MetricSink
// writes info metrics as gauges of 1).
double SampleValue(const prometheus::MetricFamily& family, const prometheus::ClientMetric& metric);

// The value of label `name`, or nullopt when the sample has no such label.
std::optional<std::string_view> LabelValue(const prometheus::ClientMetric& metric,
                                           std::string_view name);

// True when every (name, value) pair of `match` is among the sample's labels.
bool LabelsMatch(const prometheus::ClientMetric& metric, LabelMatch match);

// The value of the first sample of `desc`'s family whose labels include `match`, or nullopt.
std::optional<double> FindValue(const Families& families, const MetricDesc& desc, LabelMatch match);

// Calls fn(metric, value) for every sample of `desc`'s family (none when it is absent).
template <typename Fn>
void ForEachSample(const Families& families, const MetricDesc& desc, Fn&& fn) {
  const prometheus::MetricFamily* family = FindFamily(families, desc);
  if (family == nullptr) return;
  for (const prometheus::ClientMetric& metric : family->metric) {
    fn(metric, SampleValue(*family, metric));
  }
}

// The same over a detector's snapshot.
const prometheus::MetricFamily* FindFamily(const SnapshotView& snapshot, const MetricDesc& desc);

// The value of label `name`, or "" when the sample has none (collectors emit "" for a label that
// does not apply, so the two read the same).
std::string_view LabelOr(const prometheus::ClientMetric& metric, std::string_view name);

// A counter sample as an integer for CounterTracker, after `scale` (e.g. seconds → µs): negative
// or non-finite values read 0, values beyond uint64 saturate.
uint64_t CounterValue(const prometheus::MetricFamily& family,
                      const prometheus::ClientMetric& metric, double scale = 1);

}  // namespace fabricwatch::detect
