#include "detectors/link_flap/link_flap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "base/duration.h"
#include "collectors/kmsg/kmsg_metrics.h"
#include "collectors/sys/link_events.h"
#include "detectors/core/anomaly_tracker.h"
#include "detectors/core/counter.h"
#include "detectors/core/hysteresis.h"
#include "detectors/core/inputs.h"
#include "detectors/core/node_model.h"
#include "detectors/core/snapshot_lookup.h"
#include "detectors/core/state_check.h"
#include "detectors/link_flap/flap_entity.h"
#include "detectors/link_flap/link_cause.h"
#include "detectors/link_flap/link_flap_metrics.h"

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

using link_flap::kDownDuration;
using link_flap::kDownEvents;
using link_flap::kEntityLabels;
using link_flap::kHardWindow;
using link_flap::kPenalty;
using link_flap::kSlowWindow;
using link_flap::kWindowDowntime;
// What link_flap reads (detectors/core/inputs.h).
constexpr MetricInput kInputs[] = {
    {netdev::kOperState, {"netdev"}},
    {netdev::kCarrier, {"netdev"}},
    {netdev::kCarrierDown, {"netdev"}},
    {rdma::kPortState, {"device", "port"}},
    {rdma::kLinkDowned, {"device", "port"}},
    {rdma::kLinkErrorRecovery, {"device", "port"}},
    {rdma::kPortEvents, {"device", "port", "event"}},
    {ethtool::kModuleEvents, {"netdev", "event"}},
    {ethtool::kLinkDownEvents, {"netdev"}},
    // The kmsg collector's log events (the family makes the engine hand its snapshots over).
    {kmsg::kEvents, {"device", "netdev", "event"}},
};

constexpr MetricDesc kMetrics[] = {kPenalty,        kHardWindow,   kSlowWindow,
                                   kWindowDowntime, kDownDuration, kDownEvents};

std::string EntityKey(const EntityLabels& labels) { return EntityText(labels); }

// The (device, port) labels of a sample of one of the rdma collector's per-port families.
template <const auto& Family>
std::pair<std::string_view, std::string_view> PortLabels(const prometheus::ClientMetric& m) {
  return {Label<Family>(m, "device"), Label<Family>(m, "port")};
}

// Adds the netdev of every sample of Family (a sample without one names nothing to flap, and no
// finding may name "").
template <const auto& Family>
void AddNetdevs(const SnapshotView& snapshot, std::set<std::string>& netdevs) {
  ForEachSample(snapshot.families, Family, [&](const prometheus::ClientMetric& m, double) {
    if (const std::string_view netdev = Label<Family>(m, "netdev"); !netdev.empty()) {
      netdevs.emplace(netdev);
    }
  });
}

class LinkFlapDetector final : public Detector {
 public:
  LinkFlapDetector(Settings settings, std::chrono::milliseconds cause_window)
      : s_(settings), cause_window_(cause_window) {}

  std::string_view name() const override { return "link_flap"; }
  std::vector<std::string> inputs() const override { return InputCollectors(kInputs); }

  void Observe(const SnapshotView& snapshot) override {
    if (snapshot.node) node_ = snapshot.node;
    if (snapshot.From<netdev::kCollector>()) ObserveNetdev(snapshot);
    if (snapshot.From<rdma::kCollector>()) ObserveRdma(snapshot);
    if (snapshot.From<ethtool::kCollector>()) ObserveEthtool(snapshot);
    if (snapshot.From<kmsg::kCollector>()) ObserveKernelLog(snapshot);
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
    return {{"ports", ports}, {"ipoib", IpoibPorts()}};
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
    restored_ipoib_.merge(ipoib);
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
    const RdmaPort* port = Node().PortOfNetdev(netdev);
    if (port == nullptr || !port->ethernet()) return {};
    return {{"device", port->id.device}, {"port", port->id.PortLabel()}, {"netdev", netdev}};
  }

  const NodeModel& Node() const { return node_ ? *node_ : EmptyNodeModel(); }

