#pragma once
// The fabric ports whose far end the peer collector looks for: every port of every RDMA device,
// with its link layer, state and netdev (RoCE: the GID table's netdev; IPoIB: the device's
// netdev whose dev_port matches), read from sysfs each collection (a few files per port).

#include <string>
#include <vector>

#include "collectors/sys/sysfs.h"

namespace fabricwatch::peer {

struct FabricPort {
  std::string device;
  std::string port;
  std::string netdev;  // "" when none is known
  bool infiniband = false;
  bool active = false;  // state 4: ACTIVE
};

std::vector<FabricPort> DiscoverPorts(const sys::SysFs& sysfs);

}  // namespace fabricwatch::peer
