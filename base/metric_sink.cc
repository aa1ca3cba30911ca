#include "base/metric_sink.h"

#include <prometheus/check_names.h>

#include <algorithm>
#include <functional>
#include <utility>

#include "base/utf8.h"

namespace fabricwatch {
namespace {

constexpr size_t kMaxRememberedErrors = 8;
// Descriptors remembered as validated; past this, new ones are validated every collection.
constexpr size_t kMaxValidated = 4096;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// SanitizeUtf8 into `out`, reusing its storage.
void AssignSanitizedUtf8(std::string_view value, std::string& out) {
  // Label values are almost always ASCII (device names, numbers): copy them as they are.
  bool ascii = true;
  for (char c : value) ascii &= static_cast<unsigned char>(c) < 0x80;
  if (ascii) {
    out.assign(value);
    return;
  }
  out.clear();
  out.reserve(value.size());
  for (size_t i = 0; i < value.size();) {
    size_t len = Utf8SequenceLength(value, i);
    if (len == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(value.substr(i, len));
      i += len;
    }
  }
}

// AssignSanitizedUtf8, then cut to kMaxLabelValueBytes at a character boundary with the marker
// (docs/design.md §5.6). Only a value longer than the bound pays for the cut.
void AssignLabelValue(std::string_view value, std::string& out) {
  AssignSanitizedUtf8(value, out);
  if (out.size() <= kMaxLabelValueBytes) return;
  size_t cut = kMaxLabelValueBytes - kTruncationMarker.size();
  // Back to the first byte of a character: continuation bytes are 10xxxxxx (RFC 3629 §3).
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xc0) == 0x80) --cut;
  out.resize(cut);
  out += kTruncationMarker;
}

}  // namespace

std::string BoundLabelValue(std::string_view value) {
  std::string out;
  AssignLabelValue(value, out);
  return out;
}

std::string SanitizeUtf8(std::string_view value) {
  std::string out;
  AssignSanitizedUtf8(value, out);
  return out;
}

Status ValidateDesc(const MetricDesc& desc) {
  // Every collection validates each family it emits (a descriptor may be built at run time, so
  // its address proves nothing), hence no allocation unless it fails: prometheus-cpp's checks
  // take a std::string, and this thread's scratch copy keeps its capacity.
  thread_local std::string scratch;
  const auto error = [&](std::string message) {
    return Status(StatusCode::kInvalidArgument, std::move(message));
  };
  const std::string_view name = desc.name;
  if (name.size() > kMaxMetricNameBytes) {
    // A passthrough name made from what a replay file or driver calls a statistic (the kernel's
    // own are at most ETH_GSTRING_LEN, 32 bytes).
    return error("metric name longer than " + std::to_string(kMaxMetricNameBytes) + " bytes: \"" +
                 SanitizeUtf8(name.substr(0, 64)) + "...\"");
  }
  if (!prometheus::CheckMetricName(scratch.assign(name))) {
    return error("invalid metric name \"" + std::string(name) + "\"");
  }
  if (desc.help.empty()) return error("metric " + std::string(name) + " has no HELP text");
  const bool total = EndsWith(name, "_total");
  if (desc.kind == MetricKind::kUntyped) {
    // No suffix rule: the type is unknown (promtool's lint exempts untyped families too).
  } else if (desc.kind == MetricKind::kCounter && !total) {
    return error("counter " + std::string(name) + " must end in _total");
  } else if (desc.kind != MetricKind::kCounter && total) {
    return error("non-counter " + std::string(name) + " must not end in _total");
  }
  if (desc.kind == MetricKind::kInfo && !EndsWith(name, "_info")) {
    return error("info metric " + std::string(name) + " must end in _info");
  }
  for (size_t i = 0; i < desc.labels.size(); ++i) {
    const std::string_view label = desc.labels[i];
    if (!prometheus::CheckLabelName(scratch.assign(label))) {
      return error("metric " + std::string(name) + ": invalid label name \"" + std::string(label) +
                   "\"");
    }
    if (label == "type") {
      return error("metric " + std::string(name) + ": a label named \"type\" is not allowed");
    }
    // At most LabelNames::kMax labels: comparing pairs beats building a set.
    for (size_t k = 0; k < i; ++k) {
      if (desc.labels[k] == label) {
        return error("metric " + std::string(name) + ": duplicate label \"" + std::string(label) +
                     "\"");
      }
    }
  }
  return Status::Ok();
}

