#include "detectors/link_flap/link_flap.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "collectors/core/duration.h"
#include "collectors/sys/link_events.h"
#include "detectors/core/anomaly_tracker.h"
#include "detectors/core/counter.h"
#include "detectors/core/hysteresis.h"
#include "detectors/core/snapshot_lookup.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::milliseconds;

// detection.md §8 (and §2.2) for every default; the help names the source.
constexpr DetectorOptionSpec kOptions[] = {
    {"hard-count", "Down events in hard-window that make hard flapping (critical). [S14] errdisable",
     "5"},
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
    {"max-suppress", "Longest suppression; caps the penalty at reuse*2^(max-suppress/half-life). "
                     "[S17][S18] 60 min (ceiling 12000)",
     "60m"},
    {"down-after", "A port seen up that stays down this long is a sustained outage (critical). "
                   "Judgement over [S16]: 30 s avoids racing auto-recovery",
     "30s"},
    {"downtime-budget", "Downtime in downtime-window that kills an NCCL job (warning): IB "
                        "timeout 4.096 us*2^18 x 7 retries. [S58][S59]",
     "7.5s"},
    {"downtime-window", "Window of accumulated downtime. [S58] Databricks 1 h", "1h"},
    {"maintenance-window", "Downs this close to a module unplug are maintenance, not flaps. "
                           "Judgement over [S10] (module_unplug is informative)",
     "5m"},
    {"match-window", "Sightings of one down by different sources (netlink, counters, port state) "
                     "this close together are the same down. Judgement: > 2 sample intervals",
     "5s"},
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
    "Down events of the port in the last slow-window (default 6 h; link_flap).",
    MetricKind::kGauge, kEntityLabels};
constexpr MetricDesc kWindowDowntime{
    "fabric_link_flap_window_downtime_seconds",
    "Time the port was down in the last downtime-window (default 1 h), compared with the NCCL "
    "downtime budget (link_flap).",
    MetricKind::kGauge, kEntityLabels};
constexpr MetricDesc kDownDuration{
    "fabric_link_down_duration_seconds",
    "Length of the port's current outage, 0 while up (link_flap).", MetricKind::kGauge,
    kEntityLabels};
constexpr MetricDesc kDownEvents{
    "fabric_link_flap_down_events_total",
    "Down events of the port counted by link_flap after deduplicating its sources (netlink, "
    "carrier and PHY counters, IB port state and link_downed); maintenance downs excluded.",
    MetricKind::kCounter, kEntityLabels};
constexpr MetricDesc kMetrics[] = {kPenalty,        kHardWindow,   kSlowWindow,
                                   kWindowDowntime, kDownDuration, kDownEvents};

enum Source : unsigned {
  kNetlink = 1,
  kCarrierCounter = 2,
  kPhyCounter = 4,
  kIbState = 8,
  kIbLinkDowned = 16,
};

struct Settings {
  uint64_t hard_count;
  milliseconds hard_window;
  uint64_t slow_count;
  milliseconds slow_window;
  double penalty_per_down;
  milliseconds half_life;
  double suppress;
  double reuse;
  milliseconds max_suppress;
  milliseconds down_after;
  milliseconds downtime_budget;
  milliseconds downtime_window;
  milliseconds maintenance_window;
  milliseconds match_window;
  double ceiling() const {
    return reuse * std::exp2(Seconds(max_suppress) / Seconds(half_life));
  }
};

struct Sighting {
  TimePoint time;
  unsigned sources;
};

struct Entity {
  EntityLabels labels;
  bool netdev = false;
  // Flap history (persisted).
  EventWindow hard{1024};
  EventWindow slow{1024};
  DecayingPenalty penalty;
  bool hard_active = false;
  bool suppressed = false;
  bool seen_up = false;
  uint64_t downs_total = 0;
  std::deque<std::pair<TimePoint, TimePoint>> outages;  // closed outages, for downtime
  std::optional<TimePoint> maintenance_until;
  std::optional<TimePoint> last_unplug;
  bool announce_maintenance = false;  // module unplug (info finding) vs. device gone (silent)
  // Live state (not persisted).
  std::deque<Sighting> recent;  // for matching sightings of the same down
  std::optional<TimePoint> down_since;
  TimePoint state_time{};
  bool present = true;
  bool state_known = false;
  bool last_active = false;  // IB: previous sample's state was ACTIVE
  CounterTracker carrier_down{{CounterBehaviour::kWrapping32, 32, 1e4}};
  CounterTracker phy_down{{CounterBehaviour::kMonotonic64, 64, 1e15}};
  CounterTracker link_downed{{CounterBehaviour::kSaturating, 8, 1e15}};
  CounterTracker unplug{{CounterBehaviour::kMonotonic64, 64, 1e15}};
};

