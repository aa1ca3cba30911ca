#include "detectors/pfc_storm/pfc_storm.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "base/duration.h"
#include "collectors/ethtool/ethtool_metrics.h"
#include "detectors/core/counter.h"
#include "detectors/core/hysteresis.h"
#include "detectors/core/inputs.h"
#include "detectors/core/snapshot_lookup.h"
#include "detectors/core/state_check.h"
#include "detectors/pfc_storm/pfc_storm_metrics.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::milliseconds;

// docs/detection.md §1.3 / §8 for every default.
constexpr DetectorOptionSpec kOptions[] = {
    {"storm-ratio", "Pause-time ratio at or above which a priority counts as stormed. [S3] "
                    "SONiC/NVIDIA >99 % of the interval",
     "0.99"},
    {"detection-time", "How long the storm signature (ratio >= storm-ratio, no opposite "
                       "progress) must hold. Judgement: 3 samples, beyond switch (0.2-0.4 s) "
                       "and NIC (0.1 s) watchdogs [S2][S4][S9]",
     "3s"},
    {"clear-ratio", "Pause-time ratio below which a sample counts as healthy. Judgement (§1.3)",
     "0.5"},
    {"restoration-time", "How long healthy samples (ratio < clear-ratio or progress) must last "
                         "before a storm clears. Judgement: 10 samples, ~5x SONiC's ratio [S2]",
     "10s"},
    {"event-hold", "How long a NIC storm-prevention event (tx_pause_storm_*_events) stays an "
                   "active finding. Judgement: several scrape intervals [S10][S11]",
     "60s"},
};

using pfc_storm::kPauseRatio;
using pfc_storm::kStormSeconds;
// What pfc_storm reads (detectors/core/inputs.h).
constexpr MetricInput kInputs[] = {
    {ethtool::kPfcPauseDuration, {"netdev", "priority", "direction"}},
    {ethtool::kPrioBytes, {"netdev", "priority", "direction"}},
    {ethtool::kPrioPackets, {"netdev", "priority", "direction"}},
    {ethtool::kPauseStormEvents, {"netdev", "severity"}},
};
constexpr MetricDesc kMetrics[] = {kPauseRatio, kStormSeconds};

struct Settings {
  double storm_ratio;
  milliseconds detection_time;
  double clear_ratio;
  milliseconds restoration_time;
  milliseconds event_hold;
};

enum Dir { kRx = 0, kTx = 1 };

struct Priority {
  std::string netdev, priority;
  CounterTracker pause[2];  // microseconds (the driver's unit)
  CounterTracker bytes[2];
  CounterTracker packets[2];
  std::optional<double> ratio[2];
  HoldDown source, victim;
  double source_streak = 0, victim_streak = 0;
  uint64_t rx_progress = 0, tx_progress = 0;
};

struct NicEvents {
  CounterTracker counter[2];  // warning, error
  std::optional<TimePoint> until[2];
  uint64_t last_delta[2] = {0, 0};
};

std::optional<Dir> ParseDir(std::string_view direction) {
  if (direction == "rx") return kRx;
  if (direction == "tx") return kTx;
  return std::nullopt;
}

class PfcStormDetector final : public Detector {
 public:
  explicit PfcStormDetector(Settings settings) : s_(settings) {}

  std::string_view name() const override { return "pfc_storm"; }
  std::vector<std::string> inputs() const override { return InputCollectors(kInputs); }

