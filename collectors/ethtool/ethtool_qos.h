#pragma once
// The ethtool collector's PFC and QoS configuration (EthtoolSource::Pfc(): DCB RTM_GETDCB from the
// kernel, or DIR/<netdev>/qos from a replay directory): PFC enabled priorities and capability, the
// DCB PFC frame counters, the trust state, the DSCP → priority map and the default priority.
//
// Thread-safety: none; used by the collector's thread.

#include <span>
#include <string>

#include "base/metric_sink.h"
#include "collectors/ethtool_source/ethtool.h"

namespace fabricwatch::ethtool {

// The families EmitPfcConfig adds (the PFC ones are listed with the collector's own, kOwnMetrics).
std::span<const MetricDesc> QosMetrics();

// Adds what `config` holds for `netdev`; each value it does not hold is omitted. `map_buffer` is
// the caller's, reused for the DSCP map label so that a steady state allocates nothing.
void EmitPfcConfig(const std::string& netdev, const sys::PfcConfig& config, MetricSink& sink,
                   std::string& map_buffer);

}  // namespace fabricwatch::ethtool
