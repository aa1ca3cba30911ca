#include "exporter/pipeline/detector_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>

#include "collectors/sys/thread_name.h"
#include "detectors/core/state_check.h"

namespace fabricwatch::exporter {
namespace {

constexpr MetricDesc kEvaluationDuration{
    "fabricwatch_detector_evaluation_duration_seconds",
    "Time the detector's last evaluation took (observing the new input and Evaluate()).",
    MetricKind::kGauge,
    {"detector"}};
constexpr MetricDesc kStateErrors{
    "fabricwatch_state_file_errors_total",
    "Failures to load (missing files are not counted; corrupt or unreadable ones are, and are "
    "ignored) or save (--state.file) the detector state file.",
    MetricKind::kCounter,
    {"operation"}};
constexpr MetricDesc kStateDropped{
    "fabricwatch_state_entries_dropped_total",
    "Values of the state file dropped at load because they cannot be true: future_timestamp (a "
    "time after the clock: a clock stepped back or a copied file), invalid_timestamp, "
    "out_of_range (a penalty above its ceiling, a negative count, inf or NaN). The entry they "
    "belong to starts fresh.",
    MetricKind::kCounter,
    {"reason"}};
constexpr MetricDesc kDroppedSnapshots{
    "fabricwatch_detector_snapshots_dropped_total",
    "Collector snapshots the detector engine dropped unread because its queue was full (a "
    "detector far slower than the collectors); the detectors then see a gap in that input.",
    MetricKind::kCounter,
    {}};
constexpr MetricDesc kClockSteps{
    "fabricwatch_clock_steps_total",
    "Steps of the wall clock (NTP, an operator) of more than 1 s seen since the start. Windows, "
    "holds and rates run on the monotonic clock and do not move; shown times are rebased by "
    "fabricwatch_clock_wall_offset_seconds.",
    MetricKind::kCounter,
    {}};
constexpr MetricDesc kClockOffset{
    "fabricwatch_clock_wall_offset_seconds",
    "The wall clock minus the agent's detection clock (the wall clock at start advanced by the "
    "monotonic clock): the sum of the steps seen since the start, added to every time shown.",
    MetricKind::kGauge,
    {}};
constexpr MetricDesc kEngineMetrics[] = {kEvaluationDuration, kStateErrors, kStateDropped,
                                         kDroppedSnapshots,   kClockSteps,  kClockOffset};

std::vector<std::string> Names(const std::vector<std::unique_ptr<detect::Detector>>& detectors) {
  std::vector<std::string> names;
  for (const auto& d : detectors) names.emplace_back(d->name());
  return names;
}

// The state file's key for the escalation histories, beside the detectors' own (no detector
// name starts with an underscore).
constexpr std::string_view kEscalationStateKey = "_escalation";
constexpr std::string_view kKmsgCursorKey = "_kmsg_cursor";
// The wall clock minus the agent's clock at the save: the saved times are on the agent's clock.
constexpr std::string_view kClockKey = "_clock";

}  // namespace

std::span<const MetricDesc> DetectorEngine::Metrics() {
  static const std::vector<MetricDesc> all = [] {
    std::vector<MetricDesc> out(std::begin(kEngineMetrics), std::end(kEngineMetrics));
    for (const MetricDesc& d : detect::CrossRules::Metrics()) out.push_back(d);
    for (const MetricDesc& d : detect::Escalation::Metrics()) out.push_back(d);
    return out;
  }();
  return all;
}

DetectorEngine::DetectorEngine(std::vector<std::unique_ptr<detect::Detector>> detectors,
                               const Clock& clock, const sys::LinkEventLog* link_log,
                               std::optional<detect::StateFile> state_file,
                               std::shared_ptr<spdlog::logger> logger, EngineOptions options)
    : detectors_(std::move(detectors)),
      clock_(clock),
      link_log_(link_log),
      state_file_(std::move(state_file)),
      logger_(std::move(logger)),
      options_(options),
      tracker_(Names(detectors_), logger_),
      escalation_(options.escalation),
      wall_offset_(clock.WallOffset()) {
  escalation_.Track(Names(detectors_));
  for (const auto& d : detectors_) {
    evaluation_seconds_[std::string(d->name())] = 0;
    for (std::string& input : d->inputs()) inputs_.insert(std::move(input));
  }
  // The node model reads its collectors whoever else reads them (attribution needs the peers
  // and the jobs).
  if (!detectors_.empty()) {
    for (std::string_view input : detect::NodeModelBuilder::Collectors()) {
      inputs_.emplace(input);
    }
  }
}

DetectorEngine::~DetectorEngine() { Stop(); }

void DetectorEngine::LoadState() {
  if (!state_file_) return;
  auto loaded = state_file_->Load();
  if (!loaded) {
    if (loaded.error().code() == StatusCode::kNotFound) {
      logger_->info("no state file at {} yet; starting with fresh detector state",
                    state_file_->path());
    } else {
      logger_->warn("ignoring the state file: {}", loaded.error().ToString());
      std::lock_guard lock(metrics_mutex_);
      ++state_errors_["load"];
    }
    return;
  }
  size_t restored = 0;
  detect::StateLoadCheck check(clock_.Now(), SavedWallOffset(*loaded));
  for (const auto& detector : detectors_) {
    const std::string name(detector->name());
    if (!loaded->detectors.contains(name)) continue;
    if (std::find(options_.skip_saved_state.begin(), options_.skip_saved_state.end(), name) !=
        options_.skip_saved_state.end()) {
      continue;  // EngineOptions::skip_saved_state: starts fresh
    }
    Status status = Status::Ok();
    try {
      status = detector->LoadState(loaded->detectors.at(name), check);
    } catch (const std::exception& e) {
      status = Status(StatusCode::kInvalidArgument, e.what());
    }
    if (!status.ok()) {
      logger_->warn("ignoring the saved state of detector {} in {}: {}", name, state_file_->path(),
                    status.ToString());
      std::lock_guard lock(metrics_mutex_);
      ++state_errors_["load"];
    } else {
      ++restored;
    }
  }
  if (loaded->detectors.contains(std::string(kEscalationStateKey))) {
    Status status =
        escalation_.LoadState(loaded->detectors.at(std::string(kEscalationStateKey)), check);
    if (!status.ok()) {
      logger_->warn("ignoring the saved escalation history in {}: {}", state_file_->path(),
                    status.ToString());
      std::lock_guard lock(metrics_mutex_);
      ++state_errors_["load"];
    }
  }
  RestoreKmsgCursor(*loaded);
  if (loaded->boot_id != state_file_->boot_id()) {
    logger_->info(
        "state file {} is from another boot ({}): detector history restored, active "
        "anomalies re-detected from fresh counters",
        state_file_->path(), loaded->boot_id);
  } else if (Status s = tracker_.LoadState(loaded->anomalies, check); !s.ok()) {
    logger_->warn("ignoring the saved anomalies in {}: {}", state_file_->path(), s.ToString());
    std::lock_guard lock(metrics_mutex_);
    ++state_errors_["load"];
  }
  logger_->info("restored state of {} detector(s) and {} active anomaly(ies) from {}", restored,
                tracker_.Active().size(), state_file_->path());
  if (check.total_dropped() > 0) {
    std::string reasons;
    std::lock_guard lock(metrics_mutex_);
    for (const auto& [reason, count] : check.dropped()) {
      state_dropped_[reason] += count;
      reasons += fmt::format("{}{}={}", reasons.empty() ? "" : " ", reason, count);
    }
    logger_->warn(
        "state file {}: dropped {} value(s) that cannot be true ({}); saved {}s ago by the clock "
        "(negative: from the future); those entries start fresh",
        state_file_->path(), check.total_dropped(), reasons,
        std::chrono::duration_cast<std::chrono::seconds>(check.now() - loaded->saved).count());
  }
}

std::chrono::system_clock::duration DetectorEngine::SavedWallOffset(
    const detect::SavedState& loaded) {
  const auto it = loaded.detectors.find(std::string(kClockKey));
  if (it == loaded.detectors.end()) return {};  // saved before issue 39: on the wall clock
  const nlohmann::json& offset =
      it->is_object() ? it->value("wall_offset_seconds", nlohmann::json()) : nlohmann::json();
  // Within a century: a sane step, never an overflow of the time points it shifts.
  if (!offset.is_number() || !std::isfinite(offset.get<double>()) ||
      std::abs(offset.get<double>()) > 3.2e9) {
    logger_->warn("ignoring the saved clock offset in {}: not {{\"wall_offset_seconds\": S}}",
                  state_file_->path());
    std::lock_guard lock(metrics_mutex_);
    ++state_errors_["load"];
    return {};
  }
  const double seconds = offset.get<double>();
  if (seconds != 0) {
    logger_->info(
        "state file {}: saved by an agent whose wall clock had stepped by {:+.3f}s; "
        "its times are rebased to wall time",
        state_file_->path(), seconds);
  }
  return std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::duration<double>(seconds));
}

