// Escalation of repeated warnings (detectors/core/escalation.h), on simulated time.
#include "detectors/core/escalation.h"

#include <gtest/gtest.h>

#include "detectors/core/state_check.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

const TimePoint kT0{seconds(1'800'000'000)};
const EntityLabels kEth0{{"netdev", "eth0"}};

Finding Warning(EntityLabels entity = kEth0) {
  Finding f;
  f.severity = Severity::kWarning;
  f.entity = std::move(entity);
  f.value = 2;
  f.evidence = {{"slow_window_down_events", 2}};
  f.reason = "netdev=eth0: 2 link-down events";
  return f;
}

// One evaluation of "link_flap" at kT0 + t with or without the warning.
std::vector<Finding> At(Escalation& e, TimePoint::duration t, bool warning,
                        std::string_view detector = "link_flap", EntityLabels entity = kEth0) {
  std::vector<Finding> findings;
  if (warning) findings.push_back(Warning(entity));
  e.Apply(detector, kT0 + t, findings);
  return findings;
}

// The warning raised at t = 0, 10 min, 20 min (one evaluation each, clear between).
void ThreeRaises(Escalation& e) {
  for (int i = 0; i < 3; ++i) {
    At(e, minutes(10 * i), true);
    if (i < 2) At(e, minutes(10 * i) + seconds(30), false);
  }
}

double EvidenceOf(const Finding& f, std::string_view name) {
  for (const Evidence& ev : f.evidence) {
    if (ev.name == name) return ev.value;
  }
  return -1;
}

TEST(EscalationTest, third_warning_within_the_window_raises_a_critical_with_its_history) {
  Escalation e;
  At(e, seconds(0), true);
  At(e, seconds(30), false);
  auto second = At(e, minutes(10), true);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].severity, Severity::kWarning);  // two: not yet
  At(e, minutes(10) + seconds(30), false);
  auto third = At(e, minutes(20), true);
  ASSERT_EQ(third.size(), 1u);
  const Finding& f = third[0];
  EXPECT_EQ(f.severity, Severity::kCritical);
  EXPECT_EQ(f.entity, kEth0);
  EXPECT_EQ(f.value, 3);
  EXPECT_TRUE(f.drain_eligible);  // link_flap's criticals are drain-eligible
  EXPECT_EQ(EvidenceOf(f, "escalation_warnings"), 3);
  EXPECT_EQ(EvidenceOf(f, "escalation_window_seconds"), 3600);
  EXPECT_EQ(EvidenceOf(f, "escalation_raise_1_timestamp_seconds"), 1'800'000'000);
  EXPECT_EQ(EvidenceOf(f, "escalation_raise_3_timestamp_seconds"), 1'800'001'200);
  EXPECT_EQ(EvidenceOf(f, "slow_window_down_events"), 2);  // the warning's own evidence
  EXPECT_NE(f.reason.find("warning raised 3 times within 1h"), std::string::npos) << f.reason;
  EXPECT_NE(f.reason.find("2027-01-15T08:00:00Z"), std::string::npos) << f.reason;
  EXPECT_EQ(e.escalations().at("link_flap"), 1u);
}

TEST(EscalationTest, raises_spread_over_more_than_the_window_do_not_escalate) {
  Escalation e;
  for (int i = 0; i < 6; ++i) {
    auto f = At(e, minutes(31 * i), true);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].severity, Severity::kWarning) << i;
    At(e, minutes(31 * i) + seconds(30), false);
  }
}

TEST(EscalationTest, held_while_the_warning_is_active_and_a_window_after_the_last_raise) {
  Escalation e;
  ThreeRaises(e);  // last raise at 20 min
  // Warning active for another hour: still critical.
  auto held = At(e, minutes(60), true);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].severity, Severity::kCritical);
  // Warning clear, but less than a window since the last raise (20 min): the critical stays,
  // built from the last warning.
  auto after = At(e, minutes(70), false);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].severity, Severity::kCritical);
  // Clear and a window since the last raise: gone.
  EXPECT_TRUE(At(e, minutes(81), false).empty());
  // A new warning starts from a fresh count.
  auto next = At(e, minutes(85), true);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].severity, Severity::kWarning);
}

