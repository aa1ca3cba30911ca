#include "exporter/probe/process_prober.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string_view>

#include "base/duration.h"
#include "exporter/probe/probe_policy.h"

namespace fabricwatch::probe {
namespace {

using exporter::LaunchResult;

// LD_LIBRARY_PATH: an agent started with rdma-core (libibverbs and its providers) outside the
// system's library path needs it in the child too.
constexpr std::string_view kEnvPrefixes[] = {
    "PATH=", "LD_LIBRARY_PATH=", "RDMAV_", "IBV_", "MLX5_", "MLX4_", "RXE_"};

constexpr ProbeOutcome kOutcomes[] = {ProbeOutcome::kOk,          ProbeOutcome::kPortDown,
                                      ProbeOutcome::kError,       ProbeOutcome::kTimeout,
                                      ProbeOutcome::kUnsupported, ProbeOutcome::kSetupError};

std::string Path(const ProbeTarget& target) { return target.partner ? "pair" : "loopback"; }

// The first line that is neither empty nor a --progress phase line.
std::string_view FirstLine(std::string_view text) {
  for (;;) {
    while (!text.empty() && (text.front() == '\n' || text.front() == '\r')) text.remove_prefix(1);
    const std::string_view line = text.substr(0, text.find('\n'));
    if (!line.starts_with("{\"phase\"") || line.size() == text.size()) return line;
    text.remove_prefix(line.size());
  }
}

// Calls `each` with every line of `output` that is a JSON object.
template <typename F>
void ForEachJsonLine(std::string_view output, F each) {
  size_t pos = 0;
  while (pos < output.size()) {
    size_t end = output.find('\n', pos);
    if (end == std::string_view::npos) end = output.size();
    const std::string_view line = output.substr(pos, end - pos);
    if (line.starts_with('{')) {
      auto json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (json.is_object()) each(std::move(json));
    }
    pos = end + 1;
  }
}

bool IsResult(const nlohmann::json& json) {
  return json.is_object() && json.contains("outcome") && json["outcome"].is_string();
}

// The last line of `output` that is the probe command's JSON result (a library may print
// warnings before it on the shared pipe; --progress phase lines are not results).
std::optional<nlohmann::json> ResultLine(std::string_view output) {
  std::optional<nlohmann::json> found;
  ForEachJsonLine(output, [&](nlohmann::json json) {
    if (IsResult(json)) found = std::move(json);
  });
  return found;
}

// What the --progress lines say of a child killed at its deadline: the last phase it began
// ("" when none) and the result it printed before its clean-up, if it got that far.
struct Progress {
  std::string phase;
  std::optional<nlohmann::json> result;
};
Progress ProgressLines(std::string_view output) {
  Progress progress;
  ForEachJsonLine(output, [&](nlohmann::json json) {
    auto phase = json.find("phase");
    if (phase == json.end() || !phase->is_string()) return;
    progress.phase = phase->get<std::string>();
    if (auto result = json.find("result"); result != json.end() && IsResult(*result)) {
      progress.result = std::move(*result);
    }
  });
  return progress;
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
               "--expected-rate-gbps", "0", "--json",
               // Phase lines before the result: a child killed at its deadline is judged by
               // where it was (MeasurementFromLaunch).
               "--progress"});
  return argv;
}

