// link_degraded: the fabric shape against its expectation (issue 20). Synthetic rdma, netdev,
// ethtool and topology snapshots of an 8-port NDR node; each fault with its severity, entity,
// evidence and detection time; hours of healthy samples, brief retrains and a node that runs HDR
// everywhere raising nothing; the expectation surviving a restart through the state file.

#include "detectors/link_degraded/link_degraded.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "collectors/ethtool/ethtool_metrics.h"
#include "collectors/netdev/netdev_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/topology/topology_metrics.h"
#include "detectors/core/state_check.h"
#include "detectors/link_degraded/manifest.h"
#include "detectors/link_degraded/port_shape.h"
#include "tests/testing/temp_dir.h"
#include "tests/unit/detectors/scenario.h"

namespace fabricwatch::detect {
namespace {

using fabricwatch::testing::TempDir;
using std::chrono::minutes;
using std::chrono::seconds;
using testing::FindingLog;
using testing::SnapshotBuilder;
using testing::T0;

struct Port {
  std::string device;
  std::string pci;
  std::string netdev;
  std::string link_layer = "InfiniBand";
  std::string rate_text_speed = "NDR";  // the generation name of rate
  double rate_gbps = 400;
  int width = 4;
  double lane_gbps = 100;
  int state = 4;       // ACTIVE
  int phys_state = 5;  // LinkUp
  int sm_lid = 1;
  std::string fw = "28.39.1002";
  std::string board = "MT_0000000838";
  // Ethernet (ethtool) values; 0 = not reported.
  double eth_speed_gbps = 0;
  int eth_lanes = 0;
  double supported_gbps = 0;
  bool present = true;
};

std::vector<Port> IbNode(int ports = 8) {
  std::vector<Port> node;
  for (int i = 0; i < ports; ++i) {
    char pci[32];
    std::snprintf(pci, sizeof(pci), "0000:%02x:00.0", 0x18 + 0x10 * i);
    node.push_back({"mlx5_" + std::to_string(i), pci, "ib" + std::to_string(i)});
  }
  return node;
}

std::vector<Port> RoceNode(int ports = 8) {
  std::vector<Port> node = IbNode(ports);
  for (int i = 0; i < ports; ++i) {
    Port& p = node[i];
    p.link_layer = "Ethernet";
    p.netdev = "enp" + std::to_string(i) + "s0np0";
    p.sm_lid = 0;
    p.eth_speed_gbps = 400;
    p.eth_lanes = 4;
    p.supported_gbps = 400;
  }
  return node;
}

constexpr double kGbit = 1e9 / 8;

void Feed(FindingLog& log, TimePoint t, const std::vector<Port>& ports) {
  SnapshotBuilder rdma_snapshot, net, eth;
  for (const Port& p : ports) {
    if (!p.present) continue;
    const testing::Labels dp{{"device", p.device}, {"port", "1"}};
    rdma_snapshot.Gauge(rdma::kDeviceInfo,
                        {{"device", p.device},
                         {"node_type", "1: CA"},
                         {"fw_ver", p.fw},
                         {"node_guid", ""},
                         {"sys_image_guid", ""},
                         {"hca_type", "MT4129"},
                         {"board_id", p.board},
                         {"node_desc", ""},
                         {"pci_address", p.pci},
                         {"netdevs", p.netdev}},
                        1);
    rdma_snapshot.Gauge(rdma::kPortInfo,
                        {{"device", p.device},
                         {"port", "1"},
                         {"link_layer", p.link_layer},
                         {"netdev", p.netdev},
                         {"speed", p.rate_text_speed}},
                        1);
    rdma_snapshot.Gauge(rdma::kPortState, dp, p.state);
    rdma_snapshot.Gauge(rdma::kPortPhysState, dp, p.phys_state);
    if (p.link_layer == "InfiniBand") rdma_snapshot.Gauge(rdma::kPortSmLid, dp, p.sm_lid);
    rdma_snapshot.Gauge(rdma::kPortRate, dp, p.rate_gbps * kGbit);
    if (p.width > 0) rdma_snapshot.Gauge(rdma::kPortLanes, dp, p.width);
    if (p.lane_gbps > 0) rdma_snapshot.Gauge(rdma::kPortLaneSpeed, dp, p.lane_gbps * kGbit);
    net.Gauge(netdev::kMtu, {{"netdev", p.netdev}}, 4096);
    if (p.eth_speed_gbps > 0) {
      eth.Gauge(ethtool::kLinkSpeed, {{"netdev", p.netdev}}, p.eth_speed_gbps * kGbit);
    }
    if (p.eth_lanes > 0) eth.Gauge(ethtool::kLinkLanes, {{"netdev", p.netdev}}, p.eth_lanes);
    if (p.supported_gbps > 0) {
      eth.Gauge(ethtool::kLinkSupportedMaxSpeed, {{"netdev", p.netdev}}, p.supported_gbps * kGbit);
    }
  }
  log.Feed("netdev", t, net);
  log.Feed("ethtool", t, eth);
  log.Feed("rdma", t, rdma_snapshot);
}

// Feeds `ports` every second from `from` to `to` (simulated seconds after T0).
void RunFor(FindingLog& log, int from, int to, const std::vector<Port>& ports) {
  for (int s = from; s < to; ++s) Feed(log, T0() + seconds(s), ports);
}

std::unique_ptr<Detector> Make(const DetectorOptions& options = {}) {
  auto made = MakeLinkDegradedDetector(options);
  EXPECT_TRUE(made.has_value()) << made.error().ToString();
  return made ? std::move(*made) : nullptr;
}

double EvidenceOf(const Finding& f, const std::string& name) {
  for (const Evidence& e : f.evidence) {
    if (e.name == name) return e.value;
  }
  return -1;
}

void SlowDown(Port& p, const std::string& generation, double lane) {
  p.rate_text_speed = generation;
  p.lane_gbps = lane;
  p.rate_gbps = lane * p.width;
}

TEST(LinkDegradedTest, a_healthy_node_is_quiet_for_hours_with_no_configuration) {
  auto detector = Make();
  FindingLog log(*detector);
  std::vector<Port> node = IbNode();
  RunFor(log, 0, 3 * 3600, node);
  EXPECT_TRUE(log.raises().empty());
}

TEST(LinkDegradedTest, speed_loss_against_siblings_is_a_warning_with_evidence) {
  auto detector = Make();
  FindingLog log(*detector);
  std::vector<Port> node = IbNode();
  // Degraded before the agent started: the siblings still say what it should be.
  SlowDown(node[3], "HDR", 50);
  RunFor(log, 0, 120, node);
  const std::string key = "warning{device=mlx5_3,port=1}";
  ASSERT_TRUE(log.FirstRaise(key)) << "raised: " << log.raises().size();
  EXPECT_EQ(*log.FirstRaise(key) - T0(), seconds(30));
  EXPECT_EQ(log.raises().size(), 1u);
  const Finding* f = log.LastRaised(key);
  EXPECT_DOUBLE_EQ(EvidenceOf(*f, "lane_speed_bytes_per_second"), 50 * kGbit);
  EXPECT_DOUBLE_EQ(EvidenceOf(*f, "expected_lane_speed_bytes_per_second"), 100 * kGbit);
  EXPECT_DOUBLE_EQ(EvidenceOf(*f, "width_lanes"), 4);
  EXPECT_NE(f->reason.find("siblings"), std::string::npos) << f->reason;
  EXPECT_NE(f->reason.find("4X HDR"), std::string::npos) << f->reason;
  EXPECT_FALSE(f->drain_eligible);  // warnings are not drained by default
  // Recovers: clears after clear-for.
  node[3] = IbNode()[3];
  RunFor(log, 120, 200, node);
  ASSERT_TRUE(log.LastClear(key));
  EXPECT_EQ(*log.LastClear(key) - T0(), seconds(150));
}

TEST(LinkDegradedTest, width_loss_is_critical_and_drain_eligible) {
  auto detector = Make();
  FindingLog log(*detector);
  std::vector<Port> node = IbNode();
  RunFor(log, 0, 60, node);
  node[5].width = 1;
  node[5].rate_gbps = 100;
  RunFor(log, 60, 120, node);
  const std::string key = "critical{device=mlx5_5,port=1}";
  ASSERT_TRUE(log.FirstRaise(key));
  EXPECT_EQ(*log.FirstRaise(key) - T0(), seconds(90));
  const Finding* f = log.LastRaised(key);
  EXPECT_TRUE(f->drain_eligible);
  EXPECT_DOUBLE_EQ(f->value, 1);
  EXPECT_DOUBLE_EQ(EvidenceOf(*f, "expected_width_lanes"), 4);
  // Width loss alone (same lane speed) is not also a speed loss.
  EXPECT_FALSE(log.FirstRaise("warning{device=mlx5_5,port=1}"));
}

TEST(LinkDegradedTest, a_link_training_through_lower_rates_for_seconds_raises_nothing) {
  auto detector = Make();
  FindingLog log(*detector);
  std::vector<Port> node = IbNode();
  RunFor(log, 0, 60, node);
  std::vector<Port> training = node;
  training[2].state = 2;  // INIT while it trains
  training[2].phys_state = 4;
  RunFor(log, 60, 63, training);
  training[2] = node[2];
  training[2].width = 1;
  SlowDown(training[2], "DDR", 5);  // the real capture: "5 Gb/sec (1X DDR)"
  RunFor(log, 63, 70, training);
  RunFor(log, 70, 600, node);
  EXPECT_TRUE(log.raises().empty());
}

TEST(LinkDegradedTest, a_node_that_runs_hdr_everywhere_is_quiet_unless_a_manifest_says_ndr) {
  std::vector<Port> node = IbNode();
  for (Port& p : node) SlowDown(p, "HDR", 50);
  {
    auto detector = Make();
    FindingLog log(*detector);
    RunFor(log, 0, 600, node);
    EXPECT_TRUE(log.raises().empty());
  }
  TempDir dir;
  const std::string manifest = dir.Path("shape.yaml");
  std::ofstream(manifest) << "groups:\n  - link_layer: InfiniBand\n    count: 8\n"
                             "    lane_speed: NDR\n    width: 4\n";
  auto detector = Make({{"shape-file", manifest}});
  FindingLog log(*detector);
  RunFor(log, 0, 120, node);
  EXPECT_EQ(log.raises().size(), 8u);
  for (int i = 0; i < 8; ++i) {
    const std::string key = "warning{device=mlx5_" + std::to_string(i) + ",port=1}";
    ASSERT_TRUE(log.FirstRaise(key)) << key;
    EXPECT_NE(log.LastRaised(key)->reason.find("manifest"), std::string::npos);
  }
}

TEST(LinkDegradedTest, a_port_stuck_in_init_without_a_subnet_manager_is_critical) {
  auto detector = Make();
  FindingLog log(*detector);
  std::vector<Port> node = IbNode();
  node[1].state = 2;  // INIT, physically LinkUp, no SM
  node[1].sm_lid = 0;
  RunFor(log, 0, 120, node);
  const std::string key = "critical{device=mlx5_1,port=1}";
  ASSERT_TRUE(log.FirstRaise(key));
  EXPECT_EQ(*log.FirstRaise(key) - T0(), seconds(60));
  EXPECT_NE(log.LastRaised(key)->reason.find("no subnet manager"), std::string::npos);
  EXPECT_DOUBLE_EQ(EvidenceOf(*log.LastRaised(key), "sm_lid"), 0);
  node[1].state = 4;
  RunFor(log, 120, 200, node);
  EXPECT_TRUE(log.LastClear(key));
}

TEST(LinkDegradedTest, an_outage_of_a_port_seen_up_is_left_to_link_flap) {
  auto detector = Make();
  FindingLog log(*detector);
  std::vector<Port> node = IbNode();
  RunFor(log, 0, 60, node);
  node[1].state = 2;
  node[1].sm_lid = 0;
  node[2].state = 1;
  node[2].phys_state = 2;  // Polling
  RunFor(log, 60, 600, node);
  EXPECT_TRUE(log.raises().empty());
}

TEST(LinkDegradedTest, history_survives_a_restart_and_finds_an_hca_missing_after_reboot) {
  nlohmann::json saved;
  {
    auto detector = Make();
    FindingLog log(*detector);
    RunFor(log, 0, 30, IbNode());
    saved = detector->SaveState();
  }
  auto detector = Make();
  StateLoadCheck check(T0() + seconds(100));
  ASSERT_TRUE(detector->LoadState(saved, check).ok());
  EXPECT_EQ(check.total_dropped(), 0u);
  FindingLog log(*detector);
  std::vector<Port> node = IbNode();
  node[6].present = false;  // the HCA did not come back after the reboot
  node[4].state = 1;        // down at boot, Polling: it was up before, so it is link_flap's
  node[4].phys_state = 2;
  RunFor(log, 100, 300, node);
  const std::string missing = "critical{device=mlx5_6,port=1}";
  ASSERT_TRUE(log.FirstRaise(missing));
  EXPECT_EQ(*log.FirstRaise(missing) - T0(), seconds(220));  // missing-for 2m
  EXPECT_NE(log.LastRaised(missing)->reason.find("missing"), std::string::npos);
  EXPECT_EQ(log.raises().size(), 1u);
}

TEST(LinkDegradedTest, a_port_never_up_while_its_siblings_are_is_down_when_it_should_be_up) {
  auto detector = Make();
  FindingLog log(*detector);
  std::vector<Port> node = IbNode();
  node[4].state = 1;  // a cable missing since the node was built: Polling
  node[4].phys_state = 2;
  RunFor(log, 0, 120, node);
  const std::string down = "critical{device=mlx5_4,port=1}";
  ASSERT_TRUE(log.FirstRaise(down));
  EXPECT_EQ(*log.FirstRaise(down) - T0(), seconds(60));  // down-for 1m
  EXPECT_NE(log.LastRaised(down)->reason.find("siblings"), std::string::npos);
  EXPECT_NE(log.LastRaised(down)->reason.find("Polling"), std::string::npos);
  EXPECT_EQ(log.raises().size(), 1u);
  // Port 2 of dual-port cards unused on every card: nobody expects it up.
  auto quiet = Make();
  FindingLog quiet_log(*quiet);
  std::vector<Port> one_port_used = IbNode(4);
  for (Port& p : one_port_used) p.state = 1, p.phys_state = 3;  // Disabled everywhere
  RunFor(quiet_log, 0, 300, one_port_used);
  EXPECT_TRUE(quiet_log.raises().empty());
}

TEST(LinkDegradedTest, a_speed_loss_below_the_ports_own_best_is_found_on_a_single_port_node) {
  auto detector = Make();
  FindingLog log(*detector);
  std::vector<Port> node = IbNode(1);
  RunFor(log, 0, 60, node);
  SlowDown(node[0], "EDR", 25);
  RunFor(log, 60, 120, node);
  ASSERT_TRUE(log.FirstRaise("warning{device=mlx5_0,port=1}"));
  EXPECT_NE(log.LastRaised("warning{device=mlx5_0,port=1}")->reason.find("past best"),
            std::string::npos);
}

TEST(LinkDegradedTest, a_node_reconfigured_as_a_whole_is_learned_again_with_one_info_line) {
  auto detector = Make();
  FindingLog log(*detector);
  std::vector<Port> node = IbNode();
  RunFor(log, 0, 60, node);
  for (Port& p : node) SlowDown(p, "HDR", 50);
  std::vector<std::string> lines;
  for (int s = 60; s < 600; ++s) {
    Feed(log, T0() + seconds(s), node);
    for (std::string& line : detector->TakeInfoLines()) lines.push_back(line);
  }
  EXPECT_TRUE(log.raises().empty());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("reconfigured"), std::string::npos) << lines[0];
}

TEST(LinkDegradedTest, firmware_that_differs_from_its_siblings_is_a_warning_on_the_device) {
  auto detector = Make();
  FindingLog log(*detector);
  std::vector<Port> node = IbNode();
  node[7].fw = "28.38.1002";
  RunFor(log, 0, 60, node);
  const std::string key = "warning{device=mlx5_7}";
  ASSERT_TRUE(log.FirstRaise(key));
  EXPECT_NE(log.LastRaised(key)->reason.find("28.39.1002"), std::string::npos);
  EXPECT_EQ(log.raises().size(), 1u);
}

TEST(LinkDegradedTest, ethernet_speed_loss_uses_ethtool_and_names_the_netdev) {
  auto detector = Make();
  FindingLog log(*detector);
  std::vector<Port> node = RoceNode();
  RunFor(log, 0, 60, node);
  node[2].eth_speed_gbps = 200;  // 200G on a 400G port: 4 lanes of 50G
  node[2].rate_gbps = 200;
  RunFor(log, 60, 120, node);
  const std::string key = "warning{netdev=enp2s0np0}";
  ASSERT_TRUE(log.FirstRaise(key));
  EXPECT_DOUBLE_EQ(EvidenceOf(*log.LastRaised(key), "lane_speed_bytes_per_second"), 50 * kGbit);
  // Two lanes instead of four is a width loss.
  node[2].eth_lanes = 2;
  node[2].eth_speed_gbps = 200;
  RunFor(log, 120, 200, node);
  EXPECT_TRUE(log.FirstRaise("critical{netdev=enp2s0np0}"));
}

TEST(LinkDegradedTest, a_lone_ethernet_port_is_held_to_its_fastest_supported_mode) {
  auto detector = Make();
  FindingLog log(*detector);
  std::vector<Port> node = RoceNode(1);
  node[0].eth_speed_gbps = 100;
  node[0].eth_lanes = 0;  // the driver does not report lanes
  RunFor(log, 0, 60, node);
  const std::string key = "warning{netdev=enp0s0np0}";
  ASSERT_TRUE(log.FirstRaise(key));
  EXPECT_NE(log.LastRaised(key)->reason.find("supported"), std::string::npos);
}

TEST(LinkDegradedTest, an_unknown_rate_reports_what_is_known_and_never_a_degraded_port) {
  auto detector = Make();
  FindingLog log(*detector);
  std::vector<Port> node = IbNode();
  node[0].width = 0;  // "0 GB/sec" or a vendor string: no width, no lane speed, no rate
  node[0].lane_gbps = 0;
  node[0].rate_gbps = 0;
  node[0].rate_text_speed = "";
  RunFor(log, 0, 300, node);
  EXPECT_TRUE(log.raises().empty());
}

TEST(LinkDegradedTest, healthy_noise_with_seeded_retrains_and_hot_unplugs_raises_nothing) {
  auto detector = Make();
  FindingLog log(*detector);
  std::mt19937 random(11);
  const std::vector<Port> healthy = IbNode();
  for (int s = 0; s < 4 * 3600; s += 1) {
    std::vector<Port> node = healthy;
    // Every ~20 min one port retrains for up to 8 s, or is unplugged for up to 60 s.
    const int cycle = s % 1200;
    Port& p = node[(s / 1200) % 8];
    if (cycle < 8) {
      p.width = 1 + static_cast<int>(random() % 2);
      p.rate_gbps = p.width * 100;
    } else if (cycle >= 600 && cycle < 660 && (s / 1200) % 3 == 0) {
      p.present = false;
    }
    Feed(log, T0() + seconds(s), node);
  }
  EXPECT_TRUE(log.raises().empty());
}

TEST(LinkDegradedTest, state_of_another_version_is_ignored_with_an_error) {
  auto detector = Make();
  StateLoadCheck check(T0());
  Status status = detector->LoadState({{"version", 99}, {"ports", nlohmann::json::array()}}, check);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("version 99"), std::string::npos);
  // A future timestamp and a corrupt rate drop their entries.
  nlohmann::json state = {{"version", 1},
                          {"ports",
                           {{{"pci_address", "0000:18:00.0"}, {"port", 1}, {"last_seen", 4e9}},
                            {{"pci_address", "0000:28:00.0"},
                             {"port", 1},
                             {"last_seen", 1e9},
                             {"best_rate_gbps", -5}}}}};
  ASSERT_TRUE(detector->LoadState(state, check).ok());
  EXPECT_EQ(check.total_dropped(), 2u);
}

