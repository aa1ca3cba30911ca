#pragma once
// ProcessLauncher: runs one hook executable to completion with a deadline.
//
// The hook is an argument vector, never a shell string: argv[0] is executed directly
// (posix_spawn, no PATH search, no /bin/sh), so an entity label such as a netdev name can never
// be interpreted by a shell. The child gets exactly the environment it is given (the agent's own
// environment is not inherited), stdin from /dev/null, stdout and stderr on one pipe (so their
// interleaving is kept), default signal dispositions, an empty signal mask, no fd of the agent
// other than those three, and its own process group.
//
// On the deadline the whole process group gets SIGTERM, then SIGKILL after the grace period, so
// a hook that forked a `sleep` or a hung `scontrol` does not outlive its timeout.
//
// Thread-safety: Run() may be called from several threads; each call owns its child.

#include <chrono>
#include <string>
#include <vector>

#include "collectors/core/status.h"

namespace fabricwatch::exporter {

struct LaunchSpec {
  std::vector<std::string> argv;  // argv[0]: an absolute path to the executable
  std::vector<std::string> env;   // "NAME=value" entries, the child's whole environment
  std::chrono::milliseconds timeout{30000};
  std::chrono::milliseconds kill_grace{5000};  // SIGTERM -> SIGKILL
  size_t max_output_bytes = 16 * 1024;         // the rest is read and discarded
};

struct LaunchResult {
  enum class Outcome {
    kExited,      // exit_code is valid
    kSignaled,    // term_signal is valid (killed by something other than our timeout)
    kTimedOut,    // we killed it at the deadline
    kSpawnError,  // it never ran; error says why (ENOENT, EACCES, ...)
  };
  Outcome outcome = Outcome::kSpawnError;
  int exit_code = -1;
  int term_signal = 0;
  std::string output;  // stdout and stderr, interleaved, at most max_output_bytes
  bool output_truncated = false;
  std::chrono::milliseconds duration{0};
  Status error;  // for kSpawnError
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  virtual LaunchResult Run(const LaunchSpec& spec) = 0;
};

// The real one: posix_spawn, a pipe, poll() and waitpid().
class PosixProcessLauncher final : public ProcessLauncher {
 public:
  LaunchResult Run(const LaunchSpec& spec) override;
};

}  // namespace fabricwatch::exporter