namespace {

// FNV-1a over the bytes of `s`.
uint64_t HashName(std::string_view s) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : s) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

// FNV-1a over a series' (sanitised) label values, 0xff between them (a byte UTF-8 never
// contains).
uint64_t HashValues(const std::vector<prometheus::ClientMetric::Label>& labels) {
  uint64_t hash = 14695981039346656037ull;
  for (const prometheus::ClientMetric::Label& label : labels) {
    for (unsigned char c : label.value) hash = (hash ^ c) * 1099511628211ull;
    hash = (hash ^ 0xffu) * 1099511628211ull;
  }
  return hash;
}

// True when a stored series has exactly these label names and values. Stored values are valid
// UTF-8, so a raw value equal to one needs no sanitising either.
bool SameLabels(const std::vector<prometheus::ClientMetric::Label>& stored,
                std::span<const LabelPair> labels, bool compare_names) {
  if (stored.size() != labels.size()) return false;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (compare_names && stored[i].name != labels[i].name) return false;
    if (stored[i].value != labels[i].value) return false;
  }
  return true;
}

// The collectors' label names are the same string literals as their descriptors' (the linker
// merges identical literals), so most comparisons end at the pointers.
bool SameView(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.data() == b.data() || a == b);
}

// True when two descriptors' views are the same pointers and lengths (not only equal text).
bool SameViews(const MetricDesc& a, const MetricDesc& b) {
  const auto same = [](std::string_view x, std::string_view y) {
    return x.data() == y.data() && x.size() == y.size();
  };
  if (!same(a.name, b.name) || !same(a.help, b.help) || a.kind != b.kind ||
      a.labels.size() != b.labels.size()) {
    return false;
  }
  for (size_t i = 0; i < a.labels.size(); ++i) {
    if (!same(a.labels[i], b.labels[i])) return false;
  }
  return true;
}

// The first entry of `entries` (pairs sorted by descriptor address) not before `desc`.
template <typename Entries>
auto LowerBoundByAddress(Entries& entries, const MetricDesc* desc) {
  return std::lower_bound(entries.begin(), entries.end(), desc,
                          [](const auto& entry, const MetricDesc* key) {
                            return std::less<const MetricDesc*>()(entry.first, key);
                          });
}

// True when every label of `stored` is named as `names`, in order.
bool HasLabelNames(const std::vector<prometheus::ClientMetric::Label>& stored,
                   const LabelNames& names) {
  if (stored.size() != names.size()) return false;
  for (size_t i = 0; i < names.size(); ++i) {
    if (stored[i].name != names[i]) return false;
  }
  return true;
}

void SetValue(MetricKind kind, prometheus::ClientMetric& metric, double value) {
  if (kind == MetricKind::kCounter) {
    metric.counter.value = value;
  } else if (kind == MetricKind::kUntyped) {
    metric.untyped.value = value;
  } else {
    metric.gauge.value = value;
  }
}

}  // namespace

void MetricSink::Reset(std::vector<prometheus::MetricFamily> storage) {
  ClearIndexes();
  previous_sequence_.swap(sequence_);
  sequence_.clear();
  on_sequence_ = true;
  families_ = std::move(storage);
  states_.clear();
  family_count_ = 0;
  errors_.clear();
  error_count_ = 0;
  log_events_.clear();
  sample_count_ = 0;
}

void MetricSink::ClearIndexes() {
  by_desc_.clear();
  names_.Clear();
  family_descs_.clear();
  rejected_descs_.clear();
  series_.Clear();
}

