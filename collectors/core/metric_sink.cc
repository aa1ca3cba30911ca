#include "collectors/core/metric_sink.h"

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

}  // namespace

std::string SanitizeUtf8(std::string_view value) {
  // Label values are almost always ASCII (device names, numbers): copy them as they are.
  bool ascii = true;
  for (char c : value) ascii &= static_cast<unsigned char>(c) < 0x80;
  if (ascii) return std::string(value);
  std::string out;
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

MetricSink::FamilyState* MetricSink::FamilyFor(const MetricDesc& desc) {
  auto it = by_name_.find(desc.name);
  if (it != by_name_.end()) {
    const MetricDesc& known = *it->second.desc;
    if (&known != &desc) {
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
        return nullptr;
      }
    }
    return &it->second;
  }
  if (rejected_descs_.contains(desc.name)) {
    ++error_count_;
    return nullptr;
  }
  if (Status status = ValidateDesc(desc); !status.ok()) {
    rejected_descs_.insert(desc.name);
    RecordError(status);
    return nullptr;
  }
  prometheus::MetricFamily family;
  family.name = std::string(desc.name);
  family.help = std::string(desc.help);
  family.type = desc.kind == MetricKind::kCounter   ? prometheus::MetricType::Counter
                : desc.kind == MetricKind::kUntyped ? prometheus::MetricType::Untyped
                                                    : prometheus::MetricType::Gauge;
  families_.push_back(std::move(family));
  auto [pos, inserted] = by_name_.emplace(desc.name, FamilyState{families_.size() - 1, &desc, {}});
  return &pos->second;
}

void MetricSink::Add(const MetricDesc& desc, std::initializer_list<LabelPair> labels,
                     double value) {
  Add(desc, std::span<const LabelPair>(labels.begin(), labels.size()), value);
}

void MetricSink::Add(const MetricDesc& desc, std::span<const LabelPair> labels, double value) {
  FamilyState* state = FamilyFor(desc);
  if (state == nullptr) return;
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
  prometheus::ClientMetric metric;
  metric.label.reserve(labels.size());
  // FNV-1a over the sanitised values, 0xff between them (a byte UTF-8 never contains).
  uint64_t hash = 14695981039346656037ull;
  for (const LabelPair& label : labels) {
    metric.label.push_back({std::string(label.name), SanitizeUtf8(label.value)});
    for (unsigned char c : metric.label.back().value) hash = (hash ^ c) * 1099511628211ull;
    hash = (hash ^ 0xffu) * 1099511628211ull;
  }
  std::vector<prometheus::ClientMetric>& emitted = families_[state->index].metric;
  auto [first, last] = state->series.equal_range(hash);
  for (auto it = first; it != last; ++it) {
    const auto& other = emitted[it->second].label;
    bool same = true;
    for (size_t i = 0; same && i < other.size(); ++i) same = other[i].value == metric.label[i].value;
    if (same) {
      RecordError(Status(StatusCode::kInvalidArgument,
                         "metric " + std::string(desc.name) + ": duplicate series dropped"));
      return;
    }
  }
  state->series.emplace(hash, emitted.size());
  if (desc.kind == MetricKind::kCounter) {
    metric.counter.value = value;
  } else if (desc.kind == MetricKind::kUntyped) {
    metric.untyped.value = value;
  } else {
    metric.gauge.value = value;
  }
  emitted.push_back(std::move(metric));
  ++sample_count_;
}

void MetricSink::RecordError(const Status& status) {
  ++error_count_;
  if (errors_.size() < kMaxRememberedErrors) errors_.push_back(status);
}

std::vector<prometheus::MetricFamily> MetricSink::TakeFamilies() {
  by_name_.clear();
  rejected_descs_.clear();
  // A family declared but left empty would render as HELP/TYPE with no sample; drop it.
  std::erase_if(families_, [](const prometheus::MetricFamily& f) { return f.metric.empty(); });
  return std::move(families_);
}

}  // namespace fabricwatch
