#pragma once
// Collector `netdev`: network interfaces from <sysfs>/class/net.
//
// Sources (kernel Documentation/ABI/testing/sysfs-class-net, net/core/net-sysfs.c):
//   class/net/<netdev>/{ifindex,flags,operstate,carrier,mtu,speed,duplex,address}
//   class/net/<netdev>/{carrier_changes (3.15+), carrier_up_count, carrier_down_count (4.16+)}
//   class/net/<netdev>/statistics/{rx,tx}_{bytes,packets,errors,dropped}
//   class/net/<netdev>/device -> PCI function, device/driver -> driver
//   class/infiniband/<dev>/device/net/<netdev>, class/infiniband/<dev>/ports/<n>/gid_attrs/ndevs/*
//     -> the RDMA device a netdev belongs to (docs/reference.md §1.7)
//   the rtnetlink LinkEventLog (collectors/sys/link_events.h), when the listener runs.
// Caveats: `carrier`, `speed` and `duplex` read EINVAL while the interface is down — the value is
// then omitted, not an error. `speed` -1 means unknown and is omitted. Files that old kernels lack
// are omitted. A malformed value is omitted and counted; a vanished interface is skipped and
// counted; the other interfaces are always emitted. Non-directories in class/net
// (bonding_masters) are ignored.
// Counter files are kept open and re-read with pread (docs/design.md §8) for up to
// kMaxKeptOpenInterfaces interfaces; further interfaces are read open/read/close so a host with
// hundreds of container veths cannot exhaust the fd limit.

#include <memory>
#include <span>

#include "collectors/core/collector.h"
#include "collectors/core/collector_info.h"

namespace fabricwatch::netdev {

std::span<const MetricDesc> NetdevMetrics();
std::span<const CollectorOptionSpec> NetdevOptions();
Result<std::unique_ptr<Collector>> NewNetdevCollector(const CollectorContext& context);

}  // namespace fabricwatch::netdev
