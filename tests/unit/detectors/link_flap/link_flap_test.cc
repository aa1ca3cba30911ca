// link_flap scenario timelines: synthetic netdev/rdma/ethtool snapshots and netlink events on a
// simulated clock, with the detection time asserted.
#include "detectors/link_flap/link_flap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "collectors/ethtool/ethtool_metrics.h"
#include "collectors/netdev/netdev_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/sys/link_events.h"
#include "detectors/core/state_check.h"
#include "tests/testing/families.h"
#include "tests/unit/detectors/detector_feed.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Families;
const TimePoint kT0 = TimePoint(seconds(1'700'000'000));

std::string FindingsText(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings) out += "  " + f.reason + "\n";
  return out;
}

class LinkFlapTest : public ::testing::Test {
 protected:
  void Make(DetectorOptions options = {}) {
    auto made = MakeLinkFlapDetector(options);
    ASSERT_TRUE(made) << made.error().message();
    detector = std::move(*made);
  }
  void Netdev(TimePoint t, std::optional<int> carrier, uint64_t down_count,
              const std::string& netdev = "eth0") {
    Families f;
    f.Gauge(netdev::kOperState, {{"netdev", netdev}}, carrier.value_or(0) ? 6 : 2);
    if (carrier) f.Gauge(netdev::kCarrier, {{"netdev", netdev}}, *carrier);
    f.Counter(netdev::kCarrierDown, {{"netdev", netdev}}, static_cast<double>(down_count));
    Feed("netdev", t, f);
  }
  void NetdevGone(TimePoint t) { Feed("netdev", t, Families()); }
  void Rdma(TimePoint t, int state, double link_downed) {
    Families f;
    f.Gauge(rdma::kPortInfo,
            {{"device", "mlx5_0"},
             {"port", "1"},
             {"link_layer", "InfiniBand"},
             {"netdev", "ib0"},
             {"speed", "NDR"}},
            1);
    f.Gauge(rdma::kPortState, {{"device", "mlx5_0"}, {"port", "1"}}, state);
    f.Counter(rdma::kLinkDowned, {{"device", "mlx5_0"}, {"port", "1"}}, link_downed);
    Feed("rdma", t, f);
  }
  // An IB port sample with its link_error_recovery counter too (micro-flaps).
  void Ib(TimePoint t, int state, double link_downed, double recoveries) {
    Families f;
    f.Gauge(rdma::kPortInfo,
            {{"device", "mlx5_0"},
             {"port", "1"},
             {"link_layer", "InfiniBand"},
             {"netdev", "ib0"},
             {"speed", "NDR"}},
            1);
    f.Gauge(rdma::kPortState, {{"device", "mlx5_0"}, {"port", "1"}}, state);
    f.Counter(rdma::kLinkDowned, {{"device", "mlx5_0"}, {"port", "1"}}, link_downed);
    f.Counter(rdma::kLinkErrorRecovery, {{"device", "mlx5_0"}, {"port", "1"}}, recoveries);
    Feed("rdma", t, f);
  }
  void Unplug(TimePoint t, double count, const std::string& netdev = "eth0") {
    Families f;
    f.Counter(ethtool::kModuleEvents, {{"netdev", netdev}, {"event", "unplug"}}, count);
    Feed("ethtool", t, f);
  }
  void Feed(std::string_view collector, TimePoint t, const Families& f) {
    feed(*detector, collector, t, f.families());
  }
  void Event(TimePoint t, bool up, const std::string& netdev = "eth0") {
    sys::LinkEvent event;
    event.time = t;
    event.netdev = netdev;
    event.carrier_up = up;
    detector->OnLinkEvents({event});
  }
  std::optional<Finding> Worst(TimePoint now) {
    std::vector<Finding> findings = detector->Evaluate(now);
    std::optional<Finding> worst;
    for (Finding& f : findings) {
      if (!worst || f.severity > worst->severity) worst = f;
    }
    return worst;
  }
  std::unique_ptr<Detector> detector;
  testing::DetectorFeed feed;
};

// Event-driven: 5 downs within 2 s on a netdev raise critical on the fifth down event itself.
TEST_F(LinkFlapTest, netdev_hard_flap_detected_on_the_fifth_down_event) {
  Make({{"half-life", "10s"}, {"slow-window", "1m"}});
  Netdev(kT0, 1, 0);
  EXPECT_FALSE(Worst(kT0));
  TimePoint fifth;
  for (int i = 0; i < 5; ++i) {
    const TimePoint down = kT0 + seconds(1) + milliseconds(400 * i);
    Event(down, false);
    auto worst = Worst(down);
    if (i < 4) {
      EXPECT_FALSE(worst && worst->severity == Severity::kCritical) << "down " << i + 1;
    } else {
      fifth = down;
      ASSERT_TRUE(worst);
      EXPECT_EQ(worst->severity, Severity::kCritical);
      EXPECT_TRUE(worst->drain_eligible);
      EXPECT_EQ(worst->value, 5);
      EXPECT_EQ(worst->entity, (EntityLabels{{"netdev", "eth0"}}));
      EXPECT_NE(worst->reason.find("5 link-down events"), std::string::npos) << worst->reason;
    }
    Event(down + milliseconds(200), true);
  }
  // The carrier counter catches up (5 downs): the same downs, not 5 more.
  Netdev(kT0 + seconds(4), 1, 5);
  auto worst = Worst(kT0 + seconds(4));
  ASSERT_TRUE(worst);
  for (const Evidence& e : worst->evidence) {
    if (e.name == "hard_window_down_events") EXPECT_EQ(e.value, 5) << "deduplicated";
  }
  // Penalty 5000 halves every 10 s: below reuse 750 after ~27.4 s; critical clears by itself,
  // slow flapping (5 in 1 m) stays a warning until the window passes.
  EXPECT_EQ(Worst(fifth + seconds(25))->severity, Severity::kCritical);
  EXPECT_EQ(Worst(fifth + seconds(29))->severity, Severity::kWarning);
  EXPECT_FALSE(Worst(fifth + seconds(61)));
}

TEST_F(LinkFlapTest, netlink_events_of_unreported_netdevs_are_ignored) {
  Make();
  Netdev(kT0, 1, 0);
  for (int i = 0; i < 10; ++i) Event(kT0 + milliseconds(100 * i), i % 2 == 1, "veth1234");
  EXPECT_FALSE(Worst(kT0 + seconds(1)));
}

// IB: the port-state poll and link_downed; detected at the first sample that shows the flaps.
TEST_F(LinkFlapTest, ib_flap_detected_within_one_sample_interval) {
  Make();
  for (int i = 0; i <= 5; ++i) Rdma(kT0 + seconds(i), 4, 10);
  EXPECT_FALSE(Worst(kT0 + seconds(5)));
  // Between samples 5 and 6 the port flapped 5 times; the poll sees it down once.
  Rdma(kT0 + seconds(6), 1, 15);
  auto worst = Worst(kT0 + seconds(6));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->severity, Severity::kCritical);
  EXPECT_EQ(worst->entity, (EntityLabels{{"device", "mlx5_0"}, {"port", "1"}}));
  EXPECT_EQ(worst->value, 5) << "state drop and counter are the same downs";
}

