#include "exporter/remediation/process_launcher.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fabricwatch::exporter {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Outcome = LaunchResult::Outcome;

// Real processes: /bin/sh scripts in a fresh temporary directory.
class ProcessLauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "fabricwatch-launch-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Script(const std::string& name, const std::string& body, mode_t mode = 0755) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    ::chmod(path.c_str(), mode);
    return path.string();
  }
  LaunchResult Run(std::vector<std::string> argv, std::vector<std::string> env = {},
                   milliseconds timeout = milliseconds(10000)) {
    LaunchSpec spec;
    spec.argv = std::move(argv);
    spec.env = std::move(env);
    spec.timeout = timeout;
    spec.kill_grace = milliseconds(300);
    return launcher_.Run(spec);
  }
  // True when `pid` is gone or a zombie nobody reaped yet (a container's init may not reap).
  static bool ProcessGone(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;
    std::string line;
    std::getline(stat, line);
    size_t paren = line.rfind(')');
    return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
  }
  fs::path dir_;
  PosixProcessLauncher launcher_;
};

TEST_F(ProcessLauncherTest, ArgumentsArePassedVerbatimWithoutAShell) {
  const std::string canary = (dir_ / "canary").string();
  const std::string script = Script("args", "for a in \"$@\"; do printf '<%s>\\n' \"$a\"; done\n");
  const std::vector<std::string> args = {
      script, "two words", "$(touch " + canary + ")", "; touch " + canary, "'quoted\"",
      "*",    "",          "Reason=fabricwatch: x y"};
  LaunchResult r = Run(args);
  ASSERT_EQ(r.outcome, Outcome::kExited) << r.error.ToString();
  EXPECT_EQ(r.exit_code, 0);
  std::string expected;
  for (size_t i = 1; i < args.size(); ++i) expected += "<" + args[i] + ">\n";
  EXPECT_EQ(r.output, expected);
  EXPECT_FALSE(fs::exists(canary)) << "an argument was interpreted by a shell";
}

