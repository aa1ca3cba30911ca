#pragma once
// The curated RDMA counter tables: which counter file becomes which metric, with its unit
// scale and, for IBA PortCounters, the width at which it saturates.

#include <span>
#include <string_view>

#include "collectors/core/metric_sink.h"

namespace fabricwatch::rdma {

struct CounterSpec {
  std::string_view file;   // the file name in counters/, counters_ext/ or hw_counters/
  const MetricDesc* desc;  // the curated metric
  double scale;            // multiplier to base units (4 for IBA 4-octet data words)
  int saturating_bits;     // width of an IBA counter that stops at all-ones; 0 if it does not
  // True for the data/packet counters that the kernel serves from PortCountersExtended (64-bit)
  // when the PMA supports it; port_xmit_wait and the error counters stay narrow regardless.
  bool widened_by_extended_table = false;
};

// counters/ and counters_ext/ files (IBA PMA), or nullptr for an unknown file.
const CounterSpec* FindPmaCounter(std::string_view file);
// hw_counters/ files of known drivers (mlx5, irdma), or nullptr.
const CounterSpec* FindHwCounter(std::string_view file);
// Every curated metric, for the metric reference.
std::span<const MetricDesc* const> CuratedCounterMetrics();

}  // namespace fabricwatch::rdma