// One IB flap is seen on the port (state, link_downed) and on its IPoIB netdev ib0 (netlink,
// carrier counter): one fault, one finding — the port's (docs/detection.md §2.2) — so one drain.
TEST_F(LinkFlapTest, ipoib_netdev_flaps_are_raised_once_on_the_ib_port) {
  Make();
  for (int i = 0; i <= 5; ++i) {
    Rdma(kT0 + seconds(i), 4, 10);
    Netdev(kT0 + seconds(i), 1, 0, "ib0");
  }
  ASSERT_TRUE(detector->Evaluate(kT0 + seconds(5)).empty());
  for (int i = 0; i < 5; ++i) {
    Event(kT0 + milliseconds(5100 + 150 * i), false, "ib0");
    Event(kT0 + milliseconds(5150 + 150 * i), true, "ib0");
  }
  Rdma(kT0 + seconds(6), 1, 15);
  Netdev(kT0 + seconds(6), 1, 5, "ib0");
  const std::vector<Finding> findings = detector->Evaluate(kT0 + seconds(6));
  ASSERT_EQ(findings.size(), 1u) << FindingsText(findings);
  EXPECT_EQ(findings[0].entity, (EntityLabels{{"device", "mlx5_0"}, {"port", "1"}}));
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  EXPECT_TRUE(findings[0].drain_eligible);
  // Restarted (state file) and fed a netdev sample before the first rdma one: the restored
  // flaps of ib0 are still the port's.
  const nlohmann::json saved = detector->SaveState();
  Make();
  StateLoadCheck check(kT0 + milliseconds(6500));
  ASSERT_TRUE(detector->LoadState(saved, check).ok());
  EXPECT_EQ(check.total_dropped(), 0u);
  Netdev(kT0 + milliseconds(6500), 1, 5, "ib0");
  const std::vector<Finding> restored = detector->Evaluate(kT0 + milliseconds(6500));
  ASSERT_EQ(restored.size(), 1u) << FindingsText(restored);
  EXPECT_EQ(restored[0].entity, (EntityLabels{{"device", "mlx5_0"}, {"port", "1"}}));
  // A sustained outage as well: the port's alone.
  for (int i = 7; i <= 40; ++i) {
    Rdma(kT0 + seconds(i), 1, 16);
    Netdev(kT0 + seconds(i), 0, 6, "ib0");
  }
  const std::vector<Finding> later = detector->Evaluate(kT0 + seconds(40));
  ASSERT_EQ(later.size(), 1u) << FindingsText(later);
  EXPECT_EQ(later[0].entity, (EntityLabels{{"device", "mlx5_0"}, {"port", "1"}}));
}

