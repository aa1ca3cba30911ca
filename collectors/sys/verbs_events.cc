#include "collectors/sys/verbs_events.h"

#include <dirent.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "collectors/sys/thread_name.h"
#include "collectors/sys/verbs_handles.h"

namespace fabricwatch::sys {

// ---------------------------------------------------------------- RdmaPortEventLog

bool RdmaPortEventLog::Record(RdmaPortEvent event) {
  std::lock_guard lock(mutex_);
  const std::pair<std::string, int> port{event.device, event.port};
  auto state = state_.find(port);
  switch (ClassifyPortEvent(state == state_.end() ? "" : state->second, event.event)) {
    case PortEventClass::kRepeat:
      ++repeated_[{event.device, event.port, event.event}];
      return false;
    case PortEventClass::kTransition:
      state_.insert_or_assign(port, event.event);
      break;
    case PortEventClass::kOther:
      // A fatal device loses its ports' state: what it says after a reset is not a repeat of
      // what it said before (the listener seeds the state again when it reopens the device).
      if (event.event == "device_fatal") {
        std::erase_if(state_, [&](const auto& entry) { return entry.first.first == event.device; });
      }
      break;
  }
  ++counts_[{event.device, event.port, event.event}];
  last_[port] = event.time;
  events_.push_back(std::move(event));
  if (events_.size() > capacity_) events_.erase(events_.begin());
  total_.fetch_add(1, std::memory_order_release);
  for (const std::function<void()>& listener : listeners_) listener();
  return true;
}

void RdmaPortEventLog::AddListener(std::function<void()> listener) {
  std::lock_guard lock(mutex_);
  listeners_.push_back(std::move(listener));
}

void RdmaPortEventLog::ForgetDevice(const std::string& device) {
  std::lock_guard lock(mutex_);
  std::erase_if(counts_, [&](const auto& entry) { return std::get<0>(entry.first) == device; });
  std::erase_if(repeated_, [&](const auto& entry) { return std::get<0>(entry.first) == device; });
  std::erase_if(last_, [&](const auto& entry) { return entry.first.first == device; });
  std::erase_if(state_, [&](const auto& entry) { return entry.first.first == device; });
  // Bounded even without an rdma collector to prune it (RetainForgotten): the one dropped gets
  // zero series again if it is still listed, nothing worse.
  if (forgotten_.size() >= kMaxForgotten && !forgotten_.contains(device)) {
    forgotten_.erase(forgotten_.begin());
  }
  forgotten_.insert(device);
}

void RdmaPortEventLog::DeviceOpened(const std::string& device,
                                    const std::vector<std::pair<int, bool>>& ports) {
  std::lock_guard lock(mutex_);
  std::erase_if(state_, [&](const auto& entry) { return entry.first.first == device; });
  for (const auto& [port, active] : ports) {
    state_.insert_or_assign({device, port}, active ? "port_active" : "port_err");
  }
  forgotten_.erase(device);
}

bool RdmaPortEventLog::IsForgotten(const std::string& device) const {
  std::lock_guard lock(mutex_);
  return forgotten_.contains(device);
}

void RdmaPortEventLog::Listed(const std::vector<std::string>& devices) {
  std::lock_guard lock(mutex_);
  for (const std::string& device : devices) forgotten_.erase(device);
}

void RdmaPortEventLog::RetainForgotten(const std::vector<std::string>& listed) {
  std::lock_guard lock(mutex_);
  std::erase_if(forgotten_, [&](const std::string& device) {
    return std::find(listed.begin(), listed.end(), device) == listed.end();
  });
}

void RdmaPortEventLog::SetState(bool listening, size_t devices_open) {
  std::lock_guard lock(mutex_);
  listening_ = listening;
  devices_open_ = devices_open;
}

std::vector<RdmaPortEvent> RdmaPortEventLog::Recent(size_t max) const {
  std::lock_guard lock(mutex_);
  size_t n = std::min(max, events_.size());
  return std::vector<RdmaPortEvent>(events_.end() - static_cast<std::ptrdiff_t>(n), events_.end());
}

std::map<std::tuple<std::string, int, std::string>, uint64_t> RdmaPortEventLog::Counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

std::map<std::pair<std::string, int>, std::chrono::system_clock::time_point>
RdmaPortEventLog::LastEvent() const {
  std::lock_guard lock(mutex_);
  return last_;
}

std::map<std::tuple<std::string, int, std::string>, uint64_t> RdmaPortEventLog::RepeatedCounts()
    const {
  std::lock_guard lock(mutex_);
  return repeated_;
}

bool RdmaPortEventLog::listening() const {
  std::lock_guard lock(mutex_);
  return listening_;
}

size_t RdmaPortEventLog::devices_open() const {
  std::lock_guard lock(mutex_);
  return devices_open_;
}

// ---------------------------------------------------------------- pure helpers

// Why a repeat is no transition (issue 34, soft-RoCE on Linux 6.1): in
// drivers/infiniband/sw/rxe/rxe_net.c, rxe_notify() calls rxe_port_up() on NETDEV_UP and
// rxe_set_port_state() on NETDEV_CHANGE, which calls rxe_port_up() again when
// netif_running() && netif_carrier_ok(); rxe_port_up() sets IB_PORT_ACTIVE and dispatches
// IB_EVENT_PORT_ACTIVE (rxe_port_event() -> ib_dispatch_event()) without looking at the state it
// had. An admin-up of the netdev is NETDEV_UP from __dev_open(), then NETDEV_CHANGE from
// linkwatch_do_dev() -> netdev_state_change() (net/core/link_watch.c, net/core/dev.c) when the
// carrier comes on: two PORT_ACTIVE for one transition. An admin-down gives one PORT_ERR
// (NETDEV_DOWN; netdev_state_change() sends nothing once IFF_UP is clear). The core adds none:
// ib_dispatch_event() (drivers/infiniband/core/cache.c) queues one work item per event, and
// ib_cache_event_task() updates the cache and calls the clients once. The rule is symmetric so
// a driver that repeats PORT_ERR is handled the same way.
PortEventClass ClassifyPortEvent(std::string_view last_state, std::string_view event) {
  if (event != "port_active" && event != "port_err") return PortEventClass::kOther;
  return event == last_state ? PortEventClass::kRepeat : PortEventClass::kTransition;
}

std::string AsyncEventName(int type) {
  // enum ibv_event_type, libibverbs/verbs.h (rdma-core).
  switch (static_cast<ibv_event_type>(type)) {
    case IBV_EVENT_CQ_ERR:
      return "cq_err";
    case IBV_EVENT_QP_FATAL:
      return "qp_fatal";
    case IBV_EVENT_QP_REQ_ERR:
      return "qp_req_err";
    case IBV_EVENT_QP_ACCESS_ERR:
      return "qp_access_err";
    case IBV_EVENT_COMM_EST:
      return "comm_est";
    case IBV_EVENT_SQ_DRAINED:
      return "sq_drained";
    case IBV_EVENT_PATH_MIG:
      return "path_mig";
    case IBV_EVENT_PATH_MIG_ERR:
      return "path_mig_err";
    case IBV_EVENT_DEVICE_FATAL:
      return "device_fatal";
    case IBV_EVENT_PORT_ACTIVE:
      return "port_active";
    case IBV_EVENT_PORT_ERR:
      return "port_err";
    case IBV_EVENT_LID_CHANGE:
      return "lid_change";
    case IBV_EVENT_PKEY_CHANGE:
      return "pkey_change";
    case IBV_EVENT_SM_CHANGE:
      return "sm_change";
    case IBV_EVENT_SRQ_ERR:
      return "srq_err";
    case IBV_EVENT_SRQ_LIMIT_REACHED:
      return "srq_limit_reached";
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      return "qp_last_wqe_reached";
    case IBV_EVENT_CLIENT_REREGISTER:
      return "client_reregister";
    case IBV_EVENT_GID_CHANGE:
      return "gid_change";
    case IBV_EVENT_WQ_FATAL:
      return "wq_fatal";
  }
  return "event_" + std::to_string(type);
}

bool IsPortEvent(int type) {
  switch (static_cast<ibv_event_type>(type)) {
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
    case IBV_EVENT_GID_CHANGE:
      return true;
    default:
      return false;
  }
}

// ---------------------------------------------------------------- uverbs presence (pure-ish)

bool ListUverbsInto(const std::string& dir, std::vector<UverbsEntry>& out) {
  out.clear();
  std::unique_ptr<DIR, int (*)(DIR*)> handle(opendir(dir.c_str()), &closedir);
  // ENOENT: the class directory exists while ib_uverbs is loaded, so there is no uverbs device.
  if (!handle) return errno == ENOENT;
  for (;;) {
    errno = 0;
    const dirent* entry = readdir(handle.get());
    if (entry == nullptr) break;
    // "uverbsN" fits std::string's inline buffer: re-listing the same entries allocates nothing.
    if (std::string_view(entry->d_name).starts_with("uverbs")) {
      out.push_back({entry->d_name, static_cast<uint64_t>(entry->d_ino)});
    }
  }
  if (errno != 0) {
    out.clear();
    return false;
  }
  std::sort(out.begin(), out.end(),
            [](const UverbsEntry& a, const UverbsEntry& b) { return a.name < b.name; });
  return true;
}

std::map<std::string, std::string> ReadUverbsIbdevs(const std::string& dir,
                                                    const std::vector<UverbsEntry>& entries) {
  std::map<std::string, std::string> out;
  for (const UverbsEntry& entry : entries) {
    std::ifstream file(dir + "/" + entry.name + "/ibdev");
    std::string name;
    if (file && std::getline(file, name) && !name.empty()) {
      out.emplace(entry.name, std::move(name));
    }
  }
  return out;
}

std::vector<std::string> GoneVerbsDevices(const std::set<std::string>& known,
                                          const std::vector<std::string>& open,
                                          const std::vector<std::string>* listed,
                                          const std::vector<std::string>& ibdevs) {
  auto in = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  std::vector<std::string> gone;
  for (const std::string& name : known) {
    if (in(open, name) || (listed != nullptr && in(*listed, name)) || in(ibdevs, name)) continue;
    gone.push_back(name);
  }
  return gone;
}

VerbsSyncPlan PlanVerbsSync(const std::vector<VerbsOpenRecord>& open,
                            const std::vector<UverbsEntry>* uverbs,
                            const std::map<std::string, std::string>& ibdevs,
                            const std::vector<VerbsListedDevice>* listed,
                            const std::set<std::string>& known) {
  VerbsSyncPlan plan;
  if (uverbs == nullptr) {
    // Presence unknown: every healthy context stays. A fatal one reads nothing more (and its fd
    // polls as an error until closed); it is reopened by the next Sync that can list.
    for (size_t i = 0; i < open.size(); ++i) {
      if (open[i].fatal) plan.close.push_back(i);
    }
    return plan;
  }
  auto entry = [&](const std::string& name) -> const UverbsEntry* {
    auto it = std::find_if(uverbs->begin(), uverbs->end(),
                           [&](const UverbsEntry& e) { return e.name == name; });
    return it == uverbs->end() ? nullptr : &*it;
  };
  auto named = [&](const std::string& uverbs_name, const std::string& fallback) {
    auto it = ibdevs.find(uverbs_name);
    return it == ibdevs.end() ? fallback : it->second;
  };
  auto in = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  std::vector<std::string> kept_entries, open_names;
  for (size_t i = 0; i < open.size(); ++i) {
    const VerbsOpenRecord& record = open[i];
    bool changed = false;
    if (!record.uverbs.empty()) {
      const UverbsEntry* now = entry(record.uverbs);
      changed = now == nullptr || now->ino != record.ino ||
                named(record.uverbs, record.device) != record.device;
    }
    if (record.fatal || changed) {
      plan.close.push_back(i);
    } else {
      kept_entries.push_back(record.uverbs);
      open_names.push_back(record.device);
    }
  }
  for (size_t j = 0; listed != nullptr && j < listed->size(); ++j) {
    const VerbsListedDevice& device = (*listed)[j];
    const std::string name =
        device.uverbs.empty() ? device.name : named(device.uverbs, device.name);
    plan.listed.push_back(name);
    const bool is_open =
        device.uverbs.empty() ? in(open_names, name) : in(kept_entries, device.uverbs);
    const UverbsEntry* now = device.uverbs.empty() ? nullptr : entry(device.uverbs);
    if (is_open || (!device.uverbs.empty() && now == nullptr)) continue;
    plan.open.push_back({j, {device.uverbs, now == nullptr ? 0 : now->ino, name, false}});
    open_names.push_back(name);
  }
  std::set<std::string> all = known;
  all.insert(plan.listed.begin(), plan.listed.end());
  std::vector<std::string> ibdev_names;
  for (const auto& [uverbs_name, name] : ibdevs) ibdev_names.push_back(name);
  plan.forget =
      GoneVerbsDevices(all, open_names, listed != nullptr ? &plan.listed : nullptr, ibdev_names);
  return plan;
}

// ---------------------------------------------------------------- the listener

namespace {

constexpr int kPollTimeoutMs = 200;
constexpr std::chrono::seconds kRelistInterval{30};
// How often the uverbs class directory is read to notice a device that left or came: rxe/siw
// send no DEVICE_FATAL on removal, and their removal waits for our contexts (verbs_events.h).
constexpr std::chrono::seconds kPresenceInterval{1};
constexpr const char* kDefaultUverbsDir = "/sys/class/infiniband_verbs";

using DeviceList = VerbsDeviceList;  // collectors/sys/verbs_handles.h
using Context = VerbsContext;

}  // namespace

struct VerbsPortListener::Impl {
  Impl(RdmaPortEventLog& log, std::shared_ptr<spdlog::logger> logger, const Clock* clock)
      : log(log), logger(std::move(logger)), clock(clock) {}

