#include "collectors/peer/peer_ports.h"

namespace fabricwatch::peer {
namespace {

// <class/infiniband/<dev>/device/net/*> by dev_port + 1: the IPoIB netdev of each port
// (drivers/infiniband/ulp/ipoib sets dev_port to port - 1).
std::string IpoibNetdev(const sys::SysFs& sysfs, const std::string& base, const std::string& port) {
  auto nets = sysfs.ListDir(base + "/device/net");
  if (!nets) return "";
  for (const std::string& net : *nets) {
    auto dev_port = sysfs.ReadUint64(base + "/device/net/" + net + "/dev_port");
    if (dev_port && std::to_string(*dev_port + 1) == port) return net;
  }
  return "";
}

}  // namespace

std::vector<FabricPort> DiscoverPorts(const sys::SysFs& sysfs) {
  std::vector<FabricPort> ports;
  auto devices = sysfs.ListDir("class/infiniband");
  if (!devices) return ports;
  for (const std::string& device : *devices) {
    const std::string base = "class/infiniband/" + device;
    auto numbers = sysfs.ListDir(base + "/ports");
    if (!numbers) continue;
    for (const std::string& number : *numbers) {
      const std::string dir = base + "/ports/" + number;
      FabricPort p{.device = device, .port = number};
      auto layer = sysfs.ReadString(dir + "/link_layer");
      p.infiniband = layer && *layer == "InfiniBand";
      // "4: ACTIVE" (drivers/infiniband/core/sysfs.c state_show).
      auto state = sysfs.ReadString(dir + "/state");
      p.active = state && state->starts_with("4:");
      if (p.infiniband) {
        p.netdev = IpoibNetdev(sysfs, base, number);
      } else if (auto ndev = sysfs.ReadString(dir + "/gid_attrs/ndevs/0"); ndev) {
        p.netdev = *ndev;  // RoCE: the netdev of GID 0
      }
      ports.push_back(std::move(p));
    }
  }
  return ports;
}

}  // namespace fabricwatch::peer
