#pragma once
// InfiniBand port events from libibverbs asynchronous events (docs/reference.md §7.2).
//
// IB ports have no rtnetlink event and their sysfs files cannot be poll()ed, so an IB link that
// goes down is otherwise seen only at the next sample. VerbsPortListener opens every RDMA device
// with ibv_open_device(), makes each context's async_fd non-blocking, and records
// IBV_EVENT_PORT_ACTIVE / PORT_ERR / LID_CHANGE / SM_CHANGE / ... with their time in a
// RdmaPortEventLog as they happen. It re-lists devices every kRelistInterval (hot-plug) and after
// IBV_EVENT_DEVICE_FATAL. With no device, or no provider library for it, it keeps running quietly
// and the rdma collector falls back to sysfs polling alone.
//
// Thread-safety: RdmaPortEventLog is internally synchronised; the listener runs its own thread
// and stops within its poll timeout (200 ms) when destroyed.

#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "collectors/core/collector.h"
#include "collectors/core/status.h"

namespace fabricwatch::sys {

struct RdmaPortEvent {
  std::chrono::system_clock::time_point time;
  std::string device;
  int port = 0;       // 0 for device-wide events
  std::string event;  // "port_active", "port_err", "lid_change", ... (AsyncEventName)
};

class RdmaPortEventLog {
 public:
  explicit RdmaPortEventLog(size_t capacity = 4096) : capacity_(capacity) {}

  void Record(RdmaPortEvent event);
  void SetState(bool listening, size_t devices_open);

  std::vector<RdmaPortEvent> Recent(size_t max) const;
  // (device, port, event) -> count, and the time of the last event per (device, port).
  std::map<std::tuple<std::string, int, std::string>, uint64_t> Counts() const;
  std::map<std::pair<std::string, int>, std::chrono::system_clock::time_point> LastEvent() const;
  // Events recorded since the start: the scheduler polls it (every 10 ms) to collect the rdma
  // collector at once after an event, so it takes no lock and allocates nothing.
  uint64_t total() const { return total_.load(std::memory_order_acquire); }
  bool listening() const;
  size_t devices_open() const;

 private:
  size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<RdmaPortEvent> events_;  // ring, oldest first after trimming
  std::map<std::tuple<std::string, int, std::string>, uint64_t> counts_;
  std::map<std::pair<std::string, int>, std::chrono::system_clock::time_point> last_;
  bool listening_ = false;
  size_t devices_open_ = 0;
  std::atomic<uint64_t> total_{0};
};

// Pure: the snake_case name of an ibv_event_type value, and whether it concerns a port (its
// element is a port number) rather than a QP, CQ, SRQ or the whole device.
std::string AsyncEventName(int ibv_event_type);
bool IsPortEvent(int ibv_event_type);
// The port events every port is pre-initialised with in the exposition.
inline constexpr const char* kPrimaryPortEvents[] = {"port_active", "port_err"};

class VerbsPortListener {
 public:
  // Events are stamped with `clock` (it must outlive the listener), or the wall clock when null.
  static Result<std::unique_ptr<VerbsPortListener>> Start(RdmaPortEventLog& log,
                                                          std::shared_ptr<spdlog::logger> logger,
                                                          const Clock* clock = nullptr);
  ~VerbsPortListener();
  VerbsPortListener(const VerbsPortListener&) = delete;
  VerbsPortListener& operator=(const VerbsPortListener&) = delete;

  struct Impl;

 private:
  explicit VerbsPortListener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::jthread thread_;
};

}  // namespace fabricwatch::sys
