#include "collectors/core/metric_sink.h"

#include <algorithm>
#include <functional>
#include <utility>

#include <prometheus/check_names.h>

namespace fabricwatch {
namespace {

constexpr size_t kMaxRememberedErrors = 8;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is invalid (RFC 3629:
// no overlongs, no surrogates, nothing above U+10FFFF).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t len;
  uint32_t min;
  uint32_t cp;
  if ((c & 0xe0) == 0xc0) {
    len = 2, min = 0x80, cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3, min = 0x800, cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4, min = 0x10000, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
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

}  // namespace

std::string SanitizeUtf8(std::string_view value) {
  std::string out;
  AssignSanitizedUtf8(value, out);
  return out;
}

Status ValidateDesc(const MetricDesc& desc) {
  const std::string name(desc.name);
  if (!prometheus::CheckMetricName(name)) {
    return Status(StatusCode::kInvalidArgument, "invalid metric name \"" + name + "\"");
  }
  if (desc.help.empty()) {
    return Status(StatusCode::kInvalidArgument, "metric " + name + " has no HELP text");
  }
  const bool total = EndsWith(desc.name, "_total");
  if (desc.kind == MetricKind::kUntyped) {
    // No suffix rule: the type is unknown (promtool's lint exempts untyped families too).
  } else if (desc.kind == MetricKind::kCounter && !total) {
    return Status(StatusCode::kInvalidArgument, "counter " + name + " must end in _total");
  } else if (desc.kind != MetricKind::kCounter && total) {
    return Status(StatusCode::kInvalidArgument, "non-counter " + name + " must not end in _total");
  }
  if (desc.kind == MetricKind::kInfo && !EndsWith(desc.name, "_info")) {
    return Status(StatusCode::kInvalidArgument, "info metric " + name + " must end in _info");
  }
  std::unordered_set<std::string_view> seen;
  for (std::string_view label : desc.labels) {
    if (!prometheus::CheckLabelName(std::string(label))) {
      return Status(StatusCode::kInvalidArgument,
                    "metric " + name + ": invalid label name \"" + std::string(label) + "\"");
    }
    if (label == "type") {
      return Status(StatusCode::kInvalidArgument,
                    "metric " + name + ": a label named \"type\" is not allowed");
    }
    if (!seen.insert(label).second) {
      return Status(StatusCode::kInvalidArgument,
                    "metric " + name + ": duplicate label \"" + std::string(label) + "\"");
    }
  }
  return Status::Ok();
}

MetricSink::MetricSink(const SinkShape& previous) : shape_hint_(previous.series_per_family) {
  const size_t families = previous.series_per_family.size();
  families_.reserve(families);
  family_descs_.reserve(families);
  by_desc_.reserve(families);
  by_name_.reserve(families);
  size_t slots = kMinSeriesSlots;
  while (slots < 2 * previous.total_series + 2) slots *= 2;
  series_index_.resize(slots);
}

uint32_t MetricSink::FamilyFor(const MetricDesc& desc) {
  const auto by_address = [](const std::pair<const MetricDesc*, uint32_t>& entry,
                             const MetricDesc* key) {
    return std::less<const MetricDesc*>()(entry.first, key);
  };
  auto pos = std::lower_bound(by_desc_.begin(), by_desc_.end(), &desc, by_address);
  if (pos != by_desc_.end() && pos->first == &desc) return pos->second;

  // A descriptor address not seen in this collection: a new family, or a second descriptor of a
  // known one.
  if (auto it = by_name_.find(desc.name); it != by_name_.end()) {
    const MetricDesc& known = *family_descs_[it->second];
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
    by_desc_.insert(pos, {&desc, it->second});
    return it->second;
  }
  if (rejected_descs_.contains(desc.name)) {
    ++error_count_;
    return kNoFamily;
  }
  if (Status status = ValidateDesc(desc); !status.ok()) {
    rejected_descs_.insert(desc.name);
    RecordError(status);
    return kNoFamily;
  }
  const uint32_t index = AddFamily(desc);
  by_desc_.insert(pos, {&desc, index});
  return index;
}

uint32_t MetricSink::AddFamily(const MetricDesc& desc) {
  const auto index = static_cast<uint32_t>(families_.size());
  prometheus::MetricFamily& family = families_.emplace_back();
  family.name = std::string(desc.name);
  family.help = std::string(desc.help);
  family.type = desc.kind == MetricKind::kCounter   ? prometheus::MetricType::Counter
                : desc.kind == MetricKind::kUntyped ? prometheus::MetricType::Untyped
                                                    : prometheus::MetricType::Gauge;
  if (index < shape_hint_.size()) family.metric.reserve(shape_hint_[index]);
  family_descs_.push_back(&desc);
  by_name_.emplace(desc.name, index);
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
    labels_match = labels[i].name == desc.labels[i];
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
  // Built in place at the end of the family and taken back if it turns out to be a duplicate.
  std::vector<prometheus::ClientMetric>& emitted = families_[family].metric;
  prometheus::ClientMetric& metric = emitted.emplace_back();
  metric.label.resize(labels.size());
  // FNV-1a over the sanitised values, 0xff between them (a byte UTF-8 never contains).
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < labels.size(); ++i) {
    prometheus::ClientMetric::Label& label = metric.label[i];
    label.name.assign(labels[i].name);
    AssignSanitizedUtf8(labels[i].value, label.value);
    for (unsigned char c : label.value) hash = (hash ^ c) * 1099511628211ull;
    hash = (hash ^ 0xffu) * 1099511628211ull;
  }
  if (IsDuplicate(hash, family, static_cast<uint32_t>(emitted.size() - 1))) {
    emitted.pop_back();
    RecordError(Status(StatusCode::kInvalidArgument,
                       "metric " + std::string(desc.name) + ": duplicate series dropped"));
    return;
  }
  if (desc.kind == MetricKind::kCounter) {
    metric.counter.value = value;
  } else if (desc.kind == MetricKind::kUntyped) {
    metric.untyped.value = value;
  } else {
    metric.gauge.value = value;
  }
  ++sample_count_;
}

bool MetricSink::IsDuplicate(uint64_t hash, uint32_t family, uint32_t metric) {
  // Every accepted series has a slot; keep the index at most half full so probes stay short.
  if (2 * (sample_count_ + 1) > series_index_.size()) GrowSeriesIndex();
  const std::vector<prometheus::ClientMetric>& emitted = families_[family].metric;
  const auto& labels = emitted[metric].label;
  const size_t mask = series_index_.size() - 1;
  for (size_t i = SlotOf(hash, family) & mask;; i = (i + 1) & mask) {
    SeriesSlot& slot = series_index_[i];
    if (slot.family == kNoFamily) {
      slot = SeriesSlot{.hash = hash, .family = family, .metric = metric};
      return false;
    }
    if (slot.hash != hash || slot.family != family) continue;
    const auto& other = emitted[slot.metric].label;  // same family: same label names
    bool same = true;
    for (size_t k = 0; same && k < other.size(); ++k) same = other[k].value == labels[k].value;
    if (same) return true;
  }
}

void MetricSink::GrowSeriesIndex() {
  std::vector<SeriesSlot> old = std::move(series_index_);
  series_index_.assign(std::max(kMinSeriesSlots, 2 * old.size()), SeriesSlot{});
  const size_t mask = series_index_.size() - 1;
  for (const SeriesSlot& slot : old) {
    if (slot.family == kNoFamily) continue;
    size_t i = SlotOf(slot.hash, slot.family) & mask;
    while (series_index_[i].family != kNoFamily) i = (i + 1) & mask;
    series_index_[i] = slot;
  }
}

void MetricSink::RecordError(const Status& status) {
  ++error_count_;
  if (errors_.size() < kMaxRememberedErrors) errors_.push_back(status);
}

void MetricSink::SaveShape(SinkShape& shape) {
  shape_hint_ = {};  // `shape` may be the hint this sink was built from
  shape.series_per_family.resize(families_.size());
  for (size_t i = 0; i < families_.size(); ++i) {
    shape.series_per_family[i] = static_cast<uint32_t>(families_[i].metric.size());
  }
  shape.total_series = sample_count_;
}

std::vector<prometheus::MetricFamily> MetricSink::TakeFamilies() {
  by_desc_.clear();
  by_name_.clear();
  family_descs_.clear();
  rejected_descs_.clear();
  series_index_.clear();
  shape_hint_ = {};
  // A family declared but left empty would render as HELP/TYPE with no sample; drop it.
  std::erase_if(families_, [](const prometheus::MetricFamily& f) { return f.metric.empty(); });
  return std::exchange(families_, {});
}

}  // namespace fabricwatch
