#include "detectors/driver_fault/driver_fault.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "collectors/kmsg/kmsg_metrics.h"
#include "collectors/kmsg/kmsg_patterns.h"
#include "collectors/optics/optics_metrics.h"
#include "detectors/core/hysteresis.h"
#include "detectors/core/snapshot_lookup.h"
#include "detectors/core/state_check.h"
#include "detectors/driver_fault/driver_fault_metrics.h"
#include "detectors/driver_fault/event_history.h"

namespace fabricwatch::detect {
namespace {

using kmsg::EventClass;

constexpr std::string_view kName = "driver_fault";

// Keys, defaults and the source of each default.
constexpr DetectorOptionSpec kOptions[] = {
    {"fatal-hold",
     "How long a firmware fatal, health failure, fatal AER or slot power loss stays raised after "
     "its last log line. Judgement: the device needs a reset or a reboot, which an on-call must "
     "see; one hour outlives a page",
     "1h"},
    {"fatal-drain-eligible",
     "Whether those critical findings are drain-eligible. The function is lost or about to be "
     "(docs/reference.md §9.3)",
     "true"},
    {"cmd-timeout-count",
     "Command timeouts within cmd-timeout-window that warn. Judgement: one timeout can be a "
     "busy firmware; three in ten minutes is a pattern (gpud and NVSentinel match the line once)",
     "3"},
    {"cmd-timeout-window", "Window of the command timeout count. Judgement", "10m"},
    {"cmd-timeout-escalate-after",
     "Command timeouts that keep the warning raised this long escalate it to critical (not "
     "drained). Judgement: like link_flap's micro-flap escalation",
     "30m"},
    {"module-hold",
     "How long a module error (high temperature, bad cable, power budget, ...) or a degraded "
     "function (transmit timeout, a reset it recovered from) stays raised after its last line. "
     "Judgement: mlx5 repeats the event while it lasts (events.c)",
     "10m"},
    {"flood-count",
     "Lines of one event on one device within flood-window that make a flood finding (command "
     "failures, QP/CQ errors, correctable AER). Judgement: the kernel rate limit lets about 10 "
     "lines per 5 s through (docs/reference.md §9.10); 100 a minute is that limit for a minute",
     "100"},
    {"flood-window", "Window of the flood count", "1m"},
};

using driver_fault::kWindowLines;
constexpr MetricDesc kMetrics[] = {kWindowLines};

// What driver_fault reads (detectors/core/inputs.h). The kmsg family makes the engine hand it
// the kmsg snapshots, whose log events it reads.
constexpr MetricInput kInputs[] = {
    {kmsg::kEvents, {"device", "netdev", "event"}},
    {optics::kInfo, {"netdev", "vendor", "part_number", "serial"}},
};

struct DriverFaultOptions {
  Duration fatal_hold{};
  bool fatal_drain_eligible = true;
  uint64_t cmd_timeout_count = 0;
  Duration cmd_timeout_window{};
  Duration cmd_timeout_escalate_after{};
  Duration module_hold{};
  uint64_t flood_count = 0;
  Duration flood_window{};
};

using EntityKey = std::pair<std::string, std::string>;  // device, netdev

struct EntityState {
  std::map<std::string, EventHistory, std::less<>> events;  // by event name
  std::optional<TimePoint> cmd_timeout_since;               // the timeout warning's start
};

// One rule's verdict on one entity, before the entity's signals become one finding.
struct Signal {
  Severity severity = Severity::kWarning;
  bool drain_eligible = false;
  double value = 0;
  std::string reason;
  std::vector<Evidence> evidence;
  std::vector<const EventHistory*> sources;  // for the log lines
};

std::string Times(uint64_t count) { return "\xc3\x97" + std::to_string(count); }  // ×N

class DriverFaultDetector final : public Detector {
 public:
  explicit DriverFaultDetector(DriverFaultOptions options) : options_(options) {}

  std::string_view name() const override { return kName; }
  std::vector<std::string> inputs() const override { return InputCollectors(kInputs); }

  void Observe(const SnapshotView& snapshot) override {
    if (snapshot.From<optics::kCollector>()) return ObserveModules(snapshot);
    for (const LogEvent& event : snapshot.log_events) {
      const kmsg::KernelEventPattern* pattern = kmsg::FindKernelEvent(event.event);
      if (pattern == nullptr || pattern->event_class == EventClass::kLinkCause ||
          pattern->event_class == EventClass::kCountOnly) {
        continue;
      }
      entities_[{event.device, event.netdev}].events[event.event].Add(event);
    }
  }

