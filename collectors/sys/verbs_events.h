#pragma once
// InfiniBand port events from libibverbs asynchronous events (docs/reference.md §7.2).
//
// IB ports have no rtnetlink event and their sysfs files cannot be poll()ed, so an IB link that
// goes down is otherwise seen only at the next sample. VerbsPortListener opens every RDMA device
// with ibv_open_device(), makes each context's async_fd non-blocking, and records
// IBV_EVENT_PORT_ACTIVE / PORT_ERR / LID_CHANGE / SM_CHANGE / ... with their time in a
// RdmaPortEventLog as they happen. It re-lists devices every kRelistInterval (hot-plug), after
// IBV_EVENT_DEVICE_FATAL, and as soon as the class/infiniband_verbs directory changes (checked
// every kPresenceInterval): a driver without disassociate_ucontext (rxe, siw) sends no
// DEVICE_FATAL on `rdma link delete`, and its ib_uverbs_remove_one() waits until every context
// is closed, so holding it would block the delete. Only what changed is closed or opened
// (PlanVerbsSync): the context of a device whose uverbs entry left, was replaced (same uverbsN,
// new inode) or names another device now (`rdma dev set rxe0 name foo`), or that went fatal, is
// drained and closed, a new device is opened, and every other context stays open, so its queued
// events are not lost. A uverbs directory that cannot be read (EMFILE, ENOMEM) changes nothing.
// Each (re)opened device's ports are seeded with their state now (RdmaPortEventLog::DeviceOpened),
// so an event missed while it was closed does not turn the next real transition into a "repeat". A
// device is forgotten by the log (ForgetDevice: its series leave the exposition, counts start at
// 0 if it comes back) only when it is not open, libibverbs does not list it and no uverbs entry
// names it (GoneVerbsDevices): a failed ibv_get_device_list (EMFILE, ENOMEM) forgets nothing.
// With no device, or no provider library for it, it keeps running quietly and the rdma
// collector falls back to sysfs polling alone.
//
// Repeats (issue 34): rxe dispatches IB_EVENT_PORT_ACTIVE twice for one admin-up of its netdev
// (NETDEV_UP, then linkwatch's NETDEV_CHANGE once the carrier is on; see ClassifyPortEvent). A
// port_active after port_active, or port_err after port_err, is no transition: it is counted
// apart (RepeatedCounts), not in Counts(), the ring, total() or the last-event time. The last
// state is seeded when the listener opens a device and dropped on its DEVICE_FATAL.
//
// Thread-safety: RdmaPortEventLog is internally synchronised; the listener runs its own thread
// and stops within its poll timeout (200 ms) when destroyed.

#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

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

  // Records the event; false when it is a repeat of the port's last state event (not recorded
  // as a transition, counted in RepeatedCounts()).
  bool Record(RdmaPortEvent event);
  void SetState(bool listening, size_t devices_open);
  // The device left (hot-unplug, `rdma link delete`): drops its counts, repeats, last event
  // times and last state, so none of its series is exported any more. Its past events stay in
  // the ring (Recent) as history.
  void ForgetDevice(const std::string& device);
  // The listener opened `device` (again): its ports' last state becomes (port, active) of
  // `ports` (ibv_query_port now; a port not listed has none), and it is no longer forgotten.
  void DeviceOpened(const std::string& device, const std::vector<std::pair<int, bool>>& ports);
  // Whether `device` was forgotten and not listed or opened since: the rdma collector pre-fills
  // no zero series for it (it may still list one until its next rediscovery).
  bool IsForgotten(const std::string& device) const;
  // libibverbs lists `devices` (again): they are no longer forgotten, whether or not they open.
  void Listed(const std::vector<std::string>& devices);
  // The rdma collector rediscovered its devices: a forgotten device it no longer lists needs no
  // entry (the set stays bounded under VF churn; it is also capped at kMaxForgotten).
  void RetainForgotten(const std::vector<std::string>& listed);
  static constexpr size_t kMaxForgotten = 256;

  std::vector<RdmaPortEvent> Recent(size_t max) const;
  // (device, port, event) -> count, and the time of the last event per (device, port).
  std::map<std::tuple<std::string, int, std::string>, uint64_t> Counts() const;
  std::map<std::pair<std::string, int>, std::chrono::system_clock::time_point> LastEvent() const;
  // (device, port, event) -> repeats of port_active/port_err that were no transition.
  std::map<std::tuple<std::string, int, std::string>, uint64_t> RepeatedCounts() const;
  // Events recorded since the start (the status page); takes no lock.
  uint64_t total() const { return total_.load(std::memory_order_acquire); }
  // `listener` is called after each event that total() counts, on the listener's thread with
  // the log's lock held (it must not call the log): the agent's scheduler wakes the collectors
  // that read the events (exporter/pipeline/scheduler.h WakeSignal), instead of polling total().
  void AddListener(std::function<void()> listener);
  bool listening() const;
  size_t devices_open() const;

 private:
  size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<RdmaPortEvent> events_;  // ring, oldest first after trimming
  std::map<std::tuple<std::string, int, std::string>, uint64_t> counts_;
  std::map<std::pair<std::string, int>, std::chrono::system_clock::time_point> last_;
  std::map<std::tuple<std::string, int, std::string>, uint64_t> repeated_;
  std::map<std::pair<std::string, int>, std::string> state_;  // last port_active/port_err
  std::set<std::string> forgotten_;
  bool listening_ = false;
  size_t devices_open_ = 0;
  std::atomic<uint64_t> total_{0};
  std::vector<std::function<void()>> listeners_;
};

