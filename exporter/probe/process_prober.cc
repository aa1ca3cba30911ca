#include "exporter/probe/process_prober.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string_view>

#include "collectors/core/duration.h"
#include "exporter/probe/probe_policy.h"

namespace fabricwatch::probe {
namespace {

using exporter::LaunchResult;

constexpr std::string_view kEnvPrefixes[] = {"PATH=", "RDMAV_", "IBV_", "MLX5_", "MLX4_", "RXE_"};

constexpr ProbeOutcome kOutcomes[] = {ProbeOutcome::kOk,          ProbeOutcome::kPortDown,
                                      ProbeOutcome::kError,       ProbeOutcome::kTimeout,
                                      ProbeOutcome::kUnsupported, ProbeOutcome::kSetupError};

std::string Path(const ProbeTarget& target) { return target.partner ? "pair" : "loopback"; }

std::string_view FirstLine(std::string_view text) {
  while (!text.empty() && (text.front() == '\n' || text.front() == '\r')) text.remove_prefix(1);
  return text.substr(0, text.find('\n'));
}

// The last line of `output` that is the probe command's JSON object (it prints one line; a
// library may print warnings before it on the shared pipe).
std::optional<nlohmann::json> ResultLine(std::string_view output) {
  std::optional<nlohmann::json> found;
  size_t pos = 0;
  while (pos < output.size()) {
    size_t end = output.find('\n', pos);
    if (end == std::string_view::npos) end = output.size();
    const std::string_view line = output.substr(pos, end - pos);
    if (line.starts_with('{')) {
      auto json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (json.is_object() && json.contains("outcome") && json["outcome"].is_string()) {
        found = std::move(json);
      }
    }
    pos = end + 1;
  }
  return found;
}

template <typename T>
T Number(const nlohmann::json& json, const char* key) {
  auto it = json.find(key);
  if (it == json.end() || !it->is_number()) return T{};
  return it->get<T>();
}

std::string Text(const nlohmann::json& json, const char* key) {
  auto it = json.find(key);
  return it != json.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string ExitText(const LaunchResult& result) {
  switch (result.outcome) {
    case LaunchResult::Outcome::kExited:
      return fmt::format("exit status {}", result.exit_code);
    case LaunchResult::Outcome::kSignaled:
      return fmt::format("killed by signal {}", result.term_signal);
    default:
      return "ended";
  }
}

}  // namespace

std::vector<std::string> ProbeChildEnvironment(char** environ_entries) {
  std::vector<std::string> env;
  bool path = false;
  for (char** e = environ_entries; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    for (std::string_view prefix : kEnvPrefixes) {
      if (entry.starts_with(prefix)) {
        env.emplace_back(entry);
        path = path || prefix == "PATH=";
        break;
      }
    }
  }
  if (!path) env.emplace_back("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  return env;
}

std::vector<std::string> ProbeCommandLine(const std::string& executable, const ProbeTarget& target,
                                          const ProbeOptions& options) {
  std::vector<std::string> argv = {executable, "probe", PortText(target.port)};
  if (target.partner) {
    argv.push_back("--partner");
    argv.push_back(PortText(*target.partner));
  }
  // In milliseconds, which the command reads exactly (ParseDuration).
  argv.insert(argv.end(),
              {"--duration", fmt::format("{}ms", options.duration.count()), "--timeout",
               fmt::format("{}ms", options.timeout.count()), "--message-size",
               std::to_string(options.message_bytes), "--window", std::to_string(options.window),
               // The runner classifies against the port's expected shape itself.
               "--expected-rate-gbps", "0", "--json"});
  return argv;
}

ProbeMeasurement MeasurementFromLaunch(const LaunchResult& result, const ProbeTarget& target,
                                       const ProbeOptions& options) {
  ProbeMeasurement m;
  m.path = Path(target);
  m.elapsed = result.duration;
  const std::string port = PortText(target.port);
  switch (result.outcome) {
    case LaunchResult::Outcome::kTimedOut:
      m.outcome = ProbeOutcome::kTimeout;
      m.error = fmt::format("{}: the probe process did not end within {}; killed", port,
                            FormatDuration(options.timeout + kProbeProcessMargin));
      return m;
    case LaunchResult::Outcome::kCancelled:
      m.outcome = ProbeOutcome::kUnsupported;
      m.error = fmt::format("{}: the agent stopped; the probe process was killed", port);
      return m;
    case LaunchResult::Outcome::kSpawnError:
      m.outcome = ProbeOutcome::kUnsupported;
      m.error =
          fmt::format("{}: the probe process did not start: {}", port, result.error.ToString());
      return m;
    case LaunchResult::Outcome::kExited:
    case LaunchResult::Outcome::kSignaled:
      break;
  }
  const std::optional<nlohmann::json> json = ResultLine(result.output);
  const ProbeOutcome* outcome = nullptr;
  if (json) {
    const std::string name = Text(*json, "outcome");
    for (const ProbeOutcome& o : kOutcomes) {
      if (ProbeOutcomeName(o) == name) outcome = &o;
    }
  }
  if (outcome == nullptr) {
    // A crash, a usage error, a binary without the probe command: nothing about the port.
    const std::string_view first = FirstLine(result.output);
    m.outcome = ProbeOutcome::kUnsupported;
    m.error = fmt::format("{}: the probe process printed no result ({}){}{}", port,
                          ExitText(result), first.empty() ? "" : ": ", first);
    return m;
  }
  m.outcome = *outcome;
  m.error = Text(*json, "error");
  if (std::string path = Text(*json, "path"); !path.empty()) m.path = std::move(path);
  m.bandwidth_bytes_per_second = Number<double>(*json, "bandwidth_bytes_per_second");
  m.latency_median = std::chrono::nanoseconds(Number<int64_t>(*json, "latency_median_ns"));
  m.latency_max = std::chrono::nanoseconds(Number<int64_t>(*json, "latency_max_ns"));
  m.bytes_written = Number<uint64_t>(*json, "bytes_written");
  m.writes_completed = Number<uint64_t>(*json, "writes_completed");
  if (int64_t elapsed = Number<int64_t>(*json, "elapsed_ns"); elapsed > 0) {
    m.elapsed = std::chrono::nanoseconds(elapsed);
  }
  m.registered_bytes = Number<size_t>(*json, "registered_bytes");
  return m;
}

ProcessPortProber::ProcessPortProber(exporter::ProcessLauncher& launcher,
                                     ProcessProberOptions options)
    : launcher_(launcher), options_(std::move(options)) {}

ProbeMeasurement ProcessPortProber::Measure(const ProbeTarget& target, const ProbeOptions& options,
                                            std::stop_token stop) {
  exporter::LaunchSpec spec;
  spec.argv = ProbeCommandLine(options_.executable, target, options);
  spec.env = options_.env;
  spec.timeout = options.timeout + kProbeProcessMargin;
  // No grace: the child is past its own bound already, and SIGTERM would only run the same
  // clean-up that is stuck. SIGKILL at once; the kernel frees its verbs objects.
  spec.kill_grace = std::chrono::milliseconds(0);
  spec.max_output_bytes = kProbeProcessMaxOutput;
  return MeasurementFromLaunch(launcher_.Run(spec, std::move(stop)), target, options);
}

}  // namespace fabricwatch::probe