  struct Open {
    VerbsOpenRecord record;  // its uverbs entry (from dev_path) and the name it records under
    Context context;
  };

  RdmaPortEventLog& log;
  std::shared_ptr<spdlog::logger> logger;
  const Clock* clock;
  std::vector<Open> devices;
  std::set<std::string> known;   // listed by libibverbs and not forgotten since
  std::set<std::string> failed;  // ibv_open_device failed (warned once until it opens)
  std::string uverbs_dir = kDefaultUverbsDir;  // from a device's dev_path once one is listed
  std::vector<UverbsEntry> uverbs;             // the listing of the last Sync() that could list
  std::vector<UverbsEntry> uverbs_now;         // the presence check's listing, reused
  std::vector<pollfd> fds;                     // reused from poll to poll
  bool stale = false;  // the last Sync() could not read uverbs_dir: the next check syncs
  bool logged_none = false;

  void Close(Open& device) {
    // Events queued on the fd happened: read them before the context goes (a port_err queued
    // behind a removal would otherwise be lost, and the port's state with it).
    (void)Drain(device);
    device.context.reset();
  }

  // Seeds the ports' last state event from their state now, so that the first event after a
  // (re)open is classified against the port's real state, not against a state_ from before the
  // events this listener could not see. The kernel sets the state before it queues the event
  // (ib_dispatch_event runs the clients from a work item), so an event that races the query can
  // read as a repeat: it is still counted, in fabric_rdma_port_events_repeated_total.
  void Seed(const Open& device) {
    ibv_device_attr attr{};
    std::vector<std::pair<int, bool>> ports;
    if (ibv_query_device(device.context.get(), &attr) == 0) {
      for (int port = 1; port <= attr.phys_port_cnt; ++port) {
        ibv_port_attr port_attr{};
        if (ibv_query_port(device.context.get(), static_cast<uint8_t>(port), &port_attr) != 0) {
          continue;  // unknown: its first event is a transition
        }
        ports.emplace_back(port, port_attr.state == IBV_PORT_ACTIVE);
      }
    }
    log.DeviceOpened(device.record.device, ports);
  }

