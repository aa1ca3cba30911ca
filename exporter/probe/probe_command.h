#pragma once
// `fabricwatch probe <device>/<port> [--partner <device>/<port>] ...`: one active RDMA probe
// from the command line, for an operator or a node health check (docs/probe.md §6). Prints one
// NHC-style line (or one JSON object with --json) and exits
//   0 healthy, 1 degraded, 2 failed (port down, error, timeout), 3 unavailable (the probe says
//   nothing about the port: no such device, no memory-lock allowance, or a wrong command line).

#include <ostream>
#include <string>
#include <string_view>

#include "base/status.h"
#include "exporter/probe/probe.h"

namespace fabricwatch::probe {

inline constexpr int kExitHealthy = 0;
inline constexpr int kExitDegraded = 1;
inline constexpr int kExitFailed = 2;
inline constexpr int kExitUnavailable = 3;

// "mlx5_0/1" → {mlx5_0, 1}. The port is a number from 1 to 255.
Result<PortRef> ParsePortRef(std::string_view text);

// The port's rate from sysfs (<sysfs>/class/infiniband/<dev>/ports/<p>/rate, "100 Gb/sec (4X
// EDR)") in bits per second; 0 when it cannot be read.
double ReadPortRateBits(const std::string& sysfs_root, const PortRef& port);

struct ProbeCommandEnv {
  PortProber* prober = nullptr;  // nullptr: NewVerbsProber()
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  std::string sysfs_root = "/sys";
};

// argv[0] is "probe". The testable body of ProbeMain.
int RunProbeCommand(int argc, char** argv, const ProbeCommandEnv& env);

// The subcommand as exporter/main.cc calls it: the verbs prober, stdout and stderr.
int ProbeMain(int argc, char** argv);

}  // namespace fabricwatch::probe
