#pragma once
// The per-port side of link_flap: one Entity per netdev or IB port, with its flap history and
// outage state, and the functions that move it (sightings, state changes, maintenance windows)
// and judge it (EvaluateEntity). The detector (link_flap.cc) reads the snapshots and link events
// and decides which entity each observation belongs to; everything here is pure over an Entity,
// the settings and the times it is given (docs/detection.md §2.2, §8).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "collectors/ethtool/ethtool_metrics.h"
#include "collectors/netdev/netdev_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "detectors/core/counter.h"
#include "detectors/core/detector.h"
#include "detectors/core/hysteresis.h"

namespace fabricwatch::detect::link_flap {

using std::chrono::milliseconds;

// Where a down was seen; a down seen by several sources within match-window counts once.
enum Source : unsigned {
  kNetlink = 1,
  kCarrierCounter = 2,
  kPhyCounter = 4,
  kIbState = 8,
  kIbLinkDowned = 16,
  kVerbsEvent = 32,  // libibverbs port_err (fabric_rdma_port_events_total), as it happens
};
inline constexpr Source kSources[] = {kNetlink, kCarrierCounter, kPhyCounter,
                                      kIbState, kIbLinkDowned,   kVerbsEvent};
// How a finding's reason names a source (issue 34: the evidence says where a down was seen).
const char* SourceName(Source source);

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
  // IB micro-flaps (link_flap.h): retrains and unseen downs in micro_window.
  uint64_t micro_count;
  milliseconds micro_window;
  milliseconds micro_escalate_after;
  double ceiling() const { return reuse * std::exp2(Seconds(max_suppress) / Seconds(half_life)); }
};

struct Sighting {
  TimePoint time;
  unsigned sources;
  // Which down this is: a counter delta of N books N sightings at one time, and a source that
  // confirms one of them confirms that one only (its counted entry, its pending link_downed).
  uint64_t id = 0;
};

// A link_downed increment that started a new down: a micro-flap unless the port state shows the
// same down within match-window (then it was a seen outage, counted once as a down).
struct PendingDowned {
  TimePoint time;
  bool seen = false;
  uint64_t id = 0;  // the Sighting it started
};

struct Entity {
  EntityLabels labels;
  bool netdev = false;
  // What a finding names, when more than `labels` (live, set by the detector): the netdev of a
  // RoCE port is named with its RDMA device and port (issue 34), "device", "port", "netdev".
  EntityLabels shown;
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
  // IB micro-flaps: link_error_recovery increments and link_downed increments the port state
  // never showed (persisted), and since when the micro-flap warning has held (escalation).
  EventWindow micro{1024};
  std::optional<TimePoint> micro_since;
  bool announce_maintenance = false;  // module unplug (info finding) vs. device gone (silent)
  // Live state (not persisted).
  std::deque<Sighting> recent;               // for matching sightings of the same down
  std::deque<Sighting> counted;              // the downs counted, with every source that saw them
  std::deque<PendingDowned> pending_downed;  // link_downed downs not yet judged seen or unseen
  uint64_t next_sighting_id = 1;             // Sighting::id of the next new sighting
  std::optional<TimePoint> down_since;
  TimePoint state_time{};
  bool present = true;
  bool state_known = false;
  bool last_active = false;  // IB: previous sample's state was ACTIVE
  // Counter semantics as the collectors declare them; carrier downs above 10^4/s are resets.
  CounterTracker carrier_down{SpecFor(netdev::kCarrierDown, 1e4)};
  CounterTracker phy_down{SpecFor(ethtool::kLinkDownEvents)};
  CounterTracker link_downed{SpecFor(rdma::kLinkDowned)};
  CounterTracker link_error_recovery{SpecFor(rdma::kLinkErrorRecovery)};
  CounterTracker unplug{SpecFor(ethtool::kModuleEvents)};
  // event="port_err", per RDMA port ("device/port"): several RDMA devices can share a netdev
  // (rxe and siw on one veth), each with its own counter (issue 34). `seen` counts the downs
  // the port saw, from the downs already booked when it was first sampled; the entity books
  // the most any port saw (VerbsDowns).
  struct VerbsPort {
    CounterTracker tracker{SpecFor(rdma::kPortEvents)};
    uint64_t seen = 0;
  };
  std::map<std::string, VerbsPort> verbs_err;
  uint64_t verbs_booked = 0;
};

