// config_drift: each setting against the configuration, the sibling majority and the traffic;
// hold and clear; healthy and unconfigured nodes quiet; options checked (issue 21).

#include "detectors/config_drift/config_drift.h"

#include <gtest/gtest.h>

#include <map>

#include "base/metric_sink.h"
#include "collectors/ethtool/ethtool_metrics.h"
#include "collectors/netdev/netdev_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/topology/topology_metrics.h"
#include "detectors/config_drift/config_drift_metrics.h"
#include "detectors/core/snapshot_lookup.h"
#include "tests/unit/detectors/scenario.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::seconds;
using testing::FindingLog;
using testing::SnapshotBuilder;
using testing::T0;

struct Port {
  std::string netdev;
  uint8_t pfc = 0x08;  // priority 3
  std::string trust = "dscp";
  std::string map = std::string(64, '0');
  double storm_timeout = 0.1;
  bool pause = false;
  bool ecn = true;
  int mtu = 9000;
  int traffic_priority = 3;
};

std::vector<Port> Ports(int n) {
  std::vector<Port> ports;
  for (int i = 0; i < n; ++i) {
    Port p;
    p.netdev = "enp" + std::to_string(i) + "s0np0";
    for (int dscp = 0; dscp < 64; ++dscp) p.map[dscp] = static_cast<char>('0' + dscp / 8);
    ports.push_back(p);
  }
  return ports;
}

void FeedPorts(FindingLog& log, TimePoint t, const std::vector<Port>& ports) {
  SnapshotBuilder rdma, netdev, ethtool;
  int i = 0;
  for (const Port& p : ports) {
    const std::string n = p.netdev;
    rdma.Gauge(rdma::kPortInfo,
               {{"device", "mlx5_" + std::to_string(i++)},
                {"port", "1"},
                {"link_layer", "Ethernet"},
                {"netdev", n},
                {"speed", "HDR"}},
               1);
    netdev.Gauge(netdev::kMtu, {{"netdev", n}}, p.mtu);
    for (int prio = 0; prio < 8; ++prio) {
      const std::string pr = std::to_string(prio);
      ethtool.Gauge(ethtool::kPfcEnabled, {{"netdev", n}, {"priority", pr}}, (p.pfc >> prio) & 1);
      ethtool.Counter(ethtool::kPrioBytes, {{"netdev", n}, {"priority", pr}, {"direction", "rx"}},
                      prio == p.traffic_priority ? 1e12 : (prio == 0 ? 1e6 : 0));
      if ((p.pfc >> prio) & 1) {
        for (const char* role : {"np", "rp"}) {
          ethtool.Gauge(ethtool::kEcnEnabled, {{"netdev", n}, {"priority", pr}, {"role", role}},
                        p.ecn ? 1 : 0);
        }
      }
    }
    ethtool.Gauge(ethtool::kQosTrust, {{"netdev", n}, {"trust", p.trust}}, 1);
    if (p.trust == "dscp") ethtool.Gauge(ethtool::kQosDscpMap, {{"netdev", n}, {"map", p.map}}, 1);
    ethtool.Gauge(ethtool::kPfcStormTimeout, {{"netdev", n}}, p.storm_timeout);
    for (const char* dir : {"rx", "tx"}) {
      ethtool.Gauge(ethtool::kPauseEnabled, {{"netdev", n}, {"direction", dir}}, p.pause ? 1 : 0);
    }
  }
  log.Feed("rdma", t, rdma);
  log.Feed("netdev", t, netdev);
  log.Feed("ethtool", t, ethtool);
}

std::unique_ptr<Detector> Make(DetectorOptions options = {}) {
  if (!options.contains("hold-for")) options["hold-for"] = "0s";
  if (!options.contains("clear-for")) options["clear-for"] = "0s";
  auto made = MakeConfigDriftDetector(options);
  EXPECT_TRUE(made.has_value()) << made.error().ToString();
  return std::move(*made);
}

std::string Keys(const FindingLog& log) {
  std::string out;
  for (const auto& [key, finding] : log.active()) out += key + "\n";
  return out;
}

TEST(ConfigDriftTest, AHealthyNodeAndAnUnconfiguredOneAreQuiet) {
  auto detector = Make();
  FindingLog log(*detector);
  FeedPorts(log, T0(), Ports(4));
  EXPECT_TRUE(log.active().empty()) << Keys(log);

  // No lossless intent: PFC off everywhere, storm prevention off, global pause on. Nothing about
  // PFC, ECN, storm prevention or global pause is expected of such a node.
  auto lossy = Ports(4);
  for (Port& p : lossy) p.pfc = 0, p.storm_timeout = 0, p.pause = true;
  auto other = Make();
  FindingLog quiet(*other);
  FeedPorts(quiet, T0(), lossy);
  EXPECT_TRUE(quiet.active().empty()) << Keys(quiet);
}

