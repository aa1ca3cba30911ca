#include "collectors/sys/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "collectors/sys/unique_fd.h"

extern char** environ;

namespace fabricwatch::sys {

Result<std::string> RunCommand(const std::vector<std::string>& argv,
                               std::chrono::milliseconds timeout, size_t max_output) {
  if (argv.empty()) return Error(StatusCode::kInvalidArgument, "empty command");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Error(StatusCode::kUnavailable, std::string("pipe: ") + std::strerror(errno));
  }
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return Error(spawned == ENOENT ? StatusCode::kNotFound : StatusCode::kUnavailable,
                 argv[0] + ": " + std::strerror(spawned));
  }
  write_end.Reset();  // the child holds the only write end: EOF when it exits
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  char buf[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{read_end.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = ready == 0;
      break;
    }
    const ssize_t n = ::read(read_end.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() < max_output)
      out.append(buf, std::min(static_cast<size_t>(n), max_output - out.size()));
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return Error(StatusCode::kDeadlineExceeded,
                 argv[0] + ": no answer within " + std::to_string(timeout.count()) + " ms");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Error(StatusCode::kUnavailable,
                 argv[0] + ": exited with status " + std::to_string(WEXITSTATUS(status)));
  }
  return out;
}

}  // namespace fabricwatch::sys
