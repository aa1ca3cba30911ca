// Attribution (detectors/core/attribution.h, issue 24): each finding gets the neighbour at the
// far end of its port and the jobs on its RDMA device, whatever entity form it names (IB port,
// RoCE netdev, device and netdev), through the node model's port join; nothing known leaves both
// empty.

#include "detectors/core/attribution.h"

#include <gtest/gtest.h>

#include "collectors/jobs/jobs_metrics.h"
#include "collectors/peer/peer_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "tests/testing/families.h"

namespace fabricwatch::detect {
namespace {

using testing::Families;

NodeModelBuilder Node() {
  NodeModelBuilder a;
  Families rdma;
  rdma.Gauge(rdma::kPortInfo,
             {{"device", "mlx5_0"},
              {"port", "1"},
              {"link_layer", "InfiniBand"},
              {"netdev", "ib0"},
              {"speed", "NDR"}},
             1);
  rdma.Gauge(rdma::kPortInfo,
             {{"device", "mlx5_1"},
              {"port", "1"},
              {"link_layer", "Ethernet"},
              {"netdev", "enp1s0"},
              {"speed", ""}},
             1);
  a.Observe(rdma::kCollector, rdma.families());
  Families peer;
  peer.Gauge(peer::kPeerInfo,
             {{"device", "mlx5_0"},
              {"port", "1"},
              {"netdev", "ib0"},
              {"peer_name", "leaf07 HCA"},
              {"peer_port", "12"},
              {"peer_id", "0x1070fd0300aa0001"},
              {"source", "smp"}},
             1);
  peer.Gauge(peer::kPeerInfo,
             {{"device", ""},
              {"port", ""},
              {"netdev", "enp1s0"},
              {"peer_name", "leaf03"},
              {"peer_port", "Ethernet12"},
              {"peer_id", "aa:bb:cc:00:00:01"},
              {"source", "lldpd"}},
             1);
  a.Observe(peer::kCollector, peer.families());
  Families jobs;
  jobs.Gauge(jobs::kDeviceJobInfo,
             {{"device", "mlx5_1"},
              {"scheduler", "slurm"},
              {"job_id", "1240"},
              {"pod_namespace", ""},
              {"pod_name", ""}},
             1);
  jobs.Gauge(jobs::kDeviceJobInfo,
             {{"device", "mlx5_1"},
              {"scheduler", "slurm"},
              {"job_id", "1234"},
              {"pod_namespace", ""},
              {"pod_name", ""}},
             1);
  a.Observe(jobs::kCollector, jobs.families());
  return a;
}

Finding With(EntityLabels entity) {
  Finding f;
  f.entity = std::move(entity);
  return f;
}

TEST(Attribution, ib_port_gets_its_peer) {
  NodeModelBuilder a = Node();
  Finding f = With({{"device", "mlx5_0"}, {"port", "1"}});
  Attribute(f, a.model());
  EXPECT_EQ(f.peer, "leaf07 HCA 12");
  EXPECT_TRUE(f.jobs.empty());
}

TEST(Attribution, roce_netdev_gets_its_peer_and_its_devices_jobs) {
  NodeModelBuilder a = Node();
  Finding f = With({{"netdev", "enp1s0"}, {"priority", "3"}});
  Attribute(f, a.model());
  EXPECT_EQ(f.peer, "leaf03 Ethernet12");
  EXPECT_EQ(f.jobs, (std::vector<std::string>{"slurm:1234", "slurm:1240"}));
}

TEST(Attribution, device_finding_gets_the_port_peer) {
  NodeModelBuilder a = Node();
  Finding f = With({{"device", "mlx5_1"}, {"netdev", "enp1s0"}});
  Attribute(f, a.model());
  EXPECT_EQ(f.peer, "leaf03 Ethernet12");
  EXPECT_EQ(f.jobs.size(), 2u);
  Finding g = With({{"device", "mlx5_1"}});
  Attribute(g, a.model());
  EXPECT_EQ(g.peer, "leaf03 Ethernet12");
}

TEST(Attribution, a_pod_is_its_namespace_and_name_when_the_kubelet_named_it_else_its_uid) {
  NodeModelBuilder a = Node();
  Families jobs;
  jobs.Gauge(jobs::kDeviceJobInfo,
             {{"device", "mlx5_0"},
              {"scheduler", "kubernetes"},
              {"job_id", "ml/trainer-0"},
              {"pod_namespace", "ml"},
              {"pod_name", "trainer-0"}},
             1);
  jobs.Gauge(jobs::kDeviceJobInfo,
             {{"device", "mlx5_0"},
              {"scheduler", "kubernetes"},
              {"job_id", "1b4e28ba-2fa1-11d2-883f-0016d3cca427"},
              {"pod_namespace", ""},
              {"pod_name", ""}},
             1);
  a.Observe(jobs::kCollector, jobs.families());
  Finding f = With({{"device", "mlx5_0"}, {"port", "1"}});
  Attribute(f, a.model());
  EXPECT_EQ(f.jobs, (std::vector<std::string>{"kubernetes:1b4e28ba-2fa1-11d2-883f-0016d3cca427",
                                              "kubernetes:ml/trainer-0"}));
}

TEST(Attribution, nothing_known_leaves_both_empty_and_stale_values_go) {
  NodeModelBuilder a = Node();
  Finding f = With({{"netdev", "eth9"}});
  f.peer = "stale";
  f.jobs = {"slurm:1"};
  Attribute(f, a.model());
  EXPECT_TRUE(f.peer.empty());
  EXPECT_TRUE(f.jobs.empty());
  // The jobs end: the next jobs snapshot has none.
  a.Observe(jobs::kCollector, {});
  Finding g = With({{"netdev", "enp1s0"}});
  Attribute(g, a.model());
  EXPECT_TRUE(g.jobs.empty());
  EXPECT_EQ(g.peer, "leaf03 Ethernet12");
}

TEST(Attribution, a_device_wide_finding_of_a_multi_port_device_has_no_one_neighbour) {
  NodeModelBuilder a = Node();
  Families rdma;
  for (const char* port : {"1", "2"}) {
    rdma.Gauge(rdma::kPortInfo,
               {{"device", "mlx5_4"},
                {"port", port},
                {"link_layer", "InfiniBand"},
                {"netdev", ""},
                {"speed", "NDR"}},
               1);
  }
  a.Observe(rdma::kCollector, rdma.families());
  Families peer;
  peer.Gauge(peer::kPeerInfo,
             {{"device", "mlx5_4"},
              {"port", "2"},
              {"netdev", ""},
              {"peer_name", "leaf09 HCA"},
              {"peer_port", "3"},
              {"peer_id", "0x1070fd0300aa0009"},
              {"source", "smp"}},
             1);
  a.Observe(peer::kCollector, peer.families());
  Finding port = With({{"device", "mlx5_4"}, {"port", "2"}});
  Attribute(port, a.model());
  EXPECT_EQ(port.peer, "leaf09 HCA 3");
  Finding device = With({{"device", "mlx5_4"}});
  Attribute(device, a.model());
  EXPECT_TRUE(device.peer.empty());
}

}  // namespace
}  // namespace fabricwatch::detect