// The transceiver of an IB port is unplugged: the ethtool event names the IPoIB netdev, and the
// port's downs are the maintenance it announces — no flap, no outage.
TEST_F(LinkFlapTest, module_unplug_on_an_ipoib_netdev_is_maintenance_of_its_ib_port) {
  Make();
  Unplug(kT0, 0, "ib0");
  for (int i = 0; i <= 5; ++i) {
    Rdma(kT0 + seconds(i), 4, 10);
    Netdev(kT0 + seconds(i), 1, 0, "ib0");
  }
  Unplug(kT0 + seconds(6), 1, "ib0");
  for (int i = 6; i <= 60; ++i) {
    Rdma(kT0 + seconds(i), 1, 11);
    Netdev(kT0 + seconds(i), 0, 1, "ib0");
  }
  const std::vector<Finding> findings = detector->Evaluate(kT0 + seconds(60));
  ASSERT_EQ(findings.size(), 1u) << FindingsText(findings);
  EXPECT_EQ(findings[0].entity, (EntityLabels{{"device", "mlx5_0"}, {"port", "1"}}));
  EXPECT_EQ(findings[0].severity, Severity::kInfo);
  EXPECT_FALSE(findings[0].drain_eligible);
}

TEST_F(LinkFlapTest, healthy_reset_wrap_and_saturation_are_silent) {
  Make();
  TimePoint t = kT0;
  for (int i = 0; i < 600; ++i, t += seconds(1)) {
    Netdev(t, 1, 1000);
    Rdma(t, 4, 255);  // saturated link_downed: untrusted, never a flap
    ASSERT_FALSE(Worst(t)) << i;
  }
  Netdev(t, 1, 0);  // reset (device re-registered)
  Netdev(t + seconds(1), 1, 0);
  Rdma(t, 4, 0);  // PMA counters cleared
  EXPECT_FALSE(Worst(t + seconds(1)));
  // A 32-bit wrap of carrier_down_count: one real down, not 2^32 of them.
  Make();
  Netdev(kT0, 1, 4294967295.0);
  Netdev(kT0 + seconds(1), 1, 0);
  EXPECT_FALSE(Worst(kT0 + seconds(1)));
}

TEST_F(LinkFlapTest, hot_unplug_and_replug_is_not_an_outage) {
  Make();
  Netdev(kT0, 1, 7);
  Event(kT0 + milliseconds(500), false);
  for (int i = 1; i <= 60; ++i) {
    NetdevGone(kT0 + seconds(i));
    ASSERT_FALSE(Worst(kT0 + seconds(i))) << i;
  }
  Netdev(kT0 + seconds(61), 0, 0);  // back, counters from 0, carrier not yet up
  Netdev(kT0 + seconds(62), 1, 1);
  EXPECT_FALSE(Worst(kT0 + seconds(62)));
}