  std::vector<Finding> Evaluate(TimePoint now) override {
    std::vector<Finding> findings;
    window_lines_.clear();
    for (auto it = entities_.begin(); it != entities_.end();) {
      auto& [key, state] = *it;
      std::vector<Signal> signals = Judge(key, state, now);
      if (!signals.empty()) findings.push_back(OneFinding(key, std::move(signals)));
      Prune(state, now);
      it = state.events.empty() && !state.cmd_timeout_since ? entities_.erase(it) : std::next(it);
    }
    return findings;
  }

  void Export(MetricSink& sink) const override {
    for (const auto& [key, lines] : window_lines_) {
      const auto& [device, netdev, event] = key;
      sink.Add(kWindowLines, {{"device", device}, {"netdev", netdev}, {"event", event}},
               static_cast<double>(lines));
    }
  }

  nlohmann::json SaveState() const override {
    nlohmann::json entities = nlohmann::json::array();
    for (const auto& [key, state] : entities_) {
      nlohmann::json events = nlohmann::json::object();
      for (const auto& [event, history] : state.events) events[event] = history.Save();
      nlohmann::json entry = {{"device", key.first}, {"netdev", key.second}, {"events", events}};
      if (state.cmd_timeout_since) {
        entry["cmd_timeout_since"] = EpochSeconds(*state.cmd_timeout_since);
      }
      entities.push_back(std::move(entry));
    }
    return {{"version", 1}, {"entities", entities}};
  }

  Status LoadState(const nlohmann::json& state, StateLoadCheck& check) override {
    if (!state.is_object() || state.value("version", 0) != 1 || !state.contains("entities") ||
        !state["entities"].is_array()) {
      return Status(StatusCode::kInvalidArgument, "driver_fault state: not version 1");
    }
    std::map<EntityKey, EntityState> loaded;
    for (const auto& entry : state["entities"]) {
      if (!entry.is_object() || !entry.contains("device") || !entry["device"].is_string() ||
          !entry.contains("netdev") || !entry["netdev"].is_string() || !entry.contains("events") ||
          !entry["events"].is_object()) {
        return Status(StatusCode::kInvalidArgument, "driver_fault state: malformed entity");
      }
      EntityState& entity = loaded[{entry["device"], entry["netdev"]}];
      for (const auto& [event, history] : entry["events"].items()) {
        // Only events the table still has: a renamed pattern's history is dropped.
        if (kmsg::FindKernelEvent(event) == nullptr) continue;
        if (Status s = entity.events[event].Load(history, check); !s.ok()) return s;
      }
      if (entry.contains("cmd_timeout_since")) {
        entity.cmd_timeout_since = check.Past(entry["cmd_timeout_since"]);
      }
    }
    entities_ = std::move(loaded);
    return Status::Ok();
  }

 private:
  void ObserveModules(const SnapshotView& snapshot) {
    modules_.clear();
    ForEachSample(snapshot.families, optics::kInfo,
                  [&](const prometheus::ClientMetric& metric, double) {
                    auto label = [&](LabelOf<optics::kInfo> name) {
                      return std::string(Label<optics::kInfo>(metric, name));
                    };
                    const std::string netdev = label("netdev");
                    if (netdev.empty()) return;
                    // Only what the module's EEPROM gave: "Mellanox MMA4Z00-NS serial MT1",
                    // never "  serial " for a module whose identity was not read.
                    std::string identity;
                    for (const std::string& part : {label("vendor"), label("part_number")}) {
                      if (!part.empty()) identity += (identity.empty() ? "" : " ") + part;
                    }
                    if (const std::string serial = label("serial"); !serial.empty()) {
                      identity += (identity.empty() ? "serial " : " serial ") + serial;
                    }
                    if (!identity.empty()) modules_[netdev] = std::move(identity);
                  });
  }

  std::vector<Signal> Judge(const EntityKey& key, EntityState& state, TimePoint now);
  Finding OneFinding(const EntityKey& key, std::vector<Signal> signals) const;
  void Prune(EntityState& state, TimePoint now) const;
  Duration WindowOf(EventClass event_class) const;
  void NoteWindow(const EntityKey& key, std::string_view event, uint64_t lines) {
    window_lines_[{key.first, key.second, std::string(event)}] = lines;
  }