TEST(EscalationTest, a_detector_critical_for_the_entity_wins) {
  Escalation e;
  ThreeRaises(e);
  Finding own;
  own.severity = Severity::kCritical;
  own.entity = kEth0;
  own.reason = "hard flapping";
  std::vector<Finding> findings{own};
  e.Apply("link_flap", kT0 + minutes(21), findings);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].reason, "hard flapping");
}

TEST(EscalationTest, entities_and_detectors_are_counted_apart) {
  Escalation e;
  const EntityLabels eth1{{"netdev", "eth1"}};
  for (int i = 0; i < 3; ++i) {
    At(e, minutes(i), true, "link_flap", i == 0 ? kEth0 : eth1);
    At(e, minutes(i) + seconds(30), false, "link_flap", i == 0 ? kEth0 : eth1);
  }
  At(e, minutes(5), true, "thermal_drift");
  EXPECT_EQ(At(e, minutes(6), true)[0].severity, Severity::kWarning);
}

TEST(EscalationTest, drain_follows_the_detector_and_never_a_storm_victim) {
  EXPECT_TRUE(EscalatedDrainEligible("ber_growth", kEth0));
  EXPECT_FALSE(EscalatedDrainEligible("config_drift", {{"netdev", "eth0"}, {"setting", "pfc"}}));
  EXPECT_FALSE(EscalatedDrainEligible("pfc_storm",
                                      {{"netdev", "eth0"}, {"priority", "3"}, {"role", "victim"}}));
  Escalation e;
  const EntityLabels victim{{"netdev", "eth0"}, {"priority", "3"}, {"role", "victim"}};
  std::vector<Finding> last;
  for (int i = 0; i < 3; ++i) {
    last = At(e, minutes(i), true, "pfc_storm", victim);
    At(e, minutes(i) + seconds(30), false, "pfc_storm", victim);
  }
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].severity, Severity::kCritical);
  EXPECT_FALSE(last[0].drain_eligible);
}

TEST(EscalationTest, count_zero_disables_it) {
  Escalation e({.count = 0});
  ThreeRaises(e);
  auto f = At(e, minutes(30), true);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
}

TEST(EscalationTest, history_survives_a_restart_and_a_confirmed_warning_is_no_new_raise) {
  Escalation before;
  At(before, seconds(0), true);
  At(before, seconds(30), false);
  At(before, minutes(10), true);  // second raise, still active at the save
  const nlohmann::json saved = before.SaveState();

  Escalation after;
  StateLoadCheck check(kT0 + minutes(11));
  ASSERT_TRUE(after.LoadState(saved, check).ok());
  // The restarted detector needs a few samples to confirm the warning: within the grace its
  // absence and return are not a raise.
  At(after, minutes(11), false);
  auto confirmed = At(after, minutes(11) + seconds(20), true);
  EXPECT_EQ(confirmed[0].severity, Severity::kWarning);
  At(after, minutes(13), false);
  // The third raise, counted with the two from before the restart.
  auto third = At(after, minutes(15), true);
  EXPECT_EQ(third[0].severity, Severity::kCritical);
  EXPECT_EQ(EvidenceOf(third[0], "escalation_warnings"), 3);
}

TEST(EscalationTest, restored_raise_from_the_future_is_dropped) {
  Escalation before;
  At(before, minutes(30), true);
  Escalation after;
  StateLoadCheck check(kT0);  // the clock stepped back
  ASSERT_TRUE(after.LoadState(before.SaveState(), check).ok());
  EXPECT_EQ(check.total_dropped(), 1u);
}

}  // namespace
}  // namespace fabricwatch::detect
