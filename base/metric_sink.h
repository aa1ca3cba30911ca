#pragma once
// MetricSink: where a collector puts the samples of one collection.
//
// Collectors describe each metric once, in a constexpr MetricDesc table (name, HELP, kind); the
// table is also the metric reference (`fabricwatch --help-metrics`, README). The sink enforces
// the naming contract of docs/design.md §5 because raw prometheus::MetricFamily objects bypass
// prometheus-cpp's own checks:
//   - valid metric and label names; no `type` label; no duplicate label names;
//   - `_total` exactly on counters; `_info` metrics are gauges of value 1;
//   - one HELP and kind per family; no two samples with the same label set in a family;
//   - label values are valid UTF-8 (invalid bytes, e.g. from a hostile ifalias, become U+FFFD)
//     and at most kMaxLabelValueBytes long (longer ones are cut, ending in kTruncationMarker);
//     so is HELP text; metric names are at most kMaxMetricNameBytes.
// A sample that breaks the contract is dropped and counted as an error with a message naming it;
// it never throws. Partial failures of the collector itself (one unreadable port) are recorded
// with RecordError() so the scheduler can count them while the rest is still exported.
//
// A sink is reused collection after collection by the thread that runs its collector (Reset()),
// so that a steady-state collection allocates nothing.
//
// Thread-safety: none; owned by the collecting thread.

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <prometheus/metric_family.h>

#include "base/log_events.h"
#include "base/status.h"

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

// What a counter's raw value does at the end of its range. Declared once, beside the metric, by
// the collector that knows the source (a 16-bit IB PMA counter, a 32-bit kernel counter); the
// detectors' CounterTracker reads it from there (detectors/core/counter.h, docs/detection.md §0.2).
enum class CounterOverflow : uint8_t {
  kNone,       // 64-bit: never wraps in practice, so a smaller value is a reset
  kWraps,      // wraps to 0 after 2^bits − 1
  kSaturates,  // stops at 2^bits − 1 (IBA PortCounters)
};
struct CounterRange {
  CounterOverflow overflow = CounterOverflow::kNone;
  uint8_t bits = 64;
};

// What /metrics exports of a family by default: the series budget (README "Series budget",
// docs/design.md §5). Declared beside the family, with its reason, by whoever declares the family;
// exporter/pipeline/series_budget.h applies it and `--metrics.include` / `--metrics.all` lift it.
enum class ExportRule : uint8_t {
  // Exported whole (the default).
  kAll,
  // Not exported: detectors, findings and the status page carry what it says, or it is static
  // and of no use in a query.
  kOff,
  // A flag or a level: only series that are, or once were, non-zero (sticky, so a series that
  // returns to 0 shows the 0). Absent reads as 0 in every shipped rule and panel.
  kNonZero,
  // Per priority (labels netdev and priority): only the priorities of a netdev that have PFC on
  // (fabric_pfc_enabled 1) or that ever carried traffic (a non-zero
  // fabric_ethtool_priority_{bytes,packets}_total); sticky.
  kActivePriority,
  // PCIe: the GPUs' and NICs' own functions (label role gpu or nic), not the bridges on their
  // paths; a bridge whose link trains below its maximum still shows in
  // fabric_pcie_link_downtrained (kNonZero).
  kEndpoints,
  // Per priority: only the priorities with PFC on (fabric_pfc_enabled 1), the lossless ones
  // where a drop or a missing ECN setting is a fault; sticky.
  kLosslessPriority,
  // Per RDMA port (labels device and port): only InfiniBand ports (fabric_rdma_port_info
  // link_layer); IBA counters a RoCE port does not maintain.
  kInfiniBand,
  // Thresholds (label threshold): the alarm levels only; a crossed warning level shows in the
  // module's own warning flag.
  kAlarmThresholds,
};
struct ExportBudget {
  ExportRule rule = ExportRule::kAll;
  std::string_view why;  // one line for the README table; empty for kAll
};