  DriverFaultOptions options_;
  std::map<EntityKey, EntityState> entities_;
  std::map<std::string, std::string, std::less<>> modules_;  // netdev -> "vendor part serial S"
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> window_lines_;
};

std::vector<Signal> DriverFaultDetector::Judge(const EntityKey& key, EntityState& state,
                                               TimePoint now) {
  Signal fatal{.severity = Severity::kCritical, .drain_eligible = options_.fatal_drain_eligible};
  Signal module;
  Signal degraded;
  std::vector<Signal> floods;
  uint64_t timeouts = 0;
  std::vector<const EventHistory*> timeout_sources;
  for (const auto& [event, history] : state.events) {
    const kmsg::KernelEventPattern* pattern = kmsg::FindKernelEvent(event);
    if (pattern == nullptr) continue;
    switch (pattern->event_class) {
      case EventClass::kFatal:
        if (now - history.last() < options_.fatal_hold) {
          const uint64_t lines = history.CountAfter(now - options_.fatal_hold);
          NoteWindow(key, event, lines);
          fatal.value += static_cast<double>(lines);
          fatal.reason += (fatal.reason.empty() ? "" : ", ") + event + " " + Times(lines);
          fatal.evidence.push_back({event + "_lines", static_cast<double>(lines)});
          fatal.sources.push_back(&history);
        }
        break;
      case EventClass::kCommandTimeout: {
        const uint64_t lines = history.CountAfter(now - options_.cmd_timeout_window);
        NoteWindow(key, event, lines);
        timeouts += lines;
        if (lines > 0) timeout_sources.push_back(&history);
        break;
      }
      case EventClass::kModule:
      case EventClass::kDegraded:
        if (now - history.last() < options_.module_hold) {
          Signal& signal = pattern->event_class == EventClass::kModule ? module : degraded;
          const uint64_t lines = history.CountAfter(now - options_.module_hold);
          NoteWindow(key, event, lines);
          signal.value += static_cast<double>(lines);
          signal.reason += (signal.reason.empty() ? "" : ", ") + event + " " + Times(lines);
          signal.evidence.push_back({event + "_lines", static_cast<double>(lines)});
          signal.sources.push_back(&history);
        }
        break;
      case EventClass::kNoisy: {
        const uint64_t lines = history.CountAfter(now - options_.flood_window);
        NoteWindow(key, event, lines);
        if (lines >= options_.flood_count) {
          floods.push_back({.value = static_cast<double>(lines),
                            .reason = "flood of " + event + ": " + std::to_string(lines) +
                                      " lines in " +
                                      FormatFixed(Seconds(options_.flood_window), 0) + " s",
                            .evidence = {{event + "_lines", static_cast<double>(lines)}},
                            .sources = {&history}});
        }
        break;
      }
      case EventClass::kLinkCause:
      case EventClass::kCountOnly:
        break;
    }
  }
  std::vector<Signal> signals;
  if (!fatal.sources.empty()) {
    fatal.reason = "driver reports the function failing: " + fatal.reason;
    signals.push_back(std::move(fatal));
  }
  if (timeouts >= options_.cmd_timeout_count) {
    if (!state.cmd_timeout_since) state.cmd_timeout_since = now;
    const bool escalated = now - *state.cmd_timeout_since >= options_.cmd_timeout_escalate_after;
    signals.push_back(
        {.severity = escalated ? Severity::kCritical : Severity::kWarning,
         .value = static_cast<double>(timeouts),
         .reason =
             std::to_string(timeouts) + " firmware command timeouts in " +
             FormatFixed(Seconds(options_.cmd_timeout_window) / 60, 0) + " min" +
             (escalated ? ", persisting for " +
                              FormatFixed(Seconds(now - *state.cmd_timeout_since) / 60, 0) + " min"
                        : ""),
         .evidence = {{"cmd_timeout_lines", static_cast<double>(timeouts)}},
         .sources = timeout_sources});
  } else {
    state.cmd_timeout_since.reset();
  }
  if (!module.sources.empty()) {
    module.reason = "module or slot error: " + module.reason;
    if (auto it = modules_.find(key.second); it != modules_.end()) {
      module.reason += " (module " + it->second + ")";
    }
    signals.push_back(std::move(module));
  }
  if (!degraded.sources.empty()) {
    degraded.reason = "driver reports the function degraded or recovering: " + degraded.reason;
    signals.push_back(std::move(degraded));
  }
  for (Signal& flood : floods) signals.push_back(std::move(flood));
  return signals;
}

Finding DriverFaultDetector::OneFinding(const EntityKey& key, std::vector<Signal> signals) const {
  std::stable_sort(signals.begin(), signals.end(),
                   [](const Signal& a, const Signal& b) { return a.severity > b.severity; });
  Finding finding;
  finding.severity = signals.front().severity;
  finding.value = signals.front().value;
  if (!key.first.empty()) finding.entity.emplace_back("device", key.first);
  if (!key.second.empty()) finding.entity.emplace_back("netdev", key.second);
  // A line that named no function of a node with several candidates is the node's
  // (collectors/kmsg/kmsg_entity.h): the finding says so, and its log lines name what they can.
  const std::string who = key.first.empty() && key.second.empty()
                              ? std::string("node (the kernel log line names no device)")
                          : key.first.empty()  ? key.second
                          : key.second.empty() ? key.first
                                               : key.first + " (" + key.second + ")";
  std::vector<LogLine> lines;
  for (const Signal& signal : signals) {
    // A lower-severity signal never makes the finding drain-eligible.
    if (signal.severity == finding.severity && signal.drain_eligible) finding.drain_eligible = true;
    finding.reason += (finding.reason.empty() ? who + ": " : "; ") + signal.reason;
    finding.evidence.insert(finding.evidence.end(), signal.evidence.begin(), signal.evidence.end());
    for (const EventHistory* history : signal.sources) {
      lines.insert(lines.end(), history->lines().begin(), history->lines().end());
    }
  }
  finding.reason += " (kernel log)";
  std::stable_sort(lines.begin(), lines.end(),
                   [](const LogLine& a, const LogLine& b) { return a.time < b.time; });
  if (lines.size() > kMaxLogLinesPerEvent) {
    lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(kMaxLogLinesPerEvent));
  }
  finding.log = std::move(lines);
  return finding;
}

void DriverFaultDetector::Prune(EntityState& state, TimePoint now) const {
  for (auto it = state.events.begin(); it != state.events.end();) {
    // Each event is kept as long as its rule looks back, so an hour of flood keeps a minute of
    // buckets, not an hour.
    const kmsg::KernelEventPattern* pattern = kmsg::FindKernelEvent(it->first);
    const Duration keep = pattern == nullptr ? Duration(0) : WindowOf(pattern->event_class);
    it->second.Prune(now - keep);
    it = now - it->second.last() >= keep ? state.events.erase(it) : std::next(it);
  }
}

Duration DriverFaultDetector::WindowOf(EventClass event_class) const {
  switch (event_class) {
    case EventClass::kFatal:
      return options_.fatal_hold;
    case EventClass::kCommandTimeout:
      return options_.cmd_timeout_window;
    case EventClass::kModule:
    case EventClass::kDegraded:
      return options_.module_hold;
    case EventClass::kNoisy:
      return options_.flood_window;
    case EventClass::kLinkCause:
    case EventClass::kCountOnly:
      break;
  }
  return Duration(0);
}

}  // namespace

