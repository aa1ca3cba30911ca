#include "detectors/link_flap/link_flap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "collectors/core/duration.h"
#include "collectors/kmsg/kmsg_metrics.h"
#include "collectors/sys/link_events.h"
#include "detectors/core/anomaly_tracker.h"
#include "detectors/core/counter.h"
#include "detectors/core/hysteresis.h"
#include "detectors/core/inputs.h"
#include "detectors/core/snapshot_lookup.h"
#include "detectors/core/state_check.h"
#include "detectors/link_flap/flap_entity.h"
#include "detectors/link_flap/link_cause.h"

namespace fabricwatch::detect {
namespace {

using namespace link_flap;  // the per-port state and rules (flap_entity.h)

using std::chrono::milliseconds;

// docs/detection.md §8 (and §2.2) for every default; the help names the source.
constexpr DetectorOptionSpec kOptions[] = {
    {"hard-count",
     "Down events in hard-window that make hard flapping (critical). [S14] errdisable", "5"},
    {"hard-window", "Sliding window of hard flapping. [S14] Cisco/OcNOS/Huawei 5 flaps in 10 s",
     "10s"},
    {"slow-count", "Down events in slow-window that make slow flapping (warning). [S15] NHC2005",
     "2"},
    {"slow-window", "Sliding window of slow flapping. [S15] azurehpc-health-checks 6 h", "6h"},
    {"penalty-per-down", "Flap penalty added per down event. [S17][S18] AIED/BGP dampening",
     "1000"},
    {"half-life", "Half-life of the flap penalty's exponential decay. [S18] BGP 15 min", "15m"},
    {"suppress", "Penalty at which the port counts as flapping (warning). [S18] BGP 2000", "2000"},
    {"reuse", "Penalty below which flapping (and a hard-flapping episode) clears. [S18] BGP 750",
     "750"},
    {"max-suppress",
     "Longest suppression; caps the penalty at reuse*2^(max-suppress/half-life). "
     "[S17][S18] 60 min (ceiling 12000)",
     "60m"},
    {"down-after",
     "A port seen up that stays down this long is a sustained outage (critical). "
     "Judgement over [S16]: 30 s avoids racing auto-recovery",
     "30s"},
    {"downtime-budget",
     "Downtime in downtime-window that kills an NCCL job (warning): IB "
     "timeout 4.096 us*2^18 x 7 retries. [S58][S59]",
     "7.5s"},
    {"downtime-window", "Window of accumulated downtime. [S58] Databricks 1 h", "1h"},
    {"cause-window",
     "Kernel log lines this recent name the cause of a finding (module unplugged, firmware "
     "fatal, module error, the driver's Link down; issue 23). Judgement: a flap is judged over "
     "seconds to minutes",
     "10m"},
    {"maintenance-window",
     "Downs this close to a module unplug are maintenance, not flaps. "
     "Judgement over [S10] (module_unplug is informative)",
     "5m"},
    {"match-window",
     "Sightings of one down by different sources (netlink, counters, port state) "
     "this close together are the same down. Judgement: > 2 sample intervals",
     "5s"},
    {"micro-flap-count",
     "IB micro-flaps in micro-flap-window that warn: successful link error recoveries (the PHY "
     "retrained, IBTA PortCounters LinkErrorRecoveryCounter) and link_downed increments the port "
     "state never showed (NVSentinel/UFM count link_downed growth as a flap). Judgement: one "
     "retrain is noise, a few in minutes is a marginal link",
     "3"},
    {"micro-flap-window",
     "Sliding window of IB micro-flaps; the warning clears once fewer than micro-flap-count "
     "remain in it. Judgement: ten 60 s scrapes",
     "10m"},
    {"micro-flap-escalate-after",
     "Micro-flapping that holds this long (still retraining) becomes critical, not drained. "
     "Judgement: three micro-flap-windows",
     "30m"},
};

constexpr LabelNames kEntityLabels{"device", "port", "netdev"};
constexpr MetricDesc kPenalty{
    "fabric_link_flap_penalty",
    "Decayed flap penalty of the port (link_flap detector): +penalty-per-down per down event, "
    "halved every half-life; flapping from suppress until below reuse. device+port for IB "
    "ports, netdev for Ethernet (the other labels empty).",
    MetricKind::kGauge, kEntityLabels};
constexpr MetricDesc kHardWindow{
    "fabric_link_flap_hard_window_down_events",
    "Down events of the port in the last hard-window (default 10 s; link_flap).",
    MetricKind::kGauge, kEntityLabels};
constexpr MetricDesc kSlowWindow{
    "fabric_link_flap_slow_window_down_events",
    "Down events of the port in the last slow-window (default 6 h; link_flap).", MetricKind::kGauge,
    kEntityLabels};
constexpr MetricDesc kWindowDowntime{
    "fabric_link_flap_window_downtime_seconds",
    "Time the port was down in the last downtime-window (default 1 h), compared with the NCCL "
    "downtime budget (link_flap).",
    MetricKind::kGauge, kEntityLabels};
constexpr MetricDesc kDownDuration{"fabric_link_down_duration_seconds",
                                   "Length of the port's current outage, 0 while up (link_flap).",
                                   MetricKind::kGauge, kEntityLabels};
constexpr MetricDesc kDownEvents{
    "fabric_link_flap_down_events_total",
    "Down events of the port counted by link_flap after deduplicating its sources (netlink, "
    "carrier and PHY counters, IB port state and link_downed); maintenance downs excluded.",
    MetricKind::kCounter, kEntityLabels};
// What link_flap reads (detectors/core/inputs.h).
constexpr MetricInput kInputs[] = {
    {"netdev", &netdev::kOperState, {"netdev"}},
    {"netdev", &netdev::kCarrier, {"netdev"}},
    {"netdev", &netdev::kCarrierDown, {"netdev"}},
    {"rdma", &rdma::kPortInfo, {"device", "port", "link_layer", "netdev"}},
    {"rdma", &rdma::kPortState, {"device", "port"}},
    {"rdma", &rdma::kLinkDowned, {"device", "port"}},
    {"rdma", &rdma::kLinkErrorRecovery, {"device", "port"}},
    {"rdma", &rdma::kPortEvents, {"device", "port", "event"}},
    {"ethtool", &ethtool::kModuleEvents, {"netdev", "event"}},
    {"ethtool", &ethtool::kLinkDownEvents, {"netdev"}},
    // The kmsg collector's log events (the family makes the engine hand its snapshots over).
    {"kmsg", &kmsg::kEvents, {"device", "netdev", "event"}},
};

constexpr MetricDesc kMetrics[] = {kPenalty,        kHardWindow,   kSlowWindow,
                                   kWindowDowntime, kDownDuration, kDownEvents};

std::string EntityKey(const EntityLabels& labels) { return EntityText(labels); }

class LinkFlapDetector final : public Detector {
 public:
  LinkFlapDetector(Settings settings, std::chrono::milliseconds cause_window)
      : s_(settings), cause_window_(cause_window) {}

