#include "exporter/check/check_look.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "collectors/collector_set.h"
#include "collectors/kmsg/kmsg.h"
#include "base/duration.h"
#include "collectors/optics/optics_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/kmsg_cursor.h"
#include "collectors/sys/sysfs.h"
#include "detectors/core/node_model.h"
#include "detectors/registry.h"
#include "detectors/core/snapshot_lookup.h"
#include "detectors/core/state_file.h"
#include "exporter/collector_sources.h"
#include "exporter/logging.h"
#include "exporter/pipeline/detector_engine.h"
#include "exporter/pipeline/scheduler.h"
#include "exporter/pipeline/snapshot_store.h"
#include "exporter/privileges.h"
#include "exporter/probe/probe_sources.h"

namespace fabricwatch::exporter::check {
namespace {

// The boot id the check loads the state file under: never the node's, so the engine restores
// detector state (learned shape, baselines) but neither the saved anomalies (those are the
// agent's, asked over its API) nor the kernel log position (the check reads the whole log).
constexpr std::string_view kCheckBootId = "fabricwatch-check";

// Wall time, shifted for the second feed.
class LookClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override {
    return std::chrono::system_clock::now() + shift_;
  }
  void Shift(std::chrono::milliseconds shift) { shift_ = shift; }

 private:
  std::chrono::milliseconds shift_{0};
};

// The detectors whose findings one look can make, with the holds the second feed must pass, as
// each declares them (detectors/core/declaration.h DetectorDeclaration::one_look, in its
// detectors/<name>/<name>_metrics.h).
std::vector<OneLookDetector> DeclaredOneLook() {
  std::vector<OneLookDetector> one_look;
  for (const detect::DetectorInfo& info : detect::DetectorRegistry()) {
    if (info.declaration.one_look) one_look.push_back({info.name, info.declaration.one_look_holds});
  }
  return one_look;
}

bool IsOneLook(std::string_view name) {
  const detect::DetectorInfo* info = detect::FindDetector(name);
  return info != nullptr && info->declaration.one_look;
}

// The detectors fed by the kernel log, whose saved state the check does not restore: the check
// rereads the whole log, so their saved history (the agent's lines of this boot) would count
// each line twice. The rest (the learned shape, the baselines) is what one look needs.
std::vector<std::string> KernelLogFed() {
  std::vector<std::string> names;
  for (const detect::DetectorInfo& info : detect::DetectorRegistry()) {
    if (info.declaration.reads_kernel_log) names.emplace_back(info.name);
  }
  return names;
}

// The kernel's own log is read from its oldest record (a set cursor makes the kmsg collector
// open /dev/kmsg at the start of the ring, collectors/kmsg/kmsg_source.h); a replay file is
// always read from its start.
bool IsCharacterDevice(const std::string& path) {
  struct stat st {};
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// The collection's problems, as "what could not be read" lines.
void NoteCollection(const std::string& name, const CollectionOutcome& outcome,
                    std::vector<std::string>& unread) {
  const Status& status = outcome.run.status;
  // No data is normal (no such hardware, a replay without that file), unless it was refused.
  const bool refused =
      status.code() == StatusCode::kPermissionDenied ||
      (status.no_data() && status.message().find("ermission denied") != std::string::npos);
  if ((!status.ok() && !status.no_data()) || refused) {
    unread.push_back("collector " + name + ": " + status.message());
  }
  if (outcome.run.partial_errors > 0) {
    std::string line =
        "collector " + name + ": " + std::to_string(outcome.run.partial_errors) + " read(s) failed";
    if (!outcome.errors.empty()) line += ", first: " + outcome.errors.front().ToString();
    unread.push_back(std::move(line));
  }
}

// The state file, when set and readable: detector state only (kCheckBootId). Otherwise one line
// in `unread` says why, and the detectors start fresh (the learned shape is then the siblings').
std::optional<detect::StateFile> ReadableStateFile(const Config& config,
                                                   std::vector<std::string>& unread) {
  if (config.state_file.empty()) return std::nullopt;
  if (Status path = detect::CheckStatePath(config.state_file); !path.ok()) {
    unread.push_back("the state file " + config.state_file + ": " + path.message());
    return std::nullopt;
  }
  detect::StateFile file(config.state_file, std::string(kCheckBootId));
  auto loaded = file.Load();
  if (!loaded) {
    if (loaded.error().code() != StatusCode::kNotFound) {
      unread.push_back("the state file: " + loaded.error().ToString());
    }
    return std::nullopt;
  }
  return file;
}

// Every RDMA port of the node model whose state the rdma collector reported.
std::vector<SeenPort> PortsOf(const detect::NodeModel& node) {
  std::vector<SeenPort> ports;
  for (const detect::RdmaPort& port : node.ports()) {
    if (!port.state) continue;
    SeenPort seen;
    seen.port.device = port.id.device;
    seen.port.port = port.id.port;
    seen.active = port.active();
    seen.rate_bits_per_second = 8 * port.rate_bytes_per_second.value_or(0);
    ports.push_back(std::move(seen));
  }
  return ports;
}

// The second feed as a later look: the snapshot at `shift` later, without the log events (seen
// once). The module EEPROM's read time moves too: thermal_drift and optical_drift skip a read
// whose time they have seen (optics_metrics.h kLastRead: re-exported between reads), and this
// one stands for a new read that found the same values.
std::shared_ptr<const Snapshot> Later(const Snapshot& snapshot, std::chrono::milliseconds shift) {
  auto later = std::make_shared<Snapshot>(snapshot);
  later->time += shift;
  later->log_events.clear();
  const double seconds = std::chrono::duration<double>(shift).count();
  for (prometheus::MetricFamily& family : later->families) {
    if (family.name != optics::kLastRead.name) continue;
    for (prometheus::ClientMetric& metric : family.metric) {
      metric.gauge.value += seconds;
      metric.untyped.value += seconds;
    }
  }
  return later;
}

using FindingKey = std::tuple<std::string, detect::Severity, detect::EntityLabels>;

void TakeActive(DetectorEngine& engine, std::map<FindingKey, CheckFinding>& found) {
  for (const detect::ActiveAnomaly& a : engine.tracker().Active()) {
    if (a.restored || !IsOneLook(a.detector)) continue;
    CheckFinding f{.detector = a.detector,
                   .severity = a.finding.severity,
                   .entity = a.finding.entity,
                   .reason = a.finding.reason,
                   .evidence = a.finding.evidence,
                   .source = FindingSource::kLook};
    found[{f.detector, f.severity, f.entity}] = std::move(f);
  }
}

// Every enabled collector once, in registry order; their snapshots and what failed.
Result<std::vector<std::shared_ptr<const Snapshot>>> CollectAll(const Config& config,
                                                                const SourceParts& parts,
                                                                std::vector<std::string>& unread) {
  auto built =
      BuildCollectors(ConfiguredCollectorSources(config, parts), ConfiguredCollectors(config));
  if (!built) return Error(built.error());
  std::vector<std::shared_ptr<const Snapshot>> snapshots;
  for (BuiltCollector& b : *built) {
    // b.ethtool stays in `built` while the collector reads it.
    ScheduledCollector collector{std::string(b.info->name), b.interval, std::move(b.collector),
                                 std::move(b.logger)};
    CollectionOutcome outcome = CollectOnce(collector, parts.clock);
    NoteCollection(collector.name, outcome, unread);
    if (outcome.snapshot) snapshots.push_back(std::move(outcome.snapshot));
  }
  return snapshots;
}

}  // namespace

std::span<const OneLookDetector> OneLookDetectors() {
  static const std::vector<OneLookDetector> one_look = DeclaredOneLook();
  return one_look;
}

Result<std::chrono::milliseconds> LongestHold(const Config& config) {
  std::chrono::milliseconds longest{0};
  for (const OneLookDetector& one : OneLookDetectors()) {
    const detect::DetectorInfo* info = detect::FindDetector(one.name);
    auto configured = config.detectors.find(std::string(one.name));
    if (info == nullptr || configured == config.detectors.end() || !configured->second.enabled) {
      continue;
    }
    for (std::string_view key : one.holds) {
      std::string value;
      for (const detect::DetectorOptionSpec& spec : info->options) {
        if (spec.key == key) value = std::string(spec.default_value);
      }
      auto given = configured->second.options.find(key);
      if (given != configured->second.options.end()) value = given->second;
      auto hold = ParseDuration(value);
      if (!hold) {
        return Error(
            hold.error().WithContext("detector " + std::string(one.name) + " " + std::string(key)));
      }
      longest = std::max(longest, *hold);
    }
  }
  return longest;
}

Result<LookResult> LookOnce(const Config& config) {
  LookResult result;
  auto hold = LongestHold(config);
  if (!hold) return Error(hold.error());
  LookClock clock;
  const sys::RealFileSystem filesystem;
  const sys::SysFs sysfs(config.roots.sysfs, filesystem);
  PrivilegeLog privileges(FeaturesInUse(config), EffectiveCapabilities(filesystem),
                          GetLogger("privileges"));
  sys::KmsgCursor cursor;
  const bool kernel_log = IsCharacterDevice(ResolvedRoots(config).PathOf(kmsg::kKernelLog));
  if (kernel_log) cursor.Set(0);
  auto snapshots = CollectAll(config,
                              {.sysfs = sysfs,
                               .clock = clock,
                               .filesystem = filesystem,
                               .privileges = privileges,
                               .kmsg_cursor = kernel_log ? &cursor : nullptr},
                              result.unread);
  if (!snapshots) return Error(snapshots.error());
  for (const PrivilegeNeed* need : FeaturesInUse(config)) {
    if (!privileges.Missing(need->feature)) continue;
    result.unread.push_back(
        std::string(need->feature) + " (collector " + std::string(need->collector) + "): needs " +
        std::string(need->capability) + "; without it " + std::string(need->loses));
  }
  detect::NodeModelBuilder node;
  for (const auto& s : *snapshots) node.Observe(s->collector, s->families);
  result.ports = PortsOf(node.model());
  {
    // The rate --check.probe judges against is the agent's (probe_sources.h): the shape's
    // (--shape.file, else same-model siblings), else the rate the port reports. A port that
    // trained low reports the low rate; the shape does not.
    SnapshotStore store;
    for (const auto& s : *snapshots) store.Publish(s);
    const probe::ExpectedRate expected = probe::ExpectedRateFromStore(store, config.shape_file);
    for (SeenPort& seen : result.ports) seen.expected_bits_per_second = expected(seen.port);
  }

  const detect::DetectorSelector select = ConfiguredDetectors(config);
  auto detectors = detect::BuildDetectors([&](const detect::DetectorInfo& info) {
    return IsOneLook(info.name) ? select(info) : std::nullopt;
  });
  if (!detectors) return Error(detectors.error());
  EngineOptions options;
  options.escalation.count = config.escalation_count;
  options.escalation.window = config.escalation_window;
  options.skip_saved_state = KernelLogFed();
  DetectorEngine engine(std::move(*detectors), clock, nullptr,
                        ReadableStateFile(config, result.unread), GetLogger("detectors"), options);
  engine.LoadState();
  std::map<FindingKey, CheckFinding> found;
  for (const auto& s : *snapshots) engine.Submit(s);
  engine.RunOnce();
  TakeActive(engine, found);
  // The second feed: the same look, as if the node had stayed so past every hold.
  const std::chrono::milliseconds shift = *hold + std::chrono::seconds(1);
  clock.Shift(shift);
  for (const auto& s : *snapshots) engine.Submit(Later(*s, shift));
  engine.RunOnce();
  TakeActive(engine, found);
  for (auto& [key, finding] : found) result.findings.push_back(std::move(finding));
  return result;
}

}  // namespace fabricwatch::exporter::check