TEST_F(ProcessLauncherTest, EnvironmentIsExactlyTheGivenOne) {
  ::setenv("FABRICWATCH_TEST_AGENT_SECRET", "must-not-leak", 1);
  const std::string script = Script("env", "/usr/bin/env\n");
  LaunchResult r = Run({script}, {"PATH=/usr/bin:/bin", "FABRICWATCH_EVENT=raise", "A=b c"});
  ::unsetenv("FABRICWATCH_TEST_AGENT_SECRET");
  ASSERT_EQ(r.outcome, Outcome::kExited);
  EXPECT_NE(r.output.find("FABRICWATCH_EVENT=raise\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("A=b c\n"), std::string::npos);
  EXPECT_EQ(r.output.find("FABRICWATCH_TEST_AGENT_SECRET"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("HOME="), std::string::npos) << r.output;
}

TEST_F(ProcessLauncherTest, StdinIsDevNullAndStderrIsInterleavedWithStdout) {
  const std::string script =
      Script("io", "cat; echo out1; echo err1 >&2; echo out2; ls -l /proc/self/fd | wc -l\n");
  LaunchResult r = Run({script});
  ASSERT_EQ(r.outcome, Outcome::kExited);
  EXPECT_EQ(r.exit_code, 0);
  // `ls` itself holds 0, 1, 2 and the directory it lists: nothing of the test process leaks.
  EXPECT_EQ(r.output, "out1\nerr1\nout2\n5\n");
}

TEST_F(ProcessLauncherTest, ExitStatusAndSignalAreReported) {
  LaunchResult failed = Run({Script("fail", "echo no >&2; exit 3\n")});
  ASSERT_EQ(failed.outcome, Outcome::kExited);
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_EQ(failed.output, "no\n");

  LaunchResult signaled = Run({Script("sig", "kill -USR1 $$\nsleep 5\n")});
  ASSERT_EQ(signaled.outcome, Outcome::kSignaled);
  EXPECT_EQ(signaled.term_signal, SIGUSR1);
}

TEST_F(ProcessLauncherTest, SpawnErrorsNameTheExecutable) {
  LaunchResult missing = Run({(dir_ / "does-not-exist").string()});
  EXPECT_EQ(missing.outcome, Outcome::kSpawnError);
  EXPECT_EQ(missing.error.sys_errno(), ENOENT);
  EXPECT_NE(missing.error.message().find("does-not-exist"), std::string::npos);

  LaunchResult not_executable = Run({Script("plain", "exit 0\n", 0644)});
  EXPECT_EQ(not_executable.outcome, Outcome::kSpawnError);
  EXPECT_EQ(not_executable.error.sys_errno(), EACCES);

  LaunchResult relative = Run({"sh", "-c", "true"});
  EXPECT_EQ(relative.outcome, Outcome::kSpawnError);
  EXPECT_EQ(relative.error.code(), StatusCode::kInvalidArgument);
}

TEST_F(ProcessLauncherTest, TimeoutKillsTheWholeProcessGroup) {
  const std::string pidfile = (dir_ / "child.pid").string();
  // The hook backgrounds a child and waits on it: both must die at the deadline.
  const std::string script =
      Script("slow", "echo started\nsleep 60 &\necho $! > " + pidfile + "\nwait\n");
  LaunchResult r = Run({script}, {}, milliseconds(300));
  EXPECT_EQ(r.outcome, Outcome::kTimedOut);
  EXPECT_EQ(r.output, "started\n");
  std::ifstream in(pidfile);
  pid_t child = 0;
  ASSERT_TRUE(in >> child);
  for (int i = 0; i < 100 && !ProcessGone(child); ++i) ::usleep(10000);
  EXPECT_TRUE(ProcessGone(child)) << "background child " << child << " survived the timeout";
}

TEST_F(ProcessLauncherTest, HookIgnoringSigtermGetsSigkillAfterTheGrace) {
  const std::string script =
      Script("stubborn", "trap '' TERM\necho trapped\nwhile :; do sleep 0.05; done\n");
  LaunchResult r = Run({script}, {}, milliseconds(200));
  EXPECT_EQ(r.outcome, Outcome::kTimedOut);
  EXPECT_EQ(r.output, "trapped\n");
  // Deadline 200 ms + grace 300 ms; a generous bound only proves it did not wait for the loop.
  EXPECT_LT(r.duration.count(), 5000);
}

TEST_F(ProcessLauncherTest, OutputIsBoundedAndTheHookIsNotBlockedByIt) {
  const std::string script =
      Script("loud", "head -c 200000 /dev/zero | tr '\\0' a\necho done >&2\n");
  LaunchSpec spec;
  spec.argv = {script};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.max_output_bytes = 1000;
  LaunchResult r = launcher_.Run(spec);
  ASSERT_EQ(r.outcome, Outcome::kExited);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output.size(), 1000u);
  EXPECT_TRUE(r.output_truncated);
}

// keep_output_tail (the probe's child, whose result is its last line): the last
// max_output_bytes are kept, from the first whole line in them; hooks keep the head.
TEST_F(ProcessLauncherTest, TheTailIsKeptWhenAsked) {
  const std::string script =
      Script("chatty",
             "i=0\nwhile [ $i -lt 500 ]; do echo \"line $i of the warnings\"; i=$((i+1)); done\n"
             "echo '{\"result\":1}'\n");
  LaunchSpec spec;
  spec.argv = {script};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.max_output_bytes = 1000;
  spec.keep_output_tail = true;
  LaunchResult r = launcher_.Run(spec);
  ASSERT_EQ(r.outcome, Outcome::kExited);
  EXPECT_TRUE(r.output_truncated);
  EXPECT_LE(r.output.size(), 1000u);
  EXPECT_GT(r.output.size(), 900u);
  EXPECT_TRUE(r.output.starts_with("line ")) << r.output.substr(0, 40);  // a whole line
  EXPECT_TRUE(r.output.ends_with("line 499 of the warnings\n{\"result\":1}\n")) << r.output;
  // The same child without the option: the head, as hooks have it.
  spec.keep_output_tail = false;
  r = launcher_.Run(spec);
  EXPECT_EQ(r.output.size(), 1000u);
  EXPECT_TRUE(r.output.starts_with("line 0 of the warnings\n"));
}

// A stop request (the agent shutting down) kills a running hook and its process group at once,
// with at most kStopGrace before SIGKILL, instead of waiting for the hook's timeout.
TEST_F(ProcessLauncherTest, StopRequestKillsTheHookAndItsGroup) {
  const std::string pidfile = (dir_ / "child.pid").string();
  const std::string script =
      Script("hang", "trap '' TERM\nsleep 60 &\necho $! > " + pidfile + ".tmp\nmv " + pidfile +
                         ".tmp " + pidfile + "\nwhile :; do sleep 0.05; done\n");
  std::stop_source stop;
  LaunchResult r;
  std::thread runner([&] {
    LaunchSpec spec;
    spec.argv = {script};
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.timeout = milliseconds(60000);
    spec.kill_grace = milliseconds(30000);
    r = launcher_.Run(spec, stop.get_token());
  });
  for (int i = 0; i < 1000 && !fs::exists(pidfile); ++i) ::usleep(10000);
  ASSERT_TRUE(fs::exists(pidfile)) << "the hook did not start";
  stop.request_stop();
  runner.join();
  EXPECT_EQ(r.outcome, Outcome::kCancelled);
  // Neither the 60 s timeout nor the 30 s kill_grace was waited for (the hook ignores SIGTERM).
  EXPECT_LT(r.duration.count(), 20000);
  std::ifstream in(pidfile);
  pid_t child = 0;
  ASSERT_TRUE(in >> child);
  for (int i = 0; i < 100 && !ProcessGone(child); ++i) ::usleep(10000);
  EXPECT_TRUE(ProcessGone(child)) << "background child " << child << " survived the stop";
}

// When the agent is root and hooks.user is set, the hook runs with exactly those ids: uid, gid
// and supplementary groups (setgroups, setgid, setuid between fork and exec).
TEST_F(ProcessLauncherTest, RunsWithTheConfiguredUserAndGroups) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to change the hook's credentials";
  ::chmod(dir_.c_str(), 0755);  // mkdtemp's 0700 would keep uid 65534 out
  const std::string script = Script("id", "id -u; id -g; id -G\n");
  LaunchSpec spec;
  spec.argv = {script};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.credentials = Credentials{.uid = 65534, .gid = 65534, .groups = {65534, 100}};
  LaunchResult r = launcher_.Run(spec);
  ASSERT_EQ(r.outcome, Outcome::kExited) << r.error.ToString() << r.output;
  EXPECT_EQ(r.output, "65534\n65534\n65534 100\n");

  // An executable the user may not run is a spawn error (EACCES from execve as that user).
  ::chmod(script.c_str(), 0700);
  LaunchResult denied = launcher_.Run(spec);
  EXPECT_EQ(denied.outcome, Outcome::kSpawnError);
  EXPECT_EQ(denied.error.sys_errno(), EACCES) << denied.error.ToString();
}

}  // namespace
}  // namespace fabricwatch::exporter
