#include "exporter/probe/probe_policy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <charconv>

namespace fabricwatch::probe {

ProbeDecision DecideProbe(const ProbeConfig& config, const PortRef& port, ProbeTime now,
                          const ProbeReport* last,
                          const std::optional<std::vector<std::string>>& jobs,
                          const std::optional<PortRef>& partner) {
  if (!config.enabled) {
    return {ProbeAction::kRefuse, "disabled",
            fmt::format("{}: the probe is disabled (probe.enabled: false)", PortText(port))};
  }
  // The cache comes before the jobs check: answering from a result already taken moves no
  // traffic, whatever runs on the device now.
  // Only a verdict a drain acts on is reused: an unavailable result (the probe could not run)
  // is asked again, or a drain would be suppressed for the whole interval on no evidence.
  if (last != nullptr && last->measured() && last->verdict != ProbeVerdict::kUnavailable &&
      now >= last->time && now - last->time < config.min_interval) {
    return {ProbeAction::kCached, {}, {}};
  }
  if (!config.allow_with_jobs && jobs && !jobs->empty()) {
    return {ProbeAction::kRefuse, "jobs_running",
            fmt::format("{}: jobs {} hold {} open (probe.allow_with_jobs: false)", PortText(port),
                        fmt::join(*jobs, ","),
                        partner && partner->device != port.device
                            ? fmt::format("{} or {}, the pair path's devices,", port.device,
                                          partner->device)
                            : std::string("the device"))};
  }
  return {ProbeAction::kMeasure, {}, {}};
}

std::chrono::milliseconds ProbeAnswerWait(const ProbeOptions& options) {
  return 2 * (options.timeout + kProbeProcessMargin) + std::chrono::seconds(5);
}

double ExpectedProbeRate(std::optional<double> shape_rate_gbps,
                         std::optional<double> reported_bytes_per_second) {
  if (shape_rate_gbps && *shape_rate_gbps > 0) return *shape_rate_gbps * 1e9;
  if (reported_bytes_per_second && *reported_bytes_per_second > 0) {
    return *reported_bytes_per_second * 8;
  }
  return 0;
}

std::string PortText(const PortRef& port) { return fmt::format("{}/{}", port.device, port.port); }

std::optional<PortRef> ParsePortText(std::string_view text) {
  const size_t slash = text.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  const std::string_view device = text.substr(0, slash);
  const std::string_view number = text.substr(slash + 1);
  for (char c : device) {
    if (c == '/' || std::isspace(static_cast<unsigned char>(c)) || !std::isprint(c)) {
      return std::nullopt;
    }
  }
  uint32_t port = 0;
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), port);
  // Port numbers of an HCA are 1-based and 8-bit (ibv_query_port's port_num).
  if (number.empty() || ec != std::errc() || ptr != number.data() + number.size() || port < 1 ||
      port > 255) {
    return std::nullopt;
  }
  return PortRef{std::string(device), port};
}

int ProbeVerdictCode(ProbeVerdict verdict) {
  switch (verdict) {
    case ProbeVerdict::kHealthy:
      return 0;
    case ProbeVerdict::kDegraded:
      return 1;
    case ProbeVerdict::kFailed:
      return 2;
    case ProbeVerdict::kUnavailable:
      return 3;
  }
  return 3;
}

std::vector<ProbeEvidenceValue> ProbeEvidence(const ProbeReport& report) {
  std::vector<ProbeEvidenceValue> out;
  if (report.measured() && report.measurement.outcome == ProbeOutcome::kOk) {
    out.push_back(
        {"probe_bandwidth_bytes_per_second", report.measurement.bandwidth_bytes_per_second});
    out.push_back({"probe_latency_seconds",
                   std::chrono::duration<double>(report.measurement.latency_median).count()});
  }
  out.push_back({"probe_verdict", static_cast<double>(ProbeVerdictCode(report.verdict))});
  return out;
}

}  // namespace fabricwatch::probe
