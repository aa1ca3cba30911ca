#include "collectors/ethtool/ethtool.h"

#include <malloc.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "collectors/core/collector_options.h"
#include "collectors/core/device_reads.h"
#include "collectors/core/device_filter.h"
#include "collectors/core/transition_log.h"
#include "base/value_parse.h"
#include "collectors/ethtool/ethtool_families.h"
#include "collectors/ethtool/ethtool_link.h"
#include "collectors/ethtool/ethtool_names.h"
#include "collectors/ethtool/ethtool_qos.h"
#include "collectors/ethtool_source/ethtool.h"
#include "collectors/sys/listing_watch.h"
#include "collectors/ethtool_source/netdevs.h"
#include "collectors/sys/sysfs.h"

namespace fabricwatch::ethtool {
namespace {

// A request a netdev answered "not supported" is asked again after this long (hot-swap, driver
// reload).
constexpr std::chrono::seconds kUnsupportedRetry{60};
// A table that shrinks by more statistics than this hands the freed heap back (malloc_trim).
constexpr size_t kTrimAfterShrink = 4096;
// How often the choice of netdevs is made again when no listing changed.
constexpr std::chrono::seconds kReselect{60};
constexpr std::array<std::string_view, 8> kPriorities = {"0", "1", "2", "3", "4", "5", "6", "7"};
constexpr std::array<std::string_view, 9> kLanes = {"0", "1", "2", "3", "4", "5", "6", "7", "8"};

constexpr CollectorOptionSpec kOptions[] = {
    {"device-include",
     "Regular expression of netdevs to read. Default: every netdev with a PCI parent or an RDMA "
     "device (not lo, bridges or veth).",
     ""},
    {"device-exclude", "Regular expression of netdevs not to read.", ""},
    {"metrics-include",
     "Regular expression of raw driver statistic names to export as "
     "fabric_ethtool_<sanitised name> besides the normalised families (passthrough; off when "
     "empty, so a 64-queue NIC does not add thousands of series).",
     ""},
    {"metrics-exclude", "Regular expression of raw statistic names the passthrough skips.", ""},
    {"link-settings-interval",
     "How often each netdev's link settings (speed, lanes, link modes, autoneg) are read again: "
     "two netlink requests per netdev; the values read last are exported in between.",
     "10s"},
};

std::vector<MetricDesc> AllMetrics() {
  std::vector<MetricDesc> all(std::begin(kOwnMetrics), std::end(kOwnMetrics));
  for (const MetricDesc* desc : NormalizedMetrics()) all.push_back(*desc);
  all.insert(all.end(), LinkMetrics().begin(), LinkMetrics().end());
  all.insert(all.end(), QosMetrics().begin(), QosMetrics().end());
  return all;
}

// value × scale, but a fractional scale such as 1e-6 (µs → s) divides by its exact inverse:
// 4100 µs must print as 0.0041, not 0.004099999999999999 (1e-6 has no exact binary form).
double Scaled(uint64_t value, double scale) {
  const double v = static_cast<double>(value);
  if (scale > 0 && scale < 1) {
    const double inverse = std::round(1.0 / scale);
    if (std::abs(inverse * scale - 1.0) < 1e-12) return v / inverse;
  }
  return v * scale;
}

bool Quiet(const Status& status) {
  return status.code() == StatusCode::kUnimplemented || status.code() == StatusCode::kNoData;
}

class EthtoolCollector final : public Collector {
 public:
  EthtoolCollector(const CollectorContext& context, DeviceFilter devices, bool explicit_include,
                   std::optional<std::regex> metrics_include,
                   std::optional<std::regex> metrics_exclude,
                   std::chrono::milliseconds link_interval)
      : sysfs_(context.sysfs),
        clock_(context.clock),
        source_(context.ethtool),
        logger_(context.logger),
        transitions_(context.logger),
        devices_(std::move(devices)),
        explicit_include_(explicit_include),
        metrics_include_(std::move(metrics_include)),
        metrics_exclude_(std::move(metrics_exclude)),
        links_(link_interval) {}

