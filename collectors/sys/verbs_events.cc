#include "collectors/sys/verbs_events.h"

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

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
      break;
  }
  ++counts_[{event.device, event.port, event.event}];
  last_[port] = event.time;
  events_.push_back(std::move(event));
  if (events_.size() > capacity_) events_.erase(events_.begin());
  total_.fetch_add(1, std::memory_order_release);
  return true;
}

void RdmaPortEventLog::ForgetDevice(const std::string& device) {
  std::lock_guard lock(mutex_);
  std::erase_if(counts_, [&](const auto& entry) { return std::get<0>(entry.first) == device; });
  std::erase_if(repeated_, [&](const auto& entry) { return std::get<0>(entry.first) == device; });
  std::erase_if(last_, [&](const auto& entry) { return entry.first.first == device; });
  std::erase_if(state_, [&](const auto& entry) { return entry.first.first == device; });
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

// ---------------------------------------------------------------- the listener

namespace {

constexpr int kPollTimeoutMs = 200;
constexpr std::chrono::seconds kRelistInterval{30};
// How often the uverbs class directory is read to notice a device that left or came: rxe/siw
// send no DEVICE_FATAL on removal, and their removal waits for our contexts (verbs_events.h).
constexpr std::chrono::seconds kPresenceInterval{1};
constexpr const char* kDefaultUverbsDir = "/sys/class/infiniband_verbs";

// The uverbs character devices (uverbsN) in `dir`, sorted; empty when it cannot be read.
std::vector<std::string> ListUverbs(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code error;
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    std::string name = it->path().filename().string();
    if (name.starts_with("uverbs")) out.push_back(std::move(name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

using DeviceList = VerbsDeviceList;  // collectors/sys/verbs_handles.h
using Context = VerbsContext;

}  // namespace

struct VerbsPortListener::Impl {
  Impl(RdmaPortEventLog& log, std::shared_ptr<spdlog::logger> logger, const Clock* clock)
      : log(log), logger(std::move(logger)), clock(clock) {}

  struct Open {
    std::string name;
    Context context;
  };

  RdmaPortEventLog& log;
  std::shared_ptr<spdlog::logger> logger;
  const Clock* clock;
  std::vector<Open> devices;
  std::vector<std::string> names;
  std::string uverbs_dir = kDefaultUverbsDir;  // from a device's dev_path once one is listed
  std::vector<std::string> uverbs;             // ListUverbs(uverbs_dir) at the last OpenAll()
  bool logged_none = false;

  // Devices listed before and not now leave the log (issue 34: no stale series).
  void ForgetGone(const std::vector<std::string>& before) {
    const std::set<std::string> now(names.begin(), names.end());
    for (const std::string& name : before) {
      if (now.contains(name)) continue;
      logger->info("{} is gone; its port event series are dropped", name);
      log.ForgetDevice(name);
    }
  }

  // Names of the devices libibverbs can see now (those with a provider library).
  static std::vector<std::string> ListNames() {
    int count = 0;
    DeviceList list(ibv_get_device_list(&count));
    std::vector<std::string> out;
    if (!list) return out;
    for (int i = 0; i < count; ++i) out.emplace_back(ibv_get_device_name(list.get()[i]));
    return out;
  }

  void OpenAll() {
    devices.clear();  // closes every context first: a device being removed waits for them
    const std::vector<std::string> before = std::move(names);
    names.clear();
    uverbs = ListUverbs(uverbs_dir);
    int count = 0;
    DeviceList list(ibv_get_device_list(&count));
    if (!list || count == 0) {
      if (!logged_none) {
        logger->debug("libibverbs sees no RDMA device; IB port events come from polling only");
        logged_none = true;
      }
      ForgetGone(before);
      log.SetState(true, 0);
      return;
    }
    logged_none = false;
    for (int i = 0; i < count; ++i) {
      const std::string name = ibv_get_device_name(list.get()[i]);
      names.push_back(name);
      // dev_path is <sysfs>/class/infiniband_verbs/uverbsN (libibverbs' own sysfs root).
      const std::filesystem::path dev_path(list.get()[i]->dev_path);
      if (dev_path.has_parent_path() && dev_path.parent_path().string() != uverbs_dir) {
        uverbs_dir = dev_path.parent_path().string();
        uverbs = ListUverbs(uverbs_dir);
      }
      Context context(ibv_open_device(list.get()[i]));
      if (!context) {
        logger->warn("ibv_open_device {}: {}; its port events come from polling only", name,
                     std::strerror(errno));
        continue;
      }
      int flags = fcntl(context->async_fd, F_GETFL);
      if (flags < 0 || fcntl(context->async_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        logger->warn("{}: cannot make the async event fd non-blocking: {}", name,
                     std::strerror(errno));
        continue;
      }
      devices.push_back({name, std::move(context)});
    }
    ForgetGone(before);
    logger->info("listening for port events on {} RDMA device(s)", devices.size());
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
                           device.name, port, AsyncEventName(type)};
      if (IsPortEvent(type) || type == IBV_EVENT_DEVICE_FATAL) {
        const std::string name = record.event;
        if (log.Record(std::move(record))) {
          logger->info("{} port {}: {}", device.name, port, name);
        } else {
          logger->debug("{} port {}: {} again, no transition (not counted)", device.name, port,
                        name);
        }
      }
      if (type == IBV_EVENT_DEVICE_FATAL) return false;
    }
  }

  void Run(std::stop_token stop) {
    auto last_list = std::chrono::steady_clock::now();
    auto last_presence = last_list;
    while (!stop.stop_requested()) {
      std::vector<pollfd> fds;
      for (const Open& device : devices) fds.push_back({device.context->async_fd, POLLIN, 0});
      int ready = fds.empty() ? (poll(nullptr, 0, kPollTimeoutMs), 0)
                              : poll(fds.data(), fds.size(), kPollTimeoutMs);
      bool reopen = false;
      if (ready > 0) {
        for (size_t i = 0; i < fds.size(); ++i) {
          if (fds[i].revents != 0 && !Drain(devices[i])) reopen = true;
        }
      }
      const auto now = std::chrono::steady_clock::now();
      if (!reopen && now - last_presence >= kPresenceInterval) {
        last_presence = now;
        reopen = ListUverbs(uverbs_dir) != uverbs;  // `rdma link add/delete`, hot-(un)plug
      }
      if (now - last_list >= kRelistInterval) {
        last_list = now;
        reopen |= ListNames() != names;  // hot-plug or removal
      }
      if (reopen) OpenAll();
    }
    devices.clear();
    log.SetState(false, 0);
  }
};

VerbsPortListener::VerbsPortListener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  thread_ = std::jthread([this](std::stop_token stop) { impl_->Run(stop); });
}

VerbsPortListener::~VerbsPortListener() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

Result<std::unique_ptr<VerbsPortListener>> VerbsPortListener::Start(
    RdmaPortEventLog& log, std::shared_ptr<spdlog::logger> logger, const Clock* clock) {
  auto impl = std::make_unique<Impl>(log, std::move(logger), clock);
  impl->OpenAll();
  return std::unique_ptr<VerbsPortListener>(new VerbsPortListener(std::move(impl)));
}

}  // namespace fabricwatch::sys
