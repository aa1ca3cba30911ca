#pragma once
// Collector `topology`: GPU↔NIC PCIe affinity, NUMA placement and PCIe link health, from sysfs
// alone (docs/reference.md §6).
//
// Sources (kernel drivers/pci/pci-sysfs.c, drivers/pci/pcie/aer.c, drivers/iommu/iommu.c):
//   <sysfs>/bus/pci/devices/<bdf>  -> ../../../devices/pciDDDD:BB/<bdf>/.../<bdf>  (the tree)
//   <function>/{vendor,device,class,numa_node,local_cpulist}
//   <function>/{current,max}_link_{speed,width}
//   <function>/aer_dev_{correctable,nonfatal,fatal}      (TOTAL_ERR_* lines)
//   <function>/iommu_group -> kernel/iommu_groups/<n>, kernel/iommu_groups/<n>/type
//   <sysfs>/class/infiniband/*/device, <sysfs>/class/net/*/device  (RDMA device and netdev names)
//   <sysfs>/module/{nvidia_peermem,nv_peer_mem}                    (GPUDirect RDMA module)
//   <function>/config  (binary PCI config space, pci_config.h: MPS, MRRS, ACS)
// What it finds:
//   - GPUs: vendor NVIDIA 0x10de or AMD 0x1002 with base class 0x03 or 0x12 (never a BMC VGA
//     such as ASPEED 0x1a03); NICs: base class 0x02 (Ethernet, InfiniBand, other) plus any
//     function behind class/infiniband/*/device; SR-IOV virtual functions (a `physfn` link) are
//     skipped, their place in the tree is their PF's.
//   - The path of each from its bus/pci/devices link, resolved lexically against the sysfs root
//     (never realpath() on the host, so replay roots work): host bridge "pciDDDD:BB" + bridge
//     chain. Every GPU–NIC pair is classified like `nvidia-smi topo -m` (topology_parse.h,
//     Classify): PIX, PXB, PHB, NODE (same NUMA node, different host bridges) or SYS.
//   - Nearest NIC per GPU: among the RDMA-capable NICs (a class/infiniband device) when there
//     is any, else among all NICs; every NIC at the smallest distance is listed (ties are all
//     reported). The remote flag is 1 when that nearest level is NODE or SYS.
//   - Link health of each GPU, NIC and every bridge on their paths; the downtrained flag
//     compares current with max of the same function (speed or width).
//   - PCI config space of the same functions (pci_config.h): Max_Payload_Size (programmed and
//     supported) and Max_Read_Request_Size from the PCI Express capability, ACS capability and
//     control bits from the ACS extended capability. Privilege: the kernel (pci-sysfs.c) shows
//     config past byte 64 only to CAP_SYS_ADMIN, so an unprivileged agent reads the header
//     alone and exports none of these families (absent, never 0); ACS needs the 4096-byte
//     extended space.
// Cadence: the collector rediscovers the whole tree on every collection, and is registered
// with a 60s default interval — hot-plugged devices appear at the next collection, and link
// health, AER counters and config space are read on the same slow cadence.
// Robustness: a function that vanishes mid-walk (ENOENT/ENODEV) is skipped quietly; an
// unreadable or malformed value is omitted and counted; files the kernel legitimately lacks
// (no PCIe capability, no AER, numa_node on non-NUMA kernels, no config file) are simply absent;
// a config space that reads all ones (the function is gone) or has a broken capability list is
// counted, and what was decoded before the break is still exported.

#include <memory>
#include <span>

#include "collectors/core/collector.h"
#include "collectors/core/collector_info.h"

namespace fabricwatch::topology {

std::span<const MetricDesc> TopologyMetrics();
std::span<const CollectorOptionSpec> TopologyOptions();
Result<std::unique_ptr<Collector>> NewTopologyCollector(const CollectorContext& context);

}  // namespace fabricwatch::topology
