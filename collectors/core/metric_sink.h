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

// The shape of one collection: how many series each family got, in the order the families were
// first added. A collector emits much the same series every time, so whoever runs it (the
// scheduler, fabricbench) keeps the shape of the last collection and builds the next sink from
// it; that sink then sizes its vectors and its duplicate index once instead of growing them
// series by series (design.md §8). It is only a hint: any other collection is still taken whole.
struct SinkShape {
  std::vector<uint32_t> series_per_family;
  size_t total_series = 0;
};

class MetricSink {
 public:
  MetricSink() = default;
  // Reserves room for a collection shaped like `previous`, which must outlive the sink.
  explicit MetricSink(const SinkShape& previous);
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

  // Writes the shape of this collection into `shape`, reusing its storage; call it before
  // TakeFamilies().
  void SaveShape(SinkShape& shape);

  std::vector<prometheus::MetricFamily> TakeFamilies();

 private:
  static constexpr uint32_t kNoFamily = UINT32_MAX;
  static constexpr size_t kMinSeriesSlots = 16;

  // One emitted series in the duplicate index: the hash of its family and label values, and
  // where it is. A hash hit is confirmed by comparing the values, so a collision never drops a
  // series.
  struct SeriesSlot {
    uint64_t hash = 0;
    uint32_t family = kNoFamily;  // kNoFamily: an empty slot
    uint32_t metric = 0;
  };

  // The family index of `desc`, or kNoFamily when the sample must be dropped (already counted).
  uint32_t FamilyFor(const MetricDesc& desc);
  uint32_t AddFamily(const MetricDesc& desc);
  // True if families_[family].metric[metric] has the same label values as an earlier series of
  // the family; otherwise records it in the index.
  bool IsDuplicate(uint64_t hash, uint32_t family, uint32_t metric);
  // The first slot to probe for a series: FNV-1a's low bits alone cluster, so fold the high
  // bits and the family in.
  static size_t SlotOf(uint64_t hash, uint32_t family) {
    hash ^= (family + 1) * 0x9e3779b97f4a7c15ull;
    return static_cast<size_t>(hash ^ (hash >> 29) ^ (hash >> 47));
  }
  void GrowSeriesIndex();

  std::vector<prometheus::MetricFamily> families_;
  std::vector<const MetricDesc*> family_descs_;  // the first descriptor of each family
  // Family index by descriptor address, sorted by address: collectors pass the same constexpr
  // descriptors sample after sample, so one binary search finds the family without hashing the
  // name. A new address (a twin descriptor, a new family) goes through by_name_.
  std::vector<std::pair<const MetricDesc*, uint32_t>> by_desc_;
  std::unordered_map<std::string_view, uint32_t> by_name_;
  std::unordered_set<std::string_view> rejected_descs_;
  // Open addressing with linear probing, a power-of-two size at most half full: no allocation
  // per series, unlike a node-based map.
  std::vector<SeriesSlot> series_index_;
  std::span<const uint32_t> shape_hint_;  // series per family of the previous collection
  std::vector<Status> errors_;
  size_t error_count_ = 0;
  size_t sample_count_ = 0;
};

}  // namespace fabricwatch
