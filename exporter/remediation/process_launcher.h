#pragma once
// ProcessLauncher: runs one hook executable to completion with a deadline.
//
// The hook is an argument vector, never a shell string: argv[0] is executed directly
// (fork + execve, no PATH search, no /bin/sh), so an entity label such as a netdev name can never
// be interpreted by a shell. The child gets exactly the environment it is given (the agent's own
// environment is not inherited), stdin from /dev/null, stdout and stderr on one pipe (so their
// interleaving is kept), default signal dispositions, an empty signal mask, no fd of the agent
// other than those three, and its own process group.
//
// On the deadline the whole process group gets SIGTERM, then SIGKILL after the grace period, so
// a hook that forked a `sleep` or a hung `scontrol` does not outlive its timeout. A stop request
// (the agent shutting down) does the same at once, with a grace of at most kStopGrace, so a stop
// never waits for a hook's timeout (README "Signals").
//
// Credentials: when LaunchSpec::credentials is set (the agent is root and hooks.user is
// configured), the child drops to them between fork and exec in the order that cannot be undone
// half-way: setgroups (the supplementary groups), setgid, then setuid (setuid first would leave
// no right to change groups; POSIX setuid(3p), and CERT POS36-C). A failure of any step is a
// spawn error naming the step; the hook never runs with root's groups or uid.
//
// Thread-safety: Run() may be called from several threads; each call owns its child.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "base/status.h"

namespace fabricwatch::exporter {

// The longest a stop request waits between SIGTERM and SIGKILL (kill_grace if shorter).
inline constexpr std::chrono::milliseconds kStopGrace{500};

struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups (setgroups); may be empty
};

struct LaunchSpec {
  std::vector<std::string> argv;  // argv[0]: an absolute path to the executable
  std::vector<std::string> env;   // "NAME=value" entries, the child's whole environment
  std::chrono::milliseconds timeout{30000};
  std::chrono::milliseconds kill_grace{5000};  // SIGTERM -> SIGKILL
  size_t max_output_bytes = 16 * 1024;         // the rest is read and discarded
  // false (hooks): the first max_output_bytes are kept. true (the probe's child, whose result is
  // its last line): the last max_output_bytes, from the first line that starts in them.
  bool keep_output_tail = false;
  std::optional<Credentials> credentials;  // empty: the agent's own
};

struct LaunchResult {
  enum class Outcome {
    kExited,      // exit_code is valid
    kSignaled,    // term_signal is valid (killed by something other than our timeout)
    kTimedOut,    // we killed it at the deadline
    kCancelled,   // we killed it because a stop was requested
    kSpawnError,  // it never ran; error says why (ENOENT, EACCES, ...)
  };
  Outcome outcome = Outcome::kSpawnError;
  int exit_code = -1;
  int term_signal = 0;
  std::string output;  // stdout and stderr, interleaved, at most max_output_bytes (the head, or
                       // with keep_output_tail the tail)
  bool output_truncated = false;
  std::chrono::milliseconds duration{0};
  Status error;  // for kSpawnError
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Runs to completion, the deadline, or `stop` (then kCancelled within about kStopGrace).
  virtual LaunchResult Run(const LaunchSpec& spec, std::stop_token stop) = 0;
  LaunchResult Run(const LaunchSpec& spec) { return Run(spec, std::stop_token()); }
};

// The real one: fork + execve, a pipe, an eventfd for stop requests, poll() and waitpid().
class PosixProcessLauncher final : public ProcessLauncher {
 public:
  using ProcessLauncher::Run;
  LaunchResult Run(const LaunchSpec& spec, std::stop_token stop) override;
};

}  // namespace fabricwatch::exporter