  bool OpenDevice(ibv_device* device, VerbsOpenRecord record) {
    Context context(ibv_open_device(device));
    const char* what = "ibv_open_device";
    int error = errno;
    if (context) {
      const int flags = fcntl(context->async_fd, F_GETFL);
      if (flags >= 0 && fcntl(context->async_fd, F_SETFL, flags | O_NONBLOCK) == 0) {
        devices.push_back({std::move(record), std::move(context)});
        Seed(devices.back());
        const std::string& name = devices.back().record.device;
        if (failed.erase(name) > 0) logger->info("{}: port events received again", name);
        return true;
      }
      what = "cannot make the async event fd non-blocking";
      error = errno;
    }
    const bool first = failed.insert(record.device).second;
    logger->log(first ? spdlog::level::warn : spdlog::level::debug,
                "{}: {}: {}; its port events come from polling only", record.device, what,
                std::strerror(error));
    return false;
  }

  // Drains and closes the contexts `plan` names (indices into devices), highest first.
  void CloseAll(const std::vector<size_t>& close) {
    for (auto it = close.rbegin(); it != close.rend(); ++it) {
      Close(devices[*it]);
      devices.erase(devices.begin() + static_cast<std::ptrdiff_t>(*it));
    }
  }

  // Brings the open contexts in line with the devices present (PlanVerbsSync): closes those
  // whose uverbs entry left, was replaced or was renamed, or that went fatal, opens those listed
  // and not open, and keeps every other context open (its queued events are not lost). Forgets
  // the devices that are gone. When uverbs_dir cannot be read it closes only fatal contexts,
  // opens and forgets nothing, and the next presence check tries again.
  void Sync() {
    std::vector<VerbsOpenRecord> records;
    for (const Open& device : devices) records.push_back(device.record);
    bool readable = ListUverbsInto(uverbs_dir, uverbs_now);
    int count = 0;
    DeviceList list(readable ? ibv_get_device_list(&count) : nullptr);
    if (readable && !list && !known.empty()) {
      logger->debug("ibv_get_device_list: {}; open contexts kept", std::strerror(errno));
    }
    std::vector<VerbsListedDevice> listed;
    for (int i = 0; list && i < count; ++i) {
      // dev_path is <sysfs>/class/infiniband_verbs/uverbsN (libibverbs' own sysfs root).
      const std::filesystem::path dev_path(list.get()[i]->dev_path);
      if (dev_path.has_parent_path() && dev_path.parent_path().string() != uverbs_dir) {
        uverbs_dir = dev_path.parent_path().string();
        readable = ListUverbsInto(uverbs_dir, uverbs_now);
      }
      listed.push_back({ibv_get_device_name(list.get()[i]), dev_path.filename().string()});
    }
    if (!readable) {
      if (!stale) logger->warn("{}: {}; open contexts kept", uverbs_dir, std::strerror(errno));
      stale = true;
      CloseAll(PlanVerbsSync(records, nullptr, {}, nullptr, known).close);
      log.SetState(true, devices.size());
      return;
    }
    stale = false;
    uverbs.swap(uverbs_now);
    const VerbsSyncPlan plan = PlanVerbsSync(records, &uverbs, ReadUverbsIbdevs(uverbs_dir, uverbs),
                                             list ? &listed : nullptr, known);
    CloseAll(plan.close);
    known.insert(plan.listed.begin(), plan.listed.end());
    log.Listed(plan.listed);  // listed again: no longer forgotten, even if its open fails
    size_t changed = plan.close.size();
    for (const auto& [index, record] : plan.open) {
      if (OpenDevice(list.get()[index], record)) ++changed;
    }
    for (const std::string& name : plan.forget) {
      logger->info("{} is gone; its port event series are dropped", name);
      log.ForgetDevice(name);
      known.erase(name);
      failed.erase(name);
    }
    if (devices.empty() && !logged_none) {
      logger->debug("libibverbs opens no RDMA device; IB port events come from polling only");
    }
    logged_none = devices.empty();
    if (changed > 0) logger->info("listening for port events on {} RDMA device(s)", devices.size());
    log.SetState(true, devices.size());
  }

