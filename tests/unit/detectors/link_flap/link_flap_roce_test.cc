// link_flap on a RoCE port (issue 34, soft-RoCE in a guest: `rdma link add rxe0 type rxe netdev
// veth0`, the peer veth flapped): the finding names the RDMA port and the netdev, says which
// sources saw the downs, and libibverbs port_err events confirm the netlink downs instead of
// adding to them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectors/netdev/netdev_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/sys/link_events.h"
#include "detectors/link_flap/link_flap.h"
#include "tests/testing/families.h"
#include "tests/unit/detectors/detector_feed.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Families;
const TimePoint kT0 = TimePoint(seconds(1'700'000'000));

class LinkFlapRoceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = MakeLinkFlapDetector({});
    ASSERT_TRUE(made) << made.error().message();
    detector = std::move(*made);
  }
  void Netdev(TimePoint t, int carrier) {
    Families f;
    f.Gauge(netdev::kOperState, {{"netdev", "veth0"}}, carrier ? 6 : 2);
    f.Gauge(netdev::kCarrier, {{"netdev", "veth0"}}, carrier);
    f.Counter(netdev::kCarrierDown, {{"netdev", "veth0"}}, 0);
    Feed("netdev", t, f);
  }
  // The rdma collector's sample: rxe0 port 1 on veth0 (absent once `rdma link delete`d), or an
  // IB port mlx5_0/1 when `ib`.
  void Rdma(TimePoint t, std::optional<double> port_err, bool ib = false, int state = 4) {
    Families f;
    if (port_err) {
      const std::string device = ib ? "mlx5_0" : "rxe0";
      f.Gauge(rdma::kPortInfo,
              {{"device", device},
               {"port", "1"},
               {"link_layer", ib ? "InfiniBand" : "Ethernet"},
               {"netdev", ib ? "" : "veth0"},
               {"speed", ib ? "NDR" : "EDR"}},
              1);
      f.Gauge(rdma::kPortState, {{"device", device}, {"port", "1"}}, state);
      f.Counter(rdma::kPortEvents, {{"device", device}, {"port", "1"}, {"event", "port_err"}},
                *port_err);
      f.Counter(rdma::kPortEvents, {{"device", device}, {"port", "1"}, {"event", "port_active"}},
                *port_err);
    }
    Feed("rdma", t, f);
  }
  // One RDMA port of an rdma sample, for the cases the helper above does not cover.
  struct Port {
    std::string device{};
    std::string netdev{};  // empty: an IB port
    double port_err = 0;
    double link_downed = 0;
    int state = 4;
  };
  // An rdma sample of `ports`; without fabric_rdma_port_info when !info (a failed collection).
  void RdmaPorts(TimePoint t, const std::vector<Port>& ports, bool info = true) {
    Families f;
    for (const Port& p : ports) {
      const bool ib = p.netdev.empty();
      if (info) {
        f.Gauge(rdma::kPortInfo,
                {{"device", p.device},
                 {"port", "1"},
                 {"link_layer", ib ? "InfiniBand" : "Ethernet"},
                 {"netdev", p.netdev},
                 {"speed", ib ? "NDR" : "EDR"}},
                1);
      }
      f.Gauge(rdma::kPortState, {{"device", p.device}, {"port", "1"}}, p.state);
      if (ib) f.Counter(rdma::kLinkDowned, {{"device", p.device}, {"port", "1"}}, p.link_downed);
      f.Counter(rdma::kPortEvents, {{"device", p.device}, {"port", "1"}, {"event", "port_err"}},
                p.port_err);
    }
    Feed("rdma", t, f);
  }
  void Feed(std::string_view collector, TimePoint t, const Families& f) {
    feed(*detector, collector, t, f.families());
  }
  void Event(TimePoint t, bool up) {
    sys::LinkEvent event;
    event.time = t;
    event.netdev = "veth0";
    event.carrier_up = up;
    detector->OnLinkEvents({event});
  }
  std::optional<Finding> Worst(TimePoint now) {
    std::optional<Finding> worst;
    for (Finding& f : detector->Evaluate(now)) {
      if (!worst || f.severity > worst->severity) worst = f;
    }
    return worst;
  }
  std::unique_ptr<Detector> detector;
  testing::DetectorFeed feed;
};

