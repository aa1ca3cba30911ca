// The fabric shape (port_shape.h) and its manifest (manifest.h): a shape built from collector
// families, printed as YAML and read back as a manifest; every manifest error names file:line.

#include <gtest/gtest.h>

#include "collectors/ethtool/ethtool_metrics.h"
#include "collectors/netdev/netdev_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/topology/topology_metrics.h"
#include "detectors/link_degraded/manifest.h"
#include "detectors/link_degraded/port_shape.h"
#include "tests/testing/families.h"

namespace fabricwatch::detect::shape {
namespace {

using fabricwatch::testing::Families;
constexpr double kGbit = 1e9 / 8;

struct Node {
  Families rdma, netdev, ethtool, topology;
  NodeModel Model() const {
    NodeModelBuilder builder;
    builder.Observe(rdma::kCollector, rdma.families());
    builder.Observe(netdev::kCollector, netdev.families());
    builder.Observe(ethtool::kCollector, ethtool.families());
    builder.Observe(topology::kCollector, topology.families());
    return builder.model();
  }
};

void AddPort(Node& n, const std::string& device, const std::string& pci, const std::string& netdev,
             const std::string& link_layer, const std::string& speed, double rate, int lanes,
             double lane) {
  n.rdma.Gauge(rdma::kDeviceInfo,
               {{"device", device},
                {"node_type", "1: CA"},
                {"fw_ver", "28.39.1002"},
                {"node_guid", ""},
                {"sys_image_guid", ""},
                {"hca_type", "MT4129"},
                {"board_id", "MT_0000000838"},
                {"node_desc", ""},
                {"pci_address", pci},
                {"netdevs", netdev}},
               1);
  n.rdma.Gauge(rdma::kPortInfo,
               {{"device", device},
                {"port", "1"},
                {"link_layer", link_layer},
                {"netdev", netdev},
                {"speed", speed}},
               1);
  n.rdma.Gauge(rdma::kPortState, {{"device", device}, {"port", "1"}}, 4);
  n.rdma.Gauge(rdma::kPortRate, {{"device", device}, {"port", "1"}}, rate * kGbit);
  n.rdma.Gauge(rdma::kPortLanes, {{"device", device}, {"port", "1"}}, lanes);
  n.rdma.Gauge(rdma::kPortLaneSpeed, {{"device", device}, {"port", "1"}}, lane * kGbit);
  n.netdev.Gauge(netdev::kMtu, {{"netdev", netdev}}, 4092);
  n.topology.Gauge(topology::kSpeed, {{"device", pci}, {"role", "nic"}}, 32e9);
  n.topology.Gauge(topology::kWidth, {{"device", pci}, {"role", "nic"}}, 16);
}

TEST(LinkShapeTest, ib_ports_take_rate_width_and_lane_from_rate_ethernet_ports_from_ethtool) {
  Node n;
  AddPort(n, "mlx5_0", "0000:18:00.0", "ib0", "InfiniBand", "NDR", 400, 4, 100);
  // RoCE: the rate's "4X HDR" is synthetic; ethtool says 200000Mb/s over 2 lanes.
  AddPort(n, "mlx5_1", "0000:29:00.0", "enp41s0np0", "Ethernet", "HDR", 200, 4, 50);
  n.ethtool.Gauge(ethtool::kLinkSpeed, {{"netdev", "enp41s0np0"}}, 200 * kGbit);
  n.ethtool.Gauge(ethtool::kLinkLanes, {{"netdev", "enp41s0np0"}}, 2);
  n.ethtool.Gauge(ethtool::kLinkSupportedMaxSpeed, {{"netdev", "enp41s0np0"}}, 400 * kGbit);
  n.topology.Gauge(topology::kPairDistance,
                   {{"gpu", "0000:1a:00.0"}, {"nic", "0000:18:00.0"}, {"rdma_device", "mlx5_0"}},
                   10);
  n.topology.Gauge(topology::kPairDistance,
                   {{"gpu", "0000:9a:00.0"}, {"nic", "0000:18:00.0"}, {"rdma_device", "mlx5_0"}},
                   50);
  NodeShape shape = BuildShape(n.Model());
  ASSERT_EQ(shape.ports.size(), 2u);
  const PortShape& ib = shape.ports[0];
  EXPECT_EQ(ib.key.Text(), "0000:18:00.0/1");
  EXPECT_EQ(*ib.width, 4);
  EXPECT_DOUBLE_EQ(*ib.lane_gbps, 100);
  EXPECT_EQ(ib.lane_speed, "NDR");
  EXPECT_EQ(*ib.mtu, 4092);
  EXPECT_EQ(ib.nearest_gpu, "0000:1a:00.0");
  EXPECT_EQ(ib.gpu_level, "PIX");
  EXPECT_EQ(*ib.pcie_width, 16);
  const PortShape& roce = shape.ports[1];
  EXPECT_EQ(*roce.width, 2);
  EXPECT_DOUBLE_EQ(*roce.rate_gbps, 200);
  EXPECT_DOUBLE_EQ(*roce.lane_gbps, 100);
  EXPECT_DOUBLE_EQ(*roce.supported_max_gbps, 400);
  EXPECT_EQ(roce.lane_speed, "");
}

TEST(LinkShapeTest, the_printed_shape_is_a_valid_manifest_that_matches_every_port) {
  Node n;
  AddPort(n, "mlx5_0", "0000:18:00.0", "ib0", "InfiniBand", "NDR", 400, 4, 100);
  AddPort(n, "mlx5_1", "0000:29:00.0", "ib1", "InfiniBand", "NDR", 400, 4, 100);
  NodeShape shape = BuildShape(n.Model());
  const std::string yaml = ShapeToYaml(shape, "node-1");
  EXPECT_NE(yaml.find("# fabricwatch fabric shape of node-1"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("lane_speed: \"NDR\""), std::string::npos) << yaml;
  auto manifest = ParseManifest(yaml, "printed.yaml");
  ASSERT_TRUE(manifest) << manifest.error().ToString() << "\n" << yaml;
  ASSERT_EQ(manifest->ports.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(manifest->ports[i].Matches(shape.ports[i]));
    EXPECT_EQ(*manifest->ports[i].expect.width, 4);
    EXPECT_DOUBLE_EQ(*manifest->ports[i].expect.lane_gbps, 100);
    EXPECT_EQ(*manifest->ports[i].expect.state, kStateActive);
  }
  EXPECT_FALSE(manifest->ports[0].Matches(shape.ports[1]));
}

TEST(LinkShapeTest, manifest_groups_select_ports_and_ports_need_a_name) {
  auto m = ParseManifest(
      "groups:\n  - link_layer: InfiniBand\n    count: 8\n    rate_gbps: 400\n    width: 4\n"
      "ports:\n  - device: mlx5_3\n    firmware: \"28.39.1002\"\n",
      "sku.yaml");
  ASSERT_TRUE(m) << m.error().ToString();
  ASSERT_EQ(m->groups.size(), 1u);
  EXPECT_EQ(*m->groups[0].count, 8);
  EXPECT_EQ(m->groups[0].link_layer, "InfiniBand");
  EXPECT_EQ(m->groups[0].where, "sku.yaml:2:5");
  EXPECT_EQ(m->ports[0].expect.firmware, "28.39.1002");
  EXPECT_TRUE(ParseManifest("", "empty.yaml")->empty());
}

TEST(LinkShapeTest, manifest_errors_name_file_line_and_key) {
  struct Case {
    const char* text;
    const char* expected;  // a substring of the message
  };
  const Case cases[] = {
      {"ports:\n  - device: mlx5_0\n    speed: 400\n", "sku.yaml:3:5: ports[0].speed: unknown key"},
      {"groups:\n  - count: eight\n", "sku.yaml:2:12: groups[0].count: expected an integer"},
      {"groups:\n  - rate_gbps: -400\n", "groups[0].rate_gbps: must be between"},
      {"groups:\n  - rate_gbps: 4e9\n", "groups[0].rate_gbps: must be between"},
      {"groups:\n  - width: 3\n", "width: must be 1, 2, 4, 8 or 12 lanes"},
      {"groups:\n  - lane_speed: GDR\n", "lane_speed: unknown generation \"GDR\""},
      {"groups:\n  - rate_gbps: 800\n    width: 4\n    lane_speed: NDR\n",
       "rate_gbps: impossible: 800 Gb/s over 4 lanes of 100 Gb/s"},
      {"groups:\n  - state: UP\n", "state: unknown state \"UP\""},
      {"groups:\n  - link_layer: Ethernet\n    link_layer: InfiniBand\n", "duplicate key"},
      {"ports:\n  - rate_gbps: 400\n", "sku.yaml:2:5: ports[0]: names no port"},
      {"ports:\n  - device: [mlx5_0]\n", "ports[0].device: must be a string"},
      {"ports: 8\n", "sku.yaml:1:8: ports: must be a list"},
      {"port:\n  - device: mlx5_0\n", "sku.yaml:1:1: port: unknown key"},
      {"ports:\n  - device: mlx5_0\n    rate_gbps: \"400\"\n", "rate_gbps: expected a number"},
      {"ports: [\n", "sku.yaml:2:1: not valid YAML"},
      {"- 1\n- 2\n", "expected a mapping"},
  };
  for (const Case& c : cases) {
    auto m = ParseManifest(c.text, "sku.yaml");
    ASSERT_FALSE(m) << c.text;
    EXPECT_NE(m.error().message().find(c.expected), std::string::npos)
        << c.text << "\n -> " << m.error().message();
  }
}

}  // namespace
}  // namespace fabricwatch::detect::shape
