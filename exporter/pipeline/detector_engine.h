#pragma once
// DetectorEngine: runs the detectors on their own thread (docs/design.md §2).
//
// Inputs arrive two ways and both wake the thread at once:
//   - every published snapshot (SnapshotStore::SetPublishListener → Submit(), a queue);
//   - rtnetlink link events (a second small thread blocks in LinkEventLog::WaitForEvents and
//     hands the new events over), so link_flap sees a carrier-down within milliseconds.
// After each batch of inputs, and at least every `tick` so that time-based clears happen without
// input, every detector is evaluated at clock.Now(). The combined findings then go through the
// cross-detector rules (detectors/core/cross_rules.h: one fault, one finding; they join ports
// through the node model) and the escalation of repeated warnings
// (detectors/core/escalation.h), and the AnomalyTracker turns the results into
// transitions (log line, hooks) and the anomaly metrics. Before the detectors run, the batch's
// snapshots update the node model (detectors/core/node_model.h), the one inventory of ports,
// netdevs, modules, PCI functions, peers and jobs: each snapshot reaches the detectors with the
// model as of that snapshot (SnapshotView::node), and the cross rules and attribution read the
// batch's last. Evidence metrics are rendered into a cached set after each evaluation: a scrape
// copies it and never waits for a detector.
// The state file is loaded before the start, saved every `save_interval`, after each
// transition and at Stop(); its failures are logged and counted, never fatal.
// Time (issue 39 item 7): detectors run on clock.Now(), in the agent an AgentClock that never
// steps (base/agent_clock.h). Each round the engine reads clock.WallOffset(); a
// change is a step of the wall clock: logged with its size, counted
// (fabricwatch_clock_steps_total). Shown times (the started timestamp, the state file) are
// rebased by the offset; the state file keeps it under "_clock" for the next load.
//
// Thread-safety: Submit() from any thread; Collect()/tracker() from HTTP threads.

#include <prometheus/metric_family.h>
#include <spdlog/logger.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "collectors/core/collector.h"
#include "base/metric_sink.h"
#include "collectors/sys/kmsg_cursor.h"
#include "collectors/sys/link_events.h"
#include "detectors/core/anomaly_tracker.h"
#include "detectors/core/attribution.h"
#include "detectors/core/cross_rules.h"
#include "detectors/core/detector.h"
#include "detectors/core/escalation.h"
#include "detectors/core/node_model.h"
#include "detectors/core/state_file.h"
#include "exporter/pipeline/snapshot_store.h"

namespace fabricwatch::exporter {

struct EngineOptions {
  std::chrono::milliseconds tick{1000};
  std::chrono::milliseconds save_interval{60000};
  // Repeated warnings of one entity escalate to a critical (detectors/core/escalation.h);
  // --detector.escalation-count / --detector.escalation-window.
  detect::EscalationOptions escalation;
  // Called for every finding after attribution (engine thread): adds what the agent knows of
  // the finding's port from outside the snapshots (the active probe's last result, issue 37).
  std::function<void(detect::Finding&)> annotate;
  // Detectors whose saved state LoadState() leaves out: they start fresh whatever the file
  // holds. `fabricwatch check` rereads the whole kernel log, so a log-fed detector's saved
  // history (driver_fault's lines) would count each line twice (exporter/check/check_look.cc).
  std::vector<std::string> skip_saved_state;
};

class DetectorEngine {
 public:
  DetectorEngine(std::vector<std::unique_ptr<detect::Detector>> detectors, const Clock& clock,
                 const sys::LinkEventLog* link_log, std::optional<detect::StateFile> state_file,
                 std::shared_ptr<spdlog::logger> logger, EngineOptions options = {});
  ~DetectorEngine();
  DetectorEngine(const DetectorEngine&) = delete;
  DetectorEngine& operator=(const DetectorEngine&) = delete;