TEST_F(LinkFlapRoceTest, a_roce_flap_names_the_rdma_port_and_the_netdev_and_its_sources) {
  Netdev(kT0, 1);
  Rdma(kT0, 0);
  EXPECT_FALSE(Worst(kT0));
  // Six flaps, as in the guest: netlink carrier down/up on veth0, and the listener's port_err
  // for rxe0 port 1 reaching the rdma collector (woken at once) 50 ms later.
  std::optional<Finding> worst;
  for (int i = 0; i < 6; ++i) {
    const TimePoint down = kT0 + seconds(1) + milliseconds(800 * i);
    Event(down, false);
    Rdma(down + milliseconds(50), i + 1, false, 1);
    Event(down + milliseconds(300), true);
    Rdma(down + milliseconds(350), i + 1);
    worst = Worst(down + milliseconds(400));
  }
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->severity, Severity::kCritical);
  EXPECT_EQ(worst->entity, (EntityLabels{{"device", "rxe0"}, {"port", "1"}, {"netdev", "veth0"}}));
  // One down per flap, seen by both sources: the verbs events confirm, they do not add.
  EXPECT_EQ(worst->value, 6);
  EXPECT_NE(worst->reason.find("device=rxe0 port=1 netdev=veth0: hard flapping, 6 link-down "
                               "events in the last 10s (>= 5; seen by netlink carrier events "
                               "6/6, verbs port_err events 6/6)"),
            std::string::npos)
      << worst->reason;

  // `rdma link delete rxe0`: the rdma sample's port_info no longer has the port (another
  // device's is there); the netdev still flaps on its own, and its finding names only the
  // netdev. (A sample without port_info at all says nothing, see below.)
  const TimePoint deleted = kT0 + seconds(7);
  RdmaPorts(deleted, {{.device = "rxe1", .netdev = "veth1"}});
  worst = Worst(deleted);
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->entity, (EntityLabels{{"netdev", "veth0"}}));
  // Re-added: its counters start again from 0, which is no down.
  Rdma(deleted + seconds(1), 0);
  Rdma(deleted + seconds(2), 0);
  worst = Worst(deleted + seconds(2));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->value, 6);
}

TEST_F(LinkFlapRoceTest, ib_port_err_events_confirm_the_polled_state_and_see_short_downs) {
  Rdma(kT0, 0, /*ib=*/true, 4);
  EXPECT_FALSE(Worst(kT0));
  // Three downs the state poll saw (port_err woke the collector, the state is DOWN), two that
  // were over before the sample (only the verbs event saw them).
  double errors = 0;
  for (int i = 0; i < 5; ++i) {
    const TimePoint t = kT0 + seconds(1) + milliseconds(1500 * i);
    errors += 1;
    Rdma(t, errors, true, i < 3 ? 1 : 4);
    Rdma(t + milliseconds(700), errors, true, 4);
  }
  auto worst = Worst(kT0 + seconds(8));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->severity, Severity::kCritical);
  EXPECT_EQ(worst->entity, (EntityLabels{{"device", "mlx5_0"}, {"port", "1"}}));
  EXPECT_EQ(worst->value, 5);
  EXPECT_NE(worst->reason.find("seen by IB port state (sysfs polling) 3/5, verbs port_err "
                               "events 5/5"),
            std::string::npos)
      << worst->reason;
}

