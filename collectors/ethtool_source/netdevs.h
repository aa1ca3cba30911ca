#pragma once
// Which netdevs are fabric ports: shared by the collectors that read per-port NIC data (ethtool,
// optics), so they agree on the default selection.

#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "collectors/ethtool_source/ethtool.h"
#include "collectors/sys/listing_watch.h"
#include "collectors/sys/sysfs.h"

namespace fabricwatch::sys {

// The netdevs of RDMA devices: <sysfs>/class/infiniband/*/device/net/*.
std::set<std::string> RdmaNetdevs(const SysFs& sysfs);

// A physical fabric port: a netdev with a PCI parent (its `device` link is a PCI function) or
// one that carries an RDMA device. Not lo, bridges, bonds, veth or tunnels.
bool IsFabricNetdev(const SysFs& sysfs, const std::string& netdev,
                    const std::set<std::string>& rdma_netdevs);

// Lists what a choice of netdevs for per-port NIC data (ethtool, optics) depends on into the
// two listings of `listings`: the source's own listing when `source` HasOwnNetdevs() (the second
// stays empty), else class/net and class/infiniband (an RDMA device can make a netdev a fabric
// port).
Status ListNetdevSources(const SysFs& sysfs, const EthtoolSource* source, ListingWatch& listings);

// The netdevs whose per-port NIC data (ethtool statistics, module EEPROM) is read, before the
// collector's device filter: the source's own listing when it has one (a replay directory), else
// the fabric netdevs of class/net (IsFabricNetdev), or every netdev of class/net when
// `every_netdev` (the operator named the devices with device-include).
Result<std::vector<std::string>> FabricNetdevCandidates(const SysFs& sysfs,
                                                        const EthtoolSource& source,
                                                        bool every_netdev);

}  // namespace fabricwatch::sys