  // IPoIB netdev -> entity key of its IB port: from the node model once the rdma collector
  // reported its ports, before that from the state file.
  std::map<std::string, std::string> IpoibPorts() const {
    if (!Node().ports_reported() && Node().ports().empty()) return restored_ipoib_;
    std::map<std::string, std::string> ipoib;
    for (const RdmaPort& port : Node().ports()) {
      if (port.ethernet() || port.netdev.empty()) continue;
      // The lowest port names a netdev several share, as IpoibPortOf() does.
      ipoib.try_emplace(port.netdev,
                        EntityKey({{"device", port.id.device}, {"port", port.id.PortLabel()}}));
    }
    return ipoib;
  }

  // The tracked, present IB port whose IPoIB netdev this is, if any.
  Entity* IpoibPortOf(const std::string& netdev) {
    std::string key;
    if (!Node().ports_reported() && Node().ports().empty()) {
      auto it = restored_ipoib_.find(netdev);
      if (it == restored_ipoib_.end()) return nullptr;
      key = it->second;
    } else {
      const RdmaPort* ib = Node().PortOfNetdev(netdev);
      if (ib == nullptr || ib->ethernet()) return nullptr;
      key = EntityKey({{"device", ib->id.device}, {"port", ib->id.PortLabel()}});
    }
    auto port = entities_.find(key);
    return port != entities_.end() && port->second.present ? &port->second : nullptr;
  }

  // The RoCE port (device, port) is on a netdev: the netdev, else nullptr (an IB port, a port
  // the model does not know, or a RoCE port without a netdev).
  const std::string* RoceNetdevOf(std::string_view device, std::string_view port) const {
    const std::optional<PortId> id = PortId::FromLabels(device, port);
    const RdmaPort* rdma_port = id ? Node().Port(*id) : nullptr;
    if (rdma_port == nullptr || !rdma_port->ethernet() || rdma_port->netdev.empty()) return nullptr;
    return &rdma_port->netdev;
  }
  bool IsEthernetPort(std::string_view device, std::string_view port) const {
    const std::optional<PortId> id = PortId::FromLabels(device, port);
    const RdmaPort* rdma_port = id ? Node().Port(*id) : nullptr;
    return rdma_port != nullptr && rdma_port->ethernet();
  }