// Two RDMA devices on one netdev (rxe refuses a second rxe on a netdev, -EEXIST, but siw takes
// the same veth): each has its own port_err counter, and each gets a port_err for the same
// carrier down. Counted per port: every down is booked once, also when one port's event reaches
// a later sample; a deleted device books no phantom downs; the lowest port names the finding
// whatever the sample's order.
TEST_F(LinkFlapRoceTest, two_rdma_ports_on_one_netdev_each_count_their_own_port_err) {
  const EntityLabels rxe0{{"device", "rxe0"}, {"port", "1"}, {"netdev", "veth0"}};
  Netdev(kT0, 1);
  // siw0's counter is far ahead of rxe0's (it was added earlier), and listed first.
  auto both = [&](TimePoint t, double siw, double rxe, int state = 4) {
    RdmaPorts(t, {{.device = "siw0", .netdev = "veth0", .port_err = siw, .state = state},
                  {.device = "rxe0", .netdev = "veth0", .port_err = rxe, .state = state}});
  };
  both(kT0, 40, 2);
  EXPECT_FALSE(Worst(kT0));
  std::optional<Finding> worst;
  for (int i = 1; i <= 4; ++i) {
    const TimePoint down = kT0 + seconds(1) + milliseconds(800 * i);
    Event(down, false);
    both(down + milliseconds(50), 40 + i, 2 + i, 1);
    Event(down + milliseconds(300), true);
    worst = Worst(down + milliseconds(400));
  }
  // Downs only the verbs events saw (the netlink events lost): one whose port_err reached
  // rxe0's counter a sample before siw0's, and one only rxe0 (listed second) counted.
  const TimePoint verbs_only = kT0 + seconds(5);
  both(verbs_only, 44, 7);
  both(verbs_only + milliseconds(100), 45, 7);
  both(verbs_only + milliseconds(900), 45, 8);
  worst = Worst(verbs_only + milliseconds(900));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->severity, Severity::kCritical);
  EXPECT_EQ(worst->entity, rxe0);
  EXPECT_EQ(worst->value, 6);
  EXPECT_NE(worst->reason.find("6 link-down events in the last 10s (>= 5; seen by netlink "
                               "carrier events 4/6, verbs port_err events 6/6)"),
            std::string::npos)
      << worst->reason;
  // `rdma link delete siw0`: rxe0's count (behind siw0's) is no reset of a shared counter, so
  // no phantom down, and rxe0 still names the netdev.
  const TimePoint deleted = kT0 + seconds(7);
  RdmaPorts(deleted, {{.device = "rxe0", .netdev = "veth0", .port_err = 8}});
  RdmaPorts(deleted + milliseconds(500), {{.device = "rxe0", .netdev = "veth0", .port_err = 8}});
  worst = Worst(deleted + milliseconds(500));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->entity, rxe0);
  EXPECT_EQ(worst->value, 6);
  // siw0 re-added: its counter starts again (from 0), which is no down; the next down, seen by
  // both, is one.
  both(deleted + seconds(1), 0, 8);
  both(deleted + milliseconds(1500), 1, 9);
  worst = Worst(deleted + milliseconds(1500));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->entity, rxe0);
  EXPECT_EQ(worst->value, 7);
}

TEST_F(LinkFlapRoceTest, a_deleted_port_does_not_lower_the_downs_booked) {
  // Issue 34 review: rxe0 saw 6 downs and siw0's 6th port_err had not reached its counter when
  // rxe0 was deleted. Forgetting rxe0 lowered the booked downs to siw0's 5, and siw0's late
  // event booked the 6th down a second time.
  Netdev(kT0, 1);
  auto both = [&](TimePoint t, double siw, double rxe) {
    RdmaPorts(t, {{.device = "siw0", .netdev = "veth0", .port_err = siw},
                  {.device = "rxe0", .netdev = "veth0", .port_err = rxe}});
  };
  auto siw = [&](TimePoint t, double port_err) {
    RdmaPorts(t, {{.device = "siw0", .netdev = "veth0", .port_err = port_err}});
  };
  both(kT0, 0, 0);
  for (int i = 1; i <= 5; ++i) both(kT0 + milliseconds(800 * i), i, i);
  both(kT0 + seconds(5), 5, 6);
  std::optional<Finding> worst = Worst(kT0 + seconds(5));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->value, 6);
  // `rdma link delete rxe0`, then siw0's late port_err: the same 6th down.
  siw(kT0 + seconds(6), 5);
  siw(kT0 + milliseconds(6500), 6);
  worst = Worst(kT0 + milliseconds(6500));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->value, 6);
  EXPECT_NE(worst->reason.find("verbs port_err events 6/6"), std::string::npos) << worst->reason;
  // The next down siw0 sees is one.
  siw(kT0 + seconds(7), 7);
  worst = Worst(kT0 + seconds(7));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->value, 7);
  // siw0 replaced by rxe1: no port is left to lag behind, and rxe1's first port_err is one down.
  RdmaPorts(kT0 + seconds(8), {{.device = "rxe1", .netdev = "veth0", .port_err = 0}});
  RdmaPorts(kT0 + milliseconds(8500), {{.device = "rxe1", .netdev = "veth0", .port_err = 1}});
  worst = Worst(kT0 + milliseconds(8500));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->value, 8);
}

double EvidenceOr(const Finding& finding, std::string_view name, double fallback) {
  for (const Evidence& e : finding.evidence) {
    if (e.name == name) return e.value;
  }
  return fallback;
}

