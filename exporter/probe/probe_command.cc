// `fabricwatch probe` (probe_command.h).

#include "exporter/probe/probe_command.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/duration.h"
#include "exporter/config/probe_options.h"

namespace fabricwatch::probe {
namespace {

constexpr std::string_view kName = "fabricwatch probe";

std::string Label(const PortRef& ref) { return ref.device + "/" + std::to_string(ref.port); }

std::string Format(const char* format, double value) {
  char text[64];
  snprintf(text, sizeof text, format, value);
  return text;
}

double Micros(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1000; }

struct CommandLine {
  ProbeTarget target;
  ProbeOptions options;
  double expected_gbps = -1;  // < 0: the port's own rate
  double degraded_fraction = 0.5;
  bool json = false;
  // --progress (with --json): a line {"phase":"setup"|"data"} as each phase starts and
  // {"phase":"cleanup","result":{...}} before the clean-up, each flushed at once, so that the
  // agent (process_prober.h) can tell where a child it had to kill was stuck.
  bool progress = false;
  // --hold: stay alive this long after printing. The kernel frees a process's
  // verbs objects when it exits anyway; while it holds on, `rdma resource show` shows only what
  // Measure() itself left (tests/kernel/rdma_probe_test.sh checks it is nothing).
  std::chrono::milliseconds hold{0};
};

// The parsed command line, or the usage error (already printed to err) as an exit code.
std::optional<int> Parse(int argc, char** argv, const ProbeCommandEnv& env, CommandLine& cl) {
  CLI::App app{
      "Probe one RDMA port with RDMA WRITEs over an RC queue pair: loopback through "
      "the port itself, or a pair with another port of this node (docs/probe.md). "
      "Exit 0 healthy, 1 degraded, 2 failed, 3 unavailable.",
      std::string(kName)};
  std::string target, partner, duration = "1s", timeout = "5s";
  app.add_option("port", target, "The port to probe, <device>/<port> (mlx5_0/1)")->required();
  app.add_option("--partner", partner,
                 "A second port of this node, <device>/<port>: probe the link between the two "
                 "(pair) instead of the port alone (loopback)");
  app.add_option("--duration", duration, "How long the bandwidth phase writes (default 1s)");
  app.add_option("--timeout", timeout,
                 "Bound on the measurement, set-up included; the clean-up after it can add "
                 "about 200 ms and the driver's destroy time (default 5s)");
  app.add_option("--message-size", cl.options.message_bytes,
                 "Bytes per RDMA WRITE of the bandwidth phase, 64 to 4194304 (default 65536)");
  app.add_option("--window", cl.options.window, "Writes kept in flight, 1 to 128 (default 16)");
  app.add_option("--expected-rate-gbps", cl.expected_gbps,
                 "The port's expected rate in Gb/s; default: the rate the port reports in sysfs "
                 "(not the shape's); 0: no bar (any probe that moves data is healthy)");
  app.add_option("--degraded-fraction", cl.degraded_fraction,
                 "Below this fraction of the expected rate the port is degraded (default 0.5, "
                 "docs/probe.md §5)");
  app.add_flag("--json", cl.json, "Print one JSON object instead of the line");
  app.add_flag("--progress", cl.progress,
               "With --json: before the result, print a line {\"phase\": ...} as each phase "
               "begins (setup, data, cleanup; cleanup carries the result as \"result\"); the "
               "last line is still the result object. The agent passes it to its probe process");
  std::string hold;
  app.add_option("--hold", hold,
                 "Stay running this long after the result is printed, holding nothing, so "
                 "`rdma resource show` can show that every verbs object of the probe is gone "
                 "while its process still lives (exit frees them anyway)");
  auto usage = [&](const std::string& what) {
    *env.err << kName << ": " << what << " (see fabricwatch probe --help)\n";
    return kExitUnavailable;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    *env.out << app.help();
    return kExitHealthy;
  } catch (const CLI::ParseError& e) {
    return usage(e.what());
  }
  auto port = ParsePortRef(target);
  if (!port) return usage(port.error().message());
  cl.target.port = *port;
  if (!partner.empty()) {
    auto far = ParsePortRef(partner);
    if (!far) return usage("--partner: " + far.error().message());
    cl.target.partner = *far;
  }
  auto d = ParseDuration(duration);
  if (!d || d->count() <= 0) return usage("--duration: not a positive duration: " + duration);
  auto t = ParseDuration(timeout);
  if (!t || t->count() <= 0) return usage("--timeout: not a positive duration: " + timeout);
  if (!hold.empty()) {
    auto h = ParseDuration(hold);
    if (!h) return usage("--hold: not a duration: " + hold);
    cl.hold = *h;
  }
  cl.options.duration = *d;
  cl.options.timeout = *t;
  // The config's rule (exporter/config/probe_options.h): the latency phase adds a tenth of the
  // duration, and the lock wait and set-up take up to a second.
  if (*t < exporter::MinProbeTimeout(*d)) {
    return usage("--timeout " + timeout + " is shorter than --duration " + duration +
                 " × 1.1 + 1s (" + FormatDuration(exporter::MinProbeTimeout(*d)) +
                 "): the latency phase, the lock wait and the set-up need that time");
  }
  if (cl.progress && !cl.json) return usage("--progress needs --json");
  // The config's ranges (probe.h): they bound what the probe pins to 1 GiB.
  if (cl.options.message_bytes < ProbeOptions::kMinMessageBytes ||
      cl.options.message_bytes > ProbeOptions::kMaxMessageBytes) {
    return usage("--message-size " + std::to_string(cl.options.message_bytes) +
                 " is outside 64..4194304 bytes");
  }
  if (cl.options.window < 1 || cl.options.window > ProbeOptions::kMaxWindow) {
    return usage("--window " + std::to_string(cl.options.window) + " is outside 1..128");
  }
  if (!(cl.degraded_fraction >= 0 && cl.degraded_fraction <= 1)) {
    return usage("--degraded-fraction must be between 0 and 1");
  }
  return std::nullopt;
}

int ExitCode(ProbeVerdict verdict) {
  switch (verdict) {
    case ProbeVerdict::kHealthy:
      return kExitHealthy;
    case ProbeVerdict::kDegraded:
      return kExitDegraded;
    case ProbeVerdict::kFailed:
      return kExitFailed;
    case ProbeVerdict::kUnavailable:
      return kExitUnavailable;
  }
  return kExitUnavailable;
}

std::string Line(const CommandLine& cl, const ProbeMeasurement& m, ProbeVerdict verdict,
                 double expected_bits) {
  std::string what = Label(cl.target.port) +
                     (cl.target.partner ? " pair to " + Label(*cl.target.partner) : " loopback");
  const std::string unlocked = m.lock.starts_with("unlocked") ? " (" + m.lock + ")" : "";
  if (m.outcome != ProbeOutcome::kOk) {
    const char* level = verdict == ProbeVerdict::kUnavailable ? "UNAVAILABLE" : "ERROR";
    return std::string(kName) + ": " + level + ": " + what + ": " +
           std::string(ProbeOutcomeName(m.outcome)) + ": " + m.error + unlocked;
  }
  const double gbps = m.bandwidth_bytes_per_second * 8 / 1e9;
  std::string line = std::string(kName) + ": " +
                     (verdict == ProbeVerdict::kHealthy ? "OK" : "DEGRADED") + ": " + what + " " +
                     Format("%.1f Gb/s", gbps);
  if (verdict == ProbeVerdict::kDegraded) {
    line += Format(", below %.2g", cl.degraded_fraction) +
            Format(" of the expected %.0f Gb/s", expected_bits / 1e9);
  }
  line += Format(", write round trip %.1f us (median)", Micros(m.latency_median)) +
          Format(", %.1f us (max)", Micros(m.latency_max)) +
          Format(", %.2f s", static_cast<double>(m.elapsed.count()) / 1e9) + unlocked;
  return line;
}

nlohmann::json Json(const CommandLine& cl, const ProbeMeasurement& m, ProbeVerdict verdict,
                    double expected_bits) {
  return nlohmann::json{
      {"port", Label(cl.target.port)},
      {"partner", cl.target.partner ? nlohmann::json(Label(*cl.target.partner)) : nullptr},
      {"path", m.path},
      {"outcome", ProbeOutcomeName(m.outcome)},
      {"verdict", ProbeVerdictName(verdict)},
      {"error", m.error},
      {"bandwidth_bytes_per_second", m.bandwidth_bytes_per_second},
      {"bandwidth_gbps", m.bandwidth_bytes_per_second * 8 / 1e9},
      {"latency_median_ns", m.latency_median.count()},
      {"latency_max_ns", m.latency_max.count()},
      {"bytes_written", m.bytes_written},
      {"writes_completed", m.writes_completed},
      {"elapsed_ns", m.elapsed.count()},
      {"registered_bytes", m.registered_bytes},
      {"lock", m.lock},
      {"expected_bits_per_second", expected_bits},
      {"degraded_fraction", cl.degraded_fraction},
      {"message_bytes", cl.options.message_bytes},
      {"window", cl.options.window},
      {"duration_ms", cl.options.duration.count()},
      {"timeout_ms", cl.options.timeout.count()},
  };
}

}  // namespace

Result<PortRef> ParsePortRef(std::string_view text) {
  const size_t slash = text.rfind('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size()) {
    return Error(StatusCode::kInvalidArgument,
                 "not <device>/<port> (such as mlx5_0/1): '" + std::string(text) + "'");
  }
  const std::string_view digits = text.substr(slash + 1);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || end != digits.data() + digits.size() || port < 1 || port > 255) {
    return Error(StatusCode::kInvalidArgument,
                 "the port of '" + std::string(text) + "' is not a number from 1 to 255");
  }
  const std::string_view device = text.substr(0, slash);
  if (device.find('/') != std::string_view::npos || device == "." || device == "..") {
    return Error(StatusCode::kInvalidArgument, "not a device name: '" + std::string(device) + "'");
  }
  return PortRef{std::string(device), port};
}