  // One sample, and the device reads it made (collectors/core/device_reads.h).
  Status Collect(MetricSink& sink) override {
    reads_.Reset();
    Status status = CollectNetdevs(sink);
    reads_.Add(DeviceRead::kLinkSettingsQuery, links_.TakeReads());
    reads_.Emit("ethtool", sink);
    return status;
  }

 private:
  Status CollectNetdevs(MetricSink& sink);
  // !SkipUnsupported(), counting the request the caller then makes as a device read.
  bool Ask(const std::string& netdev, std::string_view what, DeviceRead kind) {
    if (SkipUnsupported(netdev, what)) return false;
    reads_.Add(kind);
    return true;
  }
  struct Passthrough {
    std::string name;
    std::string help;
    MetricDesc desc;
  };

  // What to do with one driver statistic that exports something: its curated series (none
  // when the name is not curated, or an earlier name of the table already fills that series)
  // and its passthrough family (none when not selected).
  static constexpr uint32_t kNoSeries = UINT32_MAX;
  struct StatAction {
    uint32_t stat = 0;                // position in the table
    uint32_t normalized = kNoSeries;  // into TablePlan::normalized
    const MetricDesc* passthrough = nullptr;
  };
  // The plan of a netdev's statistics table, worked out once per list of names rather than per
  // sample (docs/design.md §8): drivers change their table rarely (mlx5 when PFC is enabled). It
  // holds what the ~1,200 statistics of an mlx5 port need and no more: the names once, packed,
  // and an action for each of the few that export anything.
  struct TablePlan {
    // The names the plan was made for: each as its length (4 bytes) and its bytes, in order.
    std::string names;
    size_t count = 0;
    std::vector<NormalizedStat> normalized;
    std::vector<StatAction> actions;  // in table order
    // The statistics last read, kept so the next read reuses the storage of their names.
    std::vector<sys::EthtoolStat> read;
  };
  // True when `plan` was made for exactly these names.
  static bool PlannedFor(const TablePlan& plan, const std::vector<sys::EthtoolStat>& stats);

  Result<std::vector<std::string>> Netdevs();
  // Brings selected_ (and the ECN files of each) up to date. The selection reads links and
  // lists every RDMA device, so it is made again only when the listings it depends on change,
  // or every kReselect for what no listing shows (a PCI netdev whose RDMA device binds later).
  Status RefreshSelection();
  // Brings the plan up to date with plan.read.
  void UpdatePlan(const std::string& netdev, TablePlan& plan, MetricSink& sink);
  void CollectNetdev(const std::string& netdev, MetricSink& sink);
  void CollectStandard(const std::string& netdev, MetricSink& sink);
  void CollectEcn(const std::string& netdev, MetricSink& sink);
  // Global pause (settings and counters) and the PFC storm-prevention tunable: asked of every
  // source (a replay directory: DIR/<netdev>/pause and tunables).
  void CollectPause(const std::string& netdev, MetricSink& sink);
  // PFC and QoS configuration: asked of every source (a replay directory: DIR/<netdev>/qos).
  void CollectPfc(const std::string& netdev, MetricSink& sink);
  void CollectLink(const std::string& netdev, MetricSink& sink);
  // A request that failed: "not supported" is NotSupported(), a vanished netdev is nothing, the
  // rest is counted.
  void Unanswered(const std::string& netdev, std::string_view what, const Status& error,
                  MetricSink& sink) {
    if (Quiet(error)) {
      NotSupported(netdev, what, error);
    } else if (error.code() != StatusCode::kNotFound) {
      Fail(sink, netdev + "/" + std::string(what), error);
    }
  }
  // The passthrough family of a raw statistic name, or null when it is not exported.
  const MetricDesc* PassthroughFor(const std::string& netdev, const std::string& stat,
                                   MetricSink& sink);
  // Logs an expected "not supported" once per (netdev, what), at debug, and skips that request
  // for kUnsupportedRetry: veth and friends would otherwise cost a syscall per query per tick.
  // `what` is always a string literal.
  void NotSupported(const std::string& netdev, std::string_view what, const Status& status) {
    unsupported_until_[netdev][what] = clock_.Now() + kUnsupportedRetry;
    if (unsupported_logged_.insert(netdev + "/" + std::string(what)).second) {
      logger_->debug("{}: {} not supported: {}", netdev, what, status.message());
    }
  }
  bool SkipUnsupported(const std::string& netdev, std::string_view what) const {
    // Looked up without building a key: this runs for every request of every netdev each tick.
    auto of_netdev = unsupported_until_.find(netdev);
    if (of_netdev == unsupported_until_.end()) return false;
    auto it = of_netdev->second.find(what);
    return it != of_netdev->second.end() && clock_.Now() < it->second;
  }
  void Fail(MetricSink& sink, const std::string& key, const Status& status) {
    sink.RecordError(status);
    transitions_.Failed(key, status);
  }