  // Drains the pending events of one device. False if the device must be reopened.
  bool Drain(Open& device) {
    for (;;) {
      ibv_async_event event{};
      if (ibv_get_async_event(device.context.get(), &event) != 0) {
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      }
      const int type = event.event_type;
      const int port = IsPortEvent(type) ? event.element.port_num : 0;
      ibv_ack_async_event(&event);  // always, or ibv_close_device() would block
      RdmaPortEvent record{clock != nullptr ? clock->Now() : std::chrono::system_clock::now(),
                           device.record.device, port, AsyncEventName(type)};
      if (IsPortEvent(type) || type == IBV_EVENT_DEVICE_FATAL) {
        const std::string name = record.event;
        if (log.Record(std::move(record))) {
          logger->info("{} port {}: {}", device.record.device, port, name);
        } else {
          logger->debug("{} port {}: {} again, no transition (not counted)", device.record.device,
                        port, name);
        }
      }
      if (type == IBV_EVENT_DEVICE_FATAL) return false;
    }
  }

  void Run(std::stop_token stop) {
    auto last_list = std::chrono::steady_clock::now();
    auto last_presence = last_list;
    while (!stop.stop_requested()) {
      fds.clear();
      for (const Open& device : devices) fds.push_back({device.context->async_fd, POLLIN, 0});
      const int ready = fds.empty() ? (poll(nullptr, 0, kPollTimeoutMs), 0)
                                    : poll(fds.data(), fds.size(), kPollTimeoutMs);
      bool sync = false;
      for (size_t i = 0; ready > 0 && i < fds.size(); ++i) {
        if (fds[i].revents != 0 && !Drain(devices[i])) {
          devices[i].record.fatal = true;
          sync = true;
        }
      }
      const auto now = std::chrono::steady_clock::now();
      if (now - last_presence >= kPresenceInterval) {
        last_presence = now;
        // `rdma link add/delete`, hot-(un)plug, a uverbsN reused (new inode). A directory that
        // cannot be read is no change (EMFILE, ENOMEM: nothing is known to have left).
        if (ListUverbsInto(uverbs_dir, uverbs_now)) sync |= stale || uverbs_now != uverbs;
      }
      if (now - last_list >= kRelistInterval) {
        last_list = now;
        sync = true;  // a provider installed since, a device whose open failed, a rename
      }
      if (sync) Sync();
    }
    for (Open& device : devices) Close(device);
    devices.clear();
    log.SetState(false, 0);
  }
};

VerbsPortListener::VerbsPortListener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  thread_ = std::jthread([this](std::stop_token stop) {
    SetCurrentThreadName("fw-verbs-ev");
    impl_->Run(stop);
  });
}

VerbsPortListener::~VerbsPortListener() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

Result<std::unique_ptr<VerbsPortListener>> VerbsPortListener::Start(
    RdmaPortEventLog& log, std::shared_ptr<spdlog::logger> logger, const Clock* clock) {
  auto impl = std::make_unique<Impl>(log, std::move(logger), clock);
  impl->Sync();
  return std::unique_ptr<VerbsPortListener>(new VerbsPortListener(std::move(impl)));
}

}  // namespace fabricwatch::sys
