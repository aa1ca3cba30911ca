// The status page's model (exporter/pages/status_model.h) and the transition history it shows
// (exporter/pipeline/transition_history.h): built from families as the collectors and detectors
// export them, without HTTP.

#include "exporter/pages/status_model.h"

#include <gtest/gtest.h>

#include "base/metric_sink.h"
#include "collectors/jobs/jobs_metrics.h"
#include "collectors/optics/optics_metrics.h"
#include "collectors/peer/peer_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/topology/topology_metrics.h"
#include "detectors/core/node_model.h"
#include "detectors/registry.h"
#include "detectors/link_degraded/link_degraded_metrics.h"
#include "detectors/pfc_storm/pfc_storm_metrics.h"
#include "exporter/pipeline/transition_history.h"
#include "exporter/privileges.h"

namespace fabricwatch::exporter::status {
namespace {

using namespace std::chrono_literals;

const detect::TimePoint kNow = detect::TimePoint{} + std::chrono::hours(24 * 20000);

TEST(StatusModelTest, every_detector_family_the_page_reads_is_in_a_detector_metric_table) {
  ASSERT_FALSE(DetectorFamiliesRead().empty());
  for (const MetricDesc* read : DetectorFamiliesRead()) {
    bool found = false;
    for (const detect::DetectorInfo& info : detect::DetectorRegistry()) {
      for (const MetricDesc& desc : info.metrics) found |= &desc == read || desc.name == read->name;
    }
    EXPECT_TRUE(found) << "no detector exports " << read->name;
  }
}

// A sample of `desc` with the labels of `values` and "" for the family's other labels (those that
// do not apply), in the descriptor's order as the sink wants them.
void AddLabelled(MetricSink& sink, const MetricDesc& desc,
                 const std::map<std::string_view, std::string_view>& values) {
  std::vector<LabelPair> labels;
  for (std::string_view name : desc.labels) {
    auto it = values.find(name);
    labels.push_back({name, it == values.end() ? std::string_view() : it->second});
  }
  sink.Add(desc, labels, 1);
}

CollectorHealth Ran(double seconds_ago) {
  CollectorHealth h;
  h.has_run = true;
  h.success = true;
  h.interval = 5s;
  h.last_sample_timestamp =
      std::chrono::duration<double>(kNow.time_since_epoch()).count() - seconds_ago;
  return h;
}

// Two RoCE ports on one node: mlx5_0 healthy, mlx5_1 at half rate, hot, and named by a storm.
struct Node {
  MetricSink sink;
  std::vector<prometheus::MetricFamily> families;
  StatusInputs inputs;

  // The node model of the same families, as the status page builds it from the snapshots;
  // `first` takes precedence over the node's own families of the same name.
  void ModelWith(std::vector<prometheus::MetricFamily> first) {
    first.insert(first.end(), families.begin(), families.end());
    detect::NodeModelBuilder builder;
    for (std::string_view collector : detect::NodeModelBuilder::Collectors()) {
      builder.Observe(collector, first);
    }
    inputs.node = builder.Current();
  }

