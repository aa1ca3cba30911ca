#pragma once
// Collector `rdma`: InfiniBand and RoCE devices and ports from <sysfs>/class/infiniband.
//
// Sources (docs/reference.md §1; kernel drivers/infiniband/core/sysfs.c,
// Documentation/ABI/stable/sysfs-class-infiniband):
//   <dev>/{node_type,node_guid,sys_image_guid,fw_ver,node_desc,hca_type,board_id}
//   <dev>/device -> PCI function; <dev>/device/net/* -> its netdevs; <dev>/hw_counters/*
//   <dev>/ports/<n>/{state,phys_state,rate,link_layer,lid,sm_lid}
//   <dev>/ports/<n>/counters/*      IBA PortCounters / PortCountersExtended (PMA, one MAD per read)
//   <dev>/ports/<n>/counters_ext/*  legacy 64-bit data/packet counters (mlx4)
//   <dev>/ports/<n>/hw_counters/*   driver counters (mlx5 Q and congestion counters, irdma, ...)
//   <dev>/ports/<n>/gid_attrs/ndevs/* -> the RoCE netdev of the port
// Caveats:
//   - port_xmit_data / port_rcv_data count 4-octet words (IBA); they are exported in bytes (×4).
//   - IBA error counters are narrow (4/8/16 bits) and saturate at all-ones instead of wrapping;
//     fabric_rdma_port_saturated flags a counter stuck at its maximum. A 32-bit data or
//     packet counter (no PortCountersExtended) saturates too.
//   - "N/A (no PMA)" (old kernels) omits the value; current kernels return an errno. EINVAL, EIO
//     and EOPNOTSUPP on a counter (a restricted PF) omit it and log once; it is retried each tick.
//   - Devices are found by listing class/infiniband, never by name prefix (systemd renames
//     HCAs to ibp202s0, rocep1s0f0); a device with only hw_counters (bnxt_re) or neither is fine.
//   - Unknown counters are never dropped: fabric_rdma_port_pma_stat_total,
//     fabric_rdma_port_hw_stat_total and fabric_rdma_device_hw_stat_total carry them with
//     the raw file name in the `counter` label. hw_counters/lifespan is a setting, not a counter.
// IB MTU (rdma_mtu.h): ibv_query_port's active_mtu and max_mtu on the host's own /sys, the
// replay files ports/<n>/{active_mtu,max_mtu} under a replay root; absent without either.
// ports/<n>/hw_counters on the host's own /sys: one RDMA netlink STAT_GET per port instead of one
// read per file, the files as fallback (rdma_hw_netlink.h; option hw-counters-source).
// Port events: with the libibverbs listener (collectors/sys/verbs_events.h) running, port
// state changes are also counted as they happen in fabric_rdma_port_events_total.
// Counter files are kept open and re-read with pread within an fd budget; devices are
// rediscovered when the device list changes, a device's files vanish, or every rediscovery
// interval (option rediscovery-interval, default 60s).

#include <memory>
#include <span>

#include "collectors/core/collector.h"
#include "collectors/core/collector_info.h"

namespace fabricwatch::rdma {

std::span<const MetricDesc> RdmaMetrics();
std::span<const CollectorOptionSpec> RdmaOptions();
Result<std::unique_ptr<Collector>> NewRdmaCollector(const CollectorContext& context);

class PortMtuSource;  // rdma_mtu.h
// NewRdmaCollector with the IB MTUs read from `mtu_source` (tests: a fake source).
Result<std::unique_ptr<Collector>> NewRdmaCollectorWithMtuSource(
    const CollectorContext& context, std::unique_ptr<PortMtuSource> mtu_source);

}  // namespace fabricwatch::rdma
