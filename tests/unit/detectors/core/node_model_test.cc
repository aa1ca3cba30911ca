// The node model (detectors/core/node_model.h, issue 36): one inventory of the node, built from
// the collectors' snapshots, with typed port ids and no stale values.
#include "detectors/core/node_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "collectors/ethtool/ethtool_metrics.h"
#include "collectors/jobs/jobs_metrics.h"
#include "collectors/netdev/netdev_metrics.h"
#include "collectors/optics/optics_metrics.h"
#include "collectors/peer/peer_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/topology/topology_metrics.h"
#include "tests/testing/families.h"

namespace fabricwatch::detect {
namespace {

using testing::Families;

void AddPort(Families& f, const std::string& device, const std::string& port,
             const std::string& link_layer, const std::string& netdev, double state) {
  f.Gauge(rdma::kPortInfo,
          {{"device", device},
           {"port", port},
           {"link_layer", link_layer},
           {"netdev", netdev},
           {"speed", "NDR"}},
          1);
  f.Gauge(rdma::kPortState, {{"device", device}, {"port", port}}, state);
}

TEST(NodeModel, ports_are_ordered_by_device_then_port_number_with_their_facts) {
  Families rdma;
  AddPort(rdma, "mlx5_1", "10", "InfiniBand", "ib10", 4);
  AddPort(rdma, "mlx5_1", "2", "InfiniBand", "ib2", 1);
  AddPort(rdma, "mlx5_0", "1", "Ethernet", "enp1s0", 4);
  rdma.Gauge(rdma::kPortRate, {{"device", "mlx5_1"}, {"port", "2"}}, 50e9);
  rdma.Gauge(rdma::kPortLanes, {{"device", "mlx5_1"}, {"port", "2"}}, 4);
  NodeModelBuilder builder;
  EXPECT_TRUE(builder.Observe(rdma::kCollector, rdma.families()));
  const NodeModel& node = builder.model();
  ASSERT_EQ(node.ports().size(), 3u);
  EXPECT_EQ(node.ports()[0].id, (PortId{"mlx5_0", 1}));
  EXPECT_EQ(node.ports()[1].id, (PortId{"mlx5_1", 2}));  // 2 before 10
  EXPECT_EQ(node.ports()[2].id, (PortId{"mlx5_1", 10}));
  EXPECT_TRUE(node.ports()[0].ethernet());
  EXPECT_TRUE(node.ports()[0].active());
  const RdmaPort* ib = node.Port({"mlx5_1", 2});
  ASSERT_NE(ib, nullptr);
  EXPECT_FALSE(ib->ethernet());
  EXPECT_FALSE(ib->active());
  EXPECT_EQ(ib->netdev, "ib2");
  EXPECT_EQ(ib->lane_speed_name, "NDR");
  EXPECT_EQ(*ib->rate_bytes_per_second, 50e9);
  EXPECT_EQ(*ib->lanes, 4);
  EXPECT_FALSE(node.ports()[2].rate_bytes_per_second);
  EXPECT_EQ(ib->id.Text(), "mlx5_1/2");
  EXPECT_TRUE(node.ports_reported());
}

TEST(NodeModel, a_failed_collection_keeps_the_ports_but_no_stale_value) {
  Families rdma;
  AddPort(rdma, "mlx5_0", "1", "Ethernet", "enp1s0", 4);
  NodeModelBuilder builder;
  builder.Observe(rdma::kCollector, rdma.families());
  // The next rdma snapshot has no port facts and no state (a failed collection).
  builder.Observe(rdma::kCollector, {});
  const NodeModel& node = builder.model();
  EXPECT_FALSE(node.ports_reported());
  ASSERT_EQ(node.ports().size(), 1u);
  EXPECT_TRUE(node.ports()[0].ethernet());  // a RoCE port never turns into an IB port
  EXPECT_EQ(node.ports()[0].netdev, "enp1s0");
  EXPECT_FALSE(node.ports()[0].state);  // unknown, not the last state seen
  // Port facts again, without the port: it is gone.
  Families other;
  AddPort(other, "mlx5_3", "1", "InfiniBand", "", 4);
  builder.Observe(rdma::kCollector, other.families());
  ASSERT_EQ(builder.model().ports().size(), 1u);
  EXPECT_EQ(builder.model().ports()[0].id.device, "mlx5_3");
}

TEST(NodeModel, hostile_samples_name_no_port_and_unreadable_values_are_unknown) {
  Families rdma;
  AddPort(rdma, "", "1", "InfiniBand", "", 4);          // no device
  AddPort(rdma, "mlx5_0", "one", "InfiniBand", "", 4);  // not a port number
  AddPort(rdma, "mlx5_0", "1", "", "", std::numeric_limits<double>::quiet_NaN());
  rdma.Gauge(rdma::kPortLanes, {{"device", "mlx5_0"}, {"port", "1"}}, -3);
  rdma.Gauge(rdma::kPortRate, {{"device", "mlx5_0"}, {"port", "1"}},
             std::numeric_limits<double>::infinity());
  NodeModelBuilder builder;
  builder.Observe(rdma::kCollector, rdma.families());
  ASSERT_EQ(builder.model().ports().size(), 1u);
  const RdmaPort& port = builder.model().ports()[0];
  EXPECT_FALSE(port.ethernet());  // no link layer (kernels before RoCE): InfiniBand
  EXPECT_FALSE(port.state);
  EXPECT_FALSE(port.lanes);
  EXPECT_FALSE(port.rate_bytes_per_second);
  EXPECT_EQ(PortId::FromLabels("mlx5_0", "1x"), std::nullopt);
  EXPECT_EQ(PortId::FromLabels("mlx5_0", ""), std::nullopt);
}

TEST(NodeModel, entities_name_their_port_by_device_and_port_or_by_netdev) {
  Families rdma;
  // Two RDMA ports on one netdev (rxe and siw on one veth): the lowest names it.
  AddPort(rdma, "siw0", "1", "Ethernet", "veth0", 4);
  AddPort(rdma, "rxe0", "1", "Ethernet", "veth0", 4);
  AddPort(rdma, "mlx5_4", "1", "InfiniBand", "ib0", 4);
  AddPort(rdma, "mlx5_4", "2", "InfiniBand", "ib1", 4);
  NodeModelBuilder builder;
  builder.Observe(rdma::kCollector, rdma.families());
  const NodeModel& node = builder.model();
  EXPECT_EQ(node.PortOfNetdev("veth0")->id, (PortId{"rxe0", 1}));
  EXPECT_EQ(node.PortOfNetdev("ib1")->id, (PortId{"mlx5_4", 2}));
  EXPECT_EQ(node.PortOfNetdev(""), nullptr);
  EXPECT_EQ(node.PortNamedBy({{"device", "mlx5_4"}, {"port", "1"}})->netdev, "ib0");
  EXPECT_EQ(node.PortNamedBy({{"netdev", "veth0"}})->id.device, "rxe0");
  EXPECT_EQ(node.PortNamedBy({{"device", "siw0"}, {"netdev", "veth0"}})->id.device, "siw0");
  EXPECT_EQ(node.PortNamedBy({{"device", "rxe0"}})->id.device, "rxe0");  // its only port
  EXPECT_EQ(node.PortNamedBy({{"device", "mlx5_4"}}), nullptr);          // which of two?
  EXPECT_EQ(node.PortNamedBy({{"device", "mlx5_4"}, {"port", "9"}}), nullptr);
  EXPECT_EQ(node.PortNamedBy({{"netdev", "eth7"}}), nullptr);
}

TEST(NodeModel, each_collector_replaces_only_its_own_facts) {
  NodeModelBuilder builder;
  Families netdevs;
  netdevs.Gauge(netdev::kMtu, {{"netdev", "enp1s0"}}, 9000);
  builder.Observe(netdev::kCollector, netdevs.families());
  Families ethtool_families;
  ethtool_families.Gauge(ethtool::kLinkSpeed, {{"netdev", "enp1s0"}}, 50e9);
  ethtool_families.Gauge(ethtool::kLinkLanes, {{"netdev", "enp1s0"}}, 4);
  builder.Observe(ethtool::kCollector, ethtool_families.families());
  const NetdevLink* link = builder.model().Netdev("enp1s0");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(*link->mtu, 9000);
  EXPECT_EQ(*link->ethtool_speed_bytes_per_second, 50e9);
  // The next ethtool snapshot has no link settings: they are gone, the MTU stays.
  builder.Observe(ethtool::kCollector, {});
  link = builder.model().Netdev("enp1s0");
  EXPECT_EQ(*link->mtu, 9000);
  EXPECT_FALSE(link->ethtool_speed_bytes_per_second);
  EXPECT_FALSE(link->ethtool_lanes);
  // A netdev neither collector reports any more (a container's veth gone) leaves the model.
  builder.Observe(netdev::kCollector, {});
  EXPECT_EQ(builder.model().Netdev("enp1s0"), nullptr);
}

TEST(NodeModel, modules_functions_distances_peers_and_jobs) {
  NodeModelBuilder builder;
  Families optics_families;
  optics_families.Gauge(optics::kPresent, {{"netdev", "enp1s0"}}, 1);
  optics_families.Gauge(optics::kPresent, {{"netdev", "enp2s0"}}, 0);
  builder.Observe(optics::kCollector, optics_families.families());
  Families topo;
  topo.Gauge(topology::kDeviceInfo,
             {{"device", "0000:18:00.0"},
              {"role", "nic"},
              {"vendor_id", "0x15b3"},
              {"device_id", "0x1021"},
              {"pci_class", "0x020000"},
              {"upstream", "0000:17:00.0"},
              {"host_bridge", "pci0000:16"}},
             1);
  topo.Gauge(topology::kWidth, {{"device", "0000:18:00.0"}, {"role", "nic"}}, 16);
  topo.Gauge(topology::kPairDistance,
             {{"gpu", "0000:1a:00.0"}, {"nic", "0000:18:00.0"}, {"rdma_device", "mlx5_0"}}, 10);
  builder.Observe(topology::kCollector, topo.families());
  Families peers;
  peers.Gauge(peer::kPeerInfo,
              {{"device", "mlx5_0"},
               {"port", "1"},
               {"netdev", ""},
               {"peer_name", "leaf07"},
               {"peer_port", "12"},
               {"peer_id", "0x1"},
               {"source", "smp"}},
              1);
  builder.Observe(peer::kCollector, peers.families());
  Families jobs_families;
  jobs_families.Gauge(jobs::kDeviceJobInfo,
                      {{"device", "mlx5_0"},
                       {"scheduler", "slurm"},
                       {"job_id", "7"},
                       {"pod_namespace", ""},
                       {"pod_name", ""}},
                      1);
  builder.Observe(jobs::kCollector, jobs_families.families());
  Families rdma;
  AddPort(rdma, "mlx5_0", "1", "InfiniBand", "ib0", 4);
  builder.Observe(rdma::kCollector, rdma.families());

  const NodeModel& node = builder.model();
  EXPECT_TRUE(*node.ModuleOf("enp1s0")->present);
  EXPECT_FALSE(*node.ModuleOf("enp2s0")->present);
  EXPECT_EQ(node.ModuleOf("enp3s0"), nullptr);
  const PciFunction* nic = node.Function("0000:18:00.0");
  ASSERT_NE(nic, nullptr);
  EXPECT_EQ(nic->role, "nic");
  EXPECT_EQ(nic->upstream, "0000:17:00.0");
  EXPECT_EQ(*nic->width, 16);
  ASSERT_EQ(node.gpu_nic_distances().size(), 1u);
  EXPECT_EQ(node.gpu_nic_distances()[0].distance, 10);
  EXPECT_EQ(node.PeerOf(*node.Port({"mlx5_0", 1}))->Text(), "leaf07 12");
  EXPECT_EQ(node.JobsOn("mlx5_0"), (std::vector<std::string>{"slurm:7"}));
  EXPECT_TRUE(node.JobsOn("mlx5_9").empty());
  // The jobs end.
  builder.Observe(jobs::kCollector, {});
  EXPECT_TRUE(builder.model().JobsOn("mlx5_0").empty());
}

TEST(NodeModel, a_published_model_is_shared_until_the_next_change) {
  NodeModelBuilder builder;
  const auto empty = builder.Current();
  EXPECT_EQ(builder.Current(), empty);
  EXPECT_FALSE(builder.Observe("no_such_collector", {}));
  EXPECT_EQ(builder.Current(), empty);
  Families rdma;
  AddPort(rdma, "mlx5_0", "1", "InfiniBand", "", 4);
  builder.Observe(rdma::kCollector, rdma.families());
  const auto first = builder.Current();
  EXPECT_NE(first, empty);
  EXPECT_TRUE(empty->ports().empty());  // what a consumer kept does not change under it
  EXPECT_EQ(first->ports().size(), 1u);
  EXPECT_EQ(EmptyNodeModel().ports().size(), 0u);
}

TEST(NodeModel, it_reads_the_collectors_it_names) {
  const auto collectors = NodeModelBuilder::Collectors();
  for (std::string_view name :
       {rdma::kCollector, netdev::kCollector, ethtool::kCollector, optics::kCollector,
        topology::kCollector, peer::kCollector, jobs::kCollector}) {
    EXPECT_NE(std::find(collectors.begin(), collectors.end(), name), collectors.end()) << name;
    NodeModelBuilder builder;
    EXPECT_TRUE(builder.Observe(name, {})) << name;
  }
}

}  // namespace
}  // namespace fabricwatch::detect