  std::string_view name() const override { return "link_flap"; }
  std::vector<std::string> inputs() const override { return InputCollectors(kInputs); }

  void Observe(const SnapshotView& snapshot) override {
    if (snapshot.collector == "netdev") ObserveNetdev(snapshot);
    if (snapshot.collector == "rdma") ObserveRdma(snapshot);
    if (snapshot.collector == "ethtool") ObserveEthtool(snapshot);
    if (snapshot.collector == "kmsg") ObserveKernelLog(snapshot);
  }

  void OnLinkEvents(const std::vector<sys::LinkEvent>& events) override {
    for (const sys::LinkEvent& event : events) {
      // Only netdevs the netdev collector reports (its device filter applies to flaps too).
      if (!known_netdevs_.contains(event.netdev)) continue;
      Entity& entity = NetdevEntity(event.netdev);
      if (event.carrier_up) {
        StateUp(s_, entity, event.time);
      } else {
        Sight(s_, entity, kNetlink, event.time);
        StateDown(s_, entity, event.time);
      }
    }
  }

  std::vector<Finding> Evaluate(TimePoint now) override {
    std::vector<Finding> findings;
    last_eval_ = now;
    for (auto& [key, entity] : entities_) {
      if (entity.netdev) entity.shown = RocePortLabels(entity.labels[0].second);
      std::optional<Finding> finding = EvaluateEntity(s_, entity, now);
      // One fault, one finding (docs/detection.md §2.2): an IPoIB netdev's carrier follows its IB
      // port, so its flaps are the port's flaps — the port raises, the netdev stays quiet (its
      // metrics are still exported).
      if (finding && !(entity.netdev && IpoibPortOf(entity.labels[0].second))) {
        causes_.Attach(*finding, entity.labels, now, cause_window_);
        findings.push_back(std::move(*finding));
      }
    }
    return findings;
  }

