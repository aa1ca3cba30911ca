#include "exporter/remediation/process_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <grp.h>
#include <signal.h>
#include <linux/close_range.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "collectors/sys/unique_fd.h"

namespace fabricwatch::exporter {
namespace {

using Clock = std::chrono::steady_clock;
using sys::UniqueFd;

// Owns a spawned child: whatever way Run() leaves, the child's process group is killed and the
// child reaped, so a hook can never become a zombie or an orphan of the agent.
class ChildProcess {
 public:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  ~ChildProcess() {
    if (pid_ > 0 && !reaped_) {
      ::kill(-pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool reaped() const { return reaped_; }
  int status() const { return status_; }

  // Non-blocking; true once the child has exited and been reaped.
  bool TryReap() {
    if (reaped_) return true;
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      status_ = status;
    }
    return reaped_;
  }
  void SignalGroup(int sig) const { ::kill(-pid_, sig); }

 private:
  pid_t pid_;
  bool reaped_ = false;
  int status_ = 0;
};

// Reads what the pipe has now. Returns false at EOF (every writer closed it).
bool ReadAvailable(int fd, const LaunchSpec& spec, LaunchResult& result) {
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0 && spec.keep_output_tail) {
      result.output.append(buf, static_cast<size_t>(n));
      if (result.output.size() > spec.max_output_bytes) {
        size_t drop = result.output.size() - spec.max_output_bytes;
        // Whole lines only: the kept text starts after the newline that ends the cut line.
        const size_t newline = result.output.find('\n', drop > 0 ? drop - 1 : 0);
        if (newline != std::string::npos) drop = newline + 1;
        result.output.erase(0, drop);
        result.output_truncated = true;
      }
      continue;
    }
    if (n > 0) {
      size_t room = spec.max_output_bytes - std::min(spec.max_output_bytes, result.output.size());
      size_t take = std::min(room, static_cast<size_t>(n));
      result.output.append(buf, take);
      if (take < static_cast<size_t>(n)) result.output_truncated = true;
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;  // any other error: treat as closed
  }
}

// What the child needs, prepared before fork(): between fork and exec a child of a threaded
// process may only make async-signal-safe calls (signal-safety(7)), so nothing here allocates.
struct ChildSetup {
  char* const* argv;
  char* const* envp;
  int devnull;
  int output;
  int error_report;  // O_CLOEXEC pipe: stays empty when execve succeeds
  int max_fd;        // for the close-on-exec sweep when close_range is unavailable
  const Credentials* credentials;
};

enum ChildStep : int {
  kStepSignals = 1,
  kStepSetgroups,
  kStepSetgid,
  kStepSetuid,
  kStepFds,
  kStepExec
};

const char* StepName(int step) {
  switch (step) {
    case kStepSignals:
      return "reset signals";
    case kStepSetgroups:
      return "setgroups";
    case kStepSetgid:
      return "setgid";
    case kStepSetuid:
      return "setuid";
    case kStepFds:
      return "set up stdin/stdout/stderr";
    default:
      return "exec";
  }
}

[[noreturn]] void ChildFail(const ChildSetup& c, int step) {
  const int report[2] = {step, errno};
  [[maybe_unused]] ssize_t n = ::write(c.error_report, report, sizeof report);
  ::_exit(127);
}

// The child, after fork(): async-signal-safe calls only.
[[noreturn]] void ChildExec(const ChildSetup& c) {
  // Its own process group (the parent sets it too, whichever runs first), so a timeout or a stop
  // kills the hook's children with it.
  ::setpgid(0, 0);
  // Default dispositions (the agent ignores SIGPIPE; a hook must not inherit that), nothing
  // blocked (the agent blocks the signals main() sigwait()s for).
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &default_action, nullptr);
  }
  sigset_t empty;
  sigemptyset(&empty);
  if (::sigprocmask(SIG_SETMASK, &empty, nullptr) != 0) ChildFail(c, kStepSignals);
  if (c.credentials != nullptr) {
    const Credentials& cred = *c.credentials;
    if (::setgroups(cred.groups.size(), cred.groups.data()) != 0) ChildFail(c, kStepSetgroups);
    if (::setgid(cred.gid) != 0) ChildFail(c, kStepSetgid);
    if (::setuid(cred.uid) != 0) ChildFail(c, kStepSetuid);
  }
  if (::dup2(c.devnull, 0) < 0 || ::dup2(c.output, 1) < 0 || ::dup2(c.output, 2) < 0) {
    ChildFail(c, kStepFds);
  }
  // Every agent fd is O_CLOEXEC already; this also covers one a library opened without it.
  if (::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd <= c.max_fd; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  ::execve(c.argv[0], c.argv, c.envp);
  ChildFail(c, kStepExec);
}

// fork() + ChildExec(); the error of a failed step (ENOENT and EACCES from execve, EPERM from
// setuid) comes back through the report pipe.
Result<pid_t> Spawn(const LaunchSpec& spec, char* const* argv, char* const* envp, int output) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return Error(FromErrno(errno, "pipe2 for hook spawn"));
  UniqueFd report_read(report[0]);
  UniqueFd report_write(report[1]);
  UniqueFd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!devnull) return Error(FromErrno(errno, "open /dev/null"));
  const ChildSetup setup{argv,
                         envp,
                         devnull.get(),
                         output,
                         report_write.get(),
                         static_cast<int>(std::min<long>(::sysconf(_SC_OPEN_MAX), 1 << 20)),
                         spec.credentials ? &*spec.credentials : nullptr};
  const pid_t pid = ::fork();
  if (pid < 0) return Error(FromErrno(errno, "fork for " + spec.argv[0]));
  if (pid == 0) ChildExec(setup);
  ::setpgid(pid, pid);  // EACCES once the child has exec'd: it set its group itself
  report_write.Reset();
  int failed[2] = {0, 0};
  ssize_t n;
  do {
    n = ::read(report_read.get(), failed, sizeof failed);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof failed)) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const std::string what = failed[0] == kStepExec ? "spawn " + spec.argv[0]
                                                    : std::string(StepName(failed[0])) +
                                                          " before running " + spec.argv[0];
    return Error(FromErrno(failed[1], what));
  }
  return pid;
}