// A new entity with its penalty set up from `s`.
Entity NewEntity(const Settings& s, const EntityLabels& labels);

// True when `time` is within maintenance-window of the entity's last unplug or reappearance.
bool InMaintenance(const Settings& s, const Entity& entity, TimePoint time);
// One source saw a down at `time`: either it confirms a down another source already counted
// (within match-window, not yet seen by this source), or it is a new down (returns true).
bool Sight(const Settings& s, Entity& entity, Source source, TimePoint time);
void StateDown(const Settings& s, Entity& entity, TimePoint time);
void StateUp(const Settings& s, Entity& entity, TimePoint time);
// The device is gone (hot-unplug, driver unload): not an outage of a link.
void Absent(const Settings& s, Entity& entity, TimePoint time);
// Downs a counter source adds since its previous sample (CounterTracker arithmetic).
void CounterDowns(const Settings& s, Entity& entity, CounterTracker& tracker, Source source,
                  uint64_t value, TimePoint time);
// `downs` sightings by `source` at `time` (a counter's delta, capped): each confirms a down
// another source saw or is a new one; a new link_downed down waits to be judged a micro-flap.
void SightDowns(const Settings& s, Entity& entity, Source source, uint64_t downs, TimePoint time);
// A sample of the port_err counter of the entity's RDMA port `port_key` ("device/port").
void VerbsCount(Entity& entity, const std::string& port_key, uint64_t value, TimePoint time);
// Books the port_err downs the entity's ports saw beyond those already booked: every RDMA port
// on a netdev gets a port_err for the same carrier down, so the downs are the most any port
// saw, not their sum, even when one port's event reaches a later sample than another's.
void VerbsDowns(const Settings& s, Entity& entity, TimePoint time);
// Forgets the port_err counters of the entity's ports that `gone` says left (`rdma link
// delete`). The downs booked stay booked: a port that stays may lag behind the one that left
// (rxe0 saw 6, siw0's 6th port_err is still on its way), and lowering verbs_booked to the most it
// saw would book that late event a second time. Only with no port left does it restart at 0 (a
// port added later starts at seen = verbs_booked, VerbsCount).
template <typename Gone>
void ForgetVerbsPorts(Entity& entity, Gone gone) {
  if (std::erase_if(entity.verbs_err, gone) == 0) return;
  if (entity.verbs_err.empty()) entity.verbs_booked = 0;
}
// Successful link error recoveries (retrains without a down) since the previous sample: each is
// a micro-flap.
void RecoveryCounter(const Settings& s, Entity& entity, uint64_t value, TimePoint time);
// Judges the link_downed downs older than match-window: those the port state never showed are
// micro-flaps.
void SettleMicroFlaps(const Settings& s, Entity& entity, TimePoint now);
// A module unplug (announce) or a device that came back (silent): the downs around `time` are
// maintenance, not flaps.
void StartMaintenance(const Settings& s, Entity& entity, TimePoint time, bool announce);
// Seconds down in the last downtime-window, maintenance excluded.
double Downtime(const Settings& s, const Entity& entity, TimePoint now);
// The entity's finding at `now` (highest severity only), or nullopt; prunes its windows.
std::optional<Finding> EvaluateEntity(const Settings& s, Entity& entity, TimePoint now);

// The persisted part of an entity (its flap history), and back.
nlohmann::json SaveEntity(const Entity& entity);
// Throws nlohmann::json::exception on a malformed entry; values from the future or out of bounds
// are dropped through `check` (detectors/core/state_check.h).
void LoadEntity(const Settings& s, const nlohmann::json& entry, Entity& entity,
                StateLoadCheck& check);

}  // namespace fabricwatch::detect::link_flap
