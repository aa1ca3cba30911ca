#include "exporter/config/probe_options.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "base/duration.h"
#include "base/yaml_reader.h"
#include "exporter/probe/probe_policy.h"

namespace fabricwatch::exporter {
namespace {

using std::chrono::milliseconds;

constexpr uint64_t kMinMessageBytes = 64;
constexpr uint64_t kMaxMessageBytes = 4 << 20;
constexpr uint64_t kMaxWindow = 128;

Status Invalid(const std::string& where, const std::string& what) {
  return Status(StatusCode::kInvalidArgument, where + ": " + what);
}

std::optional<double> ParseFraction(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

Status SetDuration(const std::string& text, const std::string& where, milliseconds& out) {
  auto value = ParseDuration(text);
  if (!value) return value.error().WithContext(where);
  out = *value;
  return Status::Ok();
}

Status SetMinInterval(const std::string& text, const std::string& where,
                      probe::ProbeConfig& config) {
  milliseconds value{0};
  if (Status s = SetDuration(text, where, value); !s.ok()) return s;
  if (value < std::chrono::seconds(1)) {
    return Invalid(where, "\"" + text + "\": expected a duration of at least 1s such as 10m");
  }
  config.min_interval = std::chrono::duration_cast<std::chrono::seconds>(value);
  return Status::Ok();
}

Status SetFraction(const std::string& text, const std::string& where, probe::ProbeConfig& config) {
  auto value = ParseFraction(text);
  if (!value) return Invalid(where, "\"" + text + "\": expected a number in (0, 1] such as 0.5");
  config.degraded_fraction = *value;
  return Status::Ok();
}

Status ApplyPartners(const YamlValue& node, probe::ProbeConfig& config) {
  auto entries = node.Entries();
  if (!entries) return entries.error();
  for (const YamlEntry& entry : *entries) {
    auto value = entry.value.Scalar();
    if (!value) return entry.value.Fail("the partner must be a \"device/port\"");
    auto port = probe::ParsePortText(entry.key);
    auto partner = probe::ParsePortText(*value);
    if (!port || !partner) {
      return entry.key_node.Fail("\"" + (port ? *value : entry.key) +
                                 "\": expected device/port such as mlx5_0/1 (port 1..255)");
    }
    config.partners[*port] = *partner;
  }
  return Status::Ok();
}

// The scalar keys; their text goes through the parsers the --probe.* flags share.
Status ApplyProbeScalar(const YamlEntry& entry, probe::ProbeConfig& config) {
  const YamlValue& value = entry.value;
  const std::string& key = entry.key;
  if (key == "enabled" || key == "allow-with-jobs") {
    auto v = value.Bool();
    if (!v) return v.error();
    (key == "enabled" ? config.enabled : config.allow_with_jobs) = *v;
    return Status::Ok();
  }
  if (key == "message-size") {
    auto bytes = value.Size(kMinMessageBytes, kMaxMessageBytes);
    if (!bytes) return bytes.error();
    config.options.message_bytes = static_cast<uint32_t>(*bytes);
    return Status::Ok();
  }
  if (key == "window") {
    auto window = value.Integer(1, kMaxWindow);
    if (!window) return window.error();
    config.options.window = static_cast<uint32_t>(*window);
    return Status::Ok();
  }
  auto text = value.Scalar();
  if (!text) return text.error();
  const std::string where = value.Where() + ": " + value.path();
  if (key == "duration") return SetDuration(*text, where, config.options.duration);
  if (key == "timeout") return SetDuration(*text, where, config.options.timeout);
  if (key == "min-interval") return SetMinInterval(*text, where, config);
  return SetFraction(*text, where, config);  // degraded-fraction: CheckKeys admits no other
}

}  // namespace

Status ApplyProbeYaml(const YamlValue& node, probe::ProbeConfig& config) {
  static constexpr std::string_view kKeys[] = {
      "enabled",           "duration",     "timeout",         "message-size", "window",
      "degraded-fraction", "min-interval", "allow-with-jobs", "partners"};
  auto entries = node.Entries();
  if (!entries) return entries.error();
  if (Status s = node.CheckKeys(kKeys); !s.ok()) return s;
  for (const YamlEntry& entry : *entries) {
    Status s = entry.key == "partners" ? ApplyPartners(entry.value, config)
                                       : ApplyProbeScalar(entry, config);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

milliseconds MinProbeTimeout(milliseconds duration) {
  return duration + (duration + milliseconds(9)) / 10 + std::chrono::seconds(1);
}

Status ValidateProbeConfig(const probe::ProbeConfig& config) {
  const probe::ProbeOptions& o = config.options;
  if (!(config.degraded_fraction > 0 && config.degraded_fraction <= 1)) {
    return Invalid("probe.degraded-fraction",
                   fmt::format("{} is outside (0, 1]", config.degraded_fraction));
  }
  if (o.duration.count() <= 0) return Invalid("probe.duration", "must be greater than 0");
  if (config.min_interval.count() <= 0) {
    return Invalid("probe.min-interval", "must be greater than 0");
  }
  // The timeout bounds set-up, the bandwidth phase and the latency phase together: the latency
  // phase adds a tenth of the duration, set-up (opening the device, registering memory,
  // connecting the QPs) up to about a second on a busy host. A shorter timeout times every
  // probe out, and a timeout is a failed probe: it would confirm every drain.
  if (o.timeout < MinProbeTimeout(o.duration)) {
    return Invalid("probe.timeout",
                   fmt::format("{} is too short for probe.duration {}: at least {} (duration × "
                               "1.1 + 1s: the latency phase adds a tenth of the duration and "
                               "set-up up to a second; a probe that times out counts as failed)",
                               FormatDuration(o.timeout), FormatDuration(o.duration),
                               FormatDuration(MinProbeTimeout(o.duration))));
  }
  if (o.window < 1 || o.window > kMaxWindow) {
    return Invalid("probe.window", fmt::format("{} is outside 1..128", o.window));
  }
  if (o.message_bytes < kMinMessageBytes || o.message_bytes > kMaxMessageBytes) {
    return Invalid("probe.message-size",
                   fmt::format("{} bytes is outside 64..4194304", o.message_bytes));
  }
  for (const auto& [port, partner] : config.partners) {
    if (port == partner) {
      return Invalid("probe.partners",
                     probe::PortText(port) + " is its own partner (leave it out for loopback)");
    }
  }
  return Status::Ok();
}

void AddProbeFlags(CLI::App& app, ProbeFlags& flags) {
  flags.enabled_flag = app.add_flag(
      "--probe.enabled,!--no-probe.enabled", flags.enabled,
      "Let the agent probe an RDMA port itself (a short RDMA WRITE bandwidth and latency test, "
      "hooks.confirm_with_probe). Moves real traffic through the port. Default false");
  flags.duration_flag = app.add_option("--probe.duration", flags.duration,
                                       "Bandwidth phase of one probe. Default 1s");
  flags.timeout_flag = app.add_option(
      "--probe.timeout", flags.timeout,
      "Bound on one probe, set-up included; at least --probe.duration × 1.1 + 1s. The agent "
      "kills a probe process 3s past it. Default 5s");
  flags.degraded_fraction_flag = app.add_option(
      "--probe.degraded-fraction", flags.degraded_fraction,
      "A probe below this fraction of the port's expected rate is degraded, in (0, 1]. "
      "Default 0.5");
  flags.min_interval_flag = app.add_option(
      "--probe.min-interval", flags.min_interval,
      "At most one probe of a port per interval; a request inside it gets the last result. "
      "Default 10m");
  flags.allow_with_jobs_flag = app.add_flag(
      "--probe.allow-with-jobs,!--no-probe.allow-with-jobs", flags.allow_with_jobs,
      "Probe a port even while a running job holds its RDMA device open. Default false");
}

Status ApplyProbeFlags(const ProbeFlags& flags, probe::ProbeConfig& config) {
  if (flags.enabled_flag->count() > 0) config.enabled = flags.enabled;
  if (flags.allow_with_jobs_flag->count() > 0) config.allow_with_jobs = flags.allow_with_jobs;
  if (flags.duration_flag->count() > 0) {
    Status s = SetDuration(flags.duration, "--probe.duration", config.options.duration);
    if (!s.ok()) return s;
  }
  if (flags.timeout_flag->count() > 0) {
    Status s = SetDuration(flags.timeout, "--probe.timeout", config.options.timeout);
    if (!s.ok()) return s;
  }
  if (flags.degraded_fraction_flag->count() > 0) {
    Status s = SetFraction(flags.degraded_fraction, "--probe.degraded-fraction", config);
    if (!s.ok()) return s;
  }
  if (flags.min_interval_flag->count() > 0) {
    Status s = SetMinInterval(flags.min_interval, "--probe.min-interval", config);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace fabricwatch::exporter
