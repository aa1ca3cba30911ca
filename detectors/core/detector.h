#pragma once
// The Detector interface, its findings and the anomaly transitions other parts consume
// (docs/design.md §4–5, docs/detection.md).
//
// A detector is a deterministic function of the snapshots it is fed and the times they carry: it
// reads no device and no wall clock of its own, so scenario tests drive it with simulated time.
//   - Observe() gets every new snapshot of the collectors it lists in inputs(), in order;
//   - OnLinkEvents() gets rtnetlink carrier transitions as they arrive (link_flap wakes on them);
//   - Evaluate(now) returns the complete set of findings active at `now`, hysteresis and
//     hold-down applied inside the detector (raise and clear thresholds differ).
// The AnomalyTracker (detectors/core/anomaly_tracker.h) diffs successive Evaluate() results into
// raise/clear transitions, keeps start times, and exports the anomaly contract:
//   fabric_anomaly_active{detector,severity,<entity>} 1
//   fabric_anomaly_value{detector,severity,<entity>}  the evidence value that triggered it
//   fabric_anomaly_started_timestamp_seconds{detector,severity,<entity>}
//   fabric_anomaly_transitions_total{detector,severity,transition="raise|clear"}
// Entity labels, in this order where they apply: device, port, netdev, priority, lane, role,
// setting
// (docs/design.md §5). A finding's identity is (detector, severity, entity).
//
// Thread-safety: none; the detector engine calls a detector from one thread.

#include <prometheus/metric_family.h>

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/log_events.h"
#include "base/metric_sink.h"
#include "base/status.h"

namespace fabricwatch::sys {
struct LinkEvent;
}  // namespace fabricwatch::sys

namespace fabricwatch::detect {

using TimePoint = std::chrono::system_clock::time_point;
class StateLoadCheck;  // detectors/core/state_check.h
class NodeModel;       // detectors/core/node_model.h
// The model of a node no collector has reported on yet: no ports, no netdevs, nothing.
const NodeModel& EmptyNodeModel();

enum class Severity { kInfo, kWarning, kCritical };
std::string_view SeverityName(Severity severity);

// `value` with `digits` decimals, for the numbers in a finding's reason ("71.9 °C", "-13.20 dBm").
std::string FormatFixed(double value, int digits = 1);
// "info", "warning", "critical" (the state file and the API read severities back).
bool ParseSeverity(std::string_view name, Severity* severity);

// Entity label name/value pairs, in the contract order (device, port, netdev, priority, lane,
// role, setting), only those that apply.
using EntityLabels = std::vector<std::pair<std::string, std::string>>;

struct Evidence {
  std::string name;  // snake_case, with its unit: "pause_ratio", "temperature_celsius"
  double value = 0;
};

struct Finding {
  Severity severity = Severity::kWarning;
  EntityLabels entity;
  double value = 0;                // the evidence value that triggered it (fabric_anomaly_value)
  std::vector<Evidence> evidence;  // every value a human needs to confirm it
  std::string reason;              // one line, names the entity and the numbers
  // Node-local and safe to act on with a drain hook. Never true for a PFC storm victim or for
  // maintenance (module unplug).
  bool drain_eligible = false;
  // Kernel log lines that support it (driver_fault's own, link_flap's cause), oldest first, at
  // most kMaxLogLinesPerEvent (base/log_events.h).
  std::vector<LogLine> log = {};
  // Attribution (detectors/core/attribution.h, filled by the engine, not by detectors): the
  // neighbour at the far end of the finding's port ("peer_name peer_port") and the jobs on its
  // RDMA device ("slurm:1234"); empty when unknown.
  std::string peer = {};
  std::vector<std::string> jobs = {};
};

// One collector snapshot as a detector sees it.
struct SnapshotView {
  std::string_view collector;
  TimePoint time;  // when the collection started
  const std::vector<prometheus::MetricFamily>& families;
  // The log events of the collection (collector `kmsg` only; base/log_events.h).
  std::span<const LogEvent> log_events = {};
  // The node as every collector reported it so far (detectors/core/node_model.h): the ports,
  // their netdevs and link layers, and the rest. Read the inventory from here (Node()), never
  // rebuild it from a snapshot's families. The engine gives each snapshot the model as of that
  // snapshot; it is immutable, so a detector may keep the pointer for its Evaluate(). Null:
  // nothing known.
  std::shared_ptr<const NodeModel> node = nullptr;

  const NodeModel& Node() const { return node ? *node : EmptyNodeModel(); }

  // True when the snapshot comes from the collector a contract header names (issue 36):
  // `snapshot.From<rdma::kCollector>()`. The argument is a reference, so a string literal does
  // not compile and a misspelt collector is an unknown name, not a snapshot that never matches.
  template <const std::string_view& Collector>
  bool From() const {
    return collector == Collector;
  }
};

// A raise or clear of one finding, as the tracker reports it to logs, hooks and the API.
struct AnomalyTransition {
  std::string detector;
  bool raised = true;  // false: cleared
  TimePoint time;
  TimePoint started;  // when the finding was raised (== time for a raise)
  Finding finding;    // for a clear: the finding as it was last active
};

// Detector options: the YAML keys of `detectors.<name>` merged with the flags
// --detector.<name>.<key>; the factory validates and converts them (durations via ParseDuration).
using DetectorOptions = std::map<std::string, std::string, std::less<>>;

class Detector {
 public:
  virtual ~Detector() = default;
  virtual std::string_view name() const = 0;
  // The collectors whose snapshots Observe() wants.
  virtual std::vector<std::string> inputs() const = 0;
  virtual void Observe(const SnapshotView& snapshot) = 0;
  virtual void OnLinkEvents(const std::vector<sys::LinkEvent>& /*events*/) {}
  virtual std::vector<Finding> Evaluate(TimePoint now) = 0;
  // The detector's own evidence series (pause ratios, BER, flap penalties, ...), named fabric_*.
  virtual void Export(MetricSink& /*sink*/) const {}
  // State that must survive a restart (flap penalties, optics baselines keyed by module serial).
  virtual nlohmann::json SaveState() const { return nlohmann::json::object(); }
  // Values are checked through `check` (detectors/core/state_check.h): a timestamp from the
  // future or a number out of the detector's bounds drops its entry, counted, never a finding.
  virtual Status LoadState(const nlohmann::json& /*state*/, StateLoadCheck& /*check*/) {
    return Status::Ok();
  }
  // Lines for the agent's log at info that are not findings (link_degraded: "the node was
  // reconfigured, the expected shape is learned again"); the engine takes them after each
  // Evaluate() and logs them with the detector's name.
  virtual std::vector<std::string> TakeInfoLines() { return {}; }
};

}  // namespace fabricwatch::detect
