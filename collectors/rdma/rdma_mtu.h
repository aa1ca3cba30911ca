#pragma once
// The IB MTU of RDMA ports (issue 34): fabric_rdma_port_active_mtu_bytes and
// fabric_rdma_port_max_mtu_bytes. sysfs has no MTU file, so on the host's own /sys the values
// come from libibverbs (ibv_query_port, collectors/sys/verbs_ports.h), and in a replay root from
// the replay files ports/<n>/active_mtu and max_mtu (docs/design.md §5.1). Without either (no
// provider library, no replay file) the families are absent, with one debug line per device:
// the MTU is configuration, its absence is no error.
//
// Ports are queried at their first collection and then once per interval (option
// mtu-interval): on mlx5 each ibv_query_port is a firmware command, and an MTU changes only when
// an operator changes it. The verbs contexts of a round of queries are closed at the end of the
// collection that made them.
//
// Not thread-safe: owned by the rdma collector.

#include <spdlog/logger.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/metric_sink.h"
#include "base/status.h"
#include "collectors/sys/sysfs.h"

namespace fabricwatch::rdma {

struct PortMtu {
  std::optional<int> active_bytes;
  std::optional<int> max_bytes;
};

// Where the MTUs come from. Errors kNoData and kNotFound mean "not reported here" (quiet);
// any other error is counted by the collector.
class PortMtuSource {
 public:
  virtual ~PortMtuSource() = default;
  virtual Result<PortMtu> Read(const std::string& device, const std::string& port) = 0;
  // Called at each rediscovery with the devices listed now: a source drops what it holds for
  // the others (hot unplug), and may drop the rest too (the replay files are opened anew).
  virtual void Retain(const std::vector<std::string>& devices) { (void)devices; }
  // Called at the end of each collection: a source lets go of what it opened for its reads
  // (verbs contexts: held longer, they would block an rxe device's removal, verbs_ports.h).
  virtual void Release() {}
};

// Pure: the MTUs of ibv_query_port's answer (state: enum ibv_port_state; MTUs: enum ibv_mtu).
// A value outside the enum is an error naming `what` on an ACTIVE port; on a port that is not
// ACTIVE it is left out quietly (a port without a link may report no MTU), kNoData when both are.
Result<PortMtu> MtuFromPortAttr(int state, int active_mtu, int max_mtu, std::string_view what);

// ibv_query_port on the host's devices.
std::unique_ptr<PortMtuSource> MakeVerbsMtuSource();
// class/infiniband/<device>/ports/<port>/{active_mtu,max_mtu} under a replay root.
std::unique_ptr<PortMtuSource> MakeReplayMtuSource(const sys::SysFs& sysfs);

// Caches each port's MTUs for `interval` and writes them to the sink.
class PortMtuCollector {
 public:
  PortMtuCollector(std::unique_ptr<PortMtuSource> source, std::chrono::milliseconds interval,
                   std::shared_ptr<spdlog::logger> logger)
      : source_(std::move(source)), interval_(interval), logger_(std::move(logger)) {}

  // Adds the port's MTU families. Returns the error of a query made by this call (OK when no
  // query was due, or the values are simply not reported): one failure is one error, and the
  // port has no MTU series until its next query.
  Status Collect(const std::string& device, const std::string& port,
                 std::chrono::system_clock::time_point now, MetricSink& sink);
  // After a device listing: forgets the ports of devices no longer listed.
  void Retain(const std::vector<std::string>& devices);
  // At the end of each collection.
  void EndCollection() { source_->Release(); }
  // The port queries (ibv_query_port, or the replay files standing for one) made since the last
  // call: device reads of kind port_query (collectors/core/device_reads.h).
  size_t TakeQueries() { return std::exchange(queries_, 0); }

 private:
  struct Cached {
    std::chrono::system_clock::time_point read{};
    PortMtu mtu;  // of the last query; none after a failed one
  };
  std::unique_ptr<PortMtuSource> source_;
  std::chrono::milliseconds interval_;
  std::shared_ptr<spdlog::logger> logger_;
  std::map<std::pair<std::string, std::string>, Cached> cache_;
  // Ports whose absence was logged (once each, until they report again).
  std::set<std::pair<std::string, std::string>> quiet_logged_;
  size_t queries_ = 0;
};

}  // namespace fabricwatch::rdma
