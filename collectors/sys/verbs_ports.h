#pragma once
// Port attributes that only libibverbs reports (ibv_query_port): the active and maximum IB MTU
// of an RDMA port (docs/reference.md §2.1). sysfs has no file for them
// (drivers/infiniband/core/sysfs.c prints no MTU), so the rdma collector reads them here when its
// sysfs root is the host's own /sys.
//
// Contexts are held for one round of queries only: Query() opens a device at its first query
// of the round (one ibv_get_device_list per round, one ibv_open_device per device) and Release()
// closes them all. A context held for longer would block the removal of a device whose driver
// cannot disassociate user contexts (rxe, siw: ib_uverbs_remove_one() waits for every open
// uverbs file, drivers/infiniband/core/uverbs_main.c), so `rdma link delete` or a hot unplug
// would hang until the agent let go. A query that fails closes its context at once. A device
// libibverbs does not list (no provider library, or gone) is looked up again only after
// kRelookupInterval, so a node without verbs costs one device listing per interval.
//
// Not thread-safe: owned by one collector.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "collectors/sys/verbs_handles.h"

namespace fabricwatch::sys {

// The raw values of struct ibv_port_attr the collector reads; the MTUs are enum ibv_mtu
// (1 = 256 bytes ... 5 = 4096 bytes), mapped to bytes by the caller (rdma::IbMtuBytes).
struct VerbsPortAttr {
  int state = 0;       // enum ibv_port_state
  int max_mtu = 0;     // enum ibv_mtu
  int active_mtu = 0;  // enum ibv_mtu
};

class VerbsPortQuery {
 public:
  static constexpr std::chrono::seconds kRelookupInterval{30};

  VerbsPortQuery() = default;
  VerbsPortQuery(const VerbsPortQuery&) = delete;
  VerbsPortQuery& operator=(const VerbsPortQuery&) = delete;

  // ibv_query_port(device, port). Errors:
  //   kNoData     libibverbs does not list the device (no provider library, or not yet or no
  //               longer there), or it was looked up less than kRelookupInterval ago;
  //   kNotFound   the device went away under the context (ENODEV, ENXIO, EIO after a
  //               disassociation): the context is closed;
  //   other       ibv_open_device or ibv_query_port failed with that errno; the context is
  //               closed.
  Result<VerbsPortAttr> Query(const std::string& device, int port);
  // Ends a round of queries: closes every context and the device list.
  void Release();
  // Forgets the lookups of devices not among `devices` (the caller's listing).
  void Retain(const std::vector<std::string>& devices);
  size_t open_devices() const { return open_.size(); }

 private:
  Result<ibv_context*> Context(const std::string& device);

  VerbsDeviceList list_;  // this round's ibv_get_device_list(), once listed
  int listed_count_ = 0;
  std::map<std::string, VerbsContext, std::less<>> open_;
  // Devices libibverbs did not list, and when they were looked up.
  std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> missing_;
};

}  // namespace fabricwatch::sys