  Node() {
    for (const char* dev : {"mlx5_0", "mlx5_1"}) {
      const std::string netdev = std::string(dev) == "mlx5_0" ? "eth0" : "eth1";
      const bool slow = netdev == "eth1";
      sink.AddInfo(rdma::kPortInfo, {{"device", dev},
                                     {"port", "1"},
                                     {"link_layer", "Ethernet"},
                                     {"netdev", netdev},
                                     {"speed", "HDR"}});
      sink.Add(rdma::kPortState, {{"device", dev}, {"port", "1"}}, 4);
      sink.Add(rdma::kPortRate, {{"device", dev}, {"port", "1"}}, slow ? 25e9 : 50e9);
      sink.Add(rdma::kPortLanes, {{"device", dev}, {"port", "1"}}, 4);
      sink.Add(detect::link_degraded::kExpectedRate,
               {{"device", dev}, {"port", "1"}, {"netdev", netdev}, {"source", "siblings"}}, 50e9);
      sink.Add(optics::kTemperature, {{"netdev", netdev}}, slow ? 74 : 45);
      sink.Add(optics::kTemperatureThreshold, {{"netdev", netdev}, {"threshold", "high_warning"}},
               70);
      sink.Add(optics::kRxPower, {{"netdev", netdev}, {"lane", "1"}}, 1e-3);  // 0 dBm
      sink.Add(optics::kRxPower, {{"netdev", netdev}, {"lane", "2"}}, slow ? 1e-5 : 1e-3);
      sink.Add(optics::kRxPowerThreshold, {{"netdev", netdev}, {"threshold", "low_warning"}},
               1e-4);  // -10 dBm
    }
    sink.AddInfo(peer::kPeerInfo, {{"device", "mlx5_1"},
                                   {"port", "1"},
                                   {"netdev", "eth1"},
                                   {"peer_name", "leaf07"},
                                   {"peer_port", "Ethernet12"},
                                   {"peer_id", "aa:bb"},
                                   {"source", "lldpd"}});
    AddLabelled(sink, jobs::kDeviceJobInfo,
                {{"device", "mlx5_1"}, {"scheduler", "slurm"}, {"job_id", "4242"}});
    sink.Add(detect::pfc_storm::kPauseRatio,
             {{"netdev", "eth1"}, {"priority", "3"}, {"direction", "tx"}}, 0.97);
    sink.Add(detect::pfc_storm::kStormSeconds,
             {{"netdev", "eth1"}, {"priority", "3"}, {"role", "source"}}, 12);
    sink.Add(topology::kPairDistance,
             {{"gpu", "0000:19:00.0"}, {"nic", "0000:18:00.0"}, {"rdma_device", "mlx5_0"}}, 10);
    sink.Add(topology::kPairDistance,
             {{"gpu", "0000:19:00.0"}, {"nic", "0000:3a:00.0"}, {"rdma_device", "mlx5_1"}}, 50);
    sink.AddInfo(topology::kNearest, {{"gpu", "0000:19:00.0"},
                                      {"nic", "0000:18:00.0"},
                                      {"rdma_device", "mlx5_0"},
                                      {"level", "PIX"}});
    families = sink.TakeFamilies();
    for (const auto& family : families) inputs.families.push_back(&family);
    ModelWith({});
    inputs.hostname = "gpu-node-17";
    inputs.now = kNow;
    inputs.collectors = {{"rdma", Ran(2)}, {"optics", Ran(1)}};
    detect::ActiveAnomaly storm;
    storm.detector = "pfc_storm";
    storm.finding.severity = detect::Severity::kCritical;
    storm.finding.entity = {{"netdev", "eth1"}, {"priority", "3"}, {"role", "source"}};
    storm.started = kNow - 30s;
    inputs.anomalies = {storm};
  }
};

TEST(StatusModelTest, builds_one_row_per_port_with_values_and_marks) {
  Node node;
  const StatusModel model = BuildStatusModel(node.inputs);
  EXPECT_FALSE(model.waiting_for_samples);
  ASSERT_EQ(model.ports.size(), 2u);
  const PortRow& good = model.ports[0];
  const PortRow& bad = model.ports[1];
  EXPECT_EQ(good.device, "mlx5_0");
  EXPECT_EQ(good.netdev, "eth0");
  EXPECT_FALSE(good.abnormal);
  EXPECT_DOUBLE_EQ(*good.rate_gbps.value, 400);
  EXPECT_EQ(good.rate_gbps.detail, "expected 400 Gb/s, siblings");
  EXPECT_DOUBLE_EQ(*good.rx_power_dbm.value, 0);

  EXPECT_TRUE(bad.abnormal);
  EXPECT_DOUBLE_EQ(*bad.rate_gbps.value, 200);
  EXPECT_TRUE(bad.rate_gbps.abnormal);
  EXPECT_EQ(bad.rate_gbps.why, "below expected");
  EXPECT_TRUE(bad.temperature_celsius.abnormal);
  EXPECT_EQ(bad.temperature_celsius.why, "\u2265 high warning 70 °C");
  EXPECT_TRUE(bad.rx_power_dbm.abnormal);  // lane 2 at -20 dBm, below -10
  EXPECT_DOUBLE_EQ(*bad.rx_power_dbm.value, -20);
  EXPECT_EQ(bad.rx_power_dbm.detail, "lane 2");
  EXPECT_TRUE(bad.pfc_pause.abnormal);
  EXPECT_DOUBLE_EQ(*bad.pfc_pause.value, 0.97);
  EXPECT_EQ(bad.pfc_pause.detail, "tx prio 3");
  EXPECT_EQ(bad.peer_name, "leaf07");
  EXPECT_EQ(bad.peer_port, "Ethernet12");
  EXPECT_EQ(bad.jobs, std::vector<std::string>{"slurm:4242"});
  EXPECT_EQ(bad.anomalies, std::vector<std::string>{"pfc_storm critical"});
  EXPECT_EQ(model.AbnormalPorts(), 1u);
  EXPECT_EQ(model.CriticalAnomalies(), 1u);
}

TEST(StatusModelTest, a_down_port_is_marked_and_its_stale_rate_not_judged) {
  Node node;
  MetricSink down;
  down.Add(rdma::kPortState, {{"device", "mlx5_0"}, {"port", "1"}}, 1);
  const auto families = down.TakeFamilies();
  // FamilyIndex and the node model read the first family of a name: the DOWN state goes in front
  // of the ACTIVE one.
  node.inputs.families.insert(node.inputs.families.begin(), &families[0]);
  node.ModelWith(families);
  const StatusModel model = BuildStatusModel(node.inputs);
  const PortRow& port = model.ports[0];
  EXPECT_EQ(*port.state, 1);
  EXPECT_EQ(PortStateName(*port.state), "DOWN");
  EXPECT_TRUE(port.state_abnormal);
  EXPECT_EQ(port.state_why, "not ACTIVE");
  EXPECT_TRUE(port.abnormal);
  EXPECT_TRUE(port.rate_gbps.detail.empty());
}

TEST(StatusModelTest, an_anomaly_marks_the_value_its_detector_is_about) {
  Node node;
  detect::ActiveAnomaly flap;
  flap.detector = "link_flap";
  flap.finding.entity = {{"device", "mlx5_0"}, {"port", "1"}};
  node.inputs.anomalies = {flap};
  const StatusModel model = BuildStatusModel(node.inputs);
  EXPECT_TRUE(model.ports[0].state_abnormal);
  EXPECT_EQ(model.ports[0].state_why, "flapping");
  EXPECT_EQ(model.ports[0].anomalies, std::vector<std::string>{"link_flap warning"});
  EXPECT_TRUE(model.ports[0].abnormal);
}

TEST(StatusModelTest, topology_is_a_gpu_by_nic_map_with_the_nearest_marked) {
  Node node;
  const TopologyMap map = BuildStatusModel(node.inputs).topology;
  EXPECT_EQ(map.gpus, std::vector<std::string>{"0000:19:00.0"});
  EXPECT_EQ(map.nics, (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  EXPECT_EQ(PathLevelName(map.level.at({"0000:19:00.0", "mlx5_0"})), "PIX");
  EXPECT_EQ(PathLevelName(map.level.at({"0000:19:00.0", "mlx5_1"})), "SYS");
  EXPECT_TRUE(map.nearest.contains({"0000:19:00.0", "mlx5_0"}));
  EXPECT_FALSE(map.nearest.contains({"0000:19:00.0", "mlx5_1"}));
}

TEST(StatusModelTest, before_the_first_sample_it_is_waiting_not_healthy) {
  StatusInputs inputs;
  inputs.now = kNow;
  inputs.collectors = {{"rdma", CollectorHealth{}}, {"optics", CollectorHealth{}}};
  const StatusModel model = BuildStatusModel(inputs);
  EXPECT_TRUE(model.waiting_for_samples);
  EXPECT_EQ(model.collectors_pending, (std::vector<std::string>{"optics", "rdma"}));
  inputs.collectors["rdma"] = Ran(1);
  const StatusModel half = BuildStatusModel(inputs);
  EXPECT_FALSE(half.waiting_for_samples);
  EXPECT_EQ(half.collectors_pending, std::vector<std::string>{"optics"});
}

TEST(StatusModelTest, collectors_show_their_age_and_missing_privileges) {
  Node node;
  MetricSink privileges;
  privileges.Add(PrivilegeLog::Metrics().front(),
                 {{"capability", "CAP_NET_ADMIN"}, {"feature", "module_eeprom"}}, 1);
  const auto families = privileges.TakeFamilies();
  node.inputs.families.push_back(&families[0]);
  const StatusModel model = BuildStatusModel(node.inputs);
  ASSERT_EQ(model.collectors.size(), 2u);
  EXPECT_EQ(model.collectors[0].name, "optics");
  EXPECT_DOUBLE_EQ(*model.collectors[0].age_seconds, 1);
  EXPECT_EQ(model.collectors[0].privileges_missing,
            std::vector<std::string>{"CAP_NET_ADMIN (module_eeprom)"});
  EXPECT_TRUE(model.collectors[1].privileges_missing.empty());
}

TEST(TransitionHistoryTest, keeps_the_last_hour_newest_first_and_at_most_its_capacity) {
  TransitionHistory history(3, std::chrono::hours(1));
  for (int i = 0; i < 4; ++i) {
    detect::AnomalyTransition t;
    t.detector = "d" + std::to_string(i);
    t.time = kNow - std::chrono::minutes(90 - 20 * i);  // 90, 70, 50, 30 minutes ago
    history.Record(t);
  }
  const auto recent = history.Recent(kNow);
  ASSERT_EQ(recent.size(), 2u);  // d0 fell out of the capacity, d1 out of the hour
  EXPECT_EQ(recent[0].detector, "d3");
  EXPECT_EQ(recent[1].detector, "d2");
}

}  // namespace
}  // namespace fabricwatch::exporter::status
