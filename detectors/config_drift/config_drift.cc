#include "detectors/config_drift/config_drift.h"

#include <charconv>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collectors/ethtool/ethtool_metrics.h"
#include "collectors/netdev/netdev_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/topology/topology_metrics.h"
#include "detectors/config_drift/config_drift_metrics.h"
#include "detectors/config_drift/drift_checks.h"
#include "detectors/config_drift/node_config.h"
#include "detectors/core/node_model.h"
#include "detectors/core/anomaly_tracker.h"
#include "detectors/core/finding_merge.h"
#include "detectors/core/hysteresis.h"
#include "detectors/core/snapshot_lookup.h"

namespace fabricwatch::detect {
namespace {

constexpr std::string_view kName = "config_drift";

// Keys, defaults and the source of each default (docs/detection.md §9.12).
constexpr DetectorOptionSpec kOptions[] = {
    {"roce-priority",
     "The priority that carries RoCE traffic (0-7): PFC must be on there, and off where the "
     "siblings leave it off; auto learns it from the sibling ports and the traffic. NVIDIA's "
     "RoCE configuration guides use 3",
     "auto"},
    {"mtu",
     "The MTU every fabric port should run (68-65535); auto expects the sibling majority. "
     "Judgement: RoCE fabrics commonly run 9000 (4096-byte RoCE MTU)",
     "auto"},
    {"ib-mtu",
     "The active IB MTU every RDMA port should run (256, 512, 1024, 2048 or 4096 bytes); auto "
     "expects the majority of the active ports of the same link layer. Judgement: 4096, the "
     "largest IBTA MTU, which RoCE reaches with a netdev MTU of about 4200 or more (commonly 9000)",
     "auto"},
    {"trust",
     "The trust state every fabric port should have (dscp or pcp); auto expects the sibling "
     "majority. NVIDIA recommends dscp for RoCE",
     "auto"},
    {"storm-prevention-max",
     "Longest acceptable PFC storm-prevention timeout on a PFC port (0 = prevention off is "
     "always reported). docs/detection.md §1.3: warn if 0 or above 1 s",
     "1s"},
    {"require-gpudirect-module",
     "Report a node with NVIDIA GPUs and RDMA NICs but no nvidia_peermem/nv_peer_mem loaded. "
     "Set false where GPUDirect RDMA uses DMA-BUF instead (open GPU driver, kernel 5.12+)",
     "true"},
    {"hold-for",
     "How long a setting must differ before it is reported: operators reconfigure a port "
     "through transient states (mlnx_qos applies one setting at a time). Judgement",
     "30s"},
    {"clear-for", "How long a setting must agree again before the finding clears. Judgement",
     "10s"},
    {"drain-eligible",
     "Whether configuration drift findings may drain the node (a misconfigured port is the "
     "node's, but it degrades rather than breaks). Issue 21: not by default",
     "false"},
};

using config_drift::kDrifted;
constexpr MetricDesc kMetrics[] = {kDrifted};

struct ConfigDriftOptions {
  drift::Expectations expect;
  std::chrono::milliseconds hold_for{};
  std::chrono::milliseconds clear_for{};
  bool drain_eligible = false;
};

// One possible finding, keyed by its entity text.
struct Check {
  HoldDown hold;
  Finding finding;
};

class ConfigDriftDetector final : public Detector {
 public:
  explicit ConfigDriftDetector(ConfigDriftOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return kName; }
  std::vector<std::string> inputs() const override {
    return InputCollectors(drift::ConfigInputs());
  }

  void Observe(const SnapshotView& snapshot) override {
    if (snapshot.node) node_ = snapshot.node;
    Families kept;
    for (const MetricInput& input : drift::ConfigInputs()) {
      if (input.collector != snapshot.collector) continue;
      if (const auto* family = FindFamily(snapshot, *input.desc)) kept.push_back(*family);
    }
    families_[std::string(snapshot.collector)] = std::move(kept);
    Assess(snapshot.time);
  }

  std::vector<Finding> Evaluate(TimePoint /*now*/) override {
    std::vector<Finding> signals;
    for (const auto& [key, check] : checks_) {
      if (check.hold.active()) signals.push_back(check.finding);
    }
    return MergeFindings(std::move(signals));
  }

  void Export(MetricSink& sink) const override {
    for (const auto& [cell, drifted] : matrix_) {
      sink.Add(kDrifted, {{"subject", cell.first}, {"setting", cell.second}}, drifted ? 1 : 0);
    }
  }

 private:
  const Families* Latest(std::string_view collector) const {
    auto it = families_.find(collector);
    return it == families_.end() ? nullptr : &it->second;
  }