double ReadPortRateBits(const std::string& sysfs_root, const PortRef& port) {
  std::ifstream in(sysfs_root + "/class/infiniband/" + port.device + "/ports/" +
                   std::to_string(port.port) + "/rate");
  double gbps = 0;
  std::string unit;
  if (!(in >> gbps >> unit) || unit.rfind("Gb/sec", 0) != 0 || gbps < 0) return 0;
  return gbps * 1e9;
}

int RunProbeCommand(int argc, char** argv, const ProbeCommandEnv& env) {
  CommandLine cl;
  if (auto exit = Parse(argc, argv, env, cl)) return *exit;
  std::unique_ptr<PortProber> own;
  PortProber* prober = env.prober;
  if (prober == nullptr) {
    own = NewVerbsProber();
    prober = own.get();
  }
  const double expected_bits = cl.expected_gbps >= 0
                                   ? cl.expected_gbps * 1e9
                                   : ReadPortRateBits(env.sysfs_root, cl.target.port);
  if (cl.progress) {
    cl.options.on_phase = [&](std::string_view phase, const ProbeMeasurement& so_far) {
      nlohmann::json line{{"phase", phase}};
      if (phase == "cleanup") {
        line["result"] = Json(
            cl, so_far, ClassifyProbe(so_far, expected_bits, cl.degraded_fraction), expected_bits);
      }
      *env.out << line.dump() << "\n" << std::flush;
    };
  }
  const ProbeMeasurement m = prober->Measure(cl.target, cl.options);
  const ProbeVerdict verdict = ClassifyProbe(m, expected_bits, cl.degraded_fraction);
  if (cl.json) {
    *env.out << Json(cl, m, verdict, expected_bits).dump() << "\n" << std::flush;
  } else {
    *env.out << Line(cl, m, verdict, expected_bits) << "\n";
  }
  if (cl.hold.count() > 0) {
    env.out->flush();
    std::this_thread::sleep_for(cl.hold);
  }
  return ExitCode(verdict);
}

int ProbeMain(int argc, char** argv) {
  ProbeCommandEnv env;
  env.out = &std::cout;
  env.err = &std::cerr;
  return RunProbeCommand(argc, argv, env);
}

}  // namespace fabricwatch::probe
