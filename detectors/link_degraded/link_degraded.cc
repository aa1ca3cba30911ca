#include "detectors/link_degraded/link_degraded.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collectors/rdma/rdma_metrics.h"
#include "detectors/core/finding_merge.h"
#include "detectors/core/hysteresis.h"
#include "detectors/core/snapshot_lookup.h"
#include "detectors/link_degraded/expectation.h"
#include "detectors/link_degraded/link_degraded_metrics.h"
#include "detectors/link_degraded/link_signals.h"
#include "detectors/link_degraded/manifest.h"
#include "detectors/link_degraded/port_shape.h"

namespace fabricwatch::detect {
namespace {

constexpr std::string_view kName = "link_degraded";
constexpr double kBytesPerGbit = 1e9 / 8.0;

// Keys, defaults and the reason for each default (no public threshold exists: docs/detection.md
// has no link-shape section, so each is Judgement, stated with its reason).
constexpr DetectorOptionSpec kOptions[] = {
    {"shape-file",
     "The shape manifest (README \"Fabric shape\"; also --shape.file): what the node's ports "
     "should be. Empty: the expectation is learned from siblings and history",
     "\"\""},
    {"degraded-for",
     "How long a port must run below its expected width or speed (or a different firmware) "
     "before it raises. Judgement: IB and Ethernet links train within about 10 s; a training "
     "link never raises",
     "30s"},
    {"stuck-for",
     "How long an InfiniBand port may sit in INIT or ARMED with its physical link up. "
     "Judgement: a subnet manager sweeps every 10 s (OpenSM default) and activates a new port "
     "within a sweep or two",
     "1m"},
    {"down-for",
     "How long a port never seen up that should be up (the manifest says ACTIVE, or most "
     "same-model siblings with its port number are up) may be down. Judgement: link_flap's "
     "down-after doubled; a port seen up is link_flap's",
     "1m"},
    {"missing-for",
     "How long an HCA port seen before (state file) or listed in the manifest may be absent. "
     "Judgement: longer than a hot-unplug or a driver reload (about a minute)",
     "2m"},
    {"clear-for",
     "How long a port must be healthy before its finding clears. Judgement: no chatter when a "
     "marginal link retrains",
     "30s"},
    {"drain-severity",
     "The lowest severity whose findings are drain-eligible: critical (width loss, down, stuck, "
     "missing), warning (also speed loss and firmware drift) or none",
     "critical"},
};

using link_degraded::kExpectedLabels;
using link_degraded::kExpectedLanes;
using link_degraded::kExpectedLaneSpeed;
using link_degraded::kExpectedRate;
using link_degraded::kKnownPorts;
using link_degraded::kLanes;
using link_degraded::kPortLabels;
using link_degraded::kRate;
using link_degraded::kRateRatio;
constexpr MetricDesc kMetrics[] = {
    kRate, kLanes, kExpectedRate, kExpectedLanes, kExpectedLaneSpeed, kRateRatio, kKnownPorts};

struct LinkDegradedOptions {
  std::string shape_file;
  Duration degraded_for{}, stuck_for{}, down_for{}, missing_for{}, clear_for{};
  std::optional<Severity> drain_from;  // nullopt: never drain-eligible
};

class LinkDegradedDetector final : public Detector {
 public:
  LinkDegradedDetector(LinkDegradedOptions options, std::optional<shape::Manifest> manifest)
      : options_(std::move(options)), manifest_(std::move(manifest)) {}
  std::string_view name() const override { return kName; }
  std::vector<std::string> inputs() const override { return InputCollectors(shape::ShapeInputs()); }

  void Observe(const SnapshotView& snapshot) override {
    // The rdma collector's snapshot drives the evaluation (every port is one of its ports); the
    // node model holds what the other collectors last said of each port.
    if (snapshot.From<rdma::kCollector>()) Assess(snapshot.time, snapshot.Node());
  }

  std::vector<Finding> Evaluate(TimePoint /*now*/) override {
    std::vector<Finding> signals;
    for (auto& [id, check] : checks_) {
      if (!check.hold.active()) continue;
      Finding finding = check.finding;
      finding.drain_eligible = options_.drain_from && static_cast<int>(finding.severity) >=
                                                          static_cast<int>(*options_.drain_from);
      signals.push_back(std::move(finding));
    }
    return MergeFindings(std::move(signals));
  }

  std::vector<std::string> TakeInfoLines() override { return std::exchange(info_lines_, {}); }

  void Export(MetricSink& sink) const override {
    for (const shape::PortShape& p : shape_.ports) {
      // LabelPair holds views: the port number's text must outlive them.
      const std::string port = std::to_string(p.key.port);
      const LabelPair labels[] = {{"device", p.device}, {"port", port}, {"netdev", p.netdev}};
      auto e = expected_.find(p.key);
      if (p.up() && p.rate_gbps) {
        sink.Add(kRate, labels, *p.rate_gbps * kBytesPerGbit);
        if (p.width) sink.Add(kLanes, labels, *p.width);
        if (e != expected_.end() && e->second.rate_gbps.value && *e->second.rate_gbps.value > 0) {
          sink.Add(kRateRatio, labels, *p.rate_gbps / *e->second.rate_gbps.value);
        }
      }
      if (e == expected_.end()) continue;
      auto expected = [&](const MetricDesc& desc, const auto& value, double scale) {
        if (!value.value) return;
        const LabelPair with_source[] = {labels[0], labels[1], labels[2], {"source", value.source}};
        sink.Add(desc, with_source, static_cast<double>(*value.value) * scale);
      };
      expected(kExpectedRate, e->second.rate_gbps, kBytesPerGbit);
      expected(kExpectedLanes, e->second.width, 1);
      expected(kExpectedLaneSpeed, e->second.lane_gbps, kBytesPerGbit);
    }
    sink.Add(kKnownPorts, {}, static_cast<double>(model_.history().size()));
  }