  detect::AnomalyTracker& tracker() { return tracker_; }
  // The kmsg collector's position in the kernel log (collectors/sys/kmsg_cursor.h), kept in the
  // state file under "kmsg_cursor" and restored on the same boot only. Set before LoadState().
  void SetKmsgCursor(sys::KmsgCursor* cursor) { kmsg_cursor_ = cursor; }

  // Restores detector state and active anomalies; a missing file is info, a corrupt one a
  // warning (counted), never fatal. Call before Start().
  void LoadState();
  void Start();
  // Stops both threads and saves the state.
  void Stop();

  // Queues a snapshot for the detectors and wakes their thread; a snapshot of a collector that
  // no detector reads is dropped here (no lock, no wake-up: with the detectors off, sampling
  // costs no more than the collection itself).
  void Submit(std::shared_ptr<const Snapshot> snapshot);
  // Writes the state file now (also done periodically, on transitions and at Stop()).
  void SaveState();
  // Processes queued input and evaluates once, on the caller's thread (tests; not while
  // started).
  void RunOnce();

  // Anomaly metrics, evidence metrics and the engine's own metrics.
  std::vector<prometheus::MetricFamily> Collect() const;

  static std::span<const MetricDesc> Metrics();

 private:
  void Run(std::stop_token stop);
  void WatchLinks(std::stop_token stop);
  void RestoreKmsgCursor(const detect::SavedState& loaded);
  // The wall-minus-agent offset the saving agent recorded ("_clock"); zero when absent.
  std::chrono::system_clock::duration SavedWallOffset(const detect::SavedState& loaded);
  // Reads the clock's wall offset; a change since the last round is a step: logged, counted.
  void CheckClockStep();
  void Process(std::vector<std::shared_ptr<const Snapshot>> snapshots,
               std::vector<sys::LinkEvent> events);
  // Observe + Evaluate of every detector; a detector that throws is left out of `findings`.
  void Evaluate(const std::vector<std::shared_ptr<const Snapshot>>& snapshots,
                const std::vector<std::shared_ptr<const detect::NodeModel>>& models,
                const std::vector<sys::LinkEvent>& events, detect::TimePoint now,
                detect::FindingsByDetector& findings,
                std::vector<prometheus::MetricFamily>& evidence,
                std::map<std::string, double>& durations);

  std::vector<std::unique_ptr<detect::Detector>> detectors_;
  std::set<std::string, std::less<>> inputs_;  // every collector some detector reads
  const Clock& clock_;
  const sys::LinkEventLog* link_log_;
  sys::KmsgCursor* kmsg_cursor_ = nullptr;
  std::optional<detect::StateFile> state_file_;
  std::shared_ptr<spdlog::logger> logger_;
  EngineOptions options_;
  detect::AnomalyTracker tracker_;
  detect::CrossRules cross_rules_;  // engine thread only
  detect::NodeModelBuilder node_;   // engine thread only
  detect::Escalation escalation_;   // engine thread only; saved in the state file

  mutable std::mutex queue_mutex_;
  std::condition_variable_any queue_changed_;
  std::deque<std::shared_ptr<const Snapshot>> snapshots_;
  std::vector<sys::LinkEvent> events_;
  static constexpr size_t kMaxQueued = 256;

  mutable std::mutex metrics_mutex_;
  std::vector<prometheus::MetricFamily> evidence_;
  std::map<std::string, double> evaluation_seconds_;
  std::map<std::string, uint64_t> state_errors_{{"load", 0}, {"save", 0}};
  std::map<std::string, uint64_t> state_dropped_{
      {"future_timestamp", 0}, {"invalid_timestamp", 0}, {"out_of_range", 0}};
  uint64_t dropped_snapshots_ = 0;
  std::chrono::system_clock::duration wall_offset_{};  // as of the last round
  uint64_t clock_steps_ = 0;

  std::chrono::steady_clock::time_point last_save_{};
  bool dirty_ = false;
  std::jthread thread_;
  std::jthread link_thread_;
};

}  // namespace fabricwatch::exporter
