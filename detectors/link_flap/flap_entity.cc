#include "detectors/link_flap/flap_entity.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "base/duration.h"
#include "detectors/core/anomaly_tracker.h"
#include "detectors/core/state_check.h"

namespace fabricwatch::detect::link_flap {

const char* SourceName(Source source) {
  switch (source) {
    case kNetlink:
      return "netlink carrier events";
    case kCarrierCounter:
      return "carrier_down_count (sysfs polling)";
    case kPhyCounter:
      return "ethtool link_down_events_phy (polling)";
    case kIbState:
      return "IB port state (sysfs polling)";
    case kIbLinkDowned:
      return "link_downed (sysfs polling)";
    case kVerbsEvent:
      return "verbs port_err events";
  }
  return "?";
}

namespace {

// Which sources saw the downs counted after `since` (issue 34: a finding states its evidence):
// "; seen by netlink carrier events 6/6, verbs port_err events 6/6" (empty with no down). Downs
// restored from the state file have no sources; they are named as such.
std::string SourcesText(const Entity& entity, TimePoint since, size_t downs) {
  size_t known = 0;
  size_t by[std::size(kSources)] = {};
  for (const Sighting& down : entity.counted) {
    if (down.time <= since) continue;
    ++known;
    for (size_t i = 0; i < std::size(kSources); ++i) by[i] += (down.sources & kSources[i]) != 0;
  }
  std::string out;
  for (size_t i = 0; i < std::size(kSources); ++i) {
    if (by[i] == 0) continue;
    out += fmt::format("{}{} {}/{}", out.empty() ? "; seen by " : ", ", SourceName(kSources[i]),
                       by[i], downs);
  }
  if (downs > known) {
    out += fmt::format("; {} from before a restart", downs - known);
  }
  return out;
}

}  // namespace

Entity NewEntity(const Settings& s, const EntityLabels& labels) {
  Entity entity;
  entity.labels = labels;
  entity.netdev = labels.size() == 1 && labels[0].first == "netdev";
  entity.penalty = DecayingPenalty(s.half_life, s.ceiling());
  return entity;
}

bool InMaintenance(const Settings& s, const Entity& entity, TimePoint time) {
  return entity.last_unplug && time >= *entity.last_unplug - s.maintenance_window &&
         time <= *entity.last_unplug + s.maintenance_window;
}

// One source saw a down at `time`: either it confirms a down another source already counted
// (within match-window, not yet seen by this source), or it is a new down.
bool Sight(const Settings& s, Entity& entity, Source source, TimePoint time) {
  while (!entity.recent.empty() && entity.recent.front().time < time - 2 * s.match_window) {
    entity.recent.pop_front();
  }
  for (Sighting& sighting : entity.recent) {
    const auto gap = sighting.time > time ? sighting.time - time : time - sighting.time;
    if ((sighting.sources & source) == 0 && gap <= s.match_window) {
      // The port state or a verbs port_err confirms a link_downed down: a seen outage, not a
      // micro-flap (whichever comes first, the down is booked once: a link_downed sighting
      // that confirms an earlier one starts no pending judgement, see SightDowns).
      if ((source == kIbState || source == kVerbsEvent) &&
          (sighting.sources & kIbLinkDowned) != 0) {
        for (PendingDowned& pending : entity.pending_downed) {
          if (pending.id == sighting.id) pending.seen = true;
        }
      }
      // Only this down's entry: the others booked at the same time are other downs.
      for (Sighting& down : entity.counted) {
        if (down.id == sighting.id) down.sources |= source;
      }
      sighting.sources |= source;
      return false;
    }
  }
  entity.recent.push_back({time, source, entity.next_sighting_id++});
  if (InMaintenance(s, entity, time)) return true;
  entity.hard.Add(time);
  entity.slow.Add(time);
  entity.counted.push_back(entity.recent.back());
  if (entity.counted.size() > 1024) entity.counted.pop_front();  // EventWindow's bound
  entity.penalty.Add(s.penalty_per_down, time);
  ++entity.downs_total;
  return true;
}

void StateDown(const Settings& /*s*/, Entity& entity, TimePoint time) {
  if (time < entity.state_time) return;  // an older observation than the one we have
  entity.state_time = time;
  entity.state_known = true;
  if (!entity.down_since) entity.down_since = time;
}

void StateUp(const Settings& s, Entity& entity, TimePoint time) {
  if (time < entity.state_time) return;
  entity.state_time = time;
  entity.state_known = true;
  // A port that was never up (down or stuck since boot) had no outage: no job used it. Such a
  // port is link_degraded's (detectors/link_degraded/link_degraded.h), not a flap or downtime.
  const bool was_up = entity.seen_up;
  entity.seen_up = true;
  if (entity.down_since) {
    if (was_up && !InMaintenance(s, entity, *entity.down_since)) {
      entity.outages.emplace_back(*entity.down_since, time);
    }
    entity.down_since.reset();
  }
}

// The device is gone (hot-unplug, driver unload): not an outage of a link.
void Absent(const Settings& s, Entity& entity, TimePoint time) {
  StartMaintenance(s, entity, time, false);
  entity.present = false;
  entity.down_since.reset();
  entity.state_known = false;
  entity.carrier_down.Forget();
  entity.phy_down.Forget();
  entity.link_downed.Forget();
  entity.link_error_recovery.Forget();
  entity.unplug.Forget();
  entity.verbs_err.clear();
  entity.verbs_booked = 0;
  entity.pending_downed.clear();
}

void SightDowns(const Settings& s, Entity& entity, Source source, uint64_t downs, TimePoint time) {
  // A burst larger than the windows can hold adds no information; cap the loop.
  downs = std::min<uint64_t>(downs, 256);
  for (uint64_t i = 0; i < downs; ++i) {
    // A new down from link_downed is a micro-flap unless the port state (or a verbs port_err)
    // shows it (settled after match-window, SettleMicroFlaps); one already shown is not
    // pending at all.
    if (Sight(s, entity, source, time) && source == kIbLinkDowned) {
      entity.pending_downed.push_back({time, false, entity.recent.back().id});
    }
  }
}

void CounterDowns(const Settings& s, Entity& entity, CounterTracker& tracker, Source source,
                  uint64_t value, TimePoint time) {
  const CounterStep step = tracker.Update(value, time);
  if (step.valid) SightDowns(s, entity, source, step.delta, time);
}

void VerbsCount(Entity& entity, const std::string& port_key, uint64_t value, TimePoint time) {
  auto [it, added] = entity.verbs_err.try_emplace(port_key);
  if (added) it->second.seen = entity.verbs_booked;  // in step with the ports already counted
  const CounterStep step = it->second.tracker.Update(value, time);
  if (step.valid) it->second.seen += step.delta;
}

void VerbsDowns(const Settings& s, Entity& entity, TimePoint time) {
  uint64_t most = entity.verbs_booked;
  for (const auto& [key, port] : entity.verbs_err) most = std::max(most, port.seen);
  if (most == entity.verbs_booked) return;
  SightDowns(s, entity, kVerbsEvent, most - entity.verbs_booked, time);
  entity.verbs_booked = most;
}

void RecoveryCounter(const Settings& s, Entity& entity, uint64_t value, TimePoint time) {
  const CounterStep step = entity.link_error_recovery.Update(value, time);
  if (!step.valid || InMaintenance(s, entity, time)) return;
  const uint64_t recoveries = std::min<uint64_t>(step.delta, 256);
  for (uint64_t i = 0; i < recoveries; ++i) entity.micro.Add(time);
}

void SettleMicroFlaps(const Settings& s, Entity& entity, TimePoint now) {
  while (!entity.pending_downed.empty() &&
         entity.pending_downed.front().time <= now - s.match_window) {
    const PendingDowned pending = entity.pending_downed.front();
    entity.pending_downed.pop_front();
    if (!pending.seen && !InMaintenance(s, entity, pending.time)) entity.micro.Add(pending.time);
  }
}

// docs/detection.md §2.2: module_unplug is a human action — the downs around it are maintenance.
// A device that disappears or comes back (hot-unplug, driver reload) is the same kind of
// human action, without the announcement: its re-registration downs are no flaps.
void StartMaintenance(const Settings& s, Entity& entity, TimePoint time, bool announce) {
  entity.announce_maintenance =
      announce ||
      (entity.announce_maintenance && entity.maintenance_until && time < *entity.maintenance_until);
  entity.last_unplug = time;
  entity.maintenance_until = time + s.maintenance_window;
  const TimePoint from = time - s.maintenance_window;
  for (TimePoint t : entity.hard.RemoveBetween(from, time)) {
    entity.penalty.Remove(s.penalty_per_down, t);
    entity.downs_total -= std::min<uint64_t>(entity.downs_total, 1);
  }
  entity.slow.RemoveBetween(from, time);
  entity.micro.RemoveBetween(from, time);
  std::erase_if(entity.counted,
                [&](const Sighting& down) { return down.time >= from && down.time <= time; });
  std::erase_if(entity.pending_downed, [&](const PendingDowned& p) { return p.time >= from; });
  std::erase_if(entity.outages, [&](const auto& outage) { return outage.first >= from; });
  if (entity.penalty.At(time) < s.reuse) entity.suppressed = false;
  entity.hard_active = false;
}

double Downtime(const Settings& s, const Entity& entity, TimePoint now) {
  const TimePoint from = now - s.downtime_window;
  double total = 0;
  for (const auto& [start, end] : entity.outages) {
    if (end <= from) continue;
    total += Seconds(end - std::max(start, from));
  }
  if (entity.seen_up && entity.down_since && now > *entity.down_since &&
      !InMaintenance(s, entity, *entity.down_since)) {
    total += Seconds(now - std::max(*entity.down_since, from));
  }
  return total;
}

namespace {

// Drops what has left every window by `now`.
void PruneWindows(const Settings& s, Entity& entity, TimePoint now) {
  entity.hard.Prune(now - std::max(s.hard_window, s.slow_window));
  entity.slow.Prune(now - s.slow_window);
  while (!entity.counted.empty() &&
         entity.counted.front().time <= now - std::max(s.hard_window, s.slow_window)) {
    entity.counted.pop_front();
  }
  SettleMicroFlaps(s, entity, now);
  entity.micro.Prune(now - s.micro_window);
  while (!entity.outages.empty() && entity.outages.front().second <= now - s.downtime_window) {
    entity.outages.pop_front();
  }
}

}  // namespace

std::optional<Finding> EvaluateEntity(const Settings& s, Entity& entity, TimePoint now) {
  PruneWindows(s, entity, now);
  const size_t hard = entity.hard.CountAfter(now - s.hard_window);
  const size_t slow = entity.slow.CountAfter(now - s.slow_window);
  const double penalty = entity.penalty.At(now);
  const size_t micro = entity.micro.CountAfter(now - s.micro_window);
  // The micro-flap warning holds while the window has micro-count; held for escalate-after,
  // the link is still retraining and the finding escalates. Below the count it clears.
  if (micro < s.micro_count) {
    entity.micro_since.reset();
  } else if (!entity.micro_since) {
    entity.micro_since = now;
  }
  const bool micro_critical =
      entity.micro_since && now - *entity.micro_since >= s.micro_escalate_after;
  if (hard >= s.hard_count) entity.hard_active = true;
  if (penalty >= s.suppress) entity.suppressed = true;
  // Hysteresis (§2.2): both flapping states clear only once the penalty decays below reuse.
  if (penalty < s.reuse) {
    if (hard < s.hard_count) entity.hard_active = false;
    entity.suppressed = false;
  }
  const double down_seconds =
      entity.down_since && now > *entity.down_since ? Seconds(now - *entity.down_since) : 0;
  const double downtime = Downtime(s, entity, now);
  const EntityLabels& named = entity.shown.empty() ? entity.labels : entity.shown;
  const std::string who = EntityText(named);
  const std::vector<Evidence> evidence = {
      {"hard_window_down_events", static_cast<double>(hard)},
      {"slow_window_down_events", static_cast<double>(slow)},
      {"flap_penalty", penalty},
      {"down_seconds", down_seconds},
      {"window_downtime_seconds", downtime},
  };
  Finding finding;
  finding.entity = named;
  finding.evidence = evidence;
  if (micro > 0) {
    finding.evidence.push_back({"micro_window_flaps", static_cast<double>(micro)});
  }
  const std::string micro_why = fmt::format(
      "{} micro-flaps (link error recoveries, downs between samples) in the last {} (>= {})", micro,
      FormatDuration(s.micro_window), s.micro_count);
  if (entity.maintenance_until && now < *entity.maintenance_until) {
    if (!entity.announce_maintenance) return std::nullopt;
    finding.severity = Severity::kInfo;
    finding.value = 1;
    finding.reason = fmt::format(
        "{}: transceiver module unplugged; link downs within {} are maintenance, not flaps", who,
        FormatDuration(s.maintenance_window));
    return finding;
  }
  const bool sustained =
      entity.seen_up && entity.down_since && now - *entity.down_since >= s.down_after;
  if (entity.hard_active || sustained || micro_critical) {
    finding.severity = Severity::kCritical;
    // Retrains keep the link up: persistent micro-flaps page, but only a link that goes down
    // drains the node.
    finding.drain_eligible = entity.hard_active || sustained;
    if (!finding.drain_eligible) {
      finding.value = static_cast<double>(micro);
      finding.reason = fmt::format(
          "{}: {}, persisting for {} (>= {})", who, micro_why,
          FormatDuration(std::chrono::duration_cast<milliseconds>(now - *entity.micro_since)),
          FormatDuration(s.micro_escalate_after));
    } else if (sustained) {
      finding.value = down_seconds;
      finding.reason = fmt::format("{}: link down for {:.1f}s (sustained outage >= {})", who,
                                   down_seconds, FormatDuration(s.down_after));
    } else {
      finding.value = static_cast<double>(hard);
      finding.reason = fmt::format(
          "{}: hard flapping, {} link-down events in the last {} (>= {}{}), flap penalty "
          "{:.0f} (clears below {:.0f})",
          who, hard, FormatDuration(s.hard_window), s.hard_count,
          SourcesText(entity, now - s.hard_window, hard), penalty, s.reuse);
    }
    return finding;
  }
  const bool slow_flapping = slow >= s.slow_count;
  const bool over_budget = downtime >= Seconds(s.downtime_budget);
  const bool micro_flapping = entity.micro_since.has_value();
  if (entity.suppressed || slow_flapping || over_budget || micro_flapping) {
    finding.severity = Severity::kWarning;
    std::vector<std::string> why;
    if (entity.suppressed) {
      why.push_back(fmt::format("flap penalty {:.0f} (suppress {:.0f}, reuse {:.0f})", penalty,
                                s.suppress, s.reuse));
      finding.value = penalty;
    }
    if (slow_flapping) {
      why.push_back(fmt::format("{} link-down events in the last {} (>= {}{})", slow,
                                FormatDuration(s.slow_window), s.slow_count,
                                SourcesText(entity, now - s.slow_window, slow)));
      if (!entity.suppressed) finding.value = static_cast<double>(slow);
    }
    if (over_budget) {
      why.push_back(fmt::format("{:.1f}s down in the last {} (NCCL budget {})", downtime,
                                FormatDuration(s.downtime_window),
                                FormatDuration(s.downtime_budget)));
      if (!entity.suppressed && !slow_flapping) finding.value = downtime;
    }
    if (micro_flapping) {
      why.push_back(micro_why);
      if (why.size() == 1) finding.value = static_cast<double>(micro);
    }
    std::string reason = who + ": ";
    for (size_t i = 0; i < why.size(); ++i) reason += (i ? "; " : "") + why[i];
    finding.reason = reason;
    return finding;
  }
  return std::nullopt;
}

nlohmann::json SaveEntity(const Entity& entity) {
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
                          {"outages", outages},
                          {"micro", entity.micro.Save()}};
  if (entity.micro_since) entry["micro_since"] = EpochSeconds(*entity.micro_since);
  if (entity.maintenance_until) {
    entry["maintenance_until"] = EpochSeconds(*entity.maintenance_until);
  }
  return entry;
}