  void Export(MetricSink& sink) const override {
    for (const auto& [key, entity] : entities_) {
      std::string device, port, netdev;
      for (const auto& [name, value] : entity.labels) {
        (name == "device" ? device : name == "port" ? port : netdev) = value;
      }
      const LabelPair labels[] = {{"device", device}, {"port", port}, {"netdev", netdev}};
      const TimePoint now = last_eval_;
      sink.Add(kPenalty, labels, entity.penalty.At(now));
      sink.Add(kHardWindow, labels,
               static_cast<double>(entity.hard.CountAfter(now - s_.hard_window)));
      sink.Add(kSlowWindow, labels,
               static_cast<double>(entity.slow.CountAfter(now - s_.slow_window)));
      sink.Add(kWindowDowntime, labels, Downtime(s_, entity, now));
      sink.Add(
          kDownDuration, labels,
          entity.down_since && now > *entity.down_since ? Seconds(now - *entity.down_since) : 0.0);
      sink.Add(kDownEvents, labels, static_cast<double>(entity.downs_total));
    }
  }

  nlohmann::json SaveState() const override {
    nlohmann::json ports = nlohmann::json::object();
    for (const auto& [key, entity] : entities_) {
      ports[key] = SaveEntity(entity);
    }
    // The IPoIB map too: after a restart, a netdev sample evaluated before the first rdma
    // sample must not raise the restored flaps of an IPoIB netdev as its own finding.
    return {{"ports", ports}, {"ipoib", ipoib_port_}};
  }

  Status LoadState(const nlohmann::json& state, StateLoadCheck& check) override {
    std::map<std::string, Entity> loaded;
    std::map<std::string, std::string> ipoib;
    try {
      if (state.contains("ipoib")) {  // absent in state files of earlier versions
        ipoib = state.at("ipoib").get<std::map<std::string, std::string>>();
      }
      for (const auto& [key, entry] : state.at("ports").items()) {
        EntityLabels labels;
        for (const auto& pair : entry.at("labels")) {
          labels.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
        }
        Entity entity = NewEntity(s_, labels);
        LoadEntity(s_, entry, entity, check);
        loaded.emplace(EntityKey(labels), std::move(entity));
      }
    } catch (const nlohmann::json::exception& e) {
      return Status(StatusCode::kInvalidArgument, std::string("link_flap state: ") + e.what());
    }
    for (auto& [key, entity] : loaded) entities_.insert_or_assign(key, std::move(entity));
    ipoib_port_.merge(ipoib);
    return Status::Ok();
  }

 private:
  Entity& EntityFor(const EntityLabels& labels) {
    const std::string key = EntityKey(labels);
    auto it = entities_.find(key);
    if (it == entities_.end()) it = entities_.emplace(key, NewEntity(s_, labels)).first;
    return it->second;
  }
  Entity& NetdevEntity(std::string_view netdev) {
    return EntityFor({{"netdev", std::string(netdev)}});
  }

  // A RoCE netdev's finding names its RDMA port too (issue 34: `rdma link add rxe0 ... netdev
  // veth0` flapping is rxe0 port 1's outage as much as veth0's); empty for other netdevs.
  EntityLabels RocePortLabels(const std::string& netdev) const {
    auto it = roce_port_.find(netdev);
    if (it == roce_port_.end()) return {};
    return {{"device", it->second.first}, {"port", it->second.second}, {"netdev", netdev}};
  }

  // The tracked, present IB port whose IPoIB netdev this is, if any.
  Entity* IpoibPortOf(const std::string& netdev) {
    auto it = ipoib_port_.find(netdev);
    if (it == ipoib_port_.end()) return nullptr;
    auto port = entities_.find(it->second);
    return port != entities_.end() && port->second.present ? &port->second : nullptr;
  }