// An IB bounce over before the woken sample reads the state: link_downed and the verbs port_err
// see it, the state does not. The port_err confirms the link_downed down: one down, never also a
// micro-flap once match-window has passed, whichever source the samples show first.
TEST_F(LinkFlapRoceTest, a_quick_bounce_seen_by_link_downed_and_port_err_is_booked_once) {
  RdmaPorts(kT0, {{.device = "mlx5_0"}});
  // Two bounces with both counters in one sample (link_downed is read before the events).
  RdmaPorts(kT0 + seconds(1), {{.device = "mlx5_0", .port_err = 1, .link_downed = 1}});
  RdmaPorts(kT0 + seconds(2), {{.device = "mlx5_0", .port_err = 2, .link_downed = 2}});
  // One whose port_err reached a sample before link_downed did.
  RdmaPorts(kT0 + seconds(3), {{.device = "mlx5_0", .port_err = 3, .link_downed = 2}});
  RdmaPorts(kT0 + seconds(4), {{.device = "mlx5_0", .port_err = 3, .link_downed = 3}});
  // Past match-window: the link_downed downs are judged.
  const TimePoint now = kT0 + seconds(20);
  RdmaPorts(now, {{.device = "mlx5_0", .port_err = 3, .link_downed = 3}});
  std::optional<Finding> worst = Worst(now);
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->severity, Severity::kWarning);
  EXPECT_EQ(EvidenceOr(*worst, "slow_window_down_events", -1), 3);
  EXPECT_EQ(EvidenceOr(*worst, "micro_window_flaps", 0), 0) << worst->reason;
  EXPECT_EQ(worst->reason.find("micro-flaps"), std::string::npos) << worst->reason;
  EXPECT_NE(worst->reason.find("seen by link_downed (sysfs polling) 3/3, verbs port_err events "
                               "3/3"),
            std::string::npos)
      << worst->reason;
}

// A counter delta of 3 books three downs at one sample time; the one netlink event that follows
// confirms one of them, and the evidence says so (not 3/3).
TEST_F(LinkFlapRoceTest, one_netlink_event_confirms_one_of_a_delta_of_downs) {
  Netdev(kT0, 1);
  RdmaPorts(kT0, {{.device = "rxe0", .netdev = "veth0"}});
  const TimePoint t = kT0 + seconds(1);
  RdmaPorts(t, {{.device = "rxe0", .netdev = "veth0", .port_err = 3}});
  Event(t + milliseconds(10), false);
  Event(t + milliseconds(20), true);
  std::optional<Finding> worst = Worst(t + seconds(1));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->severity, Severity::kWarning);
  EXPECT_EQ(EvidenceOr(*worst, "slow_window_down_events", -1), 3);
  EXPECT_NE(worst->reason.find("3 link-down events in the last 6h (>= 2; seen by netlink carrier "
                               "events 1/3, verbs port_err events 3/3)"),
            std::string::npos)
      << worst->reason;
}

// An rdma sample without fabric_rdma_port_info (a failed or partial collection) mid-episode: the
// finding keeps its name (and identity), the RoCE port does not become an IB port, and its
// port_err counter keeps its baseline (a down seen only by it is still counted).
TEST_F(LinkFlapRoceTest, an_rdma_sample_without_port_info_keeps_the_finding_labels) {
  Netdev(kT0, 1);
  Rdma(kT0, 0);
  std::optional<Finding> worst;
  for (int i = 0; i < 6; ++i) {
    const TimePoint down = kT0 + seconds(1) + milliseconds(800 * i);
    Event(down, false);
    Rdma(down + milliseconds(50), i + 1, false, 1);
    Event(down + milliseconds(300), true);
    Rdma(down + milliseconds(350), i + 1);
    worst = Worst(down + milliseconds(400));
  }
  ASSERT_TRUE(worst);
  const EntityLabels named{{"device", "rxe0"}, {"port", "1"}, {"netdev", "veth0"}};
  EXPECT_EQ(worst->entity, named);
  const TimePoint failed = kT0 + seconds(6);
  Feed("rdma", failed, Families());  // the collection failed: nothing at all
  std::vector<Finding> findings = detector->Evaluate(failed);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].entity, named);
  // Partial: the port's state and events, not its info. The port is still the netdev's.
  RdmaPorts(failed + milliseconds(500), {{.device = "rxe0", .netdev = "veth0", .port_err = 6}},
            /*info=*/false);
  findings = detector->Evaluate(failed + milliseconds(500));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].entity, named);
  EXPECT_EQ(findings[0].value, 6);
  // A down only the verbs listener saw, right after: counted against the kept baseline.
  RdmaPorts(failed + seconds(1), {{.device = "rxe0", .netdev = "veth0", .port_err = 7}});
  worst = Worst(failed + seconds(1));
  ASSERT_TRUE(worst);
  EXPECT_EQ(worst->entity, named);
  EXPECT_EQ(worst->value, 7);
}

}  // namespace
}  // namespace fabricwatch::detect