struct MetricDesc {
  std::string_view name;
  std::string_view help;
  MetricKind kind;
  // The sink checks each sample's labels against these; the metric reference lists them.
  LabelNames labels;
  // Counters only: the raw source's range (default: 64-bit, no wrap).
  CounterRange range{};
  // What /metrics exports of it by default (default: all of it).
  ExportBudget budget{};
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

// The longest label value the sink stores, in bytes (docs/design.md §5.6). Strings a collector
// reads (node descriptions, firmware and module strings, netdev names) come from devices and
// drivers; a 10 KB or hostile one must not become a 10 KB series in every scrape. 1024 holds any
// real value (the longest, a local_cpulist of a few hundred interleaved CPUs, stays below it).
inline constexpr size_t kMaxLabelValueBytes = 1024;
// What ends a value cut to the bound: U+2026 HORIZONTAL ELLIPSIS, then "[truncated]".
inline constexpr std::string_view kTruncationMarker = "\xe2\x80\xa6[truncated]";
// The longest metric name the sink accepts; a longer descriptor is rejected like an invalid name.
// The agent's own names stay under 64 bytes.
inline constexpr size_t kMaxMetricNameBytes = 200;
// SanitizeUtf8(value), cut at a UTF-8 character boundary so that, with kTruncationMarker
// appended, it is at most kMaxLabelValueBytes long: what the sink stores as a label value.
std::string BoundLabelValue(std::string_view value);

// Open addressing with linear probing over a power-of-two table kept at most half full. Unlike a
// node-based map it allocates nothing per entry, and Clear() keeps its memory for the next
// collection. `Slot` is a small value type whose default value is the empty slot (`empty()`) and
// which knows where its probe sequence starts (`start()`).
template <typename Slot>
class ProbeTable {
 public:
  // The occupied slot on `slot.start()`'s probe sequence for which matches(slot) is true; if
  // none, `slot` is stored in the first empty one and nullptr is returned.
  template <typename Matches>
  const Slot* FindOrInsert(const Slot& slot, Matches matches) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    Slot& found = Probe(slot.start(), matches);
    if (!found.empty()) return &found;
    found = slot;
    ++size_;
    return nullptr;
  }
  // The occupied slot on `start`'s probe sequence for which matches(slot) is true, or nullptr.
  template <typename Matches>
  const Slot* Find(size_t start, Matches matches) {
    if (slots_.empty()) return nullptr;
    const Slot& found = Probe(start, matches);
    return found.empty() ? nullptr : &found;
  }
  void Clear() {
    if (size_ == 0) return;
    std::fill(slots_.begin(), slots_.end(), Slot{});
    size_ = 0;
  }

 private:
  static constexpr size_t kMinSlots = 16;
  // The matching slot or the first empty one; the table is never full.
  template <typename Matches>
  Slot& Probe(size_t start, Matches matches) {
    const size_t mask = slots_.size() - 1;
    for (size_t i = start & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.empty() || matches(slot)) return slot;
    }
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max(kMinSlots, 2 * old.size()), Slot{});
    const size_t mask = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.empty()) continue;
      size_t i = slot.start() & mask;
      while (!slots_[i].empty()) i = (i + 1) & mask;
      slots_[i] = slot;
    }
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

class MetricSink {
 public:
  MetricSink() = default;
  MetricSink(const MetricSink&) = delete;
  MetricSink& operator=(const MetricSink&) = delete;

  // Starts another collection in this sink: counts and errors start from zero, the indexes keep
  // their memory, and `storage` (families taken from a sink, TakeFamilies(), that nobody reads
  // any more: their series are distinct within each family) is overwritten in place: its names,
  // label strings and vectors keep their capacity. A collector emits much the same series in the
  // same order every time, so a steady-state collection into the storage of an earlier one
  // allocates nothing (docs/design.md §8). Whatever the storage held, the collection is taken
  // whole: it is only memory.
  void Reset(std::vector<prometheus::MetricFamily> storage = {});

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

  // The families of this collection, without the ones that got no sample. The counts and
  // errors stay readable until Reset().
  std::vector<prometheus::MetricFamily> TakeFamilies();
  // Log events of this collection (base/log_events.h): what a log-reading collector
  // hands the detectors besides its families. Not rendered on /metrics.
  void AddLogEvent(LogEvent event) { log_events_.push_back(std::move(event)); }
  std::vector<LogEvent> TakeLogEvents() { return std::move(log_events_); }

