#include "exporter/config/probe_options.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdlib>

#include "collectors/core/duration.h"
#include "collectors/core/yaml_checks.h"
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

// "65536", "64KiB", "4MiB": bytes.
std::optional<uint64_t> ParseBytes(std::string_view text) {
  uint64_t scale = 1;
  if (text.ends_with("KiB")) {
    scale = 1024, text.remove_suffix(3);
  } else if (text.ends_with("MiB")) {
    scale = 1024 * 1024, text.remove_suffix(3);
  }
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
      value > kMaxMessageBytes) {
    return std::nullopt;
  }
  return value * scale;
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

Status ApplyPartners(const YAML::Node& node, const std::string& source,
                     probe::ProbeConfig& config) {
  const std::string where = YamlWhere(node, source) + ": probe.partners";
  if (node.IsNull()) return Status::Ok();
  if (!node.IsMap()) return Invalid(where, "must be a map such as {\"mlx5_0/1\": \"mlx5_1/1\"}");
  for (const auto& entry : node) {
    const std::string at = YamlWhere(entry.first, source) + ": probe.partners";
    if (!entry.second.IsScalar()) return Invalid(at, "the partner must be a \"device/port\"");
    const std::string key = entry.first.Scalar();
    const std::string value = entry.second.Scalar();
    auto port = probe::ParsePortText(key);
    auto partner = probe::ParsePortText(value);
    if (!port || !partner) {
      return Invalid(at, "\"" + (port ? value : key) +
                             "\": expected device/port such as mlx5_0/1 (port 1..255)");
    }
    config.partners[*port] = *partner;
  }
  return Status::Ok();
}

}  // namespace

Status ApplyProbeYaml(const YAML::Node& node, const std::string& source,
                      probe::ProbeConfig& config) {
  if (node.IsNull()) return Status::Ok();
  if (!node.IsMap()) return Invalid(YamlWhere(node, source) + ": probe", "must be a map");
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    const YAML::Node& value = entry.second;
    const std::string path = "probe." + key;
    const std::string where = YamlWhere(value, source) + ": " + path;
    if (key == "partners") {
      if (Status s = ApplyPartners(value, source, config); !s.ok()) return s;
      continue;
    }
    if (!value.IsScalar()) return Invalid(where, "must be a scalar");
    const std::string text = value.Scalar();
    Status s = Status::Ok();
    if (key == "enabled" || key == "allow-with-jobs") {
      auto v = StrictBool(value, source, path);
      if (!v) return v.error();
      (key == "enabled" ? config.enabled : config.allow_with_jobs) = *v;
    } else if (key == "duration") {
      s = SetDuration(text, where, config.options.duration);
    } else if (key == "timeout") {
      s = SetDuration(text, where, config.options.timeout);
    } else if (key == "min-interval") {
      s = SetMinInterval(text, where, config);
    } else if (key == "degraded-fraction") {
      s = SetFraction(text, where, config);
    } else if (key == "message-size") {
      auto bytes = ParseBytes(text);
      if (!bytes || *bytes < kMinMessageBytes || *bytes > kMaxMessageBytes) {
        return Invalid(where, "\"" + text + "\": expected 64 to 4194304 bytes (or 64KiB, 4MiB)");
      }
      config.options.message_bytes = static_cast<uint32_t>(*bytes);
    } else if (key == "window") {
      uint64_t window = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), window);
      if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || window < 1 ||
          window > kMaxWindow) {
        return Invalid(where, "\"" + text + "\": expected an integer between 1 and 128");
      }
      config.options.window = static_cast<uint32_t>(window);
    } else {
      return Invalid(YamlWhere(entry.first, source) + ": " + path,
                     "unknown key (known: enabled, duration, timeout, message-size, window, "
                     "degraded-fraction, min-interval, allow-with-jobs, partners)");
    }
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
