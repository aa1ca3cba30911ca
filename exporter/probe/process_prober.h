#pragma once
// ProcessPortProber: the agent's PortProber (issue 37 review). Each measurement runs in a child
// process, `/proc/self/exe probe DEV/PORT [--partner DEV/PORT] ... --json --progress`
// (probe_command.cc), through the hooks' process launcher (exporter/remediation/
// process_launcher.h: fork + execve, its own process group, bounded output), never in the agent
// itself, because a verbs call can block for as long as the driver lets it: on mlx5,
// ibv_open_device, ibv_modify_qp, ibv_destroy_qp and ibv_dereg_mr are firmware commands with a
// timeout of about 60 s each.
//
//   - the child has a hard deadline of options.timeout + kProbeProcessMargin; past it its process
//     group is killed (SIGKILL) and the last --progress line it printed decides the measurement:
//     a "cleanup" line carries the result (it stands; the clean-up hang is added to its error),
//     last phase "data" is kTimeout (the data path hung), "setup" or nothing is kSetupError (the
//     host's trouble, never a drain's confirmation). The kernel frees a dead process's verbs
//     objects (its uverbs file is closed at exit), so nothing the probe pinned or created
//     outlives it;
//   - what a kill does not fix: a child in uninterruptible sleep inside a firmware command dies
//     and is reaped only when that command returns. Until then Measure() (the probe runner's
//     thread) waits for it, later probes wait behind it, and ProbeRunner::Stop() waits too: the
//     child keeps the agent's other threads, not its probing or its shutdown, free of the hang;
//   - a stop (ProbeRunner::Stop) kills a running child at once (and is reaped as above);
//   - output that is not the command's JSON line (a crash, a usage error, a missing binary) is
//     kUnsupported with the first line the child printed: it says nothing about the port;
//   - the child's stdout and stderr share one pipe, of which the last kProbeProcessMaxOutput
//     bytes are kept (the result is the last line);
//   - the child's environment: PATH, LD_LIBRARY_PATH and the verbs settings
//     (ProbeChildEnvironment);
//   - a probe that ran without the node lock (ProbeMeasurement::lock "unlocked: …") says so in
//     its error, which the runner logs;
//   - memory pinned by the probe (2 × message-size × window) is the child's, not the agent's.
//
//   ProcessPortProber prober(launcher);            // launcher: outlives the prober
//   ProbeMeasurement m = prober.Measure(target, options, stop_token);
//
// Thread-safety: Measure() from one thread at a time (the probe runner's).

#include <chrono>
#include <stop_token>
#include <string>
#include <vector>

#include "exporter/probe/probe.h"
#include "exporter/remediation/process_launcher.h"

namespace fabricwatch::probe {

// A PortProber whose Measure() a stop request cuts short (ProbeRunner::Stop requests it). A
// measurement cut short returns kUnsupported; the runner answers "stopped" instead.
class StoppablePortProber : public PortProber {
 public:
  virtual ProbeMeasurement Measure(const ProbeTarget& target, const ProbeOptions& options,
                                   std::stop_token stop) = 0;
  ProbeMeasurement Measure(const ProbeTarget& target, const ProbeOptions& options) override {
    return Measure(target, options, std::stop_token());
  }
};

// The bound on a child's output, of which the tail is kept: its phase and JSON lines are under
// 4 KiB together; the rest is error text.
inline constexpr size_t kProbeProcessMaxOutput = 16 * 1024;

struct ProcessProberOptions {
  // The fabricwatch binary: the agent's own image, even after a package upgrade replaced the
  // file on disk.
  std::string executable = "/proc/self/exe";
  // The child's whole environment ("NAME=value"); ProbeChildEnvironment() by default.
  std::vector<std::string> env;
};

// The child's environment: PATH, LD_LIBRARY_PATH (rdma-core installed outside the system's
// library path, /opt) and the agent's libibverbs and provider settings (RDMAV_*, IBV_*, MLX5_*,
// MLX4_*, RXE_*), nothing else.
std::vector<std::string> ProbeChildEnvironment(char** environ_entries);

// The command line of the child for `target` (argv[0] is `executable`).
std::vector<std::string> ProbeCommandLine(const std::string& executable, const ProbeTarget& target,
                                          const ProbeOptions& options);

// The measurement a finished child's launch result stands for (pure; tested without a child).
ProbeMeasurement MeasurementFromLaunch(const exporter::LaunchResult& result,
                                       const ProbeTarget& target, const ProbeOptions& options);

class ProcessPortProber final : public StoppablePortProber {
 public:
  explicit ProcessPortProber(exporter::ProcessLauncher& launcher,
                             ProcessProberOptions options = {});
  using StoppablePortProber::Measure;
  ProbeMeasurement Measure(const ProbeTarget& target, const ProbeOptions& options,
                           std::stop_token stop) override;

 private:
  exporter::ProcessLauncher& launcher_;
  ProcessProberOptions options_;
};

}  // namespace fabricwatch::probe