void DetectorEngine::RestoreKmsgCursor(const detect::SavedState& loaded) {
  if (kmsg_cursor_ == nullptr || !loaded.detectors.contains(std::string(kKmsgCursorKey))) return;
  // Sequence numbers restart at boot: another boot's position means nothing here.
  if (loaded.boot_id != state_file_->boot_id()) return;
  const nlohmann::json& saved = loaded.detectors.at(std::string(kKmsgCursorKey));
  if (!saved.is_object() || !saved.contains("sequence") ||
      !saved.at("sequence").is_number_unsigned()) {
    logger_->warn("ignoring the saved kernel log position in {}: not {{\"sequence\": N}}",
                  state_file_->path());
    std::lock_guard lock(metrics_mutex_);
    ++state_errors_["load"];
    return;
  }
  kmsg_cursor_->Set(saved.at("sequence").get<uint64_t>());
}

void DetectorEngine::Start() {
  last_save_ = std::chrono::steady_clock::now();
  thread_ = std::jthread([this](std::stop_token stop) {
    sys::SetCurrentThreadName("fw-detect");
    Run(stop);
  });
  if (link_log_ != nullptr) {
    link_thread_ = std::jthread([this](std::stop_token stop) {
      sys::SetCurrentThreadName("fw-links");
      WatchLinks(stop);
    });
  }
}

