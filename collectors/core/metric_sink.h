#pragma once
// MetricSink: where a collector puts the samples of one collection.
//
// Collectors describe each metric once, in a constexpr MetricDesc table (name, HELP, kind); the
// table is also the metric reference (`fabricwatch --help-metrics`, README). The sink enforces
// the naming contract of design.md §5 because raw prometheus::MetricFamily objects bypass
// prometheus-cpp's own checks:
//   - valid metric and label names; no `type` label; no duplicate label names;
//   - `_total` exactly on counters; `_info` metrics are gauges of value 1;
//   - one HELP and kind per family; no two samples with the same label set in a family;
//   - label values are valid UTF-8 (invalid bytes, e.g. from a hostile ifalias, become U+FFFD).
// A sample that breaks the contract is dropped and counted as an error with a message naming it;
// it never throws. Partial failures of the collector itself (one unreadable port) are recorded
// with RecordError() so the scheduler can count them while the rest is still exported.
//
// Thread-safety: none; one sink per collection, owned by the collecting thread.

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <prometheus/metric_family.h>

#include "collectors/core/status.h"

namespace fabricwatch {

// kUntyped is only for passthrough of values whose type the agent cannot know (raw driver
// statistics), as node_exporter's ethtool collector does.
enum class MetricKind { kCounter, kGauge, kInfo, kUntyped };

// The label names of a metric, fixed at compile time (a constexpr-friendly small array).
class LabelNames {
 public:
  static constexpr size_t kMax = 12;
  constexpr LabelNames() = default;
  constexpr LabelNames(std::initializer_list<std::string_view> names) {
    for (std::string_view name : names) {
      if (count_ == kMax) throw "too many labels";  // a compile error in constant evaluation
      names_[count_++] = name;
    }
  }
  constexpr const std::string_view* begin() const { return names_.data(); }
  constexpr const std::string_view* end() const { return names_.data() + count_; }
  constexpr size_t size() const { return count_; }
  constexpr std::string_view operator[](size_t i) const { return names_[i]; }

 private:
  std::array<std::string_view, kMax> names_{};
  size_t count_ = 0;
};

struct MetricDesc {
  std::string_view name;
  std::string_view help;
  MetricKind kind;
  // The sink checks each sample's labels against these; the metric reference lists them.
  LabelNames labels;
};

struct LabelPair {
  std::string_view name;
  std::string_view value;
};

// Checks a descriptor on its own (names, suffix rules); used by the sink and by the tests that
// walk every registered collector's table.
Status ValidateDesc(const MetricDesc& desc);

// Returns `value` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string SanitizeUtf8(std::string_view value);

class MetricSink {
 public:
  MetricSink() = default;
  MetricSink(const MetricSink&) = delete;
  MetricSink& operator=(const MetricSink&) = delete;

  // Adds one sample; labels must be exactly desc.labels, in that order.
  void Add(const MetricDesc& desc, std::initializer_list<LabelPair> labels, double value);
  void Add(const MetricDesc& desc, std::span<const LabelPair> labels, double value);
  // Info metric: strings as labels on a constant 1.
  void AddInfo(const MetricDesc& desc, std::initializer_list<LabelPair> labels) {
    Add(desc, labels, 1.0);
  }

  // A partial failure (one device, one file) that did not stop the collection.
  void RecordError(const Status& status);

  size_t error_count() const { return error_count_; }
  // The first few error messages of this collection, for logs and --config.check.
  const std::vector<Status>& errors() const { return errors_; }
  size_t sample_count() const { return sample_count_; }

  std::vector<prometheus::MetricFamily> TakeFamilies();

 private:
  struct FamilyState {
    size_t index;  // into families_
    const MetricDesc* desc;
    // Hash of each emitted series' label values → its index in the family; a hash hit is
    // confirmed by comparing the values, so a collision never drops a series.
    std::unordered_multimap<uint64_t, size_t> series;
  };

  FamilyState* FamilyFor(const MetricDesc& desc);

  std::vector<prometheus::MetricFamily> families_;
  std::unordered_map<std::string_view, FamilyState> by_name_;
  std::unordered_set<std::string_view> rejected_descs_;
  std::vector<Status> errors_;
  size_t error_count_ = 0;
  size_t sample_count_ = 0;
};

}  // namespace fabricwatch