 private:
  static constexpr uint32_t kNoFamily = UINT32_MAX;

  // One emitted series in the duplicate index: the hash of its family and label values, and
  // where it is. A hash hit is confirmed by comparing the values, so a collision never drops a
  // series.
  struct SeriesSlot {
    uint64_t hash = 0;
    uint32_t family = kNoFamily;
    uint32_t metric = 0;
    bool empty() const { return family == kNoFamily; }
    // FNV-1a's low bits alone cluster, so fold the high bits and the family in.
    size_t start() const {
      const uint64_t h = hash ^ ((family + 1) * 0x9e3779b97f4a7c15ull);
      return static_cast<size_t>(h ^ (h >> 29) ^ (h >> 47));
    }
  };
  // A family by the hash of its name, confirmed by comparing the names.
  struct NameSlot {
    uint64_t hash = 0;
    uint32_t family = kNoFamily;
    bool empty() const { return family == kNoFamily; }
    size_t start() const { return static_cast<size_t>(hash ^ (hash >> 29)); }
  };

  // The family index of `desc`, or kNoFamily when the sample must be dropped (already counted).
  uint32_t FamilyFor(const MetricDesc& desc);
  // FamilyFor() without the previous collection's sequence to go by.
  uint32_t LookUpFamily(const MetricDesc& desc);
  // ValidateDesc(), or OK without it for a descriptor validated in an earlier collection whose
  // views are unchanged.
  Status ValidateOnce(const MetricDesc& desc);
  uint32_t AddFamily(const MetricDesc& desc, uint64_t name_hash);
  // Forgets which families and series this collection has; keeps the memory.
  void ClearIndexes();
  // Enters the first `count` series of `family` into the duplicate index.
  void IndexSeries(uint32_t family, uint32_t count);

  // [0, family_count_) are this collection's families, in the order of their first sample;
  // what lies beyond, and the ClientMetrics of a family beyond its `used`, is storage from an
  // earlier collection waiting to be overwritten.
  std::vector<prometheus::MetricFamily> families_;
  struct FamilyState {
    uint32_t used = 0;  // series of this collection, at the front of the family's vector
    // True while every series of the family equalled the storage's series at the same index:
    // those are distinct (they were one collection's), so they need no duplicate index. In the
    // steady state a family stays so, and a sample costs one comparison of its labels.
    bool unindexed = true;
    // True when the storage's series carry exactly the descriptor's label names (the family
    // held the same metric last time): comparing a series then needs only its values.
    bool storage_has_label_names = false;
  };
  std::vector<FamilyState> states_;
  size_t family_count_ = 0;
  std::vector<const MetricDesc*> family_descs_;  // the first descriptor of each family
  // Family index by descriptor address, sorted by address: collectors pass the same constexpr
  // descriptors sample after sample, so one binary search finds the family without hashing the
  // name. A new address (a twin descriptor, a new family) goes through names_.
  std::vector<std::pair<const MetricDesc*, uint32_t>> by_desc_;
  ProbeTable<NameSlot> names_;
  std::unordered_set<std::string_view> rejected_descs_;
  // The descriptor and family of each sample, in order: this collection's, and the previous
  // one's. A collector emits the same sequence collection after collection, so while this one
  // repeats the previous one, a sample's family is found with one comparison.
  std::vector<std::pair<const MetricDesc*, uint32_t>> sequence_, previous_sequence_;
  bool on_sequence_ = true;
  // Descriptors that passed ValidateDesc(), by address, as they were then (views compared by
  // pointer and length, so a descriptor rebuilt at the same address with other text is
  // validated again). Kept across collections; bounded.
  std::vector<std::pair<const MetricDesc*, MetricDesc>> validated_;
  ProbeTable<SeriesSlot> series_;
  std::vector<Status> errors_;
  size_t error_count_ = 0;
  std::vector<LogEvent> log_events_;
  size_t sample_count_ = 0;
};

}  // namespace fabricwatch