uint32_t MetricSink::FamilyFor(const MetricDesc& desc) {
  const size_t position = sequence_.size();
  const bool expected = on_sequence_ && position < previous_sequence_.size() &&
                        previous_sequence_[position].first == &desc;
  uint32_t family;
  if (expected && previous_sequence_[position].second < family_count_) {
    // Every sample so far repeated the previous collection, so the families were created in the
    // same order and have the same indexes: this one is the family it was then.
    family = previous_sequence_[position].second;
  } else {
    family = LookUpFamily(desc);
    on_sequence_ = expected && family == previous_sequence_[position].second;
  }
  sequence_.emplace_back(&desc, family);
  return family;
}

Status MetricSink::ValidateOnce(const MetricDesc& desc) {
  auto pos = LowerBoundByAddress(validated_, &desc);
  const bool known = pos != validated_.end() && pos->first == &desc;
  if (known && SameViews(pos->second, desc)) return Status::Ok();
  Status status = ValidateDesc(desc);
  if (!status.ok()) return status;
  if (known) {
    pos->second = desc;
  } else if (validated_.size() < kMaxValidated) {
    validated_.insert(pos, {&desc, desc});
  }
  return status;
}

uint32_t MetricSink::LookUpFamily(const MetricDesc& desc) {
  auto pos = LowerBoundByAddress(by_desc_, &desc);
  if (pos != by_desc_.end() && pos->first == &desc) return pos->second;

  // A descriptor address not seen in this collection: a new family, or a second descriptor of a
  // known one.
  const uint64_t name_hash = HashName(desc.name);
  const NameSlot* known_slot =
      names_.Find(NameSlot{.hash = name_hash}.start(), [&](const NameSlot& slot) {
        return slot.hash == name_hash && family_descs_[slot.family]->name == desc.name;
      });
  if (known_slot != nullptr) {
    const MetricDesc& known = *family_descs_[known_slot->family];
    // A second descriptor of the same family must be its exact twin (the first one was
    // validated); anything else would bypass the naming checks.
    bool same = known.help == desc.help && known.kind == desc.kind &&
                known.labels.size() == desc.labels.size();
    for (size_t i = 0; same && i < desc.labels.size(); ++i) {
      same = known.labels[i] == desc.labels[i];
    }
    if (!same) {
      RecordError(Status(StatusCode::kInvalidArgument,
                         "metric " + std::string(desc.name) +
                             " described twice with different HELP, kind or labels"));
      return kNoFamily;
    }
    const uint32_t family = known_slot->family;
    by_desc_.insert(pos, {&desc, family});
    return family;
  }
  if (rejected_descs_.contains(desc.name)) {
    ++error_count_;
    return kNoFamily;
  }
  if (Status status = ValidateOnce(desc); !status.ok()) {
    rejected_descs_.insert(desc.name);
    RecordError(status);
    return kNoFamily;
  }
  const uint32_t index = AddFamily(desc, name_hash);
  by_desc_.insert(pos, {&desc, index});
  return index;
}

uint32_t MetricSink::AddFamily(const MetricDesc& desc, uint64_t name_hash) {
  const auto index = static_cast<uint32_t>(family_count_++);
  // Storage from an earlier collection is overwritten (its strings keep their capacity).
  prometheus::MetricFamily& family =
      index < families_.size() ? families_[index] : families_.emplace_back();
  // Its series all came through descriptors with one set of label names; the first tells.
  const bool storage_has_label_names = family.name == desc.name && !family.metric.empty() &&
                                       HasLabelNames(family.metric.front().label, desc.labels);
  family.name.assign(desc.name);
  // HELP may quote a device's string (a passthrough statistic's raw name): valid and bounded as
  // a label value is. The common ASCII HELP is copied as it is, into the storage's capacity.
  AssignLabelValue(desc.help, family.help);
  family.type = desc.kind == MetricKind::kCounter   ? prometheus::MetricType::Counter
                : desc.kind == MetricKind::kUntyped ? prometheus::MetricType::Untyped
                                                    : prometheus::MetricType::Gauge;
  states_.push_back(FamilyState{.storage_has_label_names = storage_has_label_names});
  family_descs_.push_back(&desc);
  names_.FindOrInsert(NameSlot{.hash = name_hash, .family = index},
                      [](const NameSlot&) { return false; });  // checked absent by FamilyFor
  return index;
}