  void ObserveNetdev(const SnapshotView& snapshot) {
    const auto* oper = FindFamily(snapshot, netdev::kOperState);
    const auto* carrier = FindFamily(snapshot, netdev::kCarrier);
    const auto* downs = FindFamily(snapshot, netdev::kCarrierDown);
    std::set<std::string> present;
    for (const auto* family : {oper, carrier, downs}) {
      if (family == nullptr) continue;
      for (const auto& metric : family->metric) {
        // A sample without its netdev names nothing to flap (and no finding may name "").
        if (!LabelOr(metric, "netdev").empty()) present.emplace(LabelOr(metric, "netdev"));
      }
    }
    // Presence first: a netdev that comes back starts a quiet maintenance window before its
    // re-registration shows up as carrier downs.
    for (const std::string& netdev : present) {
      Entity& entity = NetdevEntity(netdev);
      if (!entity.present) StartMaintenance(s_, entity, snapshot.time, false);
      entity.present = true;
    }
    for (auto& [key, entity] : entities_) {
      if (entity.netdev && entity.present && !present.contains(entity.labels[0].second)) {
        Absent(s_, entity, snapshot.time);
      }
    }
    std::set<std::string> with_carrier;
    if (carrier != nullptr) {
      for (const auto& metric : carrier->metric) {
        const std::string netdev(LabelOr(metric, "netdev"));
        const double value = SampleValue(*carrier, metric);
        // An unreadable carrier (NaN) is no evidence of a down: it would start a false outage.
        if (netdev.empty() || !std::isfinite(value)) continue;
        with_carrier.insert(netdev);
        Entity& entity = NetdevEntity(netdev);
        if (value >= 1) {
          StateUp(s_, entity, snapshot.time);
        } else {
          StateDown(s_, entity, snapshot.time);
        }
      }
    }
    if (downs != nullptr) {
      for (const auto& metric : downs->metric) {
        if (LabelOr(metric, "netdev").empty()) continue;
        Entity& entity = NetdevEntity(LabelOr(metric, "netdev"));
        CounterDowns(s_, entity, entity.carrier_down, kCarrierCounter, CounterValue(*downs, metric),
                     snapshot.time);
      }
    }
    for (const std::string& netdev : present) {
      Entity& entity = NetdevEntity(netdev);
      // No carrier while present: administratively down (the kernel answers EINVAL). An
      // operator's decision, not a fault: no outage runs.
      if (!with_carrier.contains(netdev) && entity.down_since) {
        entity.down_since.reset();
        entity.state_time = snapshot.time;
      }
    }
    known_netdevs_ = std::move(present);
  }

  // Kernel log lines: causes for the findings, and a module unplug line starts maintenance as
  // the ethtool unplug counter does (the driver prints it even where the counter is missing).
  void ObserveKernelLog(const SnapshotView& snapshot) {
    causes_.Observe(snapshot.log_events);
    causes_.Prune(snapshot.time - cause_window_);
    for (const LogEvent& event : snapshot.log_events) {
      if (event.event != "module_unplugged" || !known_netdevs_.contains(event.netdev)) continue;
      Entity& entity = NetdevEntity(event.netdev);
      StartMaintenance(s_, entity, event.last_time, true);
      if (Entity* port = IpoibPortOf(event.netdev))
        StartMaintenance(s_, *port, event.last_time, true);
    }
  }

  void ObserveEthtool(const SnapshotView& snapshot) {
    if (const auto* family = FindFamily(snapshot, ethtool::kModuleEvents)) {
      for (const auto& metric : family->metric) {
        if (LabelOr(metric, "event") != "unplug" || LabelOr(metric, "netdev").empty()) continue;
        Entity& entity = NetdevEntity(LabelOr(metric, "netdev"));
        const CounterStep step = entity.unplug.Update(CounterValue(*family, metric), snapshot.time);
        if (step.valid && step.delta > 0) {
          StartMaintenance(s_, entity, snapshot.time, true);
          // The module of an IPoIB netdev is its IB port's: the port's downs are maintenance
          // too, and the port (which speaks for the netdev) announces it.
          if (Entity* port = IpoibPortOf(entity.labels[0].second)) {
            StartMaintenance(s_, *port, snapshot.time, true);
          }
        }
      }
    }
    if (const auto* family = FindFamily(snapshot, ethtool::kLinkDownEvents)) {
      for (const auto& metric : family->metric) {
        if (LabelOr(metric, "netdev").empty()) continue;
        Entity& entity = NetdevEntity(LabelOr(metric, "netdev"));
        CounterDowns(s_, entity, entity.phy_down, kPhyCounter, CounterValue(*family, metric),
                     snapshot.time);
      }
    }
  }