  void ObserveNetdev(const SnapshotView& snapshot) {
    const auto* carrier = FindFamily(snapshot, netdev::kCarrier);
    const auto* downs = FindFamily(snapshot, netdev::kCarrierDown);
    std::set<std::string> present;
    AddNetdevs<netdev::kOperState>(snapshot, present);
    AddNetdevs<netdev::kCarrier>(snapshot, present);
    AddNetdevs<netdev::kCarrierDown>(snapshot, present);
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
        const std::string netdev(Label<netdev::kCarrier>(metric, "netdev"));
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
        const std::string_view netdev = Label<netdev::kCarrierDown>(metric, "netdev");
        if (netdev.empty()) continue;
        Entity& entity = NetdevEntity(netdev);
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
        const std::string_view netdev = Label<ethtool::kModuleEvents>(metric, "netdev");
        if (Label<ethtool::kModuleEvents>(metric, "event") != "unplug" || netdev.empty()) continue;
        Entity& entity = NetdevEntity(netdev);
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
        const std::string_view netdev = Label<ethtool::kLinkDownEvents>(metric, "netdev");
        if (netdev.empty()) continue;
        Entity& entity = NetdevEntity(netdev);
        CounterDowns(s_, entity, entity.phy_down, kPhyCounter, CounterValue(*family, metric),
                     snapshot.time);
      }
    }
  }

  // A RoCE port deleted (`rdma link delete`) or moved: its port_err counter left with it, and
  // starts again from 0 if it comes back. Judged only on a snapshot that reported the ports: the
  // node model keeps the last ports through a failed collection.
  void ForgetMovedVerbsPorts() {
    for (auto& [key, entity] : entities_) {
      if (!entity.netdev) continue;
      ForgetVerbsPorts(entity, [&](const auto& port) {
        const size_t slash = port.first.rfind('/');
        const std::string* netdev =
            slash == std::string::npos
                ? nullptr
                : RoceNetdevOf(std::string_view(port.first).substr(0, slash),
                               std::string_view(port.first).substr(slash + 1));
        return netdev == nullptr || *netdev != entity.labels[0].second;
      });
    }
  }

  void ObserveRdma(const SnapshotView& snapshot) {
    if (Node().ports_reported()) ForgetMovedVerbsPorts();
    std::set<std::string> present;
    auto port_entity = [&](std::pair<std::string_view, std::string_view> labels) -> Entity* {
      const std::string device(labels.first);
      const std::string port(labels.second);
      if (device.empty() || port.empty() || IsEthernetPort(device, port)) return nullptr;
      Entity& entity = EntityFor({{"device", device}, {"port", port}});
      present.insert(EntityKey(entity.labels));
      if (!entity.present) StartMaintenance(s_, entity, snapshot.time, false);
      entity.present = true;
      return &entity;
    };
    if (const auto* family = FindFamily(snapshot, rdma::kPortState)) {
      for (const auto& metric : family->metric) {
        Entity* entity = port_entity(PortLabels<rdma::kPortState>(metric));
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
        Entity* entity = port_entity(PortLabels<rdma::kLinkDowned>(metric));
        if (entity == nullptr) continue;
        CounterDowns(s_, *entity, entity->link_downed, kIbLinkDowned, CounterValue(*family, metric),
                     snapshot.time);
      }
    }
    if (const auto* family = FindFamily(snapshot, rdma::kLinkErrorRecovery)) {
      for (const auto& metric : family->metric) {
        Entity* entity = port_entity(PortLabels<rdma::kLinkErrorRecovery>(metric));
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
      if (Label<rdma::kPortEvents>(metric, "event") != "port_err") continue;
      const std::string device(Label<rdma::kPortEvents>(metric, "device"));
      const std::string port(Label<rdma::kPortEvents>(metric, "port"));
      const std::string key = device + "/" + port;
      Entity* entity = nullptr;
      if (const std::string* roce = RoceNetdevOf(device, port)) {
        if (known_netdevs_.contains(*roce)) entity = &NetdevEntity(*roce);
      } else if (present.contains(EntityKey({{"device", device}, {"port", port}}))) {
        // Only IB ports the collector reports (the listener also opens filtered-out devices).
        entity = port_entity({device, port});  // null for a RoCE port without a netdev
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
  // The node model of the last snapshot (ports, link layers, netdevs), kept for Evaluate().
  std::shared_ptr<const NodeModel> node_;
  // IPoIB netdev -> its IB port's entity key, from the state file: used until the rdma
  // collector reports the ports, so that a netdev sample evaluated before the first rdma sample
  // does not raise the restored flaps of an IPoIB netdev as its own finding.
  std::map<std::string, std::string> restored_ipoib_;
  TimePoint last_eval_{};
};

}  // namespace

std::span<const DetectorOptionSpec> LinkFlapDetectorOptions() { return kOptions; }
std::span<const MetricDesc> LinkFlapDetectorMetrics() { return kMetrics; }
std::span<const MetricInput> LinkFlapDetectorInputs() { return kInputs; }

namespace {

// The options read and checked: what the factory builds from and all that validation needs.
struct ParsedOptions {
  Settings settings;
  std::chrono::milliseconds cause_window;
};

Result<ParsedOptions> ParseOptions(const DetectorOptions& options) {
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
  const std::chrono::milliseconds cause_window = reader->Duration("cause-window");
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
  return ParsedOptions{s, cause_window};
}

}  // namespace

Status ValidateLinkFlapDetectorOptions(const DetectorOptions& options) {
  return StatusOf(ParseOptions(options));
}

Result<std::unique_ptr<Detector>> MakeLinkFlapDetector(const DetectorOptions& options) {
  auto parsed = ParseOptions(options);
  if (!parsed) return Error(parsed.error());
  return std::unique_ptr<Detector>(
      std::make_unique<LinkFlapDetector>(parsed->settings, parsed->cause_window));
}

}  // namespace fabricwatch::detect
