#include "collectors/sys/netdevs.h"

#include "collectors/core/value_parse.h"

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

}  // namespace fabricwatch::sys