  // Which RDMA ports are RoCE (and on which netdev) and which netdev is an IB port's IPoIB, from
  // fabric_rdma_port_info. Only a sample that has the family says so: one without it (a failed
  // collection) keeps what the last one said, so a finding does not change its name (and
  // identity) mid-episode, nor a RoCE port turn into an IB port.
  void LearnPorts(const prometheus::MetricFamily& family) {
    ethernet_.clear();
    roce_netdev_.clear();
    roce_port_.clear();
    ipoib_port_.clear();
    for (const auto& metric : family.metric) {
      const std::string device(LabelOr(metric, "device"));
      const std::string port(LabelOr(metric, "port"));
      const std::string netdev(LabelOr(metric, "netdev"));
      if (device.empty() || port.empty()) continue;
      if (LabelOr(metric, "link_layer") == "Ethernet") {
        ethernet_.insert(device + "/" + port);
        if (netdev.empty()) continue;
        roce_netdev_.emplace(device + "/" + port, netdev);
        // The lowest port names a netdev several share, whatever order the sample lists them.
        auto [it, added] = roce_port_.try_emplace(netdev, device, port);
        if (!added && PortLess({device, port}, it->second)) it->second = {device, port};
      } else if (!netdev.empty()) {
        // IB port (link_layer InfiniBand; empty on kernels that predate RoCE): its netdev is
        // IPoIB, whose findings the port raises (see Evaluate).
        ipoib_port_.insert_or_assign(netdev, EntityKey({{"device", device}, {"port", port}}));
      }
    }
    // A RoCE port deleted (`rdma link delete`) or moved: its port_err counter left with it, and
    // starts again from 0 if it comes back.
    for (auto& [key, entity] : entities_) {
      if (!entity.netdev) continue;
      ForgetVerbsPorts(entity, [&](const auto& port) {
        auto it = roce_netdev_.find(port.first);
        return it == roce_netdev_.end() || it->second != entity.labels[0].second;
      });
    }
  }

  // Port order: by device, then by port number ("2" before "10").
  static bool PortLess(const std::pair<std::string, std::string>& a,
                       const std::pair<std::string, std::string>& b) {
    if (a.first != b.first) return a.first < b.first;
    if (a.second.size() != b.second.size()) return a.second.size() < b.second.size();
    return a.second < b.second;
  }

  void ObserveRdma(const SnapshotView& snapshot) {
    if (const auto* family = FindFamily(snapshot, rdma::kPortInfo)) LearnPorts(*family);
    std::set<std::string> present;
    auto port_entity = [&](const prometheus::ClientMetric& metric) -> Entity* {
      const std::string device(LabelOr(metric, "device"));
      const std::string port(LabelOr(metric, "port"));
      if (device.empty() || port.empty() || ethernet_.contains(device + "/" + port)) return nullptr;
      Entity& entity = EntityFor({{"device", device}, {"port", port}});
      present.insert(EntityKey(entity.labels));
      if (!entity.present) StartMaintenance(s_, entity, snapshot.time, false);
      entity.present = true;
      return &entity;
    };
    if (const auto* family = FindFamily(snapshot, rdma::kPortState)) {
      for (const auto& metric : family->metric) {
        Entity* entity = port_entity(metric);
        const double value = SampleValue(*family, metric);
        // An unreadable state (NaN) says neither up nor down; casting it would be undefined.
        if (entity == nullptr || !std::isfinite(value)) continue;
        const int state = static_cast<int>(value);
        const bool active = state == 4 || state == 5;  // ACTIVE, ACTIVE_DEFER
        if (active) {
          StateUp(s_, *entity, snapshot.time);
        } else {
          if (entity->state_known && entity->last_active)
            Sight(s_, *entity, kIbState, snapshot.time);
          StateDown(s_, *entity, snapshot.time);
        }
        entity->last_active = active;
      }
    }
    if (const auto* family = FindFamily(snapshot, rdma::kLinkDowned)) {
      for (const auto& metric : family->metric) {
        Entity* entity = port_entity(metric);
        if (entity == nullptr) continue;
        CounterDowns(s_, *entity, entity->link_downed, kIbLinkDowned, CounterValue(*family, metric),
                     snapshot.time);
      }
    }
    if (const auto* family = FindFamily(snapshot, rdma::kLinkErrorRecovery)) {
      for (const auto& metric : family->metric) {
        Entity* entity = port_entity(metric);
        if (entity == nullptr) continue;
        RecoveryCounter(s_, *entity, CounterValue(*family, metric), snapshot.time);
      }
    }
    VerbsPortErrors(snapshot, present, port_entity);
    for (auto& [key, entity] : entities_) {
      if (!entity.netdev && entity.present && !present.contains(key)) {
        Absent(s_, entity, snapshot.time);
        entity.last_active = false;
      }
    }
  }