enum class Ending { kExited, kTimedOut, kCancelled };

struct WaitFds {
  int output;  // the read end of the child's stdout/stderr pipe
  int pidfd;   // -1 without pidfd_open (old kernels): waitpid is polled every `slice`
  int stop;    // eventfd written on a stop request; -1 when none could be made
};

// Reads the output and waits for the child. At `deadline`, or at once on a stop request, the
// group gets SIGTERM, then SIGKILL after the grace (kill_grace; at most kStopGrace on a stop).
Ending WaitForChild(ChildProcess& child, WaitFds fds, std::chrono::milliseconds slice,
                    Clock::time_point deadline, const LaunchSpec& spec, const std::stop_token& stop,
                    LaunchResult& result) {
  bool pipe_open = true;
  Ending ending = Ending::kExited;
  bool killed = false;
  bool stop_seen = false;
  while (true) {
    if (child.TryReap()) {
      if (pipe_open) ReadAvailable(fds.output, spec, result);
      return ending;
    }
    Clock::time_point now = Clock::now();
    if (!stop_seen && stop.stop_requested()) {
      stop_seen = true;
      if (ending == Ending::kExited) {
        ending = Ending::kCancelled;
        child.SignalGroup(SIGTERM);
      }
      // Also shortens the grace of a hook already past its timeout.
      if (!killed) deadline = std::min(deadline, now + std::min(spec.kill_grace, kStopGrace));
      continue;
    }
    if (now >= deadline) {
      if (ending == Ending::kExited) {
        ending = Ending::kTimedOut;
        child.SignalGroup(SIGTERM);
        deadline = now + spec.kill_grace;
      } else if (!killed) {
        killed = true;
        child.SignalGroup(SIGKILL);
        deadline = now + std::chrono::hours(1);  // SIGKILL cannot be refused; wait for it
      }
      continue;
    }
    auto wait = std::min(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) +
                             std::chrono::milliseconds(1),
                         slice);
    // A stop already seen leaves the eventfd readable; it is no longer polled then.
    const int stop_fd = stop_seen ? -1 : fds.stop;
    pollfd pfds[3] = {
        {pipe_open ? fds.output : -1, POLLIN, 0}, {fds.pidfd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    int n = ::poll(pfds, 3, static_cast<int>(wait.count()));
    if (n > 0 && pipe_open && (pfds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      pipe_open = ReadAvailable(fds.output, spec, result);
    }
  }
}

}  // namespace

LaunchResult PosixProcessLauncher::Run(const LaunchSpec& spec, std::stop_token stop) {
  LaunchResult result;
  const Clock::time_point start = Clock::now();
  if (spec.argv.empty() || spec.argv[0].empty() || spec.argv[0].front() != '/') {
    result.error = Status(StatusCode::kInvalidArgument,
                          "hook command must start with an absolute path, got \"" +
                              (spec.argv.empty() ? std::string() : spec.argv[0]) + "\"");
    return result;
  }

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.error = FromErrno(errno, "pipe2 for hook output");
    return result;
  }
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  // Only our end is non-blocking; the child's stdout stays an ordinary blocking pipe.
  ::fcntl(read_end.get(), F_SETFL, ::fcntl(read_end.get(), F_GETFL) | O_NONBLOCK);

  std::vector<char*> argv;
  for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& entry : spec.env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);

  // A stop request wakes the poll below through this eventfd.
  UniqueFd stop_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  std::stop_callback on_stop(stop, [fd = stop_fd.get()] {
    if (fd >= 0) ::eventfd_write(fd, 1);
  });

  auto spawned = Spawn(spec, argv.data(), envp.data(), write_end.get());
  if (!spawned) {
    result.error = spawned.error();
    result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    return result;
  }
  const pid_t pid = *spawned;
  ChildProcess child(pid);
  write_end.Reset();  // only the child holds the write end now: EOF when it and its children exit

  // A pidfd makes the wait exact (no polling slices); without one (old kernels) we poll waitpid.
  // (The raw syscall: glibc 2.36's <sys/pidfd.h> lacks extern "C" and does not link from C++.)
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  const std::chrono::milliseconds slice =
      pidfd.valid() ? std::chrono::milliseconds(1000) : std::chrono::milliseconds(20);

  const Ending ending = WaitForChild(child, {read_end.get(), pidfd.get(), stop_fd.get()}, slice,
                                     start + spec.timeout, spec, stop, result);
  if (ending != Ending::kExited) {
    // Children of the hook that left its group alive (a backgrounded sleep) go too.
    child.SignalGroup(SIGKILL);
    result.outcome = ending == Ending::kTimedOut ? LaunchResult::Outcome::kTimedOut
                                                 : LaunchResult::Outcome::kCancelled;
  } else if (WIFEXITED(child.status())) {
    result.outcome = LaunchResult::Outcome::kExited;
    result.exit_code = WEXITSTATUS(child.status());
  } else if (WIFSIGNALED(child.status())) {
    result.outcome = LaunchResult::Outcome::kSignaled;
    result.term_signal = WTERMSIG(child.status());
  }
  result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  return result;
}

}  // namespace fabricwatch::exporter
