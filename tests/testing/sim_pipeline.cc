#include "tests/testing/sim_pipeline.h"

#include <spdlog/sinks/ostream_sink.h>

#include <cmath>

#include "collectors/core/metric_sink.h"
#include "collectors/core/registry.h"
#include "collectors/sys/ethtool_replay.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/sysfs.h"
#include "detectors/ber_growth/ber_growth.h"
#include "detectors/core/registry.h"
#include "detectors/optical_drift/optical_drift.h"
#include "detectors/pcie_degraded/pcie_degraded.h"
#include "detectors/thermal_drift/thermal_drift.h"

namespace fabricwatch::testing {

std::vector<std::unique_ptr<detect::Detector>> DefaultDetectors() {
  using Factory = Result<std::unique_ptr<detect::Detector>> (*)(const detect::DetectorOptions&);
  std::vector<std::unique_ptr<detect::Detector>> out;
  auto add = [&](std::string_view name, Factory fallback) {
    // Prefer the registry (the agent's path); the four newer detectors are being added there.
    const detect::DetectorInfo* info = detect::FindDetector(name);
    Factory factory = info != nullptr ? info->factory : fallback;
    auto detector = factory({});
    if (detector) out.push_back(std::move(*detector));
  };
  add("link_flap", nullptr);
  add("pfc_storm", nullptr);
  add("ber_growth", detect::MakeBerGrowthDetector);
  add("thermal_drift", detect::MakeThermalDriftDetector);
  add("optical_drift", detect::MakeOpticalDriftDetector);
  add("pcie_degraded", detect::MakePcieDegradedDetector);
  return out;
}

// The replay sources the collectors read, as the agent builds them for --path.sysfs and
// --path.ethtool.
struct SimPipeline::Sources {
  Sources(const std::string& sysfs_root, const std::string& ethtool_root)
      : sysfs(sysfs_root, fs), ethtool(ethtool_root, fs) {}
  sys::RealFileSystem fs;
  sys::SysFs sysfs;
  sys::ReplayEthtool ethtool;
  CollectorOptions options;  // defaults
};

struct SimPipeline::CollectorRun {
  std::string name;
  double interval_s = 1;
  double next_due = 0;
  std::unique_ptr<Collector> collector;
};

SimPipeline::SimPipeline(std::unique_ptr<sim::Simulator> sim, PipelineOptions options)
    : options_(std::move(options)),
      sim_(std::move(sim)),
      log_(std::make_shared<std::ostringstream>()),
      logger_(std::make_shared<spdlog::logger>(
          "scenario", std::make_shared<spdlog::sinks::ostream_sink_mt>(*log_))) {
  logger_->set_pattern("%l %v");
  clock_.Set(options_.epoch);
  sources_ = std::make_unique<Sources>(sim_->sysfs_root(), sim_->ethtool_root());
}

SimPipeline::~SimPipeline() = default;

Result<std::unique_ptr<SimPipeline>> SimPipeline::Create(sim::Scenario scenario, std::string root,
                                                         PipelineOptions options) {
  const std::string preset = !options.preset.empty()    ? options.preset
                             : !scenario.preset.empty() ? scenario.preset
                                                        : std::string("hgx-roce");
  auto node = sim::BuildPreset(preset);
  if (!node) return Error(node.error());
  auto sim = sim::Simulator::Create(std::move(*node), std::move(scenario), std::move(root),
                                    {.seed = options.seed});
  if (!sim) return Error(sim.error());
  if (Status s = (*sim)->WriteInitial(); !s.ok()) return Error(s);
  std::unique_ptr<SimPipeline> pipeline(new SimPipeline(std::move(*sim), std::move(options)));
  if (Status s = pipeline->BuildCollectors(); !s.ok()) return Error(s);
  pipeline->BuildEngine();
  return pipeline;
}

Status SimPipeline::BuildCollectors() {
  collectors_.clear();
  for (const CollectorInfo& info : CollectorRegistry()) {
    if (!info.enabled_by_default) continue;
    CollectorContext context{.sysfs = sources_->sysfs,
                             .ethtool = &sources_->ethtool,
                             .clock = clock_,
                             .logger = logger_,
                             .options = sources_->options,
                             .interval = info.default_interval};
    auto collector = info.factory(context);
    if (!collector) return collector.error();
    auto run = std::make_unique<CollectorRun>();
    run->name = std::string(info.name);
    run->interval_s = std::chrono::duration<double>(info.default_interval).count();
    run->next_due = now_;  // every collector runs at the first step
    run->collector = std::move(*collector);
    collectors_.push_back(std::move(run));
  }
  return Status::Ok();
}

void SimPipeline::BuildEngine() {
  std::optional<detect::StateFile> state;
  if (!options_.state_file.empty()) state.emplace(options_.state_file, options_.boot_id);
  engine_ =
      std::make_unique<exporter::DetectorEngine>(DefaultDetectors(), clock_,
                                                 /*link_log=*/nullptr, std::move(state), logger_);
  engine_->tracker().Subscribe(
      [this](const detect::AnomalyTransition& t) { transitions_.push_back(t); });
  engine_->LoadState();
}

std::chrono::system_clock::time_point SimPipeline::At(double sim_seconds) const {
  return options_.epoch + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                              std::chrono::duration<double>(sim_seconds));
}

double SimPipeline::SimSeconds(std::chrono::system_clock::time_point t) const {
  return std::chrono::duration<double>(t - options_.epoch).count();
}

Status SimPipeline::Step(double sim_seconds) {
  auto injected = sim_->AdvanceTo(sim_seconds);
  if (!injected) return injected.error();
  injections_.insert(injections_.end(), injected->begin(), injected->end());
  now_ = sim_->now();
  clock_.Set(At(now_));
  for (auto& run : collectors_) {
    if (now_ + 1e-9 < run->next_due) continue;
    run->next_due = now_ + run->interval_s;
    MetricSink sink;
    Status status = run->collector->Collect(sink);
    if (!status.ok() && status.code() != StatusCode::kNoData) {
      ++collector_errors_;
      collector_error_text_ +=
          run->name + " t=" + std::to_string(now_) + ": " + status.ToString() + "\n";
    }
    collector_errors_ += sink.error_count();
    for (const Status& e : sink.errors()) {
      collector_error_text_ +=
          run->name + " t=" + std::to_string(now_) + ": " + e.ToString() + "\n";
    }
    auto snapshot = std::make_shared<exporter::Snapshot>();
    snapshot->collector = run->name;
    snapshot->time = clock_.Now();
    snapshot->families = sink.TakeFamilies();
    engine_->Submit(std::move(snapshot));
  }
  engine_->RunOnce();
  return Status::Ok();
}

Status SimPipeline::RunUntil(double sim_seconds, double step_s) {
  while (now_ + step_s <= sim_seconds + 1e-9) {
    if (Status s = Step(now_ + step_s); !s.ok()) return s;
  }
  if (now_ < sim_seconds) return Step(sim_seconds);
  return Status::Ok();
}

void SimPipeline::Restart() {
  engine_->SaveState();
  engine_.reset();
  collectors_.clear();
  // A restarted agent reads the same files; only the process state is new.
  if (Status s = BuildCollectors(); !s.ok()) {
    collector_errors_++;
    collector_error_text_ += "restart: " + s.ToString() + "\n";
  }
  BuildEngine();
}

}  // namespace fabricwatch::testing