  const sys::SysFs& sysfs_;
  const Clock& clock_;
  sys::EthtoolSource* source_;
  std::shared_ptr<spdlog::logger> logger_;
  TransitionLog transitions_;
  DeviceFilter devices_;
  bool explicit_include_;
  std::optional<std::regex> metrics_include_;
  std::optional<std::regex> metrics_exclude_;
  std::set<std::string> unsupported_logged_;
  std::map<std::string, std::map<std::string_view, std::chrono::system_clock::time_point>,
           std::less<>>
      unsupported_until_;
  // Passthrough families by metric name; std::map nodes keep the strings the descs point at.
  std::map<std::string, Passthrough, std::less<>> passthrough_;
  std::set<std::string> collisions_reported_;
  std::map<std::string, TablePlan, std::less<>> plans_;  // by netdev
  LinkSettingsCache links_;
  std::string dscp_map_;  // the DSCP map label of EmitPfcConfig, reused

  // class/net and class/infiniband (or the replay directory), which the selection is made from.
  sys::ListingWatch listings_{2, kReselect};
  std::vector<std::string> selected_;  // the netdevs read, in order
  // mlx5's per-priority ECN switches (ecn/roce_{np,rp}/enable/<priority>), found with the
  // selection; upstream drivers have none.
  struct EcnFile {
    std::string_view role;
    size_t priority;
    sys::AttributeFile file;
  };
  std::map<std::string, std::vector<EcnFile>, std::less<>> ecn_;  // by netdev
  DeviceReadCounts reads_;                                        // this sample's
};

Result<std::vector<std::string>> EthtoolCollector::Netdevs() {
  return sys::FabricNetdevCandidates(sysfs_, *source_, explicit_include_);
}

const MetricDesc* EthtoolCollector::PassthroughFor(const std::string& netdev,
                                                   const std::string& stat, MetricSink& sink) {
  if (!metrics_include_ || !std::regex_search(stat.begin(), stat.end(), *metrics_include_)) {
    return nullptr;
  }
  if (metrics_exclude_ && std::regex_search(stat.begin(), stat.end(), *metrics_exclude_)) {
    return nullptr;
  }
  const std::string metric_name = PassthroughMetricName(stat);
  if (metric_name.empty()) return nullptr;  // nothing usable left after sanitising
  auto it = passthrough_.find(metric_name);
  if (it == passthrough_.end()) {
    Passthrough entry;
    entry.name = metric_name;
    entry.help = "Driver statistic \"" + stat +
                 "\" (ethtool -S passthrough; type and unit as the driver defines them).";
    it = passthrough_.emplace(metric_name, std::move(entry)).first;
    it->second.desc =
        MetricDesc{it->second.name, it->second.help, MetricKind::kUntyped, {"netdev"}};
  } else if (it->second.help.find("\"" + stat + "\"") == std::string::npos) {
    // Two raw names sanitise to one metric name: the first one keeps it.
    if (collisions_reported_.insert(stat).second) {
      Status collision(StatusCode::kInvalidArgument,
                       "ethtool passthrough: statistic \"" + stat + "\" of " + netdev +
                           " sanitises to " + it->second.name +
                           ", already used by another statistic; it is not exported");
      logger_->warn("{}", collision.message());
      sink.RecordError(collision);
    }
    return nullptr;
  }
  return &it->second.desc;
}

bool EthtoolCollector::PlannedFor(const TablePlan& plan,
                                  const std::vector<sys::EthtoolStat>& stats) {
  if (plan.count != stats.size()) return false;
  std::string_view packed = plan.names;
  for (const sys::EthtoolStat& stat : stats) {
    uint32_t length;
    if (packed.size() < sizeof(length)) return false;
    std::memcpy(&length, packed.data(), sizeof(length));
    packed.remove_prefix(sizeof(length));
    if (packed.substr(0, length) != stat.name) return false;
    packed.remove_prefix(length);
  }
  return packed.empty();
}

void EthtoolCollector::UpdatePlan(const std::string& netdev, TablePlan& plan, MetricSink& sink) {
  const std::vector<sys::EthtoolStat>& stats = plan.read;
  if (PlannedFor(plan, stats)) return;
  plan.names.clear();
  plan.count = stats.size();
  plan.normalized.clear();
  plan.actions.clear();
  // Two vendor names for one normalised series on one netdev (a driver exposing both a PHY
  // and a MAC view of the same count): the first one wins, quietly.
  std::set<std::string> seen;
  for (size_t i = 0; i < stats.size(); ++i) {
    const std::string& name = stats[i].name;
    const auto length = static_cast<uint32_t>(name.size());
    plan.names.append(reinterpret_cast<const char*>(&length), sizeof(length)).append(name);
    StatAction action{.stat = static_cast<uint32_t>(i)};
    if (auto normalized = NormalizeStat(name)) {
      std::string key(normalized->desc->name);
      for (size_t k = 0; k < normalized->n_extra; ++k) {
        key += '\xff';
        key += normalized->extra[k].second;
      }
      if (seen.insert(key).second) {
        action.normalized = static_cast<uint32_t>(plan.normalized.size());
        plan.normalized.push_back(*normalized);
      }
    }
    action.passthrough = PassthroughFor(netdev, name, sink);
    if (action.normalized != kNoSeries || action.passthrough != nullptr) {
      plan.actions.push_back(action);
    }
  }
  plan.names.shrink_to_fit();
  plan.normalized.shrink_to_fit();
  plan.actions.shrink_to_fit();
}

void EthtoolCollector::CollectStandard(const std::string& netdev, MetricSink& sink) {
  const LabelPair n{"netdev", netdev};
  auto handle = [&](const auto& result, std::string_view what) -> bool {
    if (!result) Unanswered(netdev, what, result.error(), sink);
    return result.has_value();
  };
  const auto ask = [&](std::string_view what) {
    return Ask(netdev, what, DeviceRead::kEthtoolQuery);
  };
  if (!ask("FEC statistics")) {
  } else if (auto fec = source_->Fec(netdev); handle(fec, "FEC statistics")) {
    if (!fec->active_mode.empty()) sink.AddInfo(kFecInfo, {n, {"mode", fec->active_mode}});
    const std::pair<const std::vector<uint64_t>*, std::pair<const MetricDesc*, const MetricDesc*>>
        arrays[] = {{&fec->corrected_blocks, {&kFecCorrected, &kFecLaneCorrected}},
                    {&fec->uncorrectable_blocks, {&kFecUncorrectable, &kFecLaneUncorrectable}},
                    {&fec->corrected_bits, {&kFecCorrectedBits, &kFecLaneCorrectedBits}}};
    for (const auto& [values, descs] : arrays) {
      for (size_t i = 0; i < values->size() && i < kLanes.size() + 1; ++i) {
        const double v = static_cast<double>((*values)[i]);
        if (i == 0) {
          sink.Add(*descs.first, {n}, v);
        } else {
          sink.Add(*descs.second, {n, {"lane", kLanes[i - 1]}}, v);
        }
      }
    }
  }
  if (!ask("link state")) {
  } else if (auto link = source_->LinkStateOf(netdev); handle(link, "link state")) {
    if (link->ext_down_count) {
      sink.Add(kLinkExtDown, {n}, static_cast<double>(*link->ext_down_count));
    }
    if (link->ext_state) sink.Add(kLinkExtState, {n}, *link->ext_state);
  }
  if (!ask("standard statistics")) {
  } else if (auto standard = source_->StandardStats(netdev);
             handle(standard, "standard statistics")) {
    for (const sys::StandardStat& stat : *standard) {
      sink.Add(kStandardStat, {n, {"group", stat.group}, {"stat", stat.name}},
               static_cast<double>(stat.value));
    }
  }
}

void EthtoolCollector::CollectPause(const std::string& netdev, MetricSink& sink) {
  const LabelPair n{"netdev", netdev};
  // `what` is a literal (NotSupported keys on it); `file` names a replay file's warnings.
  auto handle = [&](const auto& result, std::string_view what, std::string_view file) -> bool {
    for (Status& warning : source_->TakeWarnings()) {
      Fail(sink, netdev + "/" + std::string(file), warning);
    }
    if (!result) Unanswered(netdev, what, result.error(), sink);
    return result.has_value();
  };
  constexpr std::string_view kPause = "pause settings";
  constexpr std::string_view kTimeout = "PFC storm prevention timeout";
  if (!Ask(netdev, kPause, DeviceRead::kEthtoolQuery)) {
  } else if (auto pause = source_->Pause(netdev); handle(pause, kPause, "pause")) {
    const std::pair<const std::optional<bool>*, std::string_view> flags[] = {
        {&pause->rx_enabled, "rx"}, {&pause->tx_enabled, "tx"}};
    for (const auto& [flag, direction] : flags) {
      if (*flag) sink.Add(kPauseEnabled, {n, {"direction", direction}}, **flag ? 1 : 0);
    }
    if (pause->autoneg) sink.Add(kPauseAutoneg, {n}, *pause->autoneg ? 1 : 0);
    if (pause->tx_frames) {
      sink.Add(kMacPauseFrames, {n, {"direction", "tx"}}, static_cast<double>(*pause->tx_frames));
    }
    if (pause->rx_frames) {
      sink.Add(kMacPauseFrames, {n, {"direction", "rx"}}, static_cast<double>(*pause->rx_frames));
    }
  }
  if (!Ask(netdev, kTimeout, DeviceRead::kEthtoolQuery)) {
  } else if (auto timeout = source_->PfcStormTimeoutMs(netdev);
             handle(timeout, kTimeout, "tunables")) {
    sink.Add(kPfcStormTimeout, {n}, *timeout / 1000.0);
  }
}

void EthtoolCollector::CollectPfc(const std::string& netdev, MetricSink& sink) {
  constexpr std::string_view kWhat = "DCB PFC configuration";
  if (!Ask(netdev, kWhat, DeviceRead::kDcbRequest)) return;
  auto pfc = source_->Pfc(netdev);
  for (Status& warning : source_->TakeWarnings()) Fail(sink, netdev + "/qos", warning);
  if (!pfc) {
    Unanswered(netdev, kWhat, pfc.error(), sink);
    return;
  }
  EmitPfcConfig(netdev, *pfc, sink, dscp_map_);
}

void EthtoolCollector::CollectEcn(const std::string& netdev, MetricSink& sink) {
  auto files = ecn_.find(netdev);
  if (files == ecn_.end()) return;
  for (EcnFile& ecn : files->second) {
    auto value = ecn.file.ReadUint64();
    if (!value) {
      Fail(sink, ecn.file.path(), value.error());
      continue;
    }
    sink.Add(kEcnEnabled,
             {{"netdev", netdev}, {"priority", kPriorities[ecn.priority]}, {"role", ecn.role}},
             *value != 0 ? 1 : 0);
  }
}

void EthtoolCollector::CollectLink(const std::string& netdev, MetricSink& sink) {
  // Asked of every source: replay directories have a form for it (DIR/<netdev>/link).
  if (SkipUnsupported(netdev, "link settings")) return;
  auto settings = links_.Get(netdev, *source_, clock_.Now());
  for (Status& warning : source_->TakeWarnings()) Fail(sink, netdev + "/link", warning);
  if (!settings) return Unanswered(netdev, "link settings", settings.error(), sink);
  EmitLinkSettings(netdev, **settings, sink);
}

Status EthtoolCollector::RefreshSelection() {
  if (Status status = sys::ListNetdevSources(sysfs_, source_, listings_); !status.ok()) {
    return status;
  }
  const auto now = clock_.Now();
  if (listings_.Unchanged(now)) return Status::Ok();
  auto netdevs = Netdevs();
  if (!netdevs) return netdevs.error();
  listings_.MarkChosen(now);
  selected_.clear();
  for (std::string& netdev : *netdevs) {
    if (devices_.Accepts(netdev)) selected_.push_back(std::move(netdev));
  }
  // Forget the tables of netdevs that went away (a plan kept for a name would only be a miss).
  const auto unselected = [&](const auto& entry) {
    return std::find(selected_.begin(), selected_.end(), entry.first) == selected_.end();
  };
  std::erase_if(plans_, unselected);
  links_.Retain(selected_);
  ecn_.clear();
  for (const std::string& netdev : selected_) {
    for (std::string_view role : {"np", "rp"}) {
      const std::string dir = "class/net/" + netdev + "/ecn/roce_" + std::string(role) + "/enable";
      auto entries = sysfs_.ListDir(dir);
      if (!entries) continue;  // upstream kernels have no such files
      for (const std::string& entry : *entries) {
        auto priority = ParseUint64(entry, dir);
        if (!priority || *priority >= kPriorities.size()) continue;
        ecn_[netdev].push_back(EcnFile{.role = role,
                                       .priority = static_cast<size_t>(*priority),
                                       .file = sys::AttributeFile(sysfs_, dir + "/" + entry)});
      }
    }
  }
  return Status::Ok();
}

void EthtoolCollector::CollectNetdev(const std::string& netdev, MetricSink& sink) {
  if (!Ask(netdev, "driver statistics", DeviceRead::kEthtoolStatsRequest)) {
    if (source_->HasLinkQueries()) CollectStandard(netdev, sink);
    CollectPause(netdev, sink);
    CollectPfc(netdev, sink);
    CollectLink(netdev, sink);
    CollectEcn(netdev, sink);
    return;
  }
  auto it = plans_.find(netdev);
  if (it == plans_.end()) it = plans_.emplace(netdev, TablePlan{}).first;
  TablePlan& plan = it->second;
  const size_t planned = plan.count;  // the size of the table read last time
  const Status status = source_->ReadStatistics(netdev, plan.read);
  for (Status& warning : source_->TakeWarnings()) Fail(sink, netdev + "/statistics", warning);
  // A table that shrank by thousands (or went) freed thousands of small names scattered through
  // the heap, which glibc keeps until told. Measured (README "Collectors"): RSS stayed 1.6-1.9 MB
  // above its start after a 32,000-statistic table shrank back without the trim, 0.7-1.0 with.
  const bool shrank = planned > (status.ok() ? plan.read.size() : 0) + kTrimAfterShrink;
  if (!status.ok()) {
    if (Quiet(status)) {
      NotSupported(netdev, "driver statistics", status);
    } else if (status.code() == StatusCode::kNotFound) {
      logger_->debug("{} vanished: {}", netdev, status.message());
      plans_.erase(it);
      return;
    } else {
      Fail(sink, netdev + "/statistics", status);
    }
    plans_.erase(it);  // nothing of the table is used: its memory goes now
  } else {
    const std::vector<sys::EthtoolStat>& stats = plan.read;
    const LabelPair n{"netdev", netdev};
    sink.Add(kDriverStats, {n}, static_cast<double>(stats.size()));
    UpdatePlan(netdev, plan, sink);
    for (const StatAction& action : plan.actions) {
      const sys::EthtoolStat& stat = stats[action.stat];
      if (action.normalized != kNoSeries) {
        const NormalizedStat& normalized = plan.normalized[action.normalized];
        std::array<LabelPair, 4> labels;
        labels[0] = n;
        for (size_t i = 0; i < normalized.n_extra; ++i) {
          labels[i + 1] = {normalized.extra[i].first, normalized.extra[i].second};
        }
        sink.Add(*normalized.desc,
                 std::span<const LabelPair>(labels.data(), normalized.n_extra + 1),
                 Scaled(stat.value, normalized.scale));
      }
      if (action.passthrough != nullptr) {
        sink.Add(*action.passthrough, {n}, static_cast<double>(stat.value));
      }
    }
  }
  if (shrank) malloc_trim(0);
  if (source_->HasLinkQueries()) CollectStandard(netdev, sink);
  CollectPause(netdev, sink);
  CollectPfc(netdev, sink);
  CollectLink(netdev, sink);
  CollectEcn(netdev, sink);
}

Status EthtoolCollector::CollectNetdevs(MetricSink& sink) {
  if (source_ == nullptr) return Status(StatusCode::kNoData, "no ethtool source configured");
  if (Status status = RefreshSelection(); !status.ok()) {
    if (status.code() == StatusCode::kNotFound) {
      return Status(StatusCode::kNoData, status.message());
    }
    return status;
  }
  for (const std::string& netdev : selected_) CollectNetdev(netdev, sink);
  transitions_.EndCollection();
  if (selected_.empty()) {
    return Status(StatusCode::kNoData, "no netdev selected for ethtool statistics");
  }
  return Status::Ok();
}

}  // namespace

std::span<const MetricDesc> EthtoolMetrics() {
  static const std::vector<MetricDesc> all = AllMetrics();  // built once from constexpr tables
  return all;
}
std::span<const CollectorOptionSpec> EthtoolOptions() { return kOptions; }

Result<std::unique_ptr<Collector>> NewEthtoolCollector(const CollectorContext& context) {
  const CollectorOptionReader options("ethtool", context.options, kOptions);
  auto devices = options.Devices();
  if (!devices) return Error(devices.error());
  auto compile = [](const std::string& pattern,
                    std::string_view flag) -> Result<std::optional<std::regex>> {
    if (pattern.empty()) return std::optional<std::regex>();
    try {
      return std::optional<std::regex>(std::regex(pattern));
    } catch (const std::regex_error& e) {
      return Error(StatusCode::kInvalidArgument, "--" + std::string(flag) + "=\"" + pattern +
                                                     "\": invalid regular expression: " + e.what());
    }
  };
  auto include = compile(options.Value("metrics-include"), "collector.ethtool.metrics-include");
  if (!include) return Error(include.error());
  auto exclude = compile(options.Value("metrics-exclude"), "collector.ethtool.metrics-exclude");
  if (!exclude) return Error(exclude.error());
  auto link_interval = options.Duration("link-settings-interval");
  if (!link_interval) return Error(link_interval.error());
  return std::unique_ptr<Collector>(
      new EthtoolCollector(context, std::move(*devices), options.IsSet("device-include"),
                           std::move(*include), std::move(*exclude), *link_interval));
}

}  // namespace fabricwatch::ethtool
