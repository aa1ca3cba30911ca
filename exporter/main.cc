// fabricwatch: the agent. The only place in the program that exits. It parses the command line,
// sets up logging and the process, takes the state file's lock, and runs the Agent
// (exporter/agent.h) until a stop signal, reloading it on SIGHUP.
//
// Signals (README "Signals"): every signal whose default action would end the process is
// blocked in every thread and taken here with sigwait(), so none ends the agent without saving
// its state:
//   SIGTERM, SIGINT, SIGQUIT: stop (state saved), exit 0;
//   SIGHUP: re-read the configuration (--config.file, the flags, the web configuration); a
//     valid one replaces the running agent, an invalid one is logged and the old one kept;
//   SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGXCPU, SIGXFSZ, SIGSTKFLT and
//     the real-time signals: logged (warning) and ignored.
// Fault signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS) are crashes and keep
// their default action: the last periodic save (at most a minute old) is what survives them.

#include <malloc.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <string.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "detectors/core/state_file.h"
#include "exporter/agent.h"
#include "exporter/check/check.h"
#include "exporter/config/config.h"
#include "exporter/http/listen_address.h"
#include "exporter/file_limit.h"
#include "exporter/logging.h"
#include "exporter/probe/probe_command.h"

namespace fabricwatch::exporter {
namespace {

// glibc settings for a long-running agent with mostly idle threads; an operator's environment
// (MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_) still wins.
void TuneMalloc() {
  // glibc gives every thread that allocates its own malloc arena (up to 8 per core), and the
  // agent's mostly idle threads then keep ~8 MB of freed heap resident. Two arenas keep the RSS
  // near 12 MB on an 8-port node (tools/bench) without putting every thread behind one lock.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
  // A fixed mmap threshold: each /metrics body (~0.5 MB on an 8-port RoCE node, one render per
  // 100 ms at most) gets its own mapping, given back whole when the last scraper lets go of it.
  // glibc's default threshold rises to the size of the first such block freed, and bodies then
  // come from the heap, leaving freed holes resident between renders.
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr) mallopt(M_MMAP_THRESHOLD, 256 * 1024);
}

bool IsStopSignal(int sig) { return sig == SIGTERM || sig == SIGINT || sig == SIGQUIT; }

// Blocks, in every thread started from here on, each signal whose default action ends the
// process (signal(7)), except the synchronous fault signals; the main thread sigwait()s for
// them. SIGPIPE is ignored (a scraper that hangs up must not end the agent).
sigset_t BlockHandledSignals() {
  sigset_t handled;
  sigemptyset(&handled);
  for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF,
                  SIGIO, SIGPWR, SIGXCPU, SIGXFSZ, SIGSTKFLT}) {
    sigaddset(&handled, sig);
  }
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig) sigaddset(&handled, sig);
  pthread_sigmask(SIG_BLOCK, &handled, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return handled;
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// Stops the agent (saving its state). False when a route was still rendering or a collection
// was stuck in a read at the end of the bounded wait (Agent::Stop): that thread may still use the
// agent, so it is kept alive (released, never destroyed) until the process exits.
bool StopAgent(std::unique_ptr<Agent>& agent) {
  const bool stopped = agent->Stop();
  if (stopped) {
    agent.reset();
  } else {
    (void)agent.release();
  }
  return stopped;
}

// With port 0 ("pick a free one"), a reload keeps the port the running agent got, so scrapers
// and the operator's notes stay valid.
void KeepBoundPort(const Agent& running, Config& next) {
  auto address = ParseListenAddress(next.listen_address);
  if (!address || address->port != 0 || running.ports().empty()) return;
  const std::string host = address->ipv6 ? "[" + address->host + "]" : address->host;
  next.listen_address = host + ":" + std::to_string(running.ports().front());
}

// SIGHUP: parses the command line again (which re-reads --config.file and the web
// configuration) and builds a new agent from it. Only when that succeeds is the running agent
// stopped (saving its state) and the new one started (loading it), on the same listen address.
// Anything invalid keeps the running agent, and the log says why. Returns false only when
// neither the new agent nor the old configuration could be started again (exit 1).
bool Reload(int argc, char** argv, std::unique_ptr<Agent>& agent, Config& current) {
  auto log = GetLogger("main");
  auto parsed = ParseCommandLine(argc, argv);
  if (!parsed) {
    log->error("reload failed, keeping the running configuration: {}", parsed.error().message());
    return true;
  }
  Config next = std::move(parsed->config);
  KeepBoundPort(*agent, next);
  auto candidate = Agent::Create(next);
  if (!candidate) {
    log->error("reload failed, keeping the running configuration: {}", candidate.error().message());
    return true;
  }
  const std::shared_ptr<WebSecurity> running_web = agent->web_security();
  if (Status web = (*candidate)->LoadWebConfig(running_web ? running_web->Current() : nullptr);
      !web.ok()) {
    log->error("reload failed, keeping the running configuration: {}", web.message());
    return true;
  }
  if (!StopAgent(agent))
    log->warn("a route or a stuck collection still used the old agent; it is left behind");
  if (Status started = (*candidate)->Start(); started.ok()) {
    agent = std::move(*candidate);
    current = std::move(next);
    log->info("configuration reloaded{}{}", current.config_file.empty() ? "" : " from ",
              current.config_file);
    return true;
  } else {
    log->error("reload failed to start, restarting with the previous configuration: {}",
               started.message());
  }
  auto previous = Agent::Create(current);
  if (!previous) {
    log->error("cannot rebuild the previous configuration: {}", previous.error().message());
    return false;
  }
  // The web config is read again here too: held to what the stopped agent served.
  if (Status web = (*previous)->LoadWebConfig(running_web ? running_web->Current() : nullptr);
      !web.ok()) {
    log->error("cannot restart the previous configuration: {}", web.message());
    return false;
  }
  if (Status started = (*previous)->Start(); !started.ok()) {
    log->error("cannot restart the previous configuration: {}", started.message());
    return false;
  }
  agent = std::move(*previous);
  return true;
}

// Runs until a stop signal; 0 on a normal stop, 1 if a reload left nothing running.
int Serve(int argc, char** argv, const sigset_t& handled, std::unique_ptr<Agent> agent,
          Config config) {
  auto log = GetLogger("main");
  while (true) {
    int sig = 0;
    sigwait(&handled, &sig);
    if (IsStopSignal(sig)) {
      log->info("received {}, stopping", SignalName(sig));
      break;
    }
    if (sig == SIGHUP) {
      log->info("received SIGHUP, reloading the configuration");
      if (!Reload(argc, argv, agent, config)) return 1;
      continue;
    }
    log->warn("received {}, ignored (SIGTERM, SIGINT or SIGQUIT stop the agent, SIGHUP reloads)",
              SignalName(sig));
  }
  if (!StopAgent(agent)) {
    log->info("stopped (a route or a stuck collection was still running; see above)");
    spdlog::shutdown();
    std::_Exit(0);
  }
  log->info("stopped");
  return 0;
}

int Main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "check") {
    return check::CheckMain(argc - 1, argv + 1);
  }
  if (argc > 1 && std::string_view(argv[1]) == "probe") {
    return probe::ProbeMain(argc - 1, argv + 1);
  }
  // Before any thread exists, so that every thread inherits the mask.
  const sigset_t handled = BlockHandledSignals();
  auto parsed = ParseCommandLine(argc, argv);
  if (!parsed) {
    std::fprintf(stderr, "fabricwatch: %s\n", parsed.error().message().c_str());
    return 2;
  }
  if (parsed->action != Action::kRun) {
    std::fputs(parsed->output.c_str(), stdout);
    return 0;
  }
  Config config = parsed->config;
  SetupLogging(config.log_level,
               config.log_format == "json" ? LogFormat::kJson : LogFormat::kLogfmt);
  auto log = GetLogger("main");
  // Kept-open counter files cost one fd each; Go exporters get the hard limit for free, we ask.
  RaiseFileLimit(*log);
  TuneMalloc();

  // A path that names a device, FIFO, link or another user's file is refused before anything
  // opens it (detectors/core/state_file.h), by --config.check too.
  if (!config.state_file.empty() && !config.shape_print) {
    if (Status path = detect::CheckStatePath(config.state_file); !path.ok()) {
      log->error("--state.file: {}", path.message());
      return 1;
    }
  }
  // Held until the process exits, across reloads (--state.file is a flag: a reload keeps it).
  std::optional<detect::StateFileLock> state_lock;
  if (!config.config_check && !config.shape_print && !config.state_file.empty()) {
    auto lock = detect::StateFileLock::Acquire(config.state_file);
    if (!lock) {
      log->error("{}", lock.error().ToString());
      return 1;
    }
    if (lock->stale_temporaries_removed() > 0) {
      log->info("removed {} temporary state file(s) a killed save left beside {}",
                lock->stale_temporaries_removed(), config.state_file);
    }
    state_lock.emplace(std::move(*lock));
  }
  auto agent = Agent::Create(config);
  if (!agent) {
    std::fprintf(stderr, "fabricwatch: %s\n", agent.error().message().c_str());
    return 2;
  }
  if (config.config_check) return (*agent)->ConfigCheck();
  if (config.shape_print) return (*agent)->PrintShape();
  if (Status started = (*agent)->Start(); !started.ok()) {
    log->error("{}", started.message());
    return 1;
  }
  return Serve(argc, argv, handled, std::move(*agent), std::move(config));
}

}  // namespace
}  // namespace fabricwatch::exporter

int main(int argc, char** argv) { return fabricwatch::exporter::Main(argc, argv); }
