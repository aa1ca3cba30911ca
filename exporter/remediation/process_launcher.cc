#include "exporter/remediation/process_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

// posix_spawn's attribute and file-action objects, destroyed on every path.
struct SpawnSetup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

LaunchResult PosixProcessLauncher::Run(const LaunchSpec& spec) {
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

  SpawnSetup setup;
  sigset_t empty_mask;
  sigset_t all_signals;
  sigemptyset(&empty_mask);
  sigfillset(&all_signals);
  // Own process group (so the timeout kills the hook's children too), default dispositions
  // (the agent ignores SIGPIPE; a hook must not inherit that), nothing blocked.
  posix_spawnattr_setflags(&setup.attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&setup.attr, 0);
  posix_spawnattr_setsigmask(&setup.attr, &empty_mask);
  posix_spawnattr_setsigdefault(&setup.attr, &all_signals);
  posix_spawn_file_actions_addopen(&setup.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&setup.actions, write_end.get(), 1);
  posix_spawn_file_actions_adddup2(&setup.actions, write_end.get(), 2);
  // Every agent fd is O_CLOEXEC already; this also covers one a library opened without it.
  posix_spawn_file_actions_addclosefrom_np(&setup.actions, 3);

  std::vector<char*> argv;
  for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& entry : spec.env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);

  pid_t pid = -1;
  // glibc's posix_spawn reports a failed exec (ENOENT, EACCES, ENOEXEC) as its return value.
  int rc = ::posix_spawn(&pid, argv[0], &setup.actions, &setup.attr, argv.data(), envp.data());
  if (rc != 0) {
    result.error = FromErrno(rc, "spawn " + spec.argv[0]);
    result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    return result;
  }
  ChildProcess child(pid);
  write_end.Reset();  // only the child holds the write end now: EOF when it and its children exit

  // A pidfd makes the wait exact (no polling slices); without one (old kernels) we poll waitpid.
  // (The raw syscall: glibc 2.36's <sys/pidfd.h> lacks extern "C" and does not link from C++.)
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  const std::chrono::milliseconds slice =
      pidfd.valid() ? std::chrono::milliseconds(1000) : std::chrono::milliseconds(20);

  bool pipe_open = true;
  bool timed_out = false;
  Clock::time_point deadline = start + spec.timeout;
  bool killed = false;
  while (true) {
    if (child.TryReap()) {
      if (pipe_open) ReadAvailable(read_end.get(), spec, result);
      break;
    }
    Clock::time_point now = Clock::now();
    if (now >= deadline) {
      if (!timed_out) {
        timed_out = true;
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
    pollfd pfds[2] = {{pipe_open ? read_end.get() : -1, POLLIN, 0}, {pidfd.get(), POLLIN, 0}};
    int n = ::poll(pfds, 2, static_cast<int>(wait.count()));
    if (n > 0 && pipe_open && (pfds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      pipe_open = ReadAvailable(read_end.get(), spec, result);
    }
  }
  if (timed_out) {
    // Children of the hook that left its group alive (a backgrounded sleep) go too.
    child.SignalGroup(SIGKILL);
    result.outcome = LaunchResult::Outcome::kTimedOut;
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