// Throws nlohmann::json::exception on a malformed entry (LoadState reports it).
void LoadEntity(const Settings& s, const nlohmann::json& entry, Entity& entity,
                StateLoadCheck& check) {
  entity.hard.Load(entry.at("hard"), check);
  entity.slow.Load(entry.at("slow"), check);
  entity.penalty.Load(entry.at("penalty"), check);
  entity.hard_active = entry.at("hard_active").get<bool>();
  entity.suppressed = entry.at("suppressed").get<bool>();
  entity.seen_up = entry.at("seen_up").get<bool>();
  // A negative or non-integer count restarts at 0 (the counter's rate is unaffected).
  entity.downs_total = check.Count(entry.at("downs_total"), UINT64_MAX).value_or(0);
  for (const auto& outage : entry.at("outages")) {
    auto from = check.Past(outage.at(0));
    auto to = from ? check.Past(outage.at(1)) : std::nullopt;
    if (!from || !to) continue;
    if (*to < *from) {
      check.Drop(StateLoadCheck::kOutOfRange);
      continue;
    }
    // The same bound as the live path: only the last downtime-window (EvaluateEntity prunes).
    if (*to > check.now() - s.downtime_window) entity.outages.emplace_back(*from, *to);
  }
  // Absent in state files of earlier versions.
  if (entry.contains("micro")) entity.micro.Load(entry.at("micro"), check);
  if (entry.contains("micro_since")) entity.micro_since = check.Past(entry.at("micro_since"));
  // A maintenance window ends at most maintenance-window after its start, so never later than
  // that after now.
  if (entry.contains("maintenance_until")) {
    entity.maintenance_until = check.Until(entry.at("maintenance_until"), s.maintenance_window);
  }
}

}  // namespace fabricwatch::detect::link_flap
