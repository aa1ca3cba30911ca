// config_drift's ib_mtu check (issue 34): the active IB MTU of an RDMA port against ib-mtu or
// the ACTIVE ports of the same link layer; the finding names device, port and the joined netdev.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "base/metric_sink.h"
#include "collectors/netdev/netdev_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "detectors/config_drift/config_drift.h"
#include "detectors/config_drift/config_drift_metrics.h"
#include "detectors/core/snapshot_lookup.h"
#include "tests/unit/detectors/scenario.h"

namespace fabricwatch::detect {
namespace {

using testing::FindingLog;
using testing::SnapshotBuilder;
using testing::T0;

struct RdmaPort {
  std::string device;
  std::string netdev;  // "" for an IB port without IPoIB
  std::string link_layer = "Ethernet";
  int state = 4;  // ACTIVE
  int active_mtu = 4096;
  int max_mtu = 4096;
  int netdev_mtu = 9000;
};

// n RoCE ports rxe0..rxe<n-1> on veth0..veth<n-1>, as the rxe guest runs them.
std::vector<RdmaPort> Roce(int n) {
  std::vector<RdmaPort> ports;
  for (int i = 0; i < n; ++i) {
    ports.push_back({.device = "rxe" + std::to_string(i), .netdev = "veth" + std::to_string(i)});
  }
  return ports;
}

void Feed(FindingLog& log, const std::vector<RdmaPort>& ports) {
  SnapshotBuilder rdma, netdev;
  for (const RdmaPort& p : ports) {
    rdma.Gauge(rdma::kPortInfo,
               {{"device", p.device},
                {"port", "1"},
                {"link_layer", p.link_layer},
                {"netdev", p.netdev},
                {"speed", ""}},
               1);
    rdma.Gauge(rdma::kPortState, {{"device", p.device}, {"port", "1"}}, p.state);
    rdma.Gauge(rdma::kPortActiveMtu, {{"device", p.device}, {"port", "1"}}, p.active_mtu);
    rdma.Gauge(rdma::kPortMaxMtu, {{"device", p.device}, {"port", "1"}}, p.max_mtu);
    if (!p.netdev.empty()) netdev.Gauge(netdev::kMtu, {{"netdev", p.netdev}}, p.netdev_mtu);
  }
  log.Feed("rdma", T0(), rdma);
  log.Feed("netdev", T0(), netdev);
}

std::unique_ptr<Detector> Make(DetectorOptions options = {}) {
  options["hold-for"] = "0s";
  options["clear-for"] = "0s";
  auto made = MakeConfigDriftDetector(options);
  EXPECT_TRUE(made.has_value()) << made.error().ToString();
  return std::move(*made);
}

std::string Keys(const FindingLog& log) {
  std::string out;
  for (const auto& [key, finding] : log.active()) out += key + "\n";
  return out;
}

TEST(ConfigDriftIbMtuTest, OneVethAt1500AmongSiblingsAt9000) {
  // rxe_net.c: a netdev MTU of 1500 gives an active IB MTU of 1024, 9000 gives 4096.
  auto detector = Make();
  FindingLog log(*detector);
  auto ports = Roce(4);
  ports[2].netdev_mtu = 1500;
  ports[2].active_mtu = 1024;
  Feed(log, ports);
  const std::string key = "warning{device=rxe2,port=1,netdev=veth2,setting=ib_mtu}";
  ASSERT_TRUE(log.Active(key)) << Keys(log);
  const Finding& f = log.active().at(key);
  EXPECT_EQ(f.value, 1024);
  EXPECT_EQ(f.reason,
            "rxe2 port 1 (veth2): active IB MTU 1024 (max 4096), expected 4096 from siblings "
            "(3 of 4 ports); on RoCE it follows the netdev MTU, veth2 runs 1500");
  // The netdev MTU drifts too: one finding per setting.
  EXPECT_TRUE(log.Active("warning{netdev=veth2,setting=mtu}")) << Keys(log);
  EXPECT_EQ(log.active().size(), 2u) << Keys(log);

  MetricSink sink;
  detector->Export(sink);
  std::map<std::pair<std::string, std::string>, double> cells;
  for (const auto& family : sink.TakeFamilies()) {
    if (family.name != config_drift::kDrifted.name) continue;
    for (const auto& m : family.metric) {
      cells[{std::string(Label<config_drift::kDrifted>(m, "subject")),
             std::string(Label<config_drift::kDrifted>(m, "setting"))}] = m.gauge.value;
    }
  }
  EXPECT_EQ((cells[{"rxe2/1", "ib_mtu"}]), 1);
  EXPECT_EQ((cells[{"rxe0/1", "ib_mtu"}]), 0);
}

TEST(ConfigDriftIbMtuTest, AConfiguredExpectationOverridesTheSiblings) {
  auto detector = Make({{"ib-mtu", "2048"}});
  FindingLog log(*detector);
  Feed(log, Roce(2));
  for (const char* device : {"rxe0", "rxe1"}) {
    const std::string key = "warning{device=" + std::string(device) + ",port=1,netdev=veth" +
                            device[3] + ",setting=ib_mtu}";
    ASSERT_TRUE(log.Active(key)) << Keys(log);
    EXPECT_NE(log.active().at(key).reason.find("expected 2048 from the configuration"),
              std::string::npos);
  }

  // Above what the port supports: the reason says so. An IB port has no netdev label.
  auto high = Make({{"ib-mtu", "4096"}});
  FindingLog ib(*high);
  Feed(ib, {{.device = "mlx5_0",
             .netdev = "",
             .link_layer = "InfiniBand",
             .active_mtu = 2048,
             .max_mtu = 2048}});
  const std::string key = "warning{device=mlx5_0,port=1,setting=ib_mtu}";
  ASSERT_TRUE(ib.Active(key)) << Keys(ib);
  EXPECT_EQ(ib.active().at(key).reason,
            "mlx5_0 port 1: active IB MTU 2048 (max 2048), expected 4096 from the "
            "configuration; the port supports at most 2048");
}

TEST(ConfigDriftIbMtuTest, DownPortsAndOtherLinkLayersAreNoSiblings) {
  auto detector = Make();
  FindingLog log(*detector);
  // Two IB ports at 4096 and three RoCE ports at 1024: each group agrees within itself.
  std::vector<RdmaPort> ports = Roce(3);
  for (RdmaPort& p : ports) p.active_mtu = 1024, p.netdev_mtu = 1500;
  for (const char* device : {"mlx5_4", "mlx5_5"}) {
    ports.push_back({.device = device, .netdev = "", .link_layer = "InfiniBand"});
  }
  // A down port reports no negotiated MTU worth comparing.
  ports.push_back({.device = "mlx5_6",
                   .netdev = "",
                   .link_layer = "InfiniBand",
                   .state = 1,
                   .active_mtu = 256});
  Feed(log, ports);
  EXPECT_TRUE(log.active().empty()) << Keys(log);

  // A lone port has no siblings.
  auto lone = Make();
  FindingLog one(*lone);
  Feed(one, {{.device = "rxe0", .netdev = "veth0", .active_mtu = 1024}});
  EXPECT_TRUE(one.active().empty()) << Keys(one);
}

TEST(ConfigDriftIbMtuTest, TheOptionTakesAnIbaMtuOnly) {
  for (const char* value : {"1000", "4097", "128", "9000", "big"}) {
    auto made = MakeConfigDriftDetector({{"ib-mtu", value}});
    ASSERT_FALSE(made.has_value()) << value;
    EXPECT_NE(made.error().message().find("ib-mtu"), std::string::npos) << made.error().message();
  }
  for (const char* value : {"auto", "256", "1024", "4096"}) {
    EXPECT_TRUE(MakeConfigDriftDetector({{"ib-mtu", value}}).has_value()) << value;
  }
}

}  // namespace
}  // namespace fabricwatch::detect