  void Observe(const SnapshotView& snapshot) override {
    if (!snapshot.From<ethtool::kCollector>()) return;
    const TimePoint time = snapshot.time;
    std::set<std::string> seen;
    // Steps of this sample, per priority and direction.
    struct Steps {
      std::optional<CounterStep> pause[2], bytes[2], packets[2];
    };
    std::map<std::string, Steps> steps;
    auto track = [&](auto family_tag, double scale, auto member, auto step_member) {
      using Tag = decltype(family_tag);
      const auto* family = FindFamily(snapshot, Tag::desc);
      if (family == nullptr) return;
      for (const auto& metric : family->metric) {
        auto dir = ParseDir(Label<Tag::desc>(metric, "direction"));
        const std::string_view netdev = Label<Tag::desc>(metric, "netdev");
        const std::string_view priority = Label<Tag::desc>(metric, "priority");
        // A sample without its netdev or priority names no priority a finding could name.
        if (!dir || netdev.empty() || priority.empty()) continue;
        Priority& p = PriorityFor(netdev, priority);
        const std::string key = p.netdev + "/" + p.priority;
        seen.insert(key);
        (steps[key].*step_member)[*dir] =
            (p.*member)[*dir].Update(CounterValue(*family, metric, scale), time);
      }
    };
    track(FamilyTag<ethtool::kPfcPauseDuration>{}, 1e6, &Priority::pause, &Steps::pause);
    track(FamilyTag<ethtool::kPrioBytes>{}, 1, &Priority::bytes, &Steps::bytes);
    track(FamilyTag<ethtool::kPrioPackets>{}, 1, &Priority::packets, &Steps::packets);

    // Priorities that vanished (device unplugged, PFC disabled): drop their state; a re-plugged
    // device starts from a fresh baseline.
    std::erase_if(priorities_, [&](const auto& entry) { return !seen.contains(entry.first); });

    for (auto& [key, p] : priorities_) {
      const Steps& st = steps[key];
      for (Dir d : {kRx, kTx}) {
        const auto& step = st.pause[d];
        p.ratio[d].reset();
        if (step && step->valid && !step->reset) {
          p.ratio[d] = std::clamp(static_cast<double>(step->delta) / 1e6 / step->seconds, 0.0, 1.0);
        }
      }
      // Progress of a direction: bytes, else packets; unknown when neither gave a clean delta.
      auto progress = [&](Dir d) -> std::optional<uint64_t> {
        for (const auto* step : {&st.bytes[d], &st.packets[d]}) {
          if (*step && (*step)->valid && !(*step)->reset) return (*step)->delta;
        }
        return std::nullopt;
      };
      const std::optional<uint64_t> rx_progress = progress(kRx);
      const std::optional<uint64_t> tx_progress = progress(kTx);
      p.rx_progress = rx_progress.value_or(0);
      p.tx_progress = tx_progress.value_or(0);
      const double seconds = st.pause[kTx] && st.pause[kTx]->valid   ? st.pause[kTx]->seconds
                             : st.pause[kRx] && st.pause[kRx]->valid ? st.pause[kRx]->seconds
                                                                     : 0;
      const TimePoint from =
          time - std::chrono::duration_cast<TimePoint::duration>(std::chrono::duration<double>(seconds));
      // Source: we pause (tx) and nothing arrives (rx). Victim: we are paused (rx), nothing leaves.
      UpdateRole(p.source, p.ratio[kTx], rx_progress, from, time);
      UpdateRole(p.victim, p.ratio[kRx], tx_progress, from, time);
      p.source_streak = p.source.raise_streak_seconds(time);
      p.victim_streak = p.victim.raise_streak_seconds(time);
    }

    if (const auto* family = FindFamily(snapshot, ethtool::kPauseStormEvents)) {
      std::set<std::string> nic_seen;
      for (const auto& metric : family->metric) {
        const std::string_view severity = Label<ethtool::kPauseStormEvents>(metric, "severity");
        const int index = severity == "warning" ? 0 : severity == "error" ? 1 : -1;
        const std::string netdev(Label<ethtool::kPauseStormEvents>(metric, "netdev"));
        if (index < 0 || netdev.empty()) continue;
        nic_seen.insert(netdev);
        NicEvents& events = nic_[netdev];
        const CounterStep step = events.counter[index].Update(CounterValue(*family, metric), time);
        // A reset's delta is the whole post-reset count: trust it only if it is an increment
        // since a driver reload, which still is a real event.
        if (step.valid && step.delta > 0) {
          events.until[index] = time + s_.event_hold;
          events.last_delta[index] = step.delta;
        }
      }
      std::erase_if(nic_, [&](const auto& entry) {
        return !nic_seen.contains(entry.first) && !entry.second.until[0] && !entry.second.until[1];
      });
    }
  }