void MetricSink::Add(const MetricDesc& desc, std::initializer_list<LabelPair> labels,
                     double value) {
  Add(desc, std::span<const LabelPair>(labels.begin(), labels.size()), value);
}

void MetricSink::Add(const MetricDesc& desc, std::span<const LabelPair> labels, double value) {
  const uint32_t family = FamilyFor(desc);
  if (family == kNoFamily) return;
  bool labels_match = labels.size() == desc.labels.size();
  for (size_t i = 0; labels_match && i < labels.size(); ++i) {
    labels_match = SameView(labels[i].name, desc.labels[i]);
  }
  if (!labels_match) {
    RecordError(Status(StatusCode::kInvalidArgument,
                       "metric " + std::string(desc.name) + ": labels differ from its descriptor"));
    return;
  }
  if (desc.kind == MetricKind::kInfo && value != 1.0) {
    RecordError(Status(StatusCode::kInvalidArgument,
                       "info metric " + std::string(desc.name) + " must have value 1"));
    return;
  }
  std::vector<prometheus::ClientMetric>& emitted = families_[family].metric;
  FamilyState& state = states_[family];
  const uint32_t index = state.used;
  if (state.unindexed) {
    if (index < emitted.size() &&
        SameLabels(emitted[index].label, labels, !state.storage_has_label_names)) {
      SetValue(desc.kind, emitted[index], value);
      ++state.used;
      ++sample_count_;
      return;
    }
    // The family departs from the storage: from here on it goes through the duplicate index.
    IndexSeries(family, index);
    state.unindexed = false;
  }
  // Written into the family's next ClientMetric (storage from an earlier collection when there
  // is one), and counted only once it is known not to be a duplicate.
  prometheus::ClientMetric& metric =
      index < emitted.size() ? emitted[index] : emitted.emplace_back();
  metric.label.resize(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    metric.label[i].name.assign(labels[i].name);
    AssignLabelValue(labels[i].value, metric.label[i].value);
  }
  const uint64_t hash = HashValues(metric.label);
  const SeriesSlot* earlier = series_.FindOrInsert(
      SeriesSlot{.hash = hash, .family = family, .metric = index}, [&](const SeriesSlot& slot) {
        if (slot.hash != hash || slot.family != family) return false;
        const auto& other = emitted[slot.metric].label;  // same family: same label names
        for (size_t k = 0; k < other.size(); ++k) {
          if (other[k].value != metric.label[k].value) return false;
        }
        return true;
      });
  if (earlier != nullptr) {
    RecordError(Status(StatusCode::kInvalidArgument,
                       "metric " + std::string(desc.name) + ": duplicate series dropped"));
    return;
  }
  SetValue(desc.kind, metric, value);
  ++state.used;
  ++sample_count_;
}

void MetricSink::IndexSeries(uint32_t family, uint32_t count) {
  const std::vector<prometheus::ClientMetric>& emitted = families_[family].metric;
  for (uint32_t i = 0; i < count; ++i) {
    // Distinct from one another (see FamilyState::unindexed): nothing to compare.
    series_.FindOrInsert(
        SeriesSlot{.hash = HashValues(emitted[i].label), .family = family, .metric = i},
        [](const SeriesSlot&) { return false; });
  }
}

void MetricSink::RecordError(const Status& status) {
  ++error_count_;
  if (errors_.size() < kMaxRememberedErrors) errors_.push_back(status);
}

std::vector<prometheus::MetricFamily> MetricSink::TakeFamilies() {
  ClearIndexes();
  // Storage this collection did not overwrite goes: spare series, then spare families.
  for (size_t i = 0; i < family_count_; ++i) families_[i].metric.resize(states_[i].used);
  families_.resize(family_count_);
  states_.clear();
  family_count_ = 0;
  // A family declared but left empty would render as HELP/TYPE with no sample; drop it.
  std::erase_if(families_, [](const prometheus::MetricFamily& f) { return f.metric.empty(); });
  return std::exchange(families_, {});
}

}  // namespace fabricwatch
