// The probe's names and its verdict (probe.h); the measurement is in verbs_probe.cc.

#include "exporter/probe/probe.h"

namespace fabricwatch::probe {

std::string_view ProbeOutcomeName(ProbeOutcome outcome) {
  switch (outcome) {
    case ProbeOutcome::kOk:
      return "ok";
    case ProbeOutcome::kPortDown:
      return "port_down";
    case ProbeOutcome::kError:
      return "error";
    case ProbeOutcome::kTimeout:
      return "timeout";
    case ProbeOutcome::kUnsupported:
      return "unsupported";
    case ProbeOutcome::kSetupError:
      return "setup_error";
  }
  return "unknown";
}

std::string_view ProbeVerdictName(ProbeVerdict verdict) {
  switch (verdict) {
    case ProbeVerdict::kHealthy:
      return "healthy";
    case ProbeVerdict::kDegraded:
      return "degraded";
    case ProbeVerdict::kFailed:
      return "failed";
    case ProbeVerdict::kUnavailable:
      return "unavailable";
  }
  return "unknown";
}

ProbeVerdict ClassifyProbe(const ProbeMeasurement& measurement, double expected_bits_per_second,
                           double degraded_fraction) {
  switch (measurement.outcome) {
    case ProbeOutcome::kOk:
      break;
    case ProbeOutcome::kPortDown:
    case ProbeOutcome::kError:
    case ProbeOutcome::kTimeout:
      return ProbeVerdict::kFailed;
    case ProbeOutcome::kUnsupported:
    case ProbeOutcome::kSetupError:
      return ProbeVerdict::kUnavailable;
  }
  // An unknown rate (or no bar) cannot call a probe that moved data slow (probe.h).
  if (expected_bits_per_second <= 0 || degraded_fraction <= 0) return ProbeVerdict::kHealthy;
  // At the bar is healthy: the bar is the least a healthy port does (docs/probe.md §5).
  const double measured_bits = measurement.bandwidth_bytes_per_second * 8;
  return measured_bits >= degraded_fraction * expected_bits_per_second ? ProbeVerdict::kHealthy
                                                                       : ProbeVerdict::kDegraded;
}

}  // namespace fabricwatch::probe
