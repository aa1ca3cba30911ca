#pragma once
// Reading a sample's labels by names the compiler checks (issue 36).
//
// A family is declared once, as a constexpr MetricDesc in its collector's contract header
// (collectors/<name>/<name>_metrics.h). A label read names the family as a template argument and
// the label as a string literal:
//     Label<rdma::kPortInfo>(sample, "netdev")
//     FindValue<rdma::kPortState>(families, {{"device", device}, {"port", port}})
// The literal converts to LabelOf<Family> in a consteval constructor that looks it up in the
// descriptor's labels, so a typo or a label the family does not have is a compile error
// ("label not declared by the family"), never a silent "" at run time.
//
// MetricSink writes every sample's labels in the descriptor's order (collectors/core/
// metric_sink.h), so a read is one index and one comparison; a sample built another way (a test's
// hand-made family) falls back to a scan by name.

#include <prometheus/client_metric.h>

#include <cstddef>
#include <string_view>

#include "collectors/core/collector_family.h"
#include "base/metric_sink.h"

namespace fabricwatch {

// Family is a MetricDesc or a FamilyOf<collector> (collectors/core/collector_family.h); `auto`
// because GCC 12 rejects the derived-to-base conversion in a reference template argument.
template <const auto& Family>
class LabelOf {
  static_assert(FamilyDescriptor<Family>, "a label is read from a MetricDesc family");

 public:
  // NOLINTNEXTLINE(google-explicit-constructor): the implicit conversion from a literal is the API.
  consteval LabelOf(const char* name) : name_(name) {
    for (size_t i = 0; i < Family.labels.size(); ++i) {
      if (Family.labels[i] == name_) {
        index_ = i;
        return;
      }
    }
    throw "label not declared by the family";  // a compile error in constant evaluation
  }
  constexpr std::string_view name() const { return name_; }
  constexpr size_t index() const { return index_; }

 private:
  std::string_view name_;
  size_t index_ = 0;
};

// The value of `label` in `sample` (a sample of Family), or "" when it has none: collectors emit
// "" for a label that does not apply, so the two read the same.
template <const auto& Family>
std::string_view Label(const prometheus::ClientMetric& sample, LabelOf<Family> label) {
  const auto& labels = sample.label;
  if (label.index() < labels.size() && labels[label.index()].name == label.name()) {
    return labels[label.index()].value;
  }
  for (const prometheus::ClientMetric::Label& pair : labels) {
    if (pair.name == label.name()) return pair.value;
  }
  return {};
}

// One (label, value) condition of a match against a sample of Family.
template <const auto& Family>
struct LabelIs {
  LabelOf<Family> label;
  std::string_view value;
};

}  // namespace fabricwatch
