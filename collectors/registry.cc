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

// One entry per collector. Order is the order of the README table and of --help.
const CollectorInfo kCollectors[] = {
    {.name = "netdev",
     .description = "Network interfaces: state, carrier and flap counters, speed, MTU, traffic",
     .enabled_by_default = true,
     .default_interval = 1s,
     .options = netdev::NetdevOptions(),
     .metrics = netdev::NetdevMetrics(),
     .factory = netdev::NewNetdevCollector,
     .reads_link_events = true},
    {.name = "rdma",
     .description = "InfiniBand and RoCE devices and ports: state, rate, IBA and driver counters",
     .enabled_by_default = true,
     .default_interval = 1s,
     .options = rdma::RdmaOptions(),
     .metrics = rdma::RdmaMetrics(),
     .factory = rdma::NewRdmaCollector,
     .reads_rdma_port_events = true},
    {.name = "ethtool",
     .description =
         "NIC driver statistics: PFC per priority, pause storms, discards, PHY/FEC errors",
     .enabled_by_default = true,
     .default_interval = 1s,
     .options = ethtool::EthtoolOptions(),
     .metrics = ethtool::EthtoolMetrics(),
     .factory = ethtool::NewEthtoolCollector,
     .reads_ethtool = true},
    {.name = "optics",
     .description = "Transceiver DOM (SFP, QSFP, QSFP-DD/OSFP CMIS) and mlx5 module temperatures",
     .enabled_by_default = true,
     .default_interval = 5s,
     .options = optics::OpticsOptions(),
     .metrics = optics::OpticsMetrics(),
     .factory = optics::NewOpticsCollector,
     .privileges = optics::OpticsPrivileges(),
     .reads_ethtool = true},
    {.name = "topology",
     .description =
         "PCIe topology: GPU-NIC path types (PIX..SYS), NUMA placement, link health, AER",
     .enabled_by_default = true,
     .default_interval = 60s,
     .options = topology::TopologyOptions(),
     .metrics = topology::TopologyMetrics(),
     .factory = topology::NewTopologyCollector},
    {.name = "kmsg",
     .description =
         "Kernel log of fabric drivers: mlx5 firmware health, command timeouts, module events, "
         "PCIe AER and slot power, RDMA async errors, link lines; counted by device and event",
     .enabled_by_default = true,
     .default_interval = 1s,
     .options = kmsg::KmsgOptions(),
     .metrics = kmsg::KmsgMetrics(),
     .factory = kmsg::NewKmsgCollector,
     .sources = kmsg::KmsgSources(),
     .privileges = kmsg::KmsgPrivileges()},
    {.name = "peer",
     .description =
         "The far end of each fabric port: InfiniBand neighbours (node description, GUID, port) "
         "through directed-route SMP queries, Ethernet neighbours through lldpd or LLDP frames",
     .enabled_by_default = true,
     .default_interval = 10s,
     .options = peer::PeerOptions(),
     .metrics = peer::PeerMetrics(),
     .factory = peer::NewPeerCollector,
     .sources = peer::PeerSources(),
     // Woken by libibverbs port events: a port that comes up is asked about at once.
     .reads_rdma_port_events = true,
     .min_wake_gap = 1s},
    {.name = "jobs",
     .description =
         "Scheduler jobs (Slurm job, Kubernetes pod) whose processes hold an RDMA device open, "
         "from /proc: a bounded scan every 30 s and when a finding is raised, on a node with a "
         "verbs device",
     .enabled_by_default = true,
     .default_interval = 30s,
     .options = jobs::JobsOptions(),
     .metrics = jobs::JobsMetrics(),
     .factory = jobs::NewJobsCollector,
     .sources = jobs::JobsSources(),
     // Woken when a finding is raised, at most once a second.
     .wakes_on_raised_finding = true,
     .min_wake_gap = 1s},
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