  std::vector<Finding> Evaluate(TimePoint now) override {
    std::vector<Finding> findings;
    for (const auto& [key, p] : priorities_) {
      const EntityLabels base = {{"netdev", p.netdev}, {"priority", p.priority}};
      if (p.source.active()) {
        Finding f;
        f.severity = Severity::kCritical;
        f.drain_eligible = true;
        f.entity = base;
        f.entity.emplace_back("role", "source");
        f.value = p.ratio[kTx].value_or(0);
        f.evidence = RoleEvidence(p, kTx, "rx_bytes_delta", p.rx_progress, p.source_streak);
        f.reason = fmt::format(
            "netdev {} priority {}: PFC storm source, {}; this NIC is holding "
            "the fabric",
            p.netdev, p.priority,
            Signature(p.ratio[kTx], "sending pause", "receive", p.source_streak,
                      p.source.active_since(), now));
        findings.push_back(std::move(f));
      }
      if (p.victim.active()) {
        Finding f;
        f.severity = Severity::kWarning;
        f.drain_eligible = false;  // §1.3: never drain the victim
        f.entity = base;
        f.entity.emplace_back("role", "victim");
        f.value = p.ratio[kRx].value_or(0);
        f.evidence = RoleEvidence(p, kRx, "tx_bytes_delta", p.tx_progress, p.victim_streak);
        f.reason = fmt::format(
            "netdev {} priority {}: PFC storm victim, {}; the source is "
            "elsewhere in the fabric",
            p.netdev, p.priority,
            Signature(p.ratio[kRx], "paused by the peer", "transmit", p.victim_streak,
                      p.victim.active_since(), now));
        findings.push_back(std::move(f));
      }
    }
    for (auto& [netdev, events] : nic_) {
      for (int i : {1, 0}) {
        if (!events.until[i]) continue;
        if (now >= *events.until[i]) {
          events.until[i].reset();
          continue;
        }
        Finding f;
        f.severity = i == 1 ? Severity::kCritical : Severity::kWarning;
        f.drain_eligible = i == 1;
        f.entity = {{"netdev", netdev}, {"role", "source"}};
        f.value = static_cast<double>(events.last_delta[i]);
        f.evidence = {{i == 1 ? "tx_pause_storm_error_events_delta"
                              : "tx_pause_storm_warning_events_delta",
                       f.value}};
        f.reason = i == 1 ? fmt::format("netdev {}: NIC pause-storm prevention fired ({} "
                                        "tx_pause_storm_error_events): it stopped sending pause, "
                                        "drops possible",
                                        netdev, events.last_delta[i])
                          : fmt::format("netdev {}: NIC kept sending pause past its warning "
                                        "watermark ({} tx_pause_storm_warning_events)",
                                        netdev, events.last_delta[i]);
        findings.push_back(std::move(f));
      }
    }
    return findings;
  }

  void Export(MetricSink& sink) const override {
    for (const auto& [key, p] : priorities_) {
      for (Dir d : {kRx, kTx}) {
        if (!p.ratio[d]) continue;
        sink.Add(kPauseRatio,
                 {{"netdev", p.netdev}, {"priority", p.priority}, {"direction", d == kRx ? "rx" : "tx"}},
                 *p.ratio[d]);
      }
      sink.Add(kStormSeconds, {{"netdev", p.netdev}, {"priority", p.priority}, {"role", "source"}},
               p.source_streak);
      sink.Add(kStormSeconds, {{"netdev", p.netdev}, {"priority", p.priority}, {"role", "victim"}},
               p.victim_streak);
    }
  }

  // Active storm states survive a restart (they then need restoration-time of healthy samples
  // to clear); counters never do — the first sample after a restart is a new baseline.
  nlohmann::json SaveState() const override {
    nlohmann::json storms = nlohmann::json::array();
    for (const auto& [key, p] : priorities_) {
      for (const auto* role : {&p.source, &p.victim}) {
        if (!role->active()) continue;
        storms.push_back({{"netdev", p.netdev},
                          {"priority", p.priority},
                          {"role", role == &p.source ? "source" : "victim"},
                          {"since", EpochSeconds(role->active_since())}});
      }
    }
    nlohmann::json events = nlohmann::json::array();
    for (const auto& [netdev, e] : nic_) {
      for (int i : {0, 1}) {
        if (!e.until[i]) continue;
        events.push_back({{"netdev", netdev},
                          {"severity", i == 1 ? "error" : "warning"},
                          {"until", EpochSeconds(*e.until[i])},
                          {"delta", e.last_delta[i]}});
      }
    }
    return {{"storms", storms}, {"nic_events", events}};
  }

  Status LoadState(const nlohmann::json& state, StateLoadCheck& check) override {
    try {
      for (const auto& storm : state.at("storms")) {
        // A storm that started in the future is dropped (detectors/core/state_check.h).
        auto since = check.Past(storm.at("since"));
        if (!since) continue;
        Priority& p = PriorityFor(storm.at("netdev").get<std::string>(),
                                  storm.at("priority").get<std::string>());
        HoldDown& role = storm.at("role").get<std::string>() == "source" ? p.source : p.victim;
        role.Restore(true, *since);
      }
      for (const auto& event : state.at("nic_events")) {
        // An event holds for event-hold after it was seen: never longer than that from now.
        auto until = check.Until(event.at("until"), s_.event_hold);
        auto delta = check.Count(event.at("delta"), UINT64_MAX);
        if (!until || !delta) continue;
        NicEvents& e = nic_[event.at("netdev").get<std::string>()];
        const int i = event.at("severity").get<std::string>() == "error" ? 1 : 0;
        e.until[i] = *until;
        e.last_delta[i] = *delta;
      }
    } catch (const nlohmann::json::exception& e) {
      return Status(StatusCode::kInvalidArgument, std::string("pfc_storm state: ") + e.what());
    }
    return Status::Ok();
  }

