// fabricwatch: the agent. The only place in the program that exits. It parses the command line,
// sets up logging and the process, and runs the Agent (exporter/agent.h) until SIGINT or SIGTERM.

#include <malloc.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>

#include "exporter/agent.h"
#include "exporter/config/config.h"
#include "exporter/file_limit.h"
#include "exporter/logging.h"

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

// Blocks the stop signals in every thread started from here on; the main thread waits for them.
sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return stop_signals;
}

int Main(int argc, char** argv) {
  auto parsed = ParseCommandLine(argc, argv);
  if (!parsed) {
    std::fprintf(stderr, "fabricwatch: %s\n", parsed.error().message().c_str());
    return 2;
  }
  if (parsed->action != Action::kRun) {
    std::fputs(parsed->output.c_str(), stdout);
    return 0;
  }
  const Config& config = parsed->config;
  SetupLogging(config.log_level,
               config.log_format == "json" ? LogFormat::kJson : LogFormat::kLogfmt);
  auto log = GetLogger("main");
  // Kept-open counter files cost one fd each; Go exporters get the hard limit for free, we ask.
  RaiseFileLimit(*log);
  TuneMalloc();
  const sigset_t stop_signals = BlockStopSignals();

  auto agent = Agent::Create(config);
  if (!agent) {
    std::fprintf(stderr, "fabricwatch: %s\n", agent.error().message().c_str());
    return 2;
  }
  if (config.config_check) return (*agent)->ConfigCheck();
  if (Status started = (*agent)->Start(); !started.ok()) {
    log->error("{}", started.message());
    return 1;
  }

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  log->info("received {}, stopping", signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
  if (!(*agent)->Stop()) {
    // An HTTP worker may still call the routes, which reference the agent: leave without
    // destroying it.
    log->info("stopped (an HTTP request was still being rendered)");
    spdlog::shutdown();
    std::_Exit(0);
  }
  agent->reset();
  log->info("stopped");
  return 0;
}

}  // namespace
}  // namespace fabricwatch::exporter

int main(int argc, char** argv) { return fabricwatch::exporter::Main(argc, argv); }
