#include "collectors/registry.h"

#include "collectors/ethtool/ethtool.h"
#include "collectors/jobs/jobs.h"
#include "collectors/kmsg/kmsg.h"
#include "collectors/netdev/netdev.h"
#include "collectors/optics/optics.h"
#include "collectors/peer/peer.h"
#include "collectors/rdma/rdma.h"
#include "collectors/topology/topology.h"

namespace fabricwatch {
namespace {

using std::chrono_literals::operator""s;

// One line per collector. Order is the order of the README table and of --help.
const CollectorInfo kCollectors[] = {
    {"netdev", "Network interfaces: state, carrier and flap counters, speed, MTU, traffic", true,
     1s, netdev::NetdevOptions(), netdev::NetdevMetrics(), netdev::NewNetdevCollector,
     /*reads_ethtool=*/false, /*reads_link_events=*/true},
    {"rdma", "InfiniBand and RoCE devices and ports: state, rate, IBA and driver counters", true,
     1s, rdma::RdmaOptions(), rdma::RdmaMetrics(), rdma::NewRdmaCollector,
     /*reads_ethtool=*/false, /*reads_link_events=*/false, /*reads_rdma_port_events=*/true},
    {"ethtool", "NIC driver statistics: PFC per priority, pause storms, discards, PHY/FEC errors",
     true, 1s, ethtool::EthtoolOptions(), ethtool::EthtoolMetrics(), ethtool::NewEthtoolCollector,
     /*reads_ethtool=*/true},
    {"optics", "Transceiver DOM (SFP, QSFP, QSFP-DD/OSFP CMIS) and mlx5 module temperatures", true,
     5s, optics::OpticsOptions(), optics::OpticsMetrics(), optics::NewOpticsCollector,
     /*reads_ethtool=*/true},
    {"topology", "PCIe topology: GPU-NIC path types (PIX..SYS), NUMA placement, link health, AER",
     true, 60s, topology::TopologyOptions(), topology::TopologyMetrics(),
     topology::NewTopologyCollector},
    {"kmsg",
     "Kernel log of fabric drivers: mlx5 firmware health, command timeouts, module events, "
     "PCIe AER and slot power, RDMA async errors, link lines; counted by device and event",
     true, 1s, kmsg::KmsgOptions(), kmsg::KmsgMetrics(), kmsg::NewKmsgCollector},
    {"peer",
     "The far end of each fabric port: InfiniBand neighbours (node description, GUID, port) "
     "through directed-route SMP queries, Ethernet neighbours through lldpd or LLDP frames",
     true, 10s, peer::PeerOptions(), peer::PeerMetrics(), peer::NewPeerCollector,
     // Woken by libibverbs port events: a port that comes up is asked about at once.
     /*reads_ethtool=*/false, /*reads_link_events=*/false, /*reads_rdma_port_events=*/true,
     /*wakes_on_raised_finding=*/false, /*min_wake_gap=*/1s},
    {"jobs",
     "Scheduler jobs (Slurm job, Kubernetes pod) whose processes hold an RDMA device open, "
     "from /proc: a bounded scan every 30 s and when a finding is raised, on a node with a verbs "
     "device",
     true, 30s, jobs::JobsOptions(), jobs::JobsMetrics(), jobs::NewJobsCollector,
     /*reads_ethtool=*/false, /*reads_link_events=*/false, /*reads_rdma_port_events=*/false,
     // Woken when a finding is raised, at most once a second.
     /*wakes_on_raised_finding=*/true, /*min_wake_gap=*/1s},
};

}  // namespace

std::span<const CollectorInfo> CollectorRegistry() { return kCollectors; }

const CollectorInfo* FindCollector(std::string_view name) {
  for (const CollectorInfo& info : kCollectors) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace fabricwatch
