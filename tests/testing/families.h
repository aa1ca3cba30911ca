#pragma once
// Synthetic collector snapshots for detector scenario tests: families built by name and labels,
// the way the collectors publish them (README metric reference).

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/metric_family.h>

namespace fabricwatch::testing {

class Families {
 public:
  Families& Counter(const std::string& name,
                    std::vector<std::pair<std::string, std::string>> labels, double value) {
    return Add(name, prometheus::MetricType::Counter, std::move(labels), value);
  }
  Families& Gauge(const std::string& name,
                  std::vector<std::pair<std::string, std::string>> labels, double value) {
    return Add(name, prometheus::MetricType::Gauge, std::move(labels), value);
  }
  const std::vector<prometheus::MetricFamily>& families() const { return families_; }

 private:
  Families& Add(const std::string& name, prometheus::MetricType type,
                std::vector<std::pair<std::string, std::string>> labels, double value) {
    prometheus::MetricFamily* family = nullptr;
    for (auto& f : families_) {
      if (f.name == name) family = &f;
    }
    if (family == nullptr) {
      families_.push_back({name, "test", type, {}});
      family = &families_.back();
    }
    prometheus::ClientMetric metric;
    for (auto& [n, v] : labels) metric.label.push_back({n, v});
    if (type == prometheus::MetricType::Counter) {
      metric.counter.value = value;
    } else {
      metric.gauge.value = value;
    }
    family->metric.push_back(std::move(metric));
    return *this;
  }
  std::vector<prometheus::MetricFamily> families_;
};

}  // namespace fabricwatch::testing