void DetectorEngine::Stop() {
  const bool was_running = thread_.joinable();
  link_thread_.request_stop();
  thread_.request_stop();
  if (link_thread_.joinable()) link_thread_.join();
  if (thread_.joinable()) thread_.join();
  if (was_running) SaveState();
}

void DetectorEngine::Submit(std::shared_ptr<const Snapshot> snapshot) {
  if (!inputs_.contains(snapshot->collector)) return;
  {
    std::lock_guard lock(queue_mutex_);
    if (snapshots_.size() >= kMaxQueued) {
      snapshots_.pop_front();  // a stuck detector must not grow memory without bound
      ++dropped_snapshots_;
    }
    snapshots_.push_back(std::move(snapshot));
  }
  queue_changed_.notify_one();
}

void DetectorEngine::WatchLinks(std::stop_token stop) {
  uint64_t seen = link_log_->total();
  while (!stop.stop_requested()) {
    const uint64_t total = link_log_->WaitForEvents(seen, std::chrono::milliseconds(200));
    if (total <= seen) continue;
    std::vector<sys::LinkEvent> events =
        link_log_->Recent(static_cast<size_t>(std::min<uint64_t>(total - seen, 4096)));
    seen = total;
    {
      std::lock_guard lock(queue_mutex_);
      events_.insert(events_.end(), std::make_move_iterator(events.begin()),
                     std::make_move_iterator(events.end()));
    }
    queue_changed_.notify_one();
  }
}

void DetectorEngine::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    std::vector<std::shared_ptr<const Snapshot>> snapshots;
    std::vector<sys::LinkEvent> events;
    {
      std::unique_lock lock(queue_mutex_);
      queue_changed_.wait_for(lock, stop, options_.tick,
                              [&] { return !snapshots_.empty() || !events_.empty(); });
      snapshots.assign(snapshots_.begin(), snapshots_.end());
      snapshots_.clear();
      events.swap(events_);
    }
    if (stop.stop_requested()) break;
    Process(std::move(snapshots), std::move(events));
    if (dirty_ || std::chrono::steady_clock::now() - last_save_ >= options_.save_interval) {
      SaveState();
    }
  }
}