TEST(LinkDegradedTest, options_are_validated) {
  EXPECT_FALSE(MakeLinkDegradedDetector({{"drain-severity", "sometimes"}}));
  EXPECT_FALSE(MakeLinkDegradedDetector({{"degraded-for", "soon"}}));
  auto missing = MakeLinkDegradedDetector({{"shape-file", "/nonexistent/shape.yaml"}});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("/nonexistent/shape.yaml"), std::string::npos);
  auto none = Make({{"drain-severity", "none"}});
  FindingLog log(*none);
  std::vector<Port> node = IbNode();
  node[0].width = 2;
  node[0].rate_gbps = 200;
  RunFor(log, 0, 60, node);
  ASSERT_TRUE(log.LastRaised("critical{device=mlx5_0,port=1}"));
  EXPECT_FALSE(log.LastRaised("critical{device=mlx5_0,port=1}")->drain_eligible);
}

}  // namespace
}  // namespace fabricwatch::detect

namespace fabricwatch::detect {
namespace {

TEST(LinkDegradedTest, the_evidence_series_name_each_port_and_the_source_of_its_expectation) {
  auto detector = Make();
  FindingLog log(*detector);
  std::vector<Port> node = IbNode(3);
  node[2].width = 2;
  node[2].rate_gbps = 200;
  RunFor(log, 0, 5, node);
  MetricSink sink;
  detector->Export(sink);
  ASSERT_TRUE(sink.errors().empty()) << sink.errors().front().ToString();
  int expected_lanes = 0;
  for (const prometheus::MetricFamily& family : sink.TakeFamilies()) {
    for (const prometheus::ClientMetric& m : family.metric) {
      std::map<std::string, std::string> labels;
      for (const auto& l : m.label) labels[l.name] = l.value;
      if (labels.contains("port")) EXPECT_EQ(labels["port"], "1") << family.name;
      if (family.name == "fabric_link_degraded_expected_lanes") {
        ++expected_lanes;
        EXPECT_EQ(labels["source"], "siblings");
        EXPECT_DOUBLE_EQ(m.gauge.value, 4);
      }
      if (family.name == "fabric_link_degraded_rate_ratio" && labels["device"] == "mlx5_2") {
        EXPECT_DOUBLE_EQ(m.gauge.value, 0.5);
      }
    }
  }
  EXPECT_EQ(expected_lanes, 3);
}

}  // namespace
}  // namespace fabricwatch::detect