std::span<const DetectorOptionSpec> DriverFaultDetectorOptions() { return kOptions; }
std::span<const MetricDesc> DriverFaultDetectorMetrics() { return kMetrics; }
std::span<const MetricInput> DriverFaultDetectorInputs() { return kInputs; }

namespace {

// The options read and checked: what the factory builds from and all that validation needs.
Result<DriverFaultOptions> ParseOptions(const DetectorOptions& options) {
  auto reader = OptionReader::Make(kName, options, kOptions);
  if (!reader) return Error(reader.error());
  DriverFaultOptions o;
  o.fatal_hold = reader->Duration("fatal-hold");
  o.fatal_drain_eligible = reader->Bool("fatal-drain-eligible");
  o.cmd_timeout_count = reader->Count("cmd-timeout-count", 1, 1'000'000);
  o.cmd_timeout_window = reader->Duration("cmd-timeout-window");
  o.cmd_timeout_escalate_after = reader->Duration("cmd-timeout-escalate-after");
  o.module_hold = reader->Duration("module-hold");
  o.flood_count = reader->Count("flood-count", 1, 100'000'000);
  o.flood_window = reader->Duration("flood-window");
  if (!reader->status().ok()) return Error(reader->status());
  return o;
}

}  // namespace

Status ValidateDriverFaultDetectorOptions(const DetectorOptions& options) {
  return StatusOf(ParseOptions(options));
}

Result<std::unique_ptr<Detector>> MakeDriverFaultDetector(const DetectorOptions& options) {
  auto parsed = ParseOptions(options);
  if (!parsed) return Error(parsed.error());
  return std::unique_ptr<Detector>(new DriverFaultDetector(*parsed));
}

}  // namespace fabricwatch::detect
