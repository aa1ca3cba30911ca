#pragma once
// What a detector reads from the collectors, declared as data: one MetricInput per collector
// family, naming the family by the collector's own descriptor (collectors/<name>/<name>_metrics.h),
// which also names the collector, and listing the labels the detector reads or matches. The
// declaration is the detector's input contract:
//   - Detector::inputs() (the collectors whose snapshots the engine feeds it) is derived from it;
//   - CheckMetricInputs() holds it against the collectors' metric tables, and the registry test
//     runs that check over every registered detector, so a family, label or kind that no
//     registered collector exports fails the build's tests, not a page at 3 a.m.
// Counter semantics (width, wrap or saturation) come with the descriptor (MetricDesc::range) and
// reach the CounterTracker through SpecFor() (detectors/core/counter.h).

#include <algorithm>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/core/collector_family.h"
#include "base/metric_sink.h"

namespace fabricwatch::detect {

struct MetricInput {
  // One row names the family alone: the collector comes with the family's type, declared once in
  // the collector's contract header (collectors/core/collector_family.h), and a label the family
  // does not declare fails to compile:
  //   constexpr MetricInput kInputs[] = {{rdma::kPortInfo, {"device", "port", "netdev"}}};
  template <const std::string_view& Collector>
  consteval MetricInput(const FamilyOf<Collector>& family, LabelNames read)
      : collector(Collector), desc(&family), labels(read) {
    for (std::string_view label : labels) {
      if (std::find(family.labels.begin(), family.labels.end(), label) == family.labels.end()) {
        throw "MetricInput lists a label the family does not declare";  // a compile error
      }
    }
  }

  std::string_view collector;  // the registered collector that exports the family
  const MetricDesc* desc;      // that collector's descriptor of the family
  LabelNames labels;           // the labels the detector reads or matches
};

// The distinct collectors of `inputs`, in first-seen order.
std::vector<std::string> InputCollectors(std::span<const MetricInput> inputs);

// The metric table of a registered collector, or nullopt when no collector has that name.
using CollectorMetricsLookup =
    std::function<std::optional<std::span<const MetricDesc>>(std::string_view collector)>;

// Every way `inputs` (of detector `detector`) disagrees with the collectors' tables, one line
// each: an unknown collector, a family the collector does not export, a family exported with
// another kind or label set, a label the family does not have. Empty when all hold.
std::vector<std::string> CheckMetricInputs(std::string_view detector,
                                           std::span<const MetricInput> inputs,
                                           const CollectorMetricsLookup& collector_metrics);

}  // namespace fabricwatch::detect
