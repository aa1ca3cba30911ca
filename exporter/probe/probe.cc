// The probe's names and its verdict (probe.h); the measurement is in verbs_probe.cc.

#include "exporter/probe/probe.h"

#include <algorithm>
#include <cstdio>

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

namespace {
std::string Secs(std::chrono::nanoseconds d) {
  char text[32];
  snprintf(text, sizeof text, "%.3g s", static_cast<double>(d.count()) / 1e9);
  return text;
}
}  // namespace

std::chrono::nanoseconds DataPhaseTime(std::chrono::milliseconds duration) {
  return duration + duration / 10 + kDataPhaseSlack;
}

std::string DataPhaseShortfall(std::chrono::nanoseconds left, const ProbeOptions& options) {
  const std::chrono::nanoseconds need = DataPhaseTime(options.duration);
  if (left >= need) return "";
  return "not enough time left after the lock wait and set-up (" +
         Secs(std::max(left, std::chrono::nanoseconds(0))) + " of the " + Secs(options.timeout) +
         " timeout; the data phases need " + Secs(need) + ")";
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
