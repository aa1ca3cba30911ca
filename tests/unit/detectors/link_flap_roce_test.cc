// link_flap on a RoCE port (issue 34, soft-RoCE in a guest: `rdma link add rxe0 type rxe netdev
// veth0`, the peer veth flapped): the finding names the RDMA port and the netdev, says which
// sources saw the downs, and libibverbs port_err events confirm the netlink downs instead of
// adding to them.
#include <gtest/gtest.h>

#include "collectors/netdev/netdev_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/sys/link_events.h"
#include "detectors/link_flap/link_flap.h"
#include "tests/testing/families.h"

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
  void Feed(std::string_view collector, TimePoint t, const Families& f) {
    detector->Observe(SnapshotView{collector, t, f.families()});
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

  // `rdma link delete rxe0`: the rdma sample no longer has the port; the netdev still flaps on
  // its own, and its finding names only the netdev.
  const TimePoint deleted = kT0 + seconds(7);
  Rdma(deleted, std::nullopt);
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

}  // namespace
}  // namespace fabricwatch::detect
