#include "detectors/pcie_degraded/pcie_degraded.h"

#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collectors/topology/topology_metrics.h"
#include "detectors/core/counter.h"
#include "detectors/core/finding_merge.h"
#include "detectors/core/hysteresis.h"
#include "detectors/core/inputs.h"
#include "detectors/core/snapshot_lookup.h"
#include "detectors/pcie_degraded/pcie_degraded_metrics.h"

namespace fabricwatch::detect {
namespace {

constexpr std::string_view kName = "pcie_degraded";

// Keys, defaults and the source of each default (docs/detection.md sections, [S..] references).
constexpr DetectorOptionSpec kOptions[] = {
    {"downtrain-for",
     "How long a link must run below its maximum width or speed. Judgement: several 60 s topology "
     "reads agree (no PCIe section in docs/detection.md)",
     "5m"},
    {"clear-for",
     "How long a link must be back at its maximum before a finding clears. Judgement: no chatter "
     "on retrains",
     "10m"},
    {"check-gpu-speed",
     "Also report GPUs below their maximum link speed (GPUs lower speed at idle, so off by "
     "default). Judgement",
     "false"},
    {"aer-window",
     "Window of the correctable AER error count. Judgement (docs/detection.md §9 lists no public "
     "threshold)",
     "10m"},
    {"aer-correctable-warning",
     "Correctable AER errors within aer-window that warn. Judgement (docs/detection.md §9 lists no "
     "public threshold)",
     "10"},
    {"aer-correctable-clear",
     "The correctable AER warning clears below this count per aer-window. Judgement", "1"},
};

using pcie_degraded::kAerRate;
using pcie_degraded::kLink;
using pcie_degraded::kSpeedRatio;
using pcie_degraded::kWidthRatio;
// What pcie_degraded reads (detectors/core/inputs.h).
constexpr MetricInput kInputs[] = {
    {topology::kSpeed, {"device", "role"}},
    {topology::kMaxSpeed, {"device", "role"}},
    {topology::kWidth, {"device", "role"}},
    {topology::kMaxWidth, {"device", "role"}},
    // The AER counters, by severity: correctable, nonfatal, fatal.
    {topology::kAer, {"device", "role", "severity"}},
};
constexpr MetricDesc kMetrics[] = {kSpeedRatio, kWidthRatio, kAerRate};

using Key = std::pair<std::string, std::string>;  // device, role

std::string Format(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

struct Link {
  Link(const PcieDegradedOptions& o)
      : width(o.downtrain_for, o.clear_for),
        speed(o.downtrain_for, o.clear_for),
        correctable(std::chrono::milliseconds(0), o.clear_for),
        uncorrectable(std::chrono::milliseconds(0), o.clear_for),
        correctable_tracker(),
        nonfatal_tracker(),
        fatal_tracker() {}
  HoldDown width;
  HoldDown speed;
  HoldDown correctable;
  HoldDown uncorrectable;
  // AER totals are u64 since boot (TOTAL_ERR_*): a drop means a re-enumerated device.
  CounterTracker correctable_tracker;
  CounterTracker nonfatal_tracker;
  CounterTracker fatal_tracker;
  std::deque<std::pair<TimePoint, uint64_t>> correctable_window;
  double window_count = 0;
  double window_seconds = 0;
  uint64_t uncorrectable_last = 0;
  std::optional<double> speed_now, speed_max, width_now, width_max;
  bool seen = false;
};

class PcieDegradedDetector final : public Detector {
 public:
  explicit PcieDegradedDetector(PcieDegradedOptions options) : options_(options) {}
  std::string_view name() const override { return kName; }
  std::vector<std::string> inputs() const override { return InputCollectors(kInputs); }

  void Observe(const SnapshotView& snapshot) override {
    if (!snapshot.From<topology::kCollector>()) return;
    const Families& families = snapshot.families;
    const TimePoint time = snapshot.time;
    for (auto& [key, link] : links_) link.seen = false;
    // The link a sample is about (its device and role labels), or nullptr.
    auto link_for = [&](std::string_view device, std::string_view role) -> Link* {
      if (device.empty() || (role != "gpu" && role != "nic")) return nullptr;
      Link& link =
          links_.try_emplace(Key{std::string(device), std::string(role)}, options_).first->second;
      link.seen = true;
      return &link;
    };
    auto gauge = [&](auto family_tag, std::optional<double> Link::*field) {
      using Tag = decltype(family_tag);
      ForEachSample(families, Tag::desc, [&](const prometheus::ClientMetric& m, double v) {
        Link* link = link_for(Label<Tag::desc>(m, "device"), Label<Tag::desc>(m, "role"));
        // NaN or inf is an unreadable link: no value, never "xnan" in a finding.
        if (link != nullptr && std::isfinite(v)) link->*field = v;
      });
    };
    for (auto& [key, link] : links_)
      link.speed_now = link.speed_max = link.width_now = link.width_max = std::nullopt;
    gauge(FamilyTag<topology::kSpeed>{}, &Link::speed_now);
    gauge(FamilyTag<topology::kMaxSpeed>{}, &Link::speed_max);
    gauge(FamilyTag<topology::kWidth>{}, &Link::width_now);
    gauge(FamilyTag<topology::kMaxWidth>{}, &Link::width_max);

    std::set<Link*> aer_seen;
    ForEachSample(families, topology::kAer, [&](const prometheus::ClientMetric& m, double v) {
      Link* link = link_for(Label<topology::kAer>(m, "device"), Label<topology::kAer>(m, "role"));
      const std::string_view severity = Label<topology::kAer>(m, "severity");
      if (link == nullptr || severity.empty() || !(v >= 0)) return;
      aer_seen.insert(link);
      const auto value = static_cast<uint64_t>(v);
      if (severity == "correctable") {
        CounterStep step = link->correctable_tracker.Update(value, time);
        if (step.valid) link->correctable_window.emplace_back(time, step.delta);
      } else if (severity == "nonfatal" || severity == "fatal") {
        CounterTracker& tracker =
            severity == "fatal" ? link->fatal_tracker : link->nonfatal_tracker;
        CounterStep step = tracker.Update(value, time);
        const bool grew = step.valid && step.delta > 0;
        if (grew) link->uncorrectable_last = step.delta;
        link->uncorrectable.Update(grew, step.valid && step.delta == 0, time);
      }
    });

    // Devices that left the snapshot (hot-unplug) lose their state: a re-plugged device starts
    // over with no delta, never a false alarm from the counters starting again at zero.
    std::erase_if(links_, [](const auto& entry) { return !entry.second.seen; });

    for (auto& [key, link] : links_) {
      const bool width_known =
          link.width_now && link.width_max && *link.width_now > 0 && *link.width_max > 0;
      if (width_known) {
        link.width.Update(*link.width_now < *link.width_max, *link.width_now >= *link.width_max,
                          time);
      }
      const bool check_speed = key.second == "nic" || options_.check_gpu_speed;
      const bool speed_known = link.speed_now && link.speed_max && *link.speed_now > 0 &&
                               *link.speed_max > 0 && width_known;
      if (check_speed && speed_known) {
        link.speed.Update(*link.speed_now < *link.speed_max, *link.speed_now >= *link.speed_max,
                          time);
      } else if (!check_speed) {
        link.speed.Reset();
      }
      if (!aer_seen.contains(&link)) {
        link.correctable_window.clear();
        link.correctable_tracker.Forget();
      }
      auto& window = link.correctable_window;
      while (!window.empty() && time - window.front().first > options_.aer_window) {
        window.pop_front();
      }
      double count = 0;
      for (const auto& [t, delta] : window) count += static_cast<double>(delta);
      link.window_count = count;
      link.window_seconds = std::chrono::duration<double>(options_.aer_window).count();
      link.correctable.Update(count >= options_.aer_correctable_warning,
                              count < options_.aer_correctable_clear, time);
    }
  }

  std::vector<Finding> Evaluate(TimePoint /*now*/) override {
    std::vector<Finding> signals;
    for (const auto& [key, link] : links_) {
      const EntityLabels entity{{"device", key.first}, {"role", key.second}};
      const std::string who = key.second + " " + key.first;
      if (link.width.active() && link.width_now && link.width_max) {
        signals.push_back({Severity::kCritical,
                           entity,
                           *link.width_now,
                           {{"width_lanes", *link.width_now}, {"max_width_lanes", *link.width_max}},
                           who + " PCIe link trained at x" + Format(*link.width_now) + " of x" +
                               Format(*link.width_max),
                           true});
      }
      if (link.speed.active() && link.speed_now && link.speed_max) {
        signals.push_back({Severity::kWarning,
                           entity,
                           *link.speed_now,
                           {{"speed_transfers_per_second", *link.speed_now},
                            {"max_speed_transfers_per_second", *link.speed_max}},
                           who + " PCIe link trained at " + Format(*link.speed_now / 1e9) +
                               " GT/s of " + Format(*link.speed_max / 1e9) + " GT/s",
                           false});
      }
      if (link.uncorrectable.active()) {
        signals.push_back(
            {Severity::kCritical,
             entity,
             static_cast<double>(link.uncorrectable_last),
             {{"aer_uncorrectable_errors", static_cast<double>(link.uncorrectable_last)}},
             who + " reported " + Format(static_cast<double>(link.uncorrectable_last)) +
                 " uncorrectable (nonfatal/fatal) AER " +
                 (link.uncorrectable_last == 1 ? "error" : "errors") + ", expected none",
             false});
      }
      if (link.correctable.active()) {
        signals.push_back({Severity::kWarning,
                           entity,
                           link.window_count,
                           {{"aer_correctable_errors", link.window_count},
                            {"window_seconds", link.window_seconds}},
                           who + " " + Format(link.window_count) + " correctable AER " +
                               (link.window_count == 1 ? "error" : "errors") + " in the last " +
                               Format(link.window_seconds) + " s",
                           false});
      }
    }
    return MergeFindings(std::move(signals));
  }

  void Export(MetricSink& sink) const override {
    for (const auto& [key, link] : links_) {
      const LabelPair labels[] = {{"device", key.first}, {"role", key.second}};
      if (link.speed_now && link.speed_max && *link.speed_max > 0) {
        sink.Add(kSpeedRatio, labels, *link.speed_now / *link.speed_max);
      }
      if (link.width_now && link.width_max && *link.width_max > 0) {
        sink.Add(kWidthRatio, labels, *link.width_now / *link.width_max);
      }
      sink.Add(kAerRate, labels, link.window_count / link.window_seconds);
    }
  }

 private:
  PcieDegradedOptions options_;
  std::map<Key, Link> links_;
};

}  // namespace

Result<PcieDegradedOptions> ParsePcieDegradedOptions(const DetectorOptions& options) {
  PcieDegradedOptions o;
  auto reader = OptionReader::Make(kName, options, kOptions);
  if (!reader) return Error(reader.error());
  o.downtrain_for = reader->Duration("downtrain-for", true);
  o.clear_for = reader->Duration("clear-for", true);
  o.check_gpu_speed = reader->Bool("check-gpu-speed");
  o.aer_window = reader->Duration("aer-window");
  o.aer_correctable_warning = reader->Number("aer-correctable-warning", 1, 1e12);
  o.aer_correctable_clear = reader->Number("aer-correctable-clear", 0, 1e12);
  if (!reader->status().ok()) return Error(reader->status());
  if (o.aer_correctable_clear > o.aer_correctable_warning) {
    return Error(StatusCode::kInvalidArgument,
                 "detector pcie_degraded: option aer-correctable-clear must not exceed "
                 "aer-correctable-warning");
  }
  return o;
}

std::span<const DetectorOptionSpec> PcieDegradedDetectorOptions() { return kOptions; }
std::span<const MetricDesc> PcieDegradedDetectorMetrics() { return kMetrics; }
std::span<const MetricInput> PcieDegradedDetectorInputs() { return kInputs; }

Status ValidatePcieDegradedDetectorOptions(const DetectorOptions& options) {
  return StatusOf(ParsePcieDegradedOptions(options));
}

Result<std::unique_ptr<Detector>> MakePcieDegradedDetector(const DetectorOptions& options) {
  Result<PcieDegradedOptions> parsed = ParsePcieDegradedOptions(options);
  if (!parsed) return Error(parsed.error());
  return std::unique_ptr<Detector>(new PcieDegradedDetector(*parsed));
}

}  // namespace fabricwatch::detect