  void Assess(TimePoint now) {
    const drift::NodeConfig config =
        drift::BuildNodeConfig({.node = node_ ? node_.get() : &EmptyNodeModel(),
                                .netdev = Latest(netdev::kCollector),
                                .ethtool = Latest(ethtool::kCollector),
                                .topology = Latest(topology::kCollector)});
    drift::DriftReport report = drift::CheckDrift(config, options_.expect);
    matrix_.clear();
    for (const auto& cell : report.checked) matrix_[cell] = false;
    std::set<std::string> seen;
    for (drift::Drift& d : report.drifts) {
      matrix_[{d.subject, d.setting}] = true;
      const std::string key = EntityText(d.entity);
      seen.insert(key);
      auto it = checks_.find(key);
      if (it == checks_.end()) {
        it = checks_.emplace(key, Check{HoldDown(options_.hold_for, options_.clear_for), {}}).first;
      }
      Check& check = it->second;
      check.finding =
          Finding{Severity::kWarning,  std::move(d.entity),
                  d.observed,          {{"observed", d.observed}, {"expected", d.expected}},
                  std::move(d.reason), options_.drain_eligible};
      check.hold.Update(true, false, now);
    }
    // Settings that agree again (or are no longer reported) count towards clearing; a check
    // that is neither active nor raising is forgotten.
    for (auto it = checks_.begin(); it != checks_.end();) {
      if (!seen.contains(it->first)) it->second.hold.Update(false, true, now);
      const bool idle = !it->second.hold.active() && !seen.contains(it->first);
      it = idle ? checks_.erase(it) : std::next(it);
    }
  }

  ConfigDriftOptions options_;
  std::map<std::string, Families, std::less<>> families_;  // by collector
  std::shared_ptr<const NodeModel> node_;                  // the RDMA ports, from the last snapshot
  std::map<std::string, Check> checks_;                    // by entity text
  std::map<std::pair<std::string, std::string>, bool> matrix_;
};

// "auto" or a whole number in [min, max].
std::optional<int> AutoOrNumber(const DetectorOptions& options, std::string_view key, int min,
                                int max, Status& status) {
  auto it = options.find(std::string(key));
  if (it == options.end() || it->second == "auto") return std::nullopt;
  int value = 0;
  const std::string& text = it->second;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    if (status.ok()) {
      status = Status(StatusCode::kInvalidArgument,
                      "detector config_drift: option " + std::string(key) + "=\"" + text +
                          "\": expected auto or a whole number from " + std::to_string(min) +
                          " to " + std::to_string(max));
    }
    return std::nullopt;
  }
  return value;
}

Result<ConfigDriftOptions> ParseOptions(const DetectorOptions& options) {
  auto reader = OptionReader::Make(kName, options, kOptions);
  if (!reader) return Error(reader.error());
  ConfigDriftOptions o;
  o.expect.storm_prevention_max_seconds =
      std::chrono::duration<double>(reader->Duration("storm-prevention-max")).count();
  o.expect.require_gpudirect_module = reader->Bool("require-gpudirect-module");
  o.hold_for = reader->Duration("hold-for", true);
  o.clear_for = reader->Duration("clear-for", true);
  o.drain_eligible = reader->Bool("drain-eligible");
  if (!reader->status().ok()) return Error(reader->status());
  Status status;
  o.expect.roce_priority = AutoOrNumber(options, "roce-priority", 0, 7, status);
  o.expect.mtu = AutoOrNumber(options, "mtu", 68, 65535, status);
  o.expect.ib_mtu = AutoOrNumber(options, "ib-mtu", 256, 4096, status);
  if (o.expect.ib_mtu && (*o.expect.ib_mtu & (*o.expect.ib_mtu - 1)) != 0 && status.ok()) {
    status = Status(StatusCode::kInvalidArgument,
                    "detector config_drift: option ib-mtu=\"" + std::to_string(*o.expect.ib_mtu) +
                        "\": expected auto, 256, 512, 1024, 2048 or 4096");
  }
  if (auto it = options.find("trust"); it != options.end() && it->second != "auto") {
    if (it->second != "dscp" && it->second != "pcp" && status.ok()) {
      status =
          Status(StatusCode::kInvalidArgument, "detector config_drift: option trust=\"" +
                                                   it->second + "\": expected auto, dscp or pcp");
    }
    o.expect.trust = it->second;
  }
  if (!status.ok()) return Error(status);
  return o;
}

}  // namespace

std::span<const DetectorOptionSpec> ConfigDriftDetectorOptions() { return kOptions; }
std::span<const MetricDesc> ConfigDriftDetectorMetrics() { return kMetrics; }
std::span<const MetricInput> ConfigDriftDetectorInputs() { return drift::ConfigInputs(); }

Status ValidateConfigDriftDetectorOptions(const DetectorOptions& options) {
  return StatusOf(ParseOptions(options));
}

Result<std::unique_ptr<Detector>> MakeConfigDriftDetector(const DetectorOptions& options) {
  auto parsed = ParseOptions(options);
  if (!parsed) return Error(parsed.error());
  return std::unique_ptr<Detector>(new ConfigDriftDetector(std::move(*parsed)));
}

}  // namespace fabricwatch::detect
