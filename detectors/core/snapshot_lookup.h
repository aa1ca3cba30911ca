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

#include "collectors/core/family_label.h"
#include "detectors/core/detector.h"

namespace fabricwatch::detect {

using Families = std::vector<prometheus::MetricFamily>;

// The family `desc` describes, or nullptr when the snapshot has none.
const prometheus::MetricFamily* FindFamily(const Families& families, const MetricDesc& desc);

// The sample's value for the family's type (counter, gauge, untyped; MetricSink
// writes info metrics as gauges of 1).
double SampleValue(const prometheus::MetricFamily& family, const prometheus::ClientMetric& metric);

// Calls fn(metric, value) for every sample of `desc`'s family (none when it is absent).
template <typename Fn>
void ForEachSample(const Families& families, const MetricDesc& desc, Fn&& fn) {
  const prometheus::MetricFamily* family = FindFamily(families, desc);
  if (family == nullptr) return;
  for (const prometheus::ClientMetric& metric : family->metric) {
    fn(metric, SampleValue(*family, metric));
  }
}

// Labels are read only in checked forms (collectors/core/family_label.h): the family is a template
// argument and every label name is checked against its descriptor at compile time; there is no
// read of a label by a bare string (issue 36).
//   LabelsMatch<rdma::kPortState>(sample, {{"device", device}, {"port", port}})
template <const auto& Family>
bool LabelsMatch(const prometheus::ClientMetric& metric,
                 std::initializer_list<LabelIs<Family>> match) {
  for (const LabelIs<Family>& condition : match) {
    if (Label<Family>(metric, condition.label) != condition.value) return false;
  }
  return true;
}

// A family as a value, for code that treats several families alike (a lambda called once per
// family) and still reads their labels checked:
//   auto track = [&](auto family) { ... Label<decltype(family)::desc>(m, "netdev") ... };
//   track(FamilyTag<ethtool::kPrioBytes>{});
template <const auto& Family>
struct FamilyTag {
  static constexpr const auto& desc = Family;
};

// The value of the first sample of Family whose labels satisfy `match`, or nullopt.
template <const auto& Family>
std::optional<double> FindValue(const Families& families,
                                std::initializer_list<LabelIs<Family>> match) {
  const prometheus::MetricFamily* family = FindFamily(families, Family);
  if (family == nullptr) return std::nullopt;
  for (const prometheus::ClientMetric& metric : family->metric) {
    if (LabelsMatch<Family>(metric, match)) return SampleValue(*family, metric);
  }
  return std::nullopt;
}

// The same over a detector's snapshot.
const prometheus::MetricFamily* FindFamily(const SnapshotView& snapshot, const MetricDesc& desc);

// A counter sample as an integer for CounterTracker, after `scale` (e.g. seconds → µs): negative
// or non-finite values read 0, values beyond uint64 saturate.
uint64_t CounterValue(const prometheus::MetricFamily& family,
                      const prometheus::ClientMetric& metric, double scale = 1);

}  // namespace fabricwatch::detect