std::string EntityKey(const EntityLabels& labels) { return EntityText(labels); }

class LinkFlapDetector final : public Detector {
 public:
  explicit LinkFlapDetector(Settings settings) : s_(settings) {}

  std::string_view name() const override { return "link_flap"; }
  std::vector<std::string> inputs() const override { return {"netdev", "rdma", "ethtool"}; }

  void Observe(const SnapshotView& snapshot) override {
    if (snapshot.collector == "netdev") ObserveNetdev(snapshot);
    if (snapshot.collector == "rdma") ObserveRdma(snapshot);
    if (snapshot.collector == "ethtool") ObserveEthtool(snapshot);
  }

  void OnLinkEvents(const std::vector<sys::LinkEvent>& events) override {
    for (const sys::LinkEvent& event : events) {
      // Only netdevs the netdev collector reports (its device filter applies to flaps too).
      if (!known_netdevs_.contains(event.netdev)) continue;
      Entity& entity = NetdevEntity(event.netdev);
      if (event.carrier_up) {
        StateUp(entity, event.time);
      } else {
        Sight(entity, kNetlink, event.time);
        StateDown(entity, event.time);
      }
    }
  }

  std::vector<Finding> Evaluate(TimePoint now) override {
    std::vector<Finding> findings;
    last_eval_ = now;
    for (auto& [key, entity] : entities_) {
      std::optional<Finding> finding = EvaluateEntity(entity, now);
      // One fault, one finding (detection.md §2.2): an IPoIB netdev's carrier follows its IB
      // port, so its flaps are the port's flaps — the port raises, the netdev stays quiet (its
      // metrics are still exported).
      if (finding && !(entity.netdev && IpoibPortOf(entity.labels[0].second))) {
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
      sink.Add(kHardWindow, labels, static_cast<double>(entity.hard.CountAfter(now - s_.hard_window)));
      sink.Add(kSlowWindow, labels, static_cast<double>(entity.slow.CountAfter(now - s_.slow_window)));
      sink.Add(kWindowDowntime, labels, Downtime(entity, now));
      sink.Add(kDownDuration, labels,
               entity.down_since && now > *entity.down_since ? Seconds(now - *entity.down_since)
                                                             : 0.0);
      sink.Add(kDownEvents, labels, static_cast<double>(entity.downs_total));
    }
  }

  nlohmann::json SaveState() const override {
    nlohmann::json ports = nlohmann::json::object();
    for (const auto& [key, entity] : entities_) {
      nlohmann::json outages = nlohmann::json::array();
      for (const auto& [from, to] : entity.outages) {
        outages.push_back({EpochSeconds(from), EpochSeconds(to)});
      }
      nlohmann::json labels = nlohmann::json::array();
      for (const auto& [name, value] : entity.labels) labels.push_back({name, value});
      nlohmann::json entry = {{"labels", labels},
                              {"hard", entity.hard.Save()},
                              {"slow", entity.slow.Save()},
                              {"penalty", entity.penalty.Save()},
                              {"hard_active", entity.hard_active},
                              {"suppressed", entity.suppressed},
                              {"seen_up", entity.seen_up},
                              {"downs_total", entity.downs_total},
                              {"outages", outages}};
      if (entity.maintenance_until) {
        entry["maintenance_until"] = EpochSeconds(*entity.maintenance_until);
      }
      ports[key] = std::move(entry);
    }
    // The IPoIB map too: after a restart, a netdev sample evaluated before the first rdma
    // sample must not raise the restored flaps of an IPoIB netdev as its own finding.
    return {{"ports", ports}, {"ipoib", ipoib_port_}};
  }

  Status LoadState(const nlohmann::json& state) override {
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
        Entity entity = NewEntity(labels);
        entity.hard.Load(entry.at("hard"));
        entity.slow.Load(entry.at("slow"));
        entity.penalty.Load(entry.at("penalty"));
        entity.hard_active = entry.at("hard_active").get<bool>();
        entity.suppressed = entry.at("suppressed").get<bool>();
        entity.seen_up = entry.at("seen_up").get<bool>();
        entity.downs_total = entry.at("downs_total").get<uint64_t>();
        for (const auto& outage : entry.at("outages")) {
          entity.outages.emplace_back(FromEpochSeconds(outage.at(0).get<double>()),
                                      FromEpochSeconds(outage.at(1).get<double>()));
        }
        if (entry.contains("maintenance_until")) {
          entity.maintenance_until = FromEpochSeconds(entry.at("maintenance_until").get<double>());
        }
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
  Entity NewEntity(const EntityLabels& labels) const {
    Entity entity;
    entity.labels = labels;
    entity.netdev = labels.size() == 1 && labels[0].first == "netdev";
    entity.penalty = DecayingPenalty(s_.half_life, s_.ceiling());
    return entity;
  }

  Entity& EntityFor(const EntityLabels& labels) {
    const std::string key = EntityKey(labels);
    auto it = entities_.find(key);
    if (it == entities_.end()) it = entities_.emplace(key, NewEntity(labels)).first;
    return it->second;
  }
  Entity& NetdevEntity(std::string_view netdev) {
    return EntityFor({{"netdev", std::string(netdev)}});
  }

  // The tracked, present IB port whose IPoIB netdev this is, if any.
  Entity* IpoibPortOf(const std::string& netdev) {
    auto it = ipoib_port_.find(netdev);
    if (it == ipoib_port_.end()) return nullptr;
    auto port = entities_.find(it->second);
    return port != entities_.end() && port->second.present ? &port->second : nullptr;
  }

  bool InMaintenance(const Entity& entity, TimePoint time) const {
    return entity.last_unplug && time >= *entity.last_unplug - s_.maintenance_window &&
           time <= *entity.last_unplug + s_.maintenance_window;
  }

  // One source saw a down at `time`: either it confirms a down another source already counted
  // (within match-window, not yet seen by this source), or it is a new down.
  void Sight(Entity& entity, Source source, TimePoint time) {
    while (!entity.recent.empty() && entity.recent.front().time < time - 2 * s_.match_window) {
      entity.recent.pop_front();
    }
    for (Sighting& sighting : entity.recent) {
      const auto gap = sighting.time > time ? sighting.time - time : time - sighting.time;
      if ((sighting.sources & source) == 0 && gap <= s_.match_window) {
        sighting.sources |= source;
        return;
      }
    }
    entity.recent.push_back({time, source});
    if (InMaintenance(entity, time)) return;
    entity.hard.Add(time);
    entity.slow.Add(time);
    entity.penalty.Add(s_.penalty_per_down, time);
    ++entity.downs_total;
  }

  void StateDown(Entity& entity, TimePoint time) {
    if (time < entity.state_time) return;  // an older observation than the one we have
    entity.state_time = time;
    entity.state_known = true;
    if (!entity.down_since) entity.down_since = time;
  }

  void StateUp(Entity& entity, TimePoint time) {
    if (time < entity.state_time) return;
    entity.state_time = time;
    entity.state_known = true;
    entity.seen_up = true;
    if (entity.down_since) {
      if (!InMaintenance(entity, *entity.down_since)) {
        entity.outages.emplace_back(*entity.down_since, time);
      }
      entity.down_since.reset();
    }
  }

  // The device is gone (hot-unplug, driver unload): not an outage of a link.
  void Absent(Entity& entity, TimePoint time) {
    StartMaintenance(entity, time, false);
    entity.present = false;
    entity.down_since.reset();
    entity.state_known = false;
    entity.carrier_down.Forget();
    entity.phy_down.Forget();
    entity.link_downed.Forget();
    entity.unplug.Forget();
  }

  void CounterDowns(Entity& entity, CounterTracker& tracker, Source source, uint64_t value,
                    TimePoint time) {
    const CounterStep step = tracker.Update(value, time);
    if (!step.valid) return;
    // A burst larger than the windows can hold adds no information; cap the loop.
    const uint64_t downs = std::min<uint64_t>(step.delta, 256);
    for (uint64_t i = 0; i < downs; ++i) Sight(entity, source, time);
  }

  void ObserveNetdev(const SnapshotView& snapshot) {
    const auto* oper = FindFamily(snapshot, "fabric_netdev_oper_state");
    const auto* carrier = FindFamily(snapshot, "fabric_netdev_carrier");
    const auto* downs = FindFamily(snapshot, "fabric_netdev_carrier_down_changes_total");
    std::set<std::string> present;
    for (const auto* family : {oper, carrier, downs}) {
      if (family == nullptr) continue;
      for (const auto& metric : family->metric) present.emplace(LabelOr(metric, "netdev"));
    }
    // Presence first: a netdev that comes back starts a quiet maintenance window before its
    // re-registration shows up as carrier downs.
    for (const std::string& netdev : present) {
      Entity& entity = NetdevEntity(netdev);
      if (!entity.present) StartMaintenance(entity, snapshot.time, false);
      entity.present = true;
    }
    for (auto& [key, entity] : entities_) {
      if (entity.netdev && entity.present && !present.contains(entity.labels[0].second)) {
        Absent(entity, snapshot.time);
      }
    }
    std::set<std::string> with_carrier;
    if (carrier != nullptr) {
      for (const auto& metric : carrier->metric) {
        const std::string netdev(LabelOr(metric, "netdev"));
        with_carrier.insert(netdev);
        Entity& entity = NetdevEntity(netdev);
        if (SampleValue(*carrier, metric) >= 1) {
          StateUp(entity, snapshot.time);
        } else {
          StateDown(entity, snapshot.time);
        }
      }
    }
    if (downs != nullptr) {
      for (const auto& metric : downs->metric) {
        Entity& entity = NetdevEntity(LabelOr(metric, "netdev"));
        CounterDowns(entity, entity.carrier_down, kCarrierCounter, CounterValue(*downs, metric),
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

  void ObserveEthtool(const SnapshotView& snapshot) {
    if (const auto* family = FindFamily(snapshot, "fabric_ethtool_module_events_total")) {
      for (const auto& metric : family->metric) {
        if (LabelOr(metric, "event") != "unplug") continue;
        Entity& entity = NetdevEntity(LabelOr(metric, "netdev"));
        const CounterStep step = entity.unplug.Update(CounterValue(*family, metric), snapshot.time);
        if (step.valid && step.delta > 0) {
          StartMaintenance(entity, snapshot.time, true);
          // The module of an IPoIB netdev is its IB port's: the port's downs are maintenance
          // too, and the port (which speaks for the netdev) announces it.
          if (Entity* port = IpoibPortOf(entity.labels[0].second)) {
            StartMaintenance(*port, snapshot.time, true);
          }
        }
      }
    }
    if (const auto* family = FindFamily(snapshot, "fabric_ethtool_link_down_events_total")) {
      for (const auto& metric : family->metric) {
        Entity& entity = NetdevEntity(LabelOr(metric, "netdev"));
        CounterDowns(entity, entity.phy_down, kPhyCounter, CounterValue(*family, metric),
                     snapshot.time);
      }
    }
  }

  // detection.md §2.2: module_unplug is a human action — the downs around it are maintenance.
  // A device that disappears or comes back (hot-unplug, driver reload) is the same kind of
  // human action, without the announcement: its re-registration downs are no flaps.
  void StartMaintenance(Entity& entity, TimePoint time, bool announce) {
    entity.announce_maintenance =
        announce || (entity.announce_maintenance && entity.maintenance_until &&
                     time < *entity.maintenance_until);
    entity.last_unplug = time;
    entity.maintenance_until = time + s_.maintenance_window;
    const TimePoint from = time - s_.maintenance_window;
    for (TimePoint t : entity.hard.RemoveBetween(from, time)) {
      entity.penalty.Remove(s_.penalty_per_down, t);
      entity.downs_total -= std::min<uint64_t>(entity.downs_total, 1);
    }
    entity.slow.RemoveBetween(from, time);
    std::erase_if(entity.outages, [&](const auto& outage) { return outage.first >= from; });
    if (entity.penalty.At(time) < s_.reuse) entity.suppressed = false;
    entity.hard_active = false;
  }

  void ObserveRdma(const SnapshotView& snapshot) {
    std::set<std::string> ethernet;  // "device/port" of RoCE ports
    ipoib_port_.clear();
    if (const auto* family = FindFamily(snapshot, "fabric_rdma_port_info")) {
      for (const auto& metric : family->metric) {
        const std::string device(LabelOr(metric, "device"));
        const std::string port(LabelOr(metric, "port"));
        if (LabelOr(metric, "link_layer") == "Ethernet") {
          ethernet.insert(device + "/" + port);
        } else if (const std::string_view netdev = LabelOr(metric, "netdev"); !netdev.empty()) {
          // IB port (link_layer InfiniBand; empty on kernels that predate RoCE): its netdev is
          // IPoIB, whose findings the port raises (see Evaluate).
          ipoib_port_.insert_or_assign(std::string(netdev),
                                       EntityKey({{"device", device}, {"port", port}}));
        }
      }
    }
    std::set<std::string> present;
    auto port_entity = [&](const prometheus::ClientMetric& metric) -> Entity* {
      const std::string device(LabelOr(metric, "device"));
      const std::string port(LabelOr(metric, "port"));
      if (ethernet.contains(device + "/" + port)) return nullptr;
      Entity& entity = EntityFor({{"device", device}, {"port", port}});
      present.insert(EntityKey(entity.labels));
      if (!entity.present) StartMaintenance(entity, snapshot.time, false);
      entity.present = true;
      return &entity;
    };
    if (const auto* family = FindFamily(snapshot, "fabric_rdma_port_state")) {
      for (const auto& metric : family->metric) {
        Entity* entity = port_entity(metric);
        if (entity == nullptr) continue;
        const int state = static_cast<int>(SampleValue(*family, metric));
        const bool active = state == 4 || state == 5;  // ACTIVE, ACTIVE_DEFER
        if (active) {
          StateUp(*entity, snapshot.time);
        } else {
          if (entity->state_known && entity->last_active) Sight(*entity, kIbState, snapshot.time);
          StateDown(*entity, snapshot.time);
        }
        entity->last_active = active;
      }
    }
    if (const auto* family = FindFamily(snapshot, "fabric_rdma_port_link_downed_total")) {
      for (const auto& metric : family->metric) {
        Entity* entity = port_entity(metric);
        if (entity == nullptr) continue;
        CounterDowns(*entity, entity->link_downed, kIbLinkDowned, CounterValue(*family, metric),
                     snapshot.time);
      }
    }
    for (auto& [key, entity] : entities_) {
      if (!entity.netdev && entity.present && !present.contains(key)) {
        Absent(entity, snapshot.time);
        entity.last_active = false;
      }
    }
  }

  double Downtime(const Entity& entity, TimePoint now) const {
    const TimePoint from = now - s_.downtime_window;
    double total = 0;
    for (const auto& [start, end] : entity.outages) {
      if (end <= from) continue;
      total += Seconds(end - std::max(start, from));
    }
    if (entity.down_since && now > *entity.down_since &&
        !InMaintenance(entity, *entity.down_since)) {
      total += Seconds(now - std::max(*entity.down_since, from));
    }
    return total;
  }

  std::optional<Finding> EvaluateEntity(Entity& entity, TimePoint now) {
    entity.hard.Prune(now - std::max(s_.hard_window, s_.slow_window));
    entity.slow.Prune(now - s_.slow_window);
    while (!entity.outages.empty() && entity.outages.front().second <= now - s_.downtime_window) {
      entity.outages.pop_front();
    }
    const size_t hard = entity.hard.CountAfter(now - s_.hard_window);
    const size_t slow = entity.slow.CountAfter(now - s_.slow_window);
    const double penalty = entity.penalty.At(now);
    if (hard >= s_.hard_count) entity.hard_active = true;
    if (penalty >= s_.suppress) entity.suppressed = true;
    // Hysteresis (§2.2): both flapping states clear only once the penalty decays below reuse.
    if (penalty < s_.reuse) {
      if (hard < s_.hard_count) entity.hard_active = false;
      entity.suppressed = false;
    }
    const double down_seconds =
        entity.down_since && now > *entity.down_since ? Seconds(now - *entity.down_since) : 0;
    const double downtime = Downtime(entity, now);
    const std::string who = EntityText(entity.labels);
    const std::vector<Evidence> evidence = {
        {"hard_window_down_events", static_cast<double>(hard)},
        {"slow_window_down_events", static_cast<double>(slow)},
        {"flap_penalty", penalty},
        {"down_seconds", down_seconds},
        {"window_downtime_seconds", downtime},
    };
    Finding finding;
    finding.entity = entity.labels;
    finding.evidence = evidence;
    if (entity.maintenance_until && now < *entity.maintenance_until) {
      if (!entity.announce_maintenance) return std::nullopt;
      finding.severity = Severity::kInfo;
      finding.value = 1;
      finding.reason = fmt::format(
          "{}: transceiver module unplugged; link downs within {} are maintenance, not flaps",
          who, FormatDuration(s_.maintenance_window));
      return finding;
    }
    const bool sustained = entity.seen_up && entity.down_since &&
                           now - *entity.down_since >= s_.down_after;
    if (entity.hard_active || sustained) {
      finding.severity = Severity::kCritical;
      finding.drain_eligible = true;
      if (sustained) {
        finding.value = down_seconds;
        finding.reason = fmt::format("{}: link down for {:.1f}s (sustained outage >= {})", who,
                                     down_seconds, FormatDuration(s_.down_after));
      } else {
        finding.value = static_cast<double>(hard);
        finding.reason = fmt::format(
            "{}: hard flapping, {} link-down events in the last {} (>= {}), flap penalty {:.0f} "
            "(clears below {:.0f})",
            who, hard, FormatDuration(s_.hard_window), s_.hard_count, penalty, s_.reuse);
      }
      return finding;
    }
    const bool slow_flapping = slow >= s_.slow_count;
    const bool over_budget = downtime >= Seconds(s_.downtime_budget);
    if (entity.suppressed || slow_flapping || over_budget) {
      finding.severity = Severity::kWarning;
      std::vector<std::string> why;
      if (entity.suppressed) {
        why.push_back(fmt::format("flap penalty {:.0f} (suppress {:.0f}, reuse {:.0f})", penalty,
                                  s_.suppress, s_.reuse));
        finding.value = penalty;
      }
      if (slow_flapping) {
        why.push_back(fmt::format("{} link-down events in the last {} (>= {})", slow,
                                  FormatDuration(s_.slow_window), s_.slow_count));
        if (!entity.suppressed) finding.value = static_cast<double>(slow);
      }
      if (over_budget) {
        why.push_back(fmt::format("{:.1f}s down in the last {} (NCCL budget {})", downtime,
                                  FormatDuration(s_.downtime_window),
                                  FormatDuration(s_.downtime_budget)));
        if (!entity.suppressed && !slow_flapping) finding.value = downtime;
      }
      std::string reason = who + ": ";
      for (size_t i = 0; i < why.size(); ++i) reason += (i ? "; " : "") + why[i];
      finding.reason = reason;
      return finding;
    }
    return std::nullopt;
  }

  Settings s_;
  std::map<std::string, Entity> entities_;
  std::set<std::string> known_netdevs_;
  // IPoIB netdev -> entity key of its IB port, from the last fabric_rdma_port_info.
  std::map<std::string, std::string> ipoib_port_;
  TimePoint last_eval_{};
};

}  // namespace

std::span<const DetectorOptionSpec> LinkFlapDetectorOptions() { return kOptions; }
std::span<const MetricDesc> LinkFlapDetectorMetrics() { return kMetrics; }

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
  return std::unique_ptr<Detector>(std::make_unique<LinkFlapDetector>(s));
}

}  // namespace fabricwatch::detect
