#include "tests/testing/sim_pipeline.h"

#include <spdlog/sinks/ostream_sink.h>

#include <cmath>
#include <stdexcept>

#include "collectors/collector_set.h"
#include "base/metric_sink.h"
#include "collectors/core/collector_info.h"
#include "collectors/ethtool_source/ethtool_replay.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/sysfs.h"
#include "detectors/registry.h"

namespace fabricwatch::testing {

std::vector<std::unique_ptr<detect::Detector>> DefaultDetectors(
    const std::map<std::string, detect::DetectorOptions>& options) {
  // Every registered detector enabled by default, with its defaults (or `options`), as the
  // agent builds them; a detector whose defaults do not build is a bug the scenario tests must
  // show.
  auto detectors = detect::BuildDetectors(
      [&](const detect::DetectorInfo& info) -> std::optional<detect::DetectorOptions> {
        auto selected = detect::DefaultDetectorSelection(info);
        auto given = options.find(std::string(info.name));
        if (selected && given != options.end()) return given->second;
        return selected;
      });
  if (!detectors) throw std::runtime_error("default detectors: " + detectors.error().ToString());
  return std::move(*detectors);
}

// The replay sources the collectors read, as the agent builds them for --path.sysfs and
// --path.ethtool.
struct SimPipeline::Sources {
  Sources(const std::string& sysfs_root, std::string ethtool_root)
      : sysfs(sysfs_root, fs), ethtool_root(std::move(ethtool_root)) {}
  sys::RealFileSystem fs;
  sys::SysFs sysfs;
  std::string ethtool_root;
};

struct SimPipeline::CollectorRun {
  std::string name;
  double interval_s = 1;
  double next_due = 0;
  BuiltCollector built;  // the collector and the ethtool source it reads
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
  const CollectorSources sources{.sysfs = sources_->sysfs,
                                 .clock = clock_,
                                 .new_ethtool = [this]() -> std::unique_ptr<sys::EthtoolSource> {
                                   return std::make_unique<sys::ReplayEthtool>(
                                       sources_->ethtool_root, sources_->fs);
                                 },
                                 .logger = [this](std::string_view) { return logger_; },
                                 .roots = sim_->roots(),
                                 .kmsg_cursor = kmsg_cursor_.get()};
  auto built = fabricwatch::BuildCollectors(sources, DefaultSelection);
  if (!built) return built.error();
  for (BuiltCollector& b : *built) {
    auto run = std::make_unique<CollectorRun>();
    run->name = std::string(b.info->name);
    run->interval_s = std::chrono::duration<double>(b.interval).count();
    run->next_due = now_;  // every collector runs at the first step
    run->built = std::move(b);
    collectors_.push_back(std::move(run));
  }
  return Status::Ok();
}

void SimPipeline::BuildEngine() {
  std::optional<detect::StateFile> state;
  if (!options_.state_file.empty()) state.emplace(options_.state_file, options_.boot_id);
  engine_ = std::make_unique<exporter::DetectorEngine>(
      DefaultDetectors(options_.detector_options), clock_,
      /*link_log=*/nullptr, std::move(state), logger_);
  engine_->SetKmsgCursor(kmsg_cursor_.get());
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
    Status status = run->built.collector->Collect(sink);
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
    snapshot->log_events = sink.TakeLogEvents();
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
  kmsg_cursor_ = std::make_unique<sys::KmsgCursor>();
  // A restarted agent reads the same files; only the process state is new.
  if (Status s = BuildCollectors(); !s.ok()) {
    collector_errors_++;
    collector_error_text_ += "restart: " + s.ToString() + "\n";
  }
  BuildEngine();
}

}  // namespace fabricwatch::testing