void DetectorEngine::RunOnce() {
  std::vector<std::shared_ptr<const Snapshot>> snapshots;
  std::vector<sys::LinkEvent> events;
  {
    std::lock_guard lock(queue_mutex_);
    snapshots.assign(snapshots_.begin(), snapshots_.end());
    snapshots_.clear();
    events.swap(events_);
  }
  Process(std::move(snapshots), std::move(events));
}

void DetectorEngine::Evaluate(const std::vector<std::shared_ptr<const Snapshot>>& snapshots,
                              const std::vector<std::shared_ptr<const detect::NodeModel>>& models,
                              const std::vector<sys::LinkEvent>& events, detect::TimePoint now,
                              detect::FindingsByDetector& findings,
                              std::vector<prometheus::MetricFamily>& evidence,
                              std::map<std::string, double>& durations) {
  for (const auto& detector : detectors_) {
    const std::string name(detector->name());
    const auto start = std::chrono::steady_clock::now();
    // No exception crosses the detector boundary: a throwing detector is logged and skipped
    // for this round (its findings stay as they were); the others run.
    try {
      const std::vector<std::string> inputs = detector->inputs();
      for (size_t i = 0; i < snapshots.size(); ++i) {
        const Snapshot& snapshot = *snapshots[i];
        if (std::find(inputs.begin(), inputs.end(), snapshot.collector) == inputs.end()) {
          continue;
        }
        detector->Observe(detect::SnapshotView{snapshot.collector, snapshot.time, snapshot.families,
                                               snapshot.log_events, models[i]});
      }
      if (!events.empty()) detector->OnLinkEvents(events);
      findings[name] = detector->Evaluate(now);
      for (const std::string& line : detector->TakeInfoLines()) {
        logger_->info("detector {}: {}", name, line);
      }
      MetricSink sink;
      detector->Export(sink);
      for (const Status& error : sink.errors()) {
        logger_->debug("detector {} evidence metric dropped: {}", name, error.ToString());
      }
      auto families = sink.TakeFamilies();
      evidence.insert(evidence.end(), std::make_move_iterator(families.begin()),
                      std::make_move_iterator(families.end()));
    } catch (const std::exception& e) {
      findings.erase(name);
      logger_->error("detector {} failed: {}", name, e.what());
    }
    durations[name] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
}

void DetectorEngine::Process(std::vector<std::shared_ptr<const Snapshot>> snapshots,
                             std::vector<sys::LinkEvent> events) {
  // The node model first: each snapshot is observed with the model as of that snapshot (a batch
  // with two rdma snapshots judges each on its own ports), and the cross rules and attribution
  // read the batch's last. A model is copied only when a snapshot changed it.
  std::vector<std::shared_ptr<const detect::NodeModel>> models;
  models.reserve(snapshots.size());
  for (const auto& snapshot : snapshots) {
    node_.Observe(snapshot->collector, snapshot->families);
    models.push_back(node_.Current());
  }
  const std::shared_ptr<const detect::NodeModel> node = node_.Current();
  std::vector<prometheus::MetricFamily> evidence;
  std::map<std::string, double> durations;
  detect::FindingsByDetector findings;
  CheckClockStep();
  const auto now = clock_.Now();
  Evaluate(snapshots, models, events, now, findings, evidence, durations);
  for (const detect::Suppression& s : cross_rules_.Apply(findings, *node)) {
    logger_->debug(
        "finding suppressed rule={} detector={} severity={} {} cause=\"{}\" reason=\"{}\"",
        s.rule->name, s.detector, detect::SeverityName(s.finding.severity),
        detect::EntityText(s.finding.entity), s.cause, s.finding.reason);
  }
  for (auto& [name, list] : findings) {
    for (detect::Finding& finding : list) {
      detect::Attribute(finding, *node);
      if (options_.annotate) options_.annotate(finding);
    }
    escalation_.Apply(name, now, list);
    if (!tracker_.Update(name, now, std::move(list)).empty()) dirty_ = true;
  }
  MetricSink sink;
  cross_rules_.Export(sink);
  escalation_.Export(sink);
  auto own = sink.TakeFamilies();
  evidence.insert(evidence.end(), std::make_move_iterator(own.begin()),
                  std::make_move_iterator(own.end()));
  std::lock_guard lock(metrics_mutex_);
  evidence_ = std::move(evidence);
  for (auto& [name, seconds] : durations) evaluation_seconds_[name] = seconds;
}

void DetectorEngine::CheckClockStep() {
  const auto offset = clock_.WallOffset();
  if (offset == wall_offset_) return;
  const double step = std::chrono::duration<double>(offset - wall_offset_).count();
  logger_->warn(
      "the wall clock stepped {} by {:.3f}s (now {:+.3f}s from the agent's monotonic detection "
      "clock): windows and holds keep their time; shown times are rebased",
      step < 0 ? "back" : "forward", std::abs(step), std::chrono::duration<double>(offset).count());
  std::lock_guard lock(metrics_mutex_);
  wall_offset_ = offset;
  ++clock_steps_;
}

void DetectorEngine::SaveState() {
  dirty_ = false;
  last_save_ = std::chrono::steady_clock::now();
  if (!state_file_) return;
  nlohmann::json detectors = nlohmann::json::object();
  for (const auto& detector : detectors_) {
    try {
      detectors[std::string(detector->name())] = detector->SaveState();
    } catch (const std::exception& e) {
      logger_->error("detector {} could not save its state: {}", detector->name(), e.what());
    }
  }
  detectors[std::string(kEscalationStateKey)] = escalation_.SaveState();
  if (kmsg_cursor_ != nullptr) {
    if (auto sequence = kmsg_cursor_->Get()) {
      detectors[std::string(kKmsgCursorKey)] = {{"sequence", *sequence}};
    }
  }
  // The times saved are the agent's; `saved` is wall time, and "_clock" what rebases the rest.
  const auto offset = clock_.WallOffset();
  detectors[std::string(kClockKey)] = {
      {"wall_offset_seconds", std::chrono::duration<double>(offset).count()}};
  Status status = state_file_->Save(detectors, tracker_.SaveState(), clock_.Now() + offset);
  if (!status.ok()) {
    logger_->warn("saving the state file failed: {}", status.ToString());
    std::lock_guard lock(metrics_mutex_);
    ++state_errors_["save"];
  }
}

std::vector<prometheus::MetricFamily> DetectorEngine::Collect() const {
  const auto offset = clock_.WallOffset();
  std::vector<prometheus::MetricFamily> families = tracker_.Collect(offset);
  MetricSink sink;
  sink.Add(kClockOffset, {}, std::chrono::duration<double>(offset).count());
  {
    std::lock_guard lock(metrics_mutex_);
    sink.Add(kClockSteps, {}, static_cast<double>(clock_steps_));
    families.insert(families.end(), evidence_.begin(), evidence_.end());
    for (const auto& [name, seconds] : evaluation_seconds_) {
      sink.Add(kEvaluationDuration, {{"detector", name}}, seconds);
    }
    if (state_file_) {
      for (const auto& [operation, count] : state_errors_) {
        sink.Add(kStateErrors, {{"operation", operation}}, static_cast<double>(count));
      }
      for (const auto& [reason, count] : state_dropped_) {
        sink.Add(kStateDropped, {{"reason", reason}}, static_cast<double>(count));
      }
    }
  }
  {
    std::lock_guard lock(queue_mutex_);
    sink.Add(kDroppedSnapshots, {}, static_cast<double>(dropped_snapshots_));
  }
  auto own = sink.TakeFamilies();
  families.insert(families.end(), std::make_move_iterator(own.begin()),
                  std::make_move_iterator(own.end()));
  return families;
}

}  // namespace fabricwatch::exporter