TEST_F(LinkFlapTest, sustained_down_is_critical_after_down_after) {
  Make();
  Netdev(kT0, 1, 0);
  Event(kT0 + seconds(1), false);
  Netdev(kT0 + seconds(2), 0, 1);
  auto early = Worst(kT0 + seconds(30));
  EXPECT_TRUE(!early || early->severity != Severity::kCritical);
  auto worst = Worst(kT0 + seconds(31));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->severity, Severity::kCritical);
  EXPECT_NE(worst->reason.find("link down for 30.0s"), std::string::npos) << worst->reason;
}

TEST_F(LinkFlapTest, downtime_over_the_nccl_budget_is_a_warning) {
  Make();
  Netdev(kT0, 1, 0);
  Event(kT0 + seconds(1), false);
  Event(kT0 + seconds(9), true);  // 8 s > 7.5 s budget, one down only
  auto worst = Worst(kT0 + seconds(10));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->severity, Severity::kWarning);
  EXPECT_NE(worst->reason.find("8.0s down"), std::string::npos) << worst->reason;
}

TEST_F(LinkFlapTest, a_port_down_since_boot_has_no_outage_until_it_was_first_up) {
  // An IB port stuck in INIT (no SM) from the first sample: link_degraded's, not a flap, not
  // downtime. Once it has come up, a later outage counts as usual.
  Make();
  for (int s = 0; s < 120; ++s) Rdma(kT0 + seconds(s), 2, 0);
  EXPECT_FALSE(Worst(kT0 + seconds(120))) << "never up: no downtime, no sustained down";
  Rdma(kT0 + seconds(120), 4, 0);
  EXPECT_FALSE(Worst(kT0 + seconds(121))) << "coming up for the first time is no outage";
  for (int s = 130; s < 140; ++s) Rdma(kT0 + seconds(s), 1, 1);
  auto worst = Worst(kT0 + seconds(140));
  ASSERT_TRUE(worst) << "an outage after it was up counts";
  EXPECT_EQ(worst->severity, Severity::kWarning);
}

TEST_F(LinkFlapTest, module_unplug_is_maintenance_not_a_flap) {
  Make();
  Netdev(kT0, 1, 0);
  Unplug(kT0, 0);
  for (int i = 0; i < 5; ++i) {
    Event(kT0 + seconds(1) + milliseconds(300 * i), false);
    Event(kT0 + seconds(1) + milliseconds(300 * i + 100), true);
  }
  Unplug(kT0 + seconds(3), 1);
  auto worst = Worst(kT0 + seconds(3));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->severity, Severity::kInfo);
  EXPECT_FALSE(worst->drain_eligible);
  EXPECT_FALSE(Worst(kT0 + seconds(3) + std::chrono::minutes(6))) << "maintenance over, no flap";
}

TEST_F(LinkFlapTest, restart_mid_flap_keeps_the_state) {
  Make({{"half-life", "10s"}});
  Netdev(kT0, 1, 0);
  for (int i = 0; i < 5; ++i) Event(kT0 + milliseconds(100 * i), false);
  ASSERT_EQ(Worst(kT0 + seconds(1))->severity, Severity::kCritical);
  const nlohmann::json saved = detector->SaveState();
  Make({{"half-life", "10s"}});
  StateLoadCheck check(kT0 + seconds(5));
  ASSERT_TRUE(detector->LoadState(saved, check).ok());
  auto worst = Worst(kT0 + seconds(5));
  ASSERT_TRUE(worst) << "restored penalty and history";
  EXPECT_EQ(worst->severity, Severity::kCritical);
  EXPECT_FALSE(detector->LoadState(nlohmann::json::parse(R"({"ports":{"x":{}}})"), check).ok());
}