TEST(ConfigDriftTest, PfcOffOnOnePortIsHeldThenRaisedAndClearsWhenFixed) {
  auto detector = Make({{"hold-for", "30s"}, {"clear-for", "10s"}});
  FindingLog log(*detector);
  auto ports = Ports(4);
  ports[2].pfc = 0;
  const std::string key = "warning{netdev=enp2s0np0,priority=3,setting=pfc}";
  for (int s = 0; s <= 40; s += 5) FeedPorts(log, T0() + seconds(s), ports);
  ASSERT_TRUE(log.Active(key)) << Keys(log);
  EXPECT_EQ(*log.FirstRaise(key), T0() + seconds(30));
  EXPECT_EQ(log.active().size(), 1u) << Keys(log);
  const Finding& f = log.active().at(key);
  EXPECT_FALSE(f.drain_eligible);
  EXPECT_EQ(f.value, 0);
  EXPECT_NE(f.reason.find("PFC off on priority 3, expected on from siblings (3 of 4 ports)"),
            std::string::npos)
      << f.reason;
  ports[2].pfc = 0x08;
  for (int s = 45; s <= 60; s += 5) FeedPorts(log, T0() + seconds(s), ports);
  EXPECT_FALSE(log.Active(key));
  EXPECT_EQ(*log.LastClear(key), T0() + seconds(55));
}

TEST(ConfigDriftTest, PfcOnAPriorityTheSiblingsLeaveOff) {
  auto detector = Make();
  FindingLog log(*detector);
  auto ports = Ports(3);
  ports[0].pfc = 0x18;  // 3 and 4
  FeedPorts(log, T0(), ports);
  EXPECT_TRUE(log.Active("warning{netdev=enp0s0np0,priority=4,setting=pfc}")) << Keys(log);
  EXPECT_EQ(log.active().size(), 1u) << Keys(log);
}

TEST(ConfigDriftTest, ConfiguredRocePriorityAndTrafficDecideWhereSiblingsCannot) {
  // A lone port: no siblings. With roce-priority 3 configured, PFC on 4 instead is two findings.
  auto configured = Make({{"roce-priority", "3"}});
  FindingLog log(*configured);
  auto lone = Ports(1);
  lone[0].pfc = 0x10;
  FeedPorts(log, T0(), lone);
  EXPECT_TRUE(log.Active("warning{netdev=enp0s0np0,priority=3,setting=pfc}")) << Keys(log);
  EXPECT_TRUE(log.Active("warning{netdev=enp0s0np0,priority=4,setting=pfc}")) << Keys(log);
  EXPECT_NE(log.active().begin()->second.reason.find("configured roce-priority"),
            std::string::npos);

  // Without configuration, the priority that carries its RoCE traffic (3) is expected on.
  auto learned = Make();
  FindingLog by_traffic(*learned);
  FeedPorts(by_traffic, T0(), lone);
  EXPECT_TRUE(by_traffic.Active("warning{netdev=enp0s0np0,priority=3,setting=pfc}"))
      << Keys(by_traffic);
  EXPECT_EQ(by_traffic.active().size(), 1u) << Keys(by_traffic);

  // Two ports that disagree: no majority; the one whose traffic priority has PFC off is named.
  auto pair = Ports(2);
  pair[1].pfc = 0x10;
  auto two = Make();
  FindingLog split(*two);
  FeedPorts(split, T0(), pair);
  EXPECT_TRUE(split.Active("warning{netdev=enp1s0np0,priority=3,setting=pfc}")) << Keys(split);
  EXPECT_EQ(split.active().size(), 1u) << Keys(split);
}

TEST(ConfigDriftTest, EcnStormPreventionAndGlobalPause) {
  auto detector = Make();
  FindingLog log(*detector);
  auto ports = Ports(4);
  ports[0].ecn = false;
  ports[1].storm_timeout = 0;
  ports[2].storm_timeout = 8;
  ports[3].pause = true;
  FeedPorts(log, T0(), ports);
  EXPECT_TRUE(log.Active("warning{netdev=enp0s0np0,priority=3,role=np,setting=ecn}")) << Keys(log);
  EXPECT_TRUE(log.Active("warning{netdev=enp0s0np0,priority=3,role=rp,setting=ecn}"));
  EXPECT_TRUE(log.Active("warning{netdev=enp1s0np0,setting=storm_prevention}"));
  const Finding& slow = log.active().at("warning{netdev=enp2s0np0,setting=storm_prevention}");
  EXPECT_EQ(slow.value, 8);
  EXPECT_NE(slow.reason.find("8000 ms, expected at most 1000 ms"), std::string::npos)
      << slow.reason;
  EXPECT_TRUE(log.Active("warning{netdev=enp3s0np0,setting=global_pause}"));
  EXPECT_EQ(log.active().size(), 5u) << Keys(log);
}