namespace fabricwatch::detect {
namespace {

// A NIC PCIe link against the manifest: link_degraded reports it only while the link runs at the
// function's own maximum; below its maximum it is pcie_degraded's (one fault, one finding).
TEST(LinkDegradedTest, a_nic_pcie_link_below_the_manifest_at_its_own_maximum_only) {
  TempDir dir;
  const std::string manifest = dir.Path("sku.yaml");
  std::ofstream(manifest) << "groups:\n  - link_layer: InfiniBand\n    pcie_width: 16\n"
                             "    pcie_speed_gts: 32\n";
  auto detector = Make({{"shape-file", manifest}});
  FindingLog log(*detector);
  const std::vector<Port> node = IbNode(3);
  auto pcie = [&](TimePoint t) {
    SnapshotBuilder topo;
    const double width[] = {16, 8, 8}, max_width[] = {16, 8, 16};
    for (int i = 0; i < 3; ++i) {
      const testing::Labels l{{"device", node[i].pci}, {"role", "nic"}};
      topo.Gauge(topology::kSpeed, l, 32e9);
      topo.Gauge(topology::kMaxSpeed, l, 32e9);
      topo.Gauge(topology::kWidth, l, width[i]);
      topo.Gauge(topology::kMaxWidth, l, max_width[i]);
    }
    log.Feed("topology", t, topo);
  };
  for (int s = 0; s < 60; ++s) {
    if (s % 20 == 0) pcie(T0() + seconds(s));
    Feed(log, T0() + seconds(s), node);
  }
  // mlx5_1: a x8 card where the SKU has x16 (at its own maximum): link_degraded's.
  ASSERT_TRUE(log.FirstRaise("critical{device=mlx5_1}")) << log.raises().size();
  const Finding* f = log.LastRaised("critical{device=mlx5_1}");
  EXPECT_DOUBLE_EQ(EvidenceOf(*f, "expected_pcie_width_lanes"), 16);
  EXPECT_NE(f->reason.find("x8"), std::string::npos) << f->reason;
  // mlx5_2: x8 of its own x16, downtrained: pcie_degraded reports it, not link_degraded.
  EXPECT_FALSE(log.FirstRaise("critical{device=mlx5_2}"));
  EXPECT_EQ(log.raises().size(), 1u);
}

}  // namespace
}  // namespace fabricwatch::detect