TEST_F(LinkFlapTest, options_are_validated) {
  EXPECT_FALSE(MakeLinkFlapDetector({{"reuse", "3000"}}));
  EXPECT_FALSE(MakeLinkFlapDetector({{"hard-window", "0s"}}));
  auto bad = MakeLinkFlapDetector({{"hard-count", "many"}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("hard-count"), std::string::npos);
}

// A state file whose flap history lies ahead of the clock: before the check, two real flaps
// plus the "future" ones in the hard window raised a critical, drain-eligible hard-flapping
// finding (issue 19). The future times are dropped and counted; two flaps stay below hard-count.
TEST_F(LinkFlapTest, state_from_the_future_is_dropped) {
  Make();
  Netdev(kT0 + seconds(100), 1, 0);
  for (int i = 0; i < 4; ++i) Event(kT0 + seconds(100) + milliseconds(100 * i), false);
  const nlohmann::json saved = detector->SaveState();

  Make();
  StateLoadCheck check(kT0);  // the clock is 100 s behind the file
  ASSERT_TRUE(detector->LoadState(saved, check).ok());
  EXPECT_GE(check.dropped().at("future_timestamp"), 4u);
  Netdev(kT0, 1, 0);
  Event(kT0 + seconds(1), false);
  Event(kT0 + seconds(2), false);
  auto worst = Worst(kT0 + seconds(3));
  EXPECT_TRUE(!worst || worst->severity != Severity::kCritical) << worst->reason;
  EXPECT_TRUE(!worst || !worst->drain_eligible);
}

// Penalties outside [0, ceiling] (inf, NaN, huge, negative) and negative counts are dropped,
// never restored: "flap penalty inf" on every port before (issue 19). The ceiling is the
// detector's own: reuse × 2^(max-suppress / half-life) (docs/detection.md §2.2).
TEST_F(LinkFlapTest, out_of_range_penalties_and_counts_are_dropped) {
  Make();
  Netdev(kT0, 1, 0);
  Event(kT0 + seconds(1), false);
  const nlohmann::json good = detector->SaveState();
  ASSERT_EQ(good["ports"].size(), 1u);
  const std::string key = good["ports"].begin().key();
  for (const nlohmann::json& bad_value :
       {nlohmann::json(std::numeric_limits<double>::infinity()),
        nlohmann::json(std::numeric_limits<double>::quiet_NaN()), nlohmann::json(1e308),
        nlohmann::json(12001.0), nlohmann::json(-5.0), nlohmann::json("1000")}) {
    SCOPED_TRACE(bad_value.dump());
    nlohmann::json saved = good;
    saved["ports"][key]["penalty"]["value"] = bad_value;
    saved["ports"][key]["downs_total"] = -3;
    Make();
    StateLoadCheck check(kT0 + seconds(2));
    ASSERT_TRUE(detector->LoadState(saved, check).ok());
    EXPECT_EQ(check.dropped().at("out_of_range"), 2u) << "the penalty and the count";
    const nlohmann::json reloaded = detector->SaveState()["ports"][key];
    EXPECT_EQ(reloaded["penalty"]["value"].get<double>(), 0.0);
    EXPECT_EQ(reloaded["downs_total"].get<uint64_t>(), 0u);
    MetricSink sink;
    detector->Export(sink);
    for (const auto& family : sink.TakeFamilies()) {
      for (const auto& metric : family.metric) {
        EXPECT_TRUE(std::isfinite(metric.gauge.value)) << family.name;
      }
    }
  }
  // At the ceiling itself: restored.
  nlohmann::json at_ceiling = good;
  at_ceiling["ports"][key]["penalty"]["value"] = 12000.0;
  Make();
  StateLoadCheck check(kT0 + seconds(2));
  ASSERT_TRUE(detector->LoadState(at_ceiling, check).ok());
  EXPECT_EQ(check.total_dropped(), 0u);
}

}  // namespace
}  // namespace fabricwatch::detect