TEST(ConfigDriftTest, TrustDscpMapAndMtu) {
  auto detector = Make();
  FindingLog log(*detector);
  auto ports = Ports(4);
  ports[0].trust = "pcp";
  ports[1].map[26] = '0';
  ports[2].mtu = 1500;
  FeedPorts(log, T0(), ports);
  EXPECT_TRUE(log.Active("warning{netdev=enp0s0np0,setting=trust}")) << Keys(log);
  const Finding& map = log.active().at("warning{netdev=enp1s0np0,setting=dscp_map}");
  EXPECT_NE(map.reason.find("DSCP 26 -> 0 (expected 3)"), std::string::npos) << map.reason;
  const Finding& mtu = log.active().at("warning{netdev=enp2s0np0,setting=mtu}");
  EXPECT_EQ(mtu.value, 1500);
  EXPECT_NE(mtu.reason.find("MTU 1500, expected 9000 from siblings (3 of 4 ports)"),
            std::string::npos);
  EXPECT_EQ(log.active().size(), 3u) << Keys(log);

  // The configuration overrides the siblings: every port at 9000 drifts from mtu: 4200.
  auto configured = Make({{"mtu", "4200"}, {"trust", "pcp"}});
  FindingLog all(*configured);
  FeedPorts(all, T0(), Ports(2));
  EXPECT_TRUE(all.Active("warning{netdev=enp0s0np0,setting=mtu}")) << Keys(all);
  EXPECT_TRUE(all.Active("warning{netdev=enp1s0np0,setting=trust}")) << Keys(all);
}

TEST(ConfigDriftTest, TheConfigurationMatrixIsExported) {
  auto detector = Make();
  FindingLog log(*detector);
  auto ports = Ports(3);
  ports[1].mtu = 1500;
  FeedPorts(log, T0(), ports);
  MetricSink sink;
  detector->Export(sink);
  EXPECT_EQ(sink.error_count(), 0u);
  std::map<std::pair<std::string, std::string>, double> cells;
  for (const auto& family : sink.TakeFamilies()) {
    if (family.name != config_drift::kDrifted.name) continue;
    for (const auto& m : family.metric) {
      cells[{std::string(Label<config_drift::kDrifted>(m, "subject")),
             std::string(Label<config_drift::kDrifted>(m, "setting"))}] = m.gauge.value;
    }
  }
  EXPECT_EQ((cells[{"enp1s0np0", "mtu"}]), 1);
  EXPECT_EQ((cells[{"enp0s0np0", "mtu"}]), 0);
  EXPECT_EQ((cells[{"enp0s0np0", "pfc"}]), 0);
  EXPECT_TRUE((cells.contains({"enp2s0np0", "storm_prevention"})));
  EXPECT_TRUE((cells.contains({"enp2s0np0", "global_pause"})));
  EXPECT_TRUE((cells.contains({"enp2s0np0", "ecn"})));
  EXPECT_EQ(cells.size(), 3u * 7);  // pfc ecn trust dscp_map storm_prevention global_pause mtu
}

// --- PCIe: a GPU and a NIC below one switch (PIX), and a second pair through the host bridge.
struct Function {
  std::string bdf, role, upstream;
  int mps = 256, mrrs = 512;
  bool redirect = false;
};

std::vector<Function> Topology() {
  return {
      {"0000:16:00.0", "bridge", "pci0000:15"},    // switch upstream port
      {"0000:17:00.0", "bridge", "0000:16:00.0"},  // downstream port above the GPU
      {"0000:17:01.0", "bridge", "0000:16:00.0"},  // downstream port above the NIC
      {"0000:18:00.0", "gpu", "0000:17:00.0"},
      {"0000:19:00.0", "nic", "0000:17:01.0"},
      {"0000:19:00.1", "nic", "0000:17:01.0"},
      {"0000:a0:01.0", "bridge", "pcia0:00"},  // root port of a GPU whose NIC is PHB
      {"0000:a1:00.0", "gpu", "0000:a0:01.0"},
      {"0000:a0:02.0", "bridge", "pcia0:00"},
      {"0000:a2:00.0", "nic", "0000:a0:02.0"},
  };
}

