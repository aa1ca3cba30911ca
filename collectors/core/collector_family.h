#pragma once
// A family bound to the collector that exports it (issue 36).
//
// A collector's contract header (collectors/<name>/<name>_metrics.h) declares its registry name
// once, as `inline constexpr std::string_view kCollector`, and its families with the type
// `FamilyOf<kCollector>` instead of a plain MetricDesc:
//     inline constexpr std::string_view kCollector = "rdma";
//     using Family = FamilyOf<kCollector>;
//     inline constexpr Family kPortInfo{"fabric_rdma_port_info", "...", MetricKind::kInfo, {...}};
// The initialiser is that of a MetricDesc, and a Family is a MetricDesc everywhere one is taken
// by reference or pointer. What the type adds is the collector: a detector's MetricInput
// (detectors/core/inputs.h) reads it from the family, so an input row names the family alone and
// cannot name it with another collector's name.
//
// A template argument that is a reference (Label<rdma::kPortInfo>) must name the Family itself:
// GCC 12 rejects the derived-to-base conversion there, so those templates take `const auto&`
// (collectors/core/family_label.h).

#include <concepts>
#include <string_view>
#include <type_traits>

#include "base/metric_sink.h"

namespace fabricwatch {

template <const std::string_view& Collector>
struct FamilyOf : MetricDesc {
  static constexpr std::string_view collector = Collector;
};

// A family descriptor: a MetricDesc, bound to a collector or not (a test's hand-made family).
template <const auto& Family>
concept FamilyDescriptor = std::derived_from<std::remove_cvref_t<decltype(Family)>, MetricDesc>;

}  // namespace fabricwatch
