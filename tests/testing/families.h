#pragma once
// Synthetic collector snapshots for detector scenario tests: families built from the collectors'
// own descriptors (collectors/<name>/<name>_metrics.h), the way the collectors publish them, so
// a test cannot feed a detector a family no collector exports.

#include <prometheus/metric_family.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "base/metric_sink.h"

namespace fabricwatch::testing {

using SampleLabels = std::vector<std::pair<std::string, std::string>>;

// One sample of a counter or gauge family: what MakeFamily and Families both append.
inline prometheus::ClientMetric MakeSample(const SampleLabels& labels, prometheus::MetricType type,
                                           double value) {
  prometheus::ClientMetric metric;
  for (const auto& [n, v] : labels) metric.label.push_back({n, v});
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  return metric;
}

// One family of counter or gauge samples, named freely: for the tests of what reads any family
// (the render, the snapshot store, the series budget) rather than one collector's.
inline prometheus::MetricFamily MakeFamily(std::string name, prometheus::MetricType type,
                                           std::vector<std::pair<SampleLabels, double>> samples,
                                           std::string help = "help") {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  for (const auto& [labels, value] : samples) {
    family.metric.push_back(MakeSample(labels, type, value));
  }
  return family;
}

class Families {
 public:
  Families& Counter(const MetricDesc& desc, std::vector<std::pair<std::string, std::string>> labels,
                    double value) {
    return Add(desc, MetricKind::kCounter, std::move(labels), value);
  }
  // Gauges and info metrics (MetricSink writes info metrics as gauges).
  Families& Gauge(const MetricDesc& desc, std::vector<std::pair<std::string, std::string>> labels,
                  double value) {
    return Add(desc, desc.kind == MetricKind::kInfo ? MetricKind::kInfo : MetricKind::kGauge,
               std::move(labels), value);
  }
  const std::vector<prometheus::MetricFamily>& families() const { return families_; }

 private:
  Families& Add(const MetricDesc& desc, MetricKind kind,
                std::vector<std::pair<std::string, std::string>> labels, double value) {
    if (desc.kind != kind) {
      throw std::logic_error("test builds " + std::string(desc.name) + " with another kind");
    }
    const prometheus::MetricType type = kind == MetricKind::kCounter
                                            ? prometheus::MetricType::Counter
                                            : prometheus::MetricType::Gauge;
    prometheus::MetricFamily* family = nullptr;
    for (auto& f : families_) {
      if (f.name == desc.name) family = &f;
    }
    if (family == nullptr) {
      families_.push_back({std::string(desc.name), "test", type, {}});
      family = &families_.back();
    }
    family->metric.push_back(MakeSample(labels, type, value));
    return *this;
  }
  std::vector<prometheus::MetricFamily> families_;
};

}  // namespace fabricwatch::testing