  nlohmann::json SaveState() const override { return model_.Save(); }
  Status LoadState(const nlohmann::json& state, StateLoadCheck& check) override {
    return model_.Load(state, check);
  }

 private:
  struct Check {
    HoldDown hold;
    Finding finding;
  };

  Duration HoldFor(shape::Hold hold) const {
    switch (hold) {
      case shape::Hold::kStuck:
        return options_.stuck_for;
      case shape::Hold::kDown:
        return options_.down_for;
      case shape::Hold::kMissing:
        return options_.missing_for;
      case shape::Hold::kDegraded:
        break;
    }
    return options_.degraded_for;
  }

  void Assess(TimePoint time, const NodeModel& node) {
    shape_ = shape::BuildShape(node);
    for (std::string& line : model_.Learn(shape_, time, options_.degraded_for)) {
      info_lines_.push_back(std::move(line));
    }
    const shape::Manifest* manifest = manifest_ ? &*manifest_ : nullptr;
    expected_ = model_.Expect(shape_, manifest);
    std::vector<shape::Condition> conditions =
        shape::Assess({shape_, expected_, model_.history(), manifest});
    std::set<std::string> mentioned;
    for (shape::Condition& c : conditions) {
      mentioned.insert(c.id);
      auto [it, fresh] =
          checks_.try_emplace(c.id, Check{HoldDown(HoldFor(c.hold), options_.clear_for), {}});
      Check& check = it->second;
      if (c.verdict == shape::Verdict::kUnknown) {
        check.hold.Interrupt();
        continue;
      }
      const bool raise = c.verdict == shape::Verdict::kRaise;
      check.hold.Update(raise, !raise, time);
      if (raise) check.finding = std::move(c.finding);
    }
    // A subject that is gone (a port now missing) ends its other checks; the missing check
    // speaks for it.
    std::erase_if(checks_, [&](const auto& entry) { return !mentioned.contains(entry.first); });
  }

  LinkDegradedOptions options_;
  std::optional<shape::Manifest> manifest_;
  shape::ExpectationModel model_;
  shape::NodeShape shape_;
  std::map<shape::PortKey, shape::PortExpectation> expected_;
  std::map<std::string, Check> checks_;
  std::vector<std::string> info_lines_;
};

Result<LinkDegradedOptions> ParseOptions(const DetectorOptions& options) {
  LinkDegradedOptions o;
  auto reader = OptionReader::Make(kName, options, kOptions);
  if (!reader) return Error(reader.error());
  o.degraded_for = reader->Duration("degraded-for", true);
  o.stuck_for = reader->Duration("stuck-for", true);
  o.down_for = reader->Duration("down-for", true);
  o.missing_for = reader->Duration("missing-for", true);
  o.clear_for = reader->Duration("clear-for", true);
  if (!reader->status().ok()) return Error(reader->status());
  auto text = [&](std::string_view key) {
    auto it = options.find(key);
    if (it != options.end()) return it->second;
    for (const DetectorOptionSpec& spec : kOptions) {
      if (spec.key == key) return std::string(spec.default_value);
    }
    return std::string();
  };
  o.shape_file = text("shape-file");
  if (o.shape_file == "\"\"") o.shape_file.clear();  // the documented default: none
  const std::string drain = text("drain-severity");
  if (drain == "critical") {
    o.drain_from = Severity::kCritical;
  } else if (drain == "warning") {
    o.drain_from = Severity::kWarning;
  } else if (drain != "none") {
    return Error(StatusCode::kInvalidArgument,
                 "detector link_degraded: option drain-severity: expected critical, warning or "
                 "none, got \"" +
                     drain + "\"");
  }
  return o;
}

}  // namespace

std::span<const DetectorOptionSpec> LinkDegradedDetectorOptions() { return kOptions; }
std::span<const MetricDesc> LinkDegradedDetectorMetrics() { return kMetrics; }
std::span<const MetricInput> LinkDegradedDetectorInputs() { return shape::ShapeInputs(); }

namespace {

// The --shape.file manifest the options name, if any: read and checked at validation too, so a
// broken manifest fails --config.check and a reload (README "Fabric shape").
Result<std::optional<shape::Manifest>> LoadShapeFile(const LinkDegradedOptions& options) {
  if (options.shape_file.empty()) return std::optional<shape::Manifest>();
  auto loaded = shape::LoadManifest(options.shape_file);
  if (!loaded) {
    return Error(loaded.error().code(), "detector link_degraded: " + loaded.error().message());
  }
  return std::optional<shape::Manifest>(std::move(*loaded));
}

}  // namespace

Status ValidateLinkDegradedDetectorOptions(const DetectorOptions& options) {
  auto parsed = ParseOptions(options);
  if (!parsed) return parsed.error();
  return StatusOf(LoadShapeFile(*parsed));
}

Result<std::unique_ptr<Detector>> MakeLinkDegradedDetector(const DetectorOptions& options) {
  auto parsed = ParseOptions(options);
  if (!parsed) return Error(parsed.error());
  auto manifest = LoadShapeFile(*parsed);
  if (!manifest) return Error(manifest.error());
  return std::unique_ptr<Detector>(
      new LinkDegradedDetector(std::move(*parsed), std::move(*manifest)));
}

}  // namespace fabricwatch::detect