// Pure: the snake_case name of an ibv_event_type value, and whether it concerns a port (its
// element is a port number) rather than a QP, CQ, SRQ or the whole device.
std::string AsyncEventName(int ibv_event_type);
bool IsPortEvent(int ibv_event_type);
// The port events every port is pre-initialised with in the exposition.
inline constexpr const char* kPrimaryPortEvents[] = {"port_active", "port_err"};

// Pure: whether `event` of a port is a state transition, a repeat of the port's last state event
// (`last_state`: the last port_active/port_err recorded for the port, empty if none), or not a
// state event at all (lid_change, gid_change, device_fatal, ...).
enum class PortEventClass { kTransition, kRepeat, kOther };
PortEventClass ClassifyPortEvent(std::string_view last_state, std::string_view event);

// One class/infiniband_verbs entry. ib_uverbs_remove_one() frees the devnum before it waits for
// the contexts to close, so a device added meanwhile can take the same uverbsN; kernfs gives the
// new node a new inode, so (name, ino) tells the two apart.
struct UverbsEntry {
  std::string name;  // uverbsN
  uint64_t ino = 0;  // d_ino
  friend bool operator==(const UverbsEntry&, const UverbsEntry&) = default;
};

// The listener's presence checks, apart for tests. ListUverbsInto: the uverbsN entries of `dir`,
// sorted, into `out` (cleared, its capacity reused: "uverbsN" fits std::string's inline buffer,
// so the check every second makes no vector or string). False when `dir` cannot be read (EMFILE,
// ENOMEM, not a directory; `out` is then empty): no listing, not "no device". A `dir` that does
// not exist is read as empty (ib_uverbs is not loaded: no uverbs device).
// ReadUverbsIbdevs: entry -> the device its ibdev file names now (an entry without one is left
// out). GoneVerbsDevices: the `known` devices to forget: not open, not in `listed` (null when
// ibv_get_device_list failed) and named by no uverbs entry (`ibdevs`).
bool ListUverbsInto(const std::string& dir, std::vector<UverbsEntry>& out);
std::map<std::string, std::string> ReadUverbsIbdevs(const std::string& dir,
                                                    const std::vector<UverbsEntry>& entries);
std::vector<std::string> GoneVerbsDevices(const std::set<std::string>& known,
                                          const std::vector<std::string>& open,
                                          const std::vector<std::string>* listed,
                                          const std::vector<std::string>& ibdevs);

// A context the listener holds: its uverbs entry as it was when opened, and the device name its
// events are recorded under.
struct VerbsOpenRecord {
  std::string uverbs;  // uverbsN (empty when dev_path named none)
  uint64_t ino = 0;    // that entry's d_ino at the open
  std::string device;
  bool fatal = false;  // DEVICE_FATAL or a broken fd: closed, reopened if still present
};
// A device ibv_get_device_list lists: its libibverbs name and its uverbs entry (dev_path).
struct VerbsListedDevice {
  std::string name;
  std::string uverbs;
};
struct VerbsSyncPlan {
  std::vector<size_t> close;  // indices of the open records to drain and close
  std::vector<std::pair<size_t, VerbsOpenRecord>> open;  // index into `listed`, and its record
  std::vector<std::string> listed;  // the names of the listed devices (as recorded)
  std::vector<std::string> forget;  // devices to forget (GoneVerbsDevices)
};
// Pure: the listener's Sync decision. `uverbs` is the entry listing (null: the directory could
// not be read, then nothing is closed but a fatal context, nothing opened and nothing forgotten);
// `ibdevs` what each entry's ibdev file names (ReadUverbsIbdevs); `listed` null when
// ibv_get_device_list failed. Open contexts are matched by uverbs entry (name and inode), not by
// device name: a context whose entry left or was replaced is closed; one whose entry names
// another device now (renamed) is closed and its entry opened again under the new name, so the
// old name is forgotten and no device is open twice. A device is named by its entry's ibdev file
// when there is one (the kernel's name now), else by libibverbs. A listed device whose entry is
// not in `uverbs` is not opened: its removal waits for our contexts.
VerbsSyncPlan PlanVerbsSync(const std::vector<VerbsOpenRecord>& open,
                            const std::vector<UverbsEntry>* uverbs,
                            const std::map<std::string, std::string>& ibdevs,
                            const std::vector<VerbsListedDevice>* listed,
                            const std::set<std::string>& known);

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
