// fabricsim: a simulated RDMA node for fabricwatch (issue 7).
//
//   fabricsim presets | faults
//   fabricsim build --preset NAME --root DIR [--leaf NAME] [--slot N]
//   fabricsim run --preset NAME --root DIR --scenario FILE [--speed X] [--loop] [--seed N]
//                 [--leaf NAME] [--slot N]
//
// `run` writes the node, then ticks once per simulated second (wall period 1 s / speed) and
// prints one JSON line per injection on stdout (flushed), until the scenario ends (or forever
// with --loop) or SIGTERM/SIGINT. Both write DIR/sys (sysfs), DIR/ethtool (ethtool replay),
// DIR/kmsg (the kernel log as /dev/kmsg records, appended as simulated time passes), DIR/proc and
// the peer replays DIR/smp and DIR/lldp (each port's leaf switch, leaf_switch.h), and print the
// agent's flags for them on stderr:
//   fabricwatch --path.sysfs=DIR/sys --path.ethtool=DIR/ethtool --path.kmsg=DIR/kmsg
//               --path.procfs=DIR/proc --path.smp=DIR/smp --path.lldp=DIR/lldp

#include <signal.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include "tools/fabricsim/simulator.h"

namespace {

volatile sig_atomic_t g_stop = 0;  // set by the signal handler only
void OnSignal(int) { g_stop = 1; }

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int Fail(const fabricwatch::Status& status) {
  std::cerr << "fabricsim: " << status.message() << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fabricwatch;
  CLI::App app{
      "fabricsim: simulated InfiniBand/RoCE node for fabricwatch (sysfs, ethtool and kernel-log "
      "replay; each port's leaf switch as SMP and LLDP peer replays)"};
  app.require_subcommand(1);
  std::string preset, root, scenario_path;
  double speed = 1.0;
  bool loop = false;
  uint64_t seed = 1;
  sim::LeafOptions leaf;
  const auto add_leaf_options = [&leaf](CLI::App* cmd) {
    cmd->add_option("--leaf", leaf.leaf,
                    "the leaf switch the ports face (DIR/smp, DIR/lldp); on an HGX preset, "
                    "cabled rail-optimised, port i faces NAME-rail<i+1>")
        ->capture_default_str();
    cmd->add_option("--slot", leaf.slot,
                    "the node's position on its leaf: its downlink on each rail leaf, or its "
                    "first of consecutive downlinks on a single leaf")
        ->capture_default_str();
  };

  CLI::App* presets = app.add_subcommand("presets", "List the node presets");
  CLI::App* faults = app.add_subcommand("faults", "List the scenario faults");
  CLI::App* build = app.add_subcommand("build", "Write a node's replay root and exit");
  build->add_option("--preset", preset, "node preset (fabricsim presets)")->required();
  build
      ->add_option("--root", root,
                   "output directory (DIR/sys, DIR/ethtool, DIR/kmsg, DIR/proc, DIR/smp, "
                   "DIR/lldp)")
      ->required();
  build->add_option("--seed", seed, "random seed of the noise");
  add_leaf_options(build);
  CLI::App* run = app.add_subcommand("run", "Write a node and animate it from a scenario");
  run->add_option("--preset", preset, "node preset (default: the scenario's preset:)");
  run->add_option("--root", root,
                  "output directory (DIR/sys, DIR/ethtool, DIR/kmsg, DIR/proc, DIR/smp, DIR/lldp)")
      ->required();
  run->add_option("--scenario", scenario_path, "scenario file (YAML)")->required();
  run->add_option("--speed", speed, "time compression: simulated seconds per wall second")
      ->check(CLI::PositiveNumber);
  run->add_flag("--loop", loop, "repeat the scenario forever");
  run->add_option("--seed", seed, "random seed of the noise");
  add_leaf_options(run);
  CLI11_PARSE(app, argc, argv);

  if (presets->parsed()) {
    for (const std::string& name : sim::PresetNames()) {
      std::cout << name << "\t" << sim::PresetDescription(name) << "\n";
    }
    return 0;
  }
  if (faults->parsed()) {
    for (const sim::FaultInfo& f : sim::Faults()) {
      std::cout << f.name << "\t" << f.description;
      if (!f.params.empty()) std::cout << " [" << f.params << "]";
      std::cout << "\n";
    }
    return 0;
  }

  sim::Scenario scenario;
  if (run->parsed()) {
    auto loaded = sim::LoadScenario(scenario_path);
    if (!loaded) return Fail(loaded.error());
    scenario = std::move(*loaded);
    if (preset.empty()) preset = scenario.preset;
    if (preset.empty()) {
      std::cerr << "fabricsim: " << scenario_path << " has no preset: and --preset is not set\n";
      return 2;
    }
  } else {
    scenario.source = "(build)";
    scenario.duration_s = 1;
  }
  auto node = sim::BuildPreset(preset);
  if (!node) return Fail(node.error());
  auto simulator = sim::Simulator::Create(std::move(*node), std::move(scenario), root,
                                          {.seed = seed, .loop = loop, .leaf = leaf});
  if (!simulator) return Fail(simulator.error());
  sim::Simulator& s = **simulator;
  if (Status st = s.WriteInitial(); !st.ok()) return Fail(st);
  if (build->parsed()) {
    std::cerr << "fabricsim: wrote preset " << preset << " to " << root << " ("
              << s.node().ports.size() << " ports, " << s.files_written() << " files)\n";
  }
  std::cerr << "fabricsim: agent flags: " << s.roots().Flags() << "\n";
  if (build->parsed()) return 0;

  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::cerr << "fabricsim: " << preset << " at " << root << ", scenario " << scenario_path
            << ", speed " << speed << (loop ? ", looping" : "") << "\n";
  const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(1.0 / speed));
  auto next = std::chrono::steady_clock::now();
  while (!g_stop && !s.finished()) {
    next += period;
    std::this_thread::sleep_until(next);
    if (g_stop) break;
    auto injections = s.AdvanceTo(s.now() + 1);
    if (!injections) return Fail(injections.error());
    const double t = UnixNow();
    for (const sim::Injection& in : *injections) {
      std::cout << sim::InjectionJson(in, t) << std::endl;  // flushed: a test reads it live
    }
  }
  return 0;
}