 private:
  // The evidence of a role: only the ratios measured in the last interval (a storm restored from
  // the state file has none until the next interval), never a 0 that was not read.
  static std::vector<Evidence> RoleEvidence(const Priority& p, Dir own, const char* progress_name,
                                            uint64_t progress, double streak) {
    const Dir other = own == kTx ? kRx : kTx;
    std::vector<Evidence> out;
    if (p.ratio[own])
      out.push_back({own == kTx ? "tx_pause_ratio" : "rx_pause_ratio", *p.ratio[own]});
    if (p.ratio[other]) {
      out.push_back({other == kTx ? "tx_pause_ratio" : "rx_pause_ratio", *p.ratio[other]});
    }
    if (streak > 0) out.push_back({progress_name, static_cast<double>(progress)});
    out.push_back({"storm_seconds", streak});
    return out;
  }

  // What holds now: the signature with its numbers while it holds; while the storm only waits
  // out restoration-time (or was restored from the state file), that it does not hold now,
  // instead of "0.0% of the time ... for 0.0s".
  std::string Signature(const std::optional<double>& ratio, const char* pausing,
                        const char* progress, double streak, TimePoint since, TimePoint now) const {
    if (streak > 0 && ratio) {
      return fmt::format("{} {:.1f}% of the time with no {} progress for {:.1f}s (>= {})", pausing,
                         100 * *ratio, progress, streak, FormatDuration(s_.detection_time));
    }
    const std::string measured = ratio
                                     ? fmt::format("pause ratio {:.1f}% now", 100 * *ratio)
                                     : std::string("pause ratio not measured in the last interval");
    return fmt::format(
        "raised {:.0f}s ago; the storm signature does not hold now ({}), it "
        "clears after {} below the clear ratio",
        Seconds(now - since), measured, FormatDuration(s_.restoration_time));
  }

  Priority& PriorityFor(std::string_view netdev, std::string_view priority) {
    std::string key = std::string(netdev) + "/" + std::string(priority);
    auto it = priorities_.find(key);
    if (it == priorities_.end()) {
      Priority p;
      p.netdev = std::string(netdev);
      p.priority = std::string(priority);
      p.source = HoldDown(s_.detection_time, s_.restoration_time);
      p.victim = HoldDown(s_.detection_time, s_.restoration_time);
      it = priorities_.emplace(std::move(key), std::move(p)).first;
    }
    return it->second;
  }

  void UpdateRole(HoldDown& role, const std::optional<double>& ratio,
                  const std::optional<uint64_t>& opposite_progress, TimePoint from, TimePoint to) {
    if (!ratio) {
      role.Interrupt();  // first sample, reset or gap: no information about this interval
      return;
    }
    const bool flowing = opposite_progress && *opposite_progress > 0;
    const bool storm = *ratio >= s_.storm_ratio && opposite_progress && !flowing;
    const bool healthy = *ratio < s_.clear_ratio || flowing;
    role.Update(storm, healthy, from, to);
  }

  Settings s_;
  std::map<std::string, Priority> priorities_;
  std::map<std::string, NicEvents> nic_;
};

}  // namespace

std::span<const DetectorOptionSpec> PfcStormDetectorOptions() { return kOptions; }
std::span<const MetricDesc> PfcStormDetectorMetrics() { return kMetrics; }
std::span<const MetricInput> PfcStormDetectorInputs() { return kInputs; }

namespace {

// The options read and checked: what the factory builds from and all that validation needs.
Result<Settings> ParseOptions(const DetectorOptions& options) {
  auto reader = OptionReader::Make("pfc_storm", options, kOptions);
  if (!reader) return Error(reader.error());
  Settings s;
  s.storm_ratio = reader->Number("storm-ratio", 0.01, 1);
  s.detection_time = reader->Duration("detection-time");
  s.clear_ratio = reader->Number("clear-ratio", 0, 1);
  s.restoration_time = reader->Duration("restoration-time");
  s.event_hold = reader->Duration("event-hold");
  if (!reader->status().ok()) return Error(reader->status());
  if (s.clear_ratio >= s.storm_ratio) {
    return Error(StatusCode::kInvalidArgument,
                 fmt::format("detector pfc_storm: clear-ratio ({}) must be below storm-ratio ({}) "
                             "for hysteresis",
                             s.clear_ratio, s.storm_ratio));
  }
  return s;
}

}  // namespace

Status ValidatePfcStormDetectorOptions(const DetectorOptions& options) {
  return StatusOf(ParseOptions(options));
}

Result<std::unique_ptr<Detector>> MakePfcStormDetector(const DetectorOptions& options) {
  auto settings = ParseOptions(options);
  if (!settings) return Error(settings.error());
  return std::unique_ptr<Detector>(std::make_unique<PfcStormDetector>(*settings));
}

}  // namespace fabricwatch::detect
