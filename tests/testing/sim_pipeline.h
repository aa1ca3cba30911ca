#pragma once
// SimPipeline: the agent's detection path run in-process on simulated time (issue 8).
//
//   fabricsim Simulator  ->  replay root (sysfs + ethtool dir)  ->  the registered collectors,
//   each at its CollectorInfo::default_interval  ->  Snapshot{collector, simulated time}  ->
//   exporter::DetectorEngine (the real detectors, AnomalyTracker, state file) via RunOnce().
//
// Nothing sleeps and nothing reads the wall clock: one Clock (SimClock) gives every collector
// and the engine the simulated instant, so a run is deterministic for a given scenario and seed.
//
//   auto p = SimPipeline::Create(*LoadScenario(path), dir, {});
//   p->RunUntil(120);                       // 1 s steps
//   p->RunUntil(3 * 3600, /*step_s=*/30);   // coarser afterwards (see RunUntil)
//   p->transitions();                       // every raise/clear the tracker reported
//   p->injections();                        // every fault start/end the simulator reported
//
// Restart() is an agent restart: state saved to the state file, then detectors, engine and
// collectors dropped and built again from scratch, the new engine loading the file.
//
// Thread-safety: none (the engine is never Start()ed; RunOnce() runs on the caller's thread).

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "collectors/core/collector.h"
#include "base/status.h"
#include "collectors/sys/kmsg_cursor.h"
#include "detectors/core/detector.h"
#include "exporter/pipeline/detector_engine.h"
#include "tools/fabricsim/simulator.h"

namespace fabricwatch::testing {

// A settable clock: the simulated instant.
class SimClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override { return now_; }
  void Set(std::chrono::system_clock::time_point now) { now_ = now; }

 private:
  std::chrono::system_clock::time_point now_{};
};

// The detectors the agent runs by default, built through the detector registry with their
// default options (throws if one does not build).
std::vector<std::unique_ptr<detect::Detector>> DefaultDetectors(
    const std::map<std::string, detect::DetectorOptions>& options = {});

struct PipelineOptions {
  std::string preset;  // empty: the scenario's preset
  uint64_t seed = 7;
  std::string state_file;  // empty: no state file (Restart() then loses everything)
  std::string boot_id = "00000000-0000-0000-0000-000000000001";
  // Options of the default detectors, by detector name (e.g. link_degraded's shape-file); the
  // rest keep their defaults.
  std::map<std::string, detect::DetectorOptions> detector_options;
  // Unix time of simulated second 0.
  std::chrono::system_clock::time_point epoch =
      std::chrono::system_clock::time_point(std::chrono::seconds(1795000000));
};

class SimPipeline {
 public:
  static Result<std::unique_ptr<SimPipeline>> Create(sim::Scenario scenario, std::string root,
                                                     PipelineOptions options = {});
  ~SimPipeline();

  // Advances the simulator to `sim_seconds`, runs every collector whose interval has elapsed
  // (in registry order), submits their snapshots and evaluates the detectors once at that time.
  Status Step(double sim_seconds);
  // Steps from now to `sim_seconds` every `step_s` simulated seconds. With step_s above a
  // collector's interval, that collector runs once per step (as a late scheduler would): every
  // detector computes rates over the measured Δt, so this only coarsens the resolution.
  Status RunUntil(double sim_seconds, double step_s = 1);
  // Saves the state (engine SaveState), drops engine, detectors and collectors, builds them
  // again and loads the state file, as a restarted agent does.
  void Restart();

  double now() const { return now_; }
  std::chrono::system_clock::time_point At(double sim_seconds) const;
  double SimSeconds(std::chrono::system_clock::time_point t) const;

  sim::Simulator& sim() { return *sim_; }
  exporter::DetectorEngine& engine() { return *engine_; }
  const std::vector<detect::AnomalyTransition>& transitions() const { return transitions_; }
  const std::vector<sim::Injection>& injections() const { return injections_; }
  // What the engine and tracker logged (warnings on corrupt state files, transitions).
  std::string log() const { return log_->str(); }
  // Errors the collectors recorded or returned, with their text.
  size_t collector_errors() const { return collector_errors_; }
  const std::string& collector_error_text() const { return collector_error_text_; }

 private:
  struct CollectorRun;
  SimPipeline(std::unique_ptr<sim::Simulator> sim, PipelineOptions options);
  Status BuildCollectors();
  void BuildEngine();

  PipelineOptions options_;
  std::unique_ptr<sim::Simulator> sim_;
  SimClock clock_;
  std::shared_ptr<std::ostringstream> log_;
  std::shared_ptr<spdlog::logger> logger_;
  struct Sources;
  std::unique_ptr<Sources> sources_;
  std::vector<std::unique_ptr<CollectorRun>> collectors_;
  std::unique_ptr<exporter::DetectorEngine> engine_;
  // The kmsg collector's position in the simulator's kernel log, kept across Restart() through
  // the state file as the agent keeps it.
  // A new one at each Restart(): a restarted agent knows only what its state file says.
  std::unique_ptr<sys::KmsgCursor> kmsg_cursor_ = std::make_unique<sys::KmsgCursor>();
  std::vector<detect::AnomalyTransition> transitions_;
  std::vector<sim::Injection> injections_;
  double now_ = 0;
  size_t collector_errors_ = 0;
  std::string collector_error_text_;
};

}  // namespace fabricwatch::testing
