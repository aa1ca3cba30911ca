// Attribution (detectors/core/attribution.h, issue 24): each finding gets the neighbour at the
// far end of its port and the jobs on its RDMA device, whatever entity form it names (IB port,
// RoCE netdev, device and netdev), through the rdma port join; nothing known leaves both empty.

#include "detectors/core/attribution.h"

#include <gtest/gtest.h>

#include "collectors/jobs/jobs_metrics.h"
#include "collectors/peer/peer_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "tests/testing/families.h"

namespace fabricwatch::detect {
namespace {

using testing::Families;

Attribution Node() {
  Attribution a;
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
  a.Observe("rdma", rdma.families());
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
  a.Observe("peer", peer.families());
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
  a.Observe("jobs", jobs.families());
  return a;
}

Finding With(EntityLabels entity) {
  Finding f;
  f.entity = std::move(entity);
  return f;
}

TEST(Attribution, ib_port_gets_its_peer) {
  Attribution a = Node();
  Finding f = With({{"device", "mlx5_0"}, {"port", "1"}});
  a.Annotate(f);
  EXPECT_EQ(f.peer, "leaf07 HCA 12");
  EXPECT_TRUE(f.jobs.empty());
}

TEST(Attribution, roce_netdev_gets_its_peer_and_its_devices_jobs) {
  Attribution a = Node();
  Finding f = With({{"netdev", "enp1s0"}, {"priority", "3"}});
  a.Annotate(f);
  EXPECT_EQ(f.peer, "leaf03 Ethernet12");
  EXPECT_EQ(f.jobs, (std::vector<std::string>{"slurm:1234", "slurm:1240"}));
}

TEST(Attribution, device_finding_gets_the_port_peer) {
  Attribution a = Node();
  Finding f = With({{"device", "mlx5_1"}, {"netdev", "enp1s0"}});
  a.Annotate(f);
  EXPECT_EQ(f.peer, "leaf03 Ethernet12");
  EXPECT_EQ(f.jobs.size(), 2u);
  Finding g = With({{"device", "mlx5_1"}});
  a.Annotate(g);
  EXPECT_EQ(g.peer, "leaf03 Ethernet12");
}

TEST(Attribution, a_pod_is_its_namespace_and_name_when_the_kubelet_named_it_else_its_uid) {
  Attribution a = Node();
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
  a.Observe("jobs", jobs.families());
  Finding f = With({{"device", "mlx5_0"}, {"port", "1"}});
  a.Annotate(f);
  EXPECT_EQ(f.jobs, (std::vector<std::string>{"kubernetes:1b4e28ba-2fa1-11d2-883f-0016d3cca427",
                                              "kubernetes:ml/trainer-0"}));
}

TEST(Attribution, nothing_known_leaves_both_empty_and_stale_values_go) {
  Attribution a = Node();
  Finding f = With({{"netdev", "eth9"}});
  f.peer = "stale";
  f.jobs = {"slurm:1"};
  a.Annotate(f);
  EXPECT_TRUE(f.peer.empty());
  EXPECT_TRUE(f.jobs.empty());
  // The jobs end: the next jobs snapshot has none.
  a.Observe("jobs", {});
  Finding g = With({{"netdev", "enp1s0"}});
  a.Annotate(g);
  EXPECT_TRUE(g.jobs.empty());
  EXPECT_EQ(g.peer, "leaf03 Ethernet12");
}

}  // namespace
}  // namespace fabricwatch::detect