  // libibverbs port_err events (fabric_rdma_port_events_total, deduplicated by the listener):
  // a down source of the IB port, or of the netdev of a RoCE port. Each port has its own
  // counter; a netdev's downs are the most any of its ports saw (VerbsDowns).
  template <typename PortEntity>
  void VerbsPortErrors(const SnapshotView& snapshot, const std::set<std::string>& present,
                       PortEntity& port_entity) {
    const auto* family = FindFamily(snapshot, rdma::kPortEvents);
    if (family == nullptr) return;
    std::set<Entity*> touched;
    for (const auto& metric : family->metric) {
      if (LabelOr(metric, "event") != "port_err") continue;
      const std::string device(LabelOr(metric, "device"));
      const std::string port(LabelOr(metric, "port"));
      const std::string key = device + "/" + port;
      Entity* entity = nullptr;
      if (auto roce = roce_netdev_.find(key); roce != roce_netdev_.end()) {
        if (known_netdevs_.contains(roce->second)) entity = &NetdevEntity(roce->second);
      } else if (present.contains(EntityKey({{"device", device}, {"port", port}}))) {
        // Only IB ports the collector reports (the listener also opens filtered-out devices).
        entity = port_entity(metric);  // null for a RoCE port without a netdev
      }
      if (entity == nullptr) continue;
      VerbsCount(*entity, key, CounterValue(*family, metric), snapshot.time);
      touched.insert(entity);
    }
    for (Entity* entity : touched) VerbsDowns(s_, *entity, snapshot.time);
  }

  Settings s_;
  std::chrono::milliseconds cause_window_;
  LinkCauses causes_;
  std::map<std::string, Entity> entities_;
  std::set<std::string> known_netdevs_;
  // From the last fabric_rdma_port_info (LearnPorts): IPoIB netdev -> entity key of its IB
  // port; "device/port" of the RoCE ports, and the netdev of each; RoCE netdev -> (device,
  // port) of its lowest RDMA port, which its finding names.
  std::map<std::string, std::string> ipoib_port_;
  std::set<std::string> ethernet_;
  std::map<std::string, std::string> roce_netdev_;
  std::map<std::string, std::pair<std::string, std::string>> roce_port_;
  TimePoint last_eval_{};
};

}  // namespace

std::span<const DetectorOptionSpec> LinkFlapDetectorOptions() { return kOptions; }
std::span<const MetricDesc> LinkFlapDetectorMetrics() { return kMetrics; }
std::span<const MetricInput> LinkFlapDetectorInputs() { return kInputs; }

Result<std::unique_ptr<Detector>> MakeLinkFlapDetector(const DetectorOptions& options) {
  auto reader = OptionReader::Make("link_flap", options, kOptions);
  if (!reader) return Error(reader.error());
  Settings s;
  s.hard_count = reader->Count("hard-count", 1, 10000);
  s.hard_window = reader->Duration("hard-window");
  s.slow_count = reader->Count("slow-count", 1, 10000);
  s.slow_window = reader->Duration("slow-window");
  s.penalty_per_down = reader->Number("penalty-per-down", 1, 1e9);
  s.half_life = reader->Duration("half-life");
  s.suppress = reader->Number("suppress", 1, 1e12);
  s.reuse = reader->Number("reuse", 0, 1e12);
  s.max_suppress = reader->Duration("max-suppress");
  s.down_after = reader->Duration("down-after");
  s.downtime_budget = reader->Duration("downtime-budget");
  s.downtime_window = reader->Duration("downtime-window");
  s.maintenance_window = reader->Duration("maintenance-window", /*allow_zero=*/true);
  s.match_window = reader->Duration("match-window", /*allow_zero=*/true);
  const auto cause_window = reader->Duration("cause-window");
  s.micro_count = reader->Count("micro-flap-count", 1, 10000);
  s.micro_window = reader->Duration("micro-flap-window");
  s.micro_escalate_after = reader->Duration("micro-flap-escalate-after");
  if (!reader->status().ok()) return Error(reader->status());
  if (s.reuse >= s.suppress) {
    return Error(StatusCode::kInvalidArgument,
                 fmt::format("detector link_flap: reuse ({}) must be below suppress ({}) for "
                             "hysteresis",
                             s.reuse, s.suppress));
  }
  if (s.ceiling() < s.suppress) {
    return Error(StatusCode::kInvalidArgument,
                 "detector link_flap: the penalty ceiling reuse*2^(max-suppress/half-life) is "
                 "below suppress; raise max-suppress");
  }
  return std::unique_ptr<Detector>(std::make_unique<LinkFlapDetector>(s, cause_window));
}

}  // namespace fabricwatch::detect