void FeedTopology(FindingLog& log, TimePoint t, const std::vector<Function>& functions,
                  bool peermem = true) {
  SnapshotBuilder b;
  for (const Function& f : functions) {
    b.Gauge(topology::kDeviceInfo, {{"device", f.bdf}, {"role", f.role}, {"upstream", f.upstream}},
            1);
    b.Gauge(topology::kMaxPayload, {{"device", f.bdf}, {"role", f.role}}, f.mps);
    b.Gauge(topology::kMaxReadRequest, {{"device", f.bdf}, {"role", f.role}}, f.mrrs);
    if (f.role == "bridge") {
      for (const char* control : {"request_redirect", "completion_redirect"}) {
        b.Gauge(topology::kAcsControl, {{"device", f.bdf}, {"role", f.role}, {"control", control}},
                f.redirect ? 1 : 0);
      }
    }
    if (f.role == "gpu") b.Gauge(topology::kGpuInfo, {{"gpu", f.bdf}, {"vendor_id", "0x10de"}}, 1);
    if (f.role == "nic") {
      b.Gauge(topology::kNicInfo, {{"nic", f.bdf}, {"rdma_device", "mlx5_0"}}, 1);
    }
  }
  b.Gauge(topology::kNearest, {{"gpu", "0000:18:00.0"}, {"nic", "0000:19:00.0"}, {"level", "PIX"}},
          1);
  b.Gauge(topology::kNearest, {{"gpu", "0000:18:00.0"}, {"nic", "0000:19:00.1"}, {"level", "PIX"}},
          1);
  b.Gauge(topology::kNearest, {{"gpu", "0000:a1:00.0"}, {"nic", "0000:a2:00.0"}, {"level", "PHB"}},
          1);
  b.Gauge(topology::kPeermem, {{"module", "nvidia_peermem"}}, peermem ? 1 : 0);
  b.Gauge(topology::kPeermem, {{"module", "nv_peer_mem"}}, 0);
  log.Feed("topology", t, b);
}

TEST(ConfigDriftTest, PcieHealthyThenAcsRedirectMpsAndMrrs) {
  auto detector = Make();
  FindingLog log(*detector);
  auto functions = Topology();
  FeedTopology(log, T0(), functions);
  EXPECT_TRUE(log.active().empty()) << Keys(log);

  functions[1].redirect = true;  // the switch port above the GPU
  functions[6].redirect = true;  // a root port: PHB traffic crosses the root complex anyway
  functions[3].mps = 128;        // the GPU
  functions[9].mrrs = 4096;      // the NIC of the PHB pair (two of three NICs run 512)
  FeedTopology(log, T0() + seconds(1), functions);
  const Finding& acs =
      log.active().at("warning{device=0000:17:00.0,role=bridge,setting=acs_redirect}");
  EXPECT_NE(acs.reason.find("between GPU 0000:18:00.0 and NIC 0000:19:00.0 (PIX)"),
            std::string::npos)
      << acs.reason;
  const Finding& mps = log.active().at("warning{device=0000:18:00.0,role=gpu,setting=max_payload}");
  EXPECT_EQ(mps.value, 128);
  EXPECT_EQ(mps.evidence[1].value, 256);
  EXPECT_TRUE(log.Active("warning{device=0000:a2:00.0,role=nic,setting=max_read_request}"))
      << Keys(log);
  EXPECT_EQ(log.active().size(), 3u) << Keys(log);
}

TEST(ConfigDriftTest, GpudirectModule) {
  auto detector = Make();
  FindingLog log(*detector);
  FeedTopology(log, T0(), Topology(), /*peermem=*/false);
  EXPECT_TRUE(log.Active("warning{setting=gpudirect_module}")) << Keys(log);
  FeedTopology(log, T0() + seconds(1), Topology(), /*peermem=*/true);
  EXPECT_FALSE(log.Active("warning{setting=gpudirect_module}"));

  auto dmabuf = Make({{"require-gpudirect-module", "false"}});
  FindingLog quiet(*dmabuf);
  FeedTopology(quiet, T0(), Topology(), /*peermem=*/false);
  EXPECT_TRUE(quiet.active().empty()) << Keys(quiet);
}

TEST(ConfigDriftTest, ImpossibleOptionsAreRejected) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"roce-priority", "9"},
                                                        {"roce-priority", "three"},
                                                        {"mtu", "12"},
                                                        {"trust", "vlan"},
                                                        {"storm-prevention-max", "soon"},
                                                        {"roce-prio", "3"}}) {
    auto made = MakeConfigDriftDetector({{key, value}});
    ASSERT_FALSE(made.has_value()) << key << "=" << value;
    EXPECT_NE(made.error().message().find(key), std::string::npos) << made.error().message();
  }
  EXPECT_TRUE(MakeConfigDriftDetector({{"roce-priority", "auto"}, {"mtu", "9000"}}).has_value());
}

}  // namespace
}  // namespace fabricwatch::detect