namespace {

// The measurement of the command's result object `json`, whose outcome is known.
void FillFromJson(const nlohmann::json& json, ProbeOutcome outcome, ProbeMeasurement& m) {
  m.outcome = outcome;
  m.error = Text(json, "error");
  if (std::string path = Text(json, "path"); !path.empty()) m.path = std::move(path);
  m.bandwidth_bytes_per_second = Number<double>(json, "bandwidth_bytes_per_second");
  m.latency_median = std::chrono::nanoseconds(Number<int64_t>(json, "latency_median_ns"));
  m.latency_max = std::chrono::nanoseconds(Number<int64_t>(json, "latency_max_ns"));
  m.bytes_written = Number<uint64_t>(json, "bytes_written");
  m.writes_completed = Number<uint64_t>(json, "writes_completed");
  if (int64_t elapsed = Number<int64_t>(json, "elapsed_ns"); elapsed > 0) {
    m.elapsed = std::chrono::nanoseconds(elapsed);
  }
  m.registered_bytes = Number<size_t>(json, "registered_bytes");
  m.lock = Text(json, "lock");
}

const ProbeOutcome* OutcomeOf(const nlohmann::json& json) {
  const std::string name = Text(json, "outcome");
  for (const ProbeOutcome& o : kOutcomes) {
    if (ProbeOutcomeName(o) == name) return &o;
  }
  return nullptr;
}

// The agent's log line of a probe is its error: a probe that ran without the node lock says so.
void NoteUnlocked(ProbeMeasurement& m) {
  if (!m.lock.starts_with("unlocked")) return;
  m.error += (m.error.empty() ? "" : "; ") + std::string("the probe ran without the node lock (") +
             m.lock + ")";
}

// A child killed at its deadline (options.timeout + kProbeProcessMargin): where it was decides
// what the kill means (process_prober.h).
ProbeMeasurement KilledChild(const LaunchResult& result, const std::string& port,
                             const ProbeOptions& options, ProbeMeasurement m) {
  const std::string killed = fmt::format("the probe process did not end within {}; killed",
                                         FormatDuration(options.timeout + kProbeProcessMargin));
  const Progress progress = ProgressLines(result.output);
  if (progress.result) {
    if (const ProbeOutcome* outcome = OutcomeOf(*progress.result)) {
      // The measurement happened; only its clean-up (destroying the verbs objects) hung.
      FillFromJson(*progress.result, *outcome, m);
      m.elapsed = result.duration;
      m.error += fmt::format("{}{}: {}, in its clean-up after the measurement",
                             m.error.empty() ? "" : "; ", port, killed);
      return m;
    }
  }
  if (progress.phase == "data" || progress.phase == "cleanup") {
    // The data path hung: the port's evidence.
    m.outcome = ProbeOutcome::kTimeout;
    m.error = fmt::format("{}: {}, in the bandwidth or latency phase", port, killed);
    return m;
  }
  // Stuck in set-up (ibv_open_device, a QP transition: firmware commands), or it printed
  // nothing: the host's trouble, not the port's.
  m.outcome = ProbeOutcome::kSetupError;
  m.error = fmt::format("{}: {}, {}", port, killed,
                        progress.phase.empty() ? "before it reported a phase" : "in set-up");
  return m;
}

}  // namespace

ProbeMeasurement MeasurementFromLaunch(const LaunchResult& result, const ProbeTarget& target,
                                       const ProbeOptions& options) {
  ProbeMeasurement m;
  m.path = Path(target);
  m.elapsed = result.duration;
  const std::string port = PortText(target.port);
  switch (result.outcome) {
    case LaunchResult::Outcome::kTimedOut:
      m = KilledChild(result, port, options, std::move(m));
      NoteUnlocked(m);
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
  const ProbeOutcome* outcome = json ? OutcomeOf(*json) : nullptr;
  if (outcome == nullptr) {
    // A crash, a usage error, a binary without the probe command: nothing about the port.
    const std::string_view first = FirstLine(result.output);
    m.outcome = ProbeOutcome::kUnsupported;
    m.error = fmt::format("{}: the probe process printed no result ({}){}{}", port,
                          ExitText(result), first.empty() ? "" : ": ", first);
    return m;
  }
  FillFromJson(*json, *outcome, m);
  NoteUnlocked(m);
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
  // The result is the last line: a chatty library's warnings must not push it out.
  spec.keep_output_tail = true;
  return MeasurementFromLaunch(launcher_.Run(spec, std::move(stop)), target, options);
}

}  // namespace fabricwatch::probe