namespace fabricwatch::detect {
namespace {

double EvidenceOf(const Finding& f, const std::string& name) {
  for (const Evidence& e : f.evidence) {
    if (e.name == name) return e.value;
  }
  return -1;
}

// IB micro-flaps (issue 22 item 2): link_error_recovery grows while the port stays ACTIVE.
// Samples every 10 s; a recovery at +60 s, +120 s and +180 s: the third raises the warning (3 in
// 10 m), and it clears when the first leaves the window (+60 s + 10 m).
TEST_F(LinkFlapTest, micro_flaps_raise_a_warning_that_clears_after_the_window) {
  Make();
  uint64_t recoveries = 7;  // whatever the port counted before we started
  std::optional<TimePoint> raised, cleared;
  for (int s = 0; s <= 1200; s += 10) {
    const TimePoint t = kT0 + seconds(s);
    if (s == 60 || s == 120 || s == 180) ++recoveries;
    Ib(t, 4, 1, static_cast<double>(recoveries));
    auto worst = Worst(t);
    if (worst && !raised) {
      raised = t;
      EXPECT_EQ(worst->severity, Severity::kWarning);
      EXPECT_FALSE(worst->drain_eligible);
      EXPECT_EQ(worst->entity, (EntityLabels{{"device", "mlx5_0"}, {"port", "1"}}));
      EXPECT_EQ(worst->value, 3);
      EXPECT_EQ(EvidenceOf(*worst, "micro_window_flaps"), 3);
      EXPECT_NE(worst->reason.find("3 micro-flaps"), std::string::npos) << worst->reason;
    }
    if (!worst && raised && !cleared) cleared = t;
  }
  ASSERT_TRUE(raised);
  EXPECT_EQ(*raised, kT0 + seconds(180)) << "on the sample that shows the third";
  ASSERT_TRUE(cleared);
  EXPECT_EQ(*cleared, kT0 + seconds(660)) << "the first leaves the 10 m window";
}

TEST_F(LinkFlapTest, one_recovery_a_reset_and_saturation_raise_no_micro_flap) {
  Make();
  TimePoint t = kT0;
  Ib(t, 4, 1, 200);
  for (int i = 1; i <= 180; ++i) {  // 30 min at 10 s
    t = kT0 + seconds(10 * i);
    // 200 before we started, one recovery at +100 s, a counter reset (driver reload: 201 -> 0)
    // at +600 s, saturated (255: untrusted) from +1200 s.
    const double value = i < 10 ? 200 : i < 60 ? 201 : i < 120 ? 0 : 255;
    Ib(t, 4, 1, value);
    EXPECT_FALSE(Worst(t)) << "at +" << 10 * i << " s: " << Worst(t)->reason;
  }
}

// A down the port state showed is one down (link_downed confirms it within match-window),
// never a micro-flap too; a link_downed increment the state never showed is one.
TEST_F(LinkFlapTest, a_seen_outage_is_not_counted_as_a_micro_flap) {
  // Flap rules out of the way: slow-count high, a tiny penalty.
  Make({{"slow-count", "100"}, {"penalty-per-down", "1"}});
  Ib(kT0, 4, 1, 0);
  Ib(kT0 + seconds(10), 4, 1, 1);  // two retrains
  Ib(kT0 + seconds(20), 4, 1, 2);
  // A real outage: the state shows it down, link_downed counts it in the same sample.
  Ib(kT0 + seconds(30), 1, 2, 2);
  Ib(kT0 + seconds(31), 4, 2, 2);
  // Another where the counter leads the state by one sample (read order).
  Ib(kT0 + seconds(40), 4, 3, 2);
  Ib(kT0 + seconds(41), 1, 3, 2);
  for (int s = 42; s <= 60; ++s) {
    Ib(kT0 + seconds(s), 4, 3, 2);
    auto worst = Worst(kT0 + seconds(s));
    EXPECT_FALSE(worst) << "at +" << s << " s: " << worst->reason;
  }
  // A down and up between two samples: the state never leaves ACTIVE, link_downed grows.
  Ib(kT0 + seconds(70), 4, 4, 2);
  // Judged once match-window (5 s) passed without the state showing it.
  EXPECT_FALSE(Worst(kT0 + seconds(72)));
  Ib(kT0 + seconds(76), 4, 4, 2);
  auto worst = Worst(kT0 + seconds(76));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->severity, Severity::kWarning);
  EXPECT_EQ(EvidenceOf(*worst, "micro_window_flaps"), 3) << worst->reason;
}

// Micro-flapping that holds for micro-flap-escalate-after (30 m) is critical, not drained;
// a restart keeps the window and when the warning began.
TEST_F(LinkFlapTest, persistent_micro_flaps_escalate_to_critical) {
  Make();
  double recoveries = 0;
  std::optional<TimePoint> warning, critical;
  for (int s = 0; s <= 3000; s += 10) {
    const TimePoint t = kT0 + seconds(s);
    if (s > 0 && s % 120 == 0) ++recoveries;  // one retrain every 2 min
    Ib(t, 4, 1, recoveries);
    auto worst = Worst(t);
    if (s == 1500) {
      const nlohmann::json saved = detector->SaveState();
      Make();
      StateLoadCheck check(t);
      ASSERT_TRUE(detector->LoadState(saved, check).ok());
      Ib(t, 4, 1, recoveries);
    }
    if (!worst) continue;
    if (!warning) warning = t;
    if (worst->severity == Severity::kCritical && !critical) {
      critical = t;
      EXPECT_FALSE(worst->drain_eligible);
      EXPECT_NE(worst->reason.find("persisting"), std::string::npos) << worst->reason;
    }
  }
  ASSERT_TRUE(warning);
  EXPECT_EQ(*warning, kT0 + seconds(360)) << "the third retrain";
  ASSERT_TRUE(critical);
  EXPECT_EQ(*critical, *warning + std::chrono::minutes(30));
}

TEST_F(LinkFlapTest, micro_flap_options_are_validated) {
  EXPECT_FALSE(MakeLinkFlapDetector({{"micro-flap-count", "0"}}));
  EXPECT_FALSE(MakeLinkFlapDetector({{"micro-flap-window", "0s"}}));
  EXPECT_FALSE(MakeLinkFlapDetector({{"micro-flap-escalate-after", "soon"}}));
  EXPECT_TRUE(MakeLinkFlapDetector({{"micro-flap-count", "5"}, {"micro-flap-window", "1h"}}));
}

// Issue 23: the kernel log names the cause of a finding, and a "Cable unplugged" line alone
// (no ethtool unplug counter) is maintenance.
class LinkFlapKernelLogTest : public LinkFlapTest {
 protected:
  void Log(TimePoint t, const std::string& event, const std::string& text,
           const std::string& netdev = "eth0") {
    static const std::vector<prometheus::MetricFamily> kNone;
    std::vector<LogEvent> events{LogEvent{event, "mlx5_0", netdev, 1, t, {{t, text}}}};
    detector->Observe(SnapshotView{"kmsg", t, kNone, events});
  }
};

TEST_F(LinkFlapKernelLogTest, link_down_lines_name_the_cause_of_a_hard_flap) {
  Make();
  Netdev(kT0, 1, 0);
  for (int i = 0; i < 5; ++i) {
    const TimePoint down = kT0 + seconds(1) + milliseconds(400 * i);
    Event(down, false);
    Log(down, "link_down", "mlx5_core 0000:3b:00.0 eth0: Link down");
    Log(down, "module_high_temperature",
        "mlx5_core 0000:3b:00.0: Port module event[error]: module 0, Cable error, High "
        "Temperature");
    Event(down + milliseconds(200), true);
  }
  auto worst = Worst(kT0 + seconds(3));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->severity, Severity::kCritical);
  EXPECT_NE(worst->reason.find("cause: module error (module_high_temperature) (kernel log)"),
            std::string::npos)
      << worst->reason;
  EXPECT_EQ(worst->log.size(), kMaxLogLinesPerEvent);
  // Lines of another netdev are not this one's cause.
  Make();
  Netdev(kT0, 1, 0);
  for (int i = 0; i < 5; ++i) {
    Event(kT0 + seconds(1) + milliseconds(400 * i), false);
    Log(kT0 + seconds(1), "module_unplugged", "Cable unplugged", "eth9");
    Event(kT0 + seconds(1) + milliseconds(400 * i + 200), true);
  }
  worst = Worst(kT0 + seconds(3));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->reason.find("cause:"), std::string::npos) << worst->reason;
  EXPECT_TRUE(worst->log.empty());
}

TEST_F(LinkFlapKernelLogTest, a_cable_unplugged_line_is_maintenance) {
  Make();
  Netdev(kT0, 1, 0);
  Log(kT0 + seconds(1), "module_unplugged",
      "mlx5_core 0000:3b:00.0: Port module event: module 0, Cable unplugged");
  for (int i = 0; i < 5; ++i) {
    Event(kT0 + seconds(1) + milliseconds(300 * i), false);
    Event(kT0 + seconds(1) + milliseconds(300 * i + 100), true);
  }
  auto worst = Worst(kT0 + seconds(3));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->severity, Severity::kInfo);
  EXPECT_FALSE(worst->drain_eligible);
  EXPECT_NE(worst->reason.find("cause: module unplugged"), std::string::npos) << worst->reason;
}

}  // namespace
}  // namespace fabricwatch::detect
