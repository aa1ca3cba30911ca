#include "collectors/ethtool_source/netdevs.h"

#include "base/value_parse.h"

namespace fabricwatch::sys {

std::set<std::string> RdmaNetdevs(const SysFs& sysfs) {
  std::set<std::string> netdevs;
  if (auto devices = sysfs.ListDir("class/infiniband")) {
    for (const std::string& device : *devices) {
      if (auto names = sysfs.ListDir("class/infiniband/" + device + "/device/net")) {
        netdevs.insert(names->begin(), names->end());
      }
    }
  }
  return netdevs;
}

bool IsFabricNetdev(const SysFs& sysfs, const std::string& netdev,
                    const std::set<std::string>& rdma_netdevs) {
  if (netdev == "lo") return false;
  if (rdma_netdevs.contains(netdev)) return true;
  auto pci = sysfs.ReadLinkBasename("class/net/" + netdev + "/device");
  return pci && IsPciAddress(*pci);
}

Status ListNetdevSources(const SysFs& sysfs, const EthtoolSource* source, ListingWatch& listings) {
  if (source != nullptr && source->HasOwnNetdevs()) {
    return source->ListNetdevEntries(listings.listing(0));
  }
  if (Status status = sysfs.ListDirInto("class/net", listings.listing(0)); !status.ok()) {
    return status;
  }
  if (!sysfs.ListDirInto("class/infiniband", listings.listing(1)).ok()) listings.listing(1).clear();
  return Status::Ok();
}

Result<std::vector<std::string>> FabricNetdevCandidates(const SysFs& sysfs,
                                                        const EthtoolSource& source,
                                                        bool every_netdev) {
  if (source.HasOwnNetdevs()) return source.Netdevs();
  auto names = sysfs.ListDir("class/net");
  if (!names) return names;
  const std::set<std::string> rdma_netdevs = RdmaNetdevs(sysfs);
  std::vector<std::string> selected;
  for (const std::string& name : *names) {
    if (every_netdev || IsFabricNetdev(sysfs, name, rdma_netdevs)) selected.push_back(name);
  }
  return selected;
}

}  // namespace fabricwatch::sys
