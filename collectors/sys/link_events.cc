#include "collectors/sys/link_events.h"

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/rtnl.h>
#include <netlink/socket.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "collectors/sys/thread_name.h"

namespace fabricwatch::sys {

// ---------------------------------------------------------------- LinkEventLog

void LinkEventLog::Record(LinkEvent event) {
  {
    std::lock_guard lock(mutex_);
    LinkEventCounts& counts = counts_[event.netdev];
    (event.carrier_up ? counts.up : counts.down)++;
    counts.last_event = event.time;
    events_.push_back(std::move(event));
    if (events_.size() > capacity_) events_.pop_front();
    ++total_;
  }
  changed_.notify_all();
}

void LinkEventLog::RecordOverrun() {
  std::lock_guard lock(mutex_);
  ++overruns_;
}

void LinkEventLog::SetListening(bool listening) {
  std::lock_guard lock(mutex_);
  listening_ = listening;
}

std::vector<LinkEvent> LinkEventLog::Recent(size_t max) const {
  std::lock_guard lock(mutex_);
  size_t n = std::min(max, events_.size());
  return std::vector<LinkEvent>(events_.end() - static_cast<std::ptrdiff_t>(n), events_.end());
}

std::map<std::string, LinkEventCounts, std::less<>> LinkEventLog::CountsByNetdev() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

uint64_t LinkEventLog::total() const {
  std::lock_guard lock(mutex_);
  return total_;
}

uint64_t LinkEventLog::overruns() const {
  std::lock_guard lock(mutex_);
  return overruns_;
}

bool LinkEventLog::listening() const {
  std::lock_guard lock(mutex_);
  return listening_;
}

uint64_t LinkEventLog::WaitForEvents(uint64_t seen, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return total_ > seen; });
  return total_;
}

// ---------------------------------------------------------------- pure transition logic

std::string_view OperStateName(uint8_t operstate) {
  // IF_OPER_* from linux/if.h (RFC 2863), as net/core/net-sysfs.c prints them.
  switch (operstate) {
    case IF_OPER_UNKNOWN:
      return "unknown";
    case IF_OPER_NOTPRESENT:
      return "notpresent";
    case IF_OPER_DOWN:
      return "down";
    case IF_OPER_LOWERLAYERDOWN:
      return "lowerlayerdown";
    case IF_OPER_TESTING:
      return "testing";
    case IF_OPER_DORMANT:
      return "dormant";
    case IF_OPER_UP:
      return "up";
  }
  return "unknown";
}

std::vector<LinkEvent> TransitionsBetween(const LinkTrackState& previous,
                                          const LinkMessage& message,
                                          std::chrono::system_clock::time_point now) {
  std::vector<LinkEvent> events;
  auto make = [&](bool up, bool inferred) {
    LinkEvent e;
    e.time = now;
    e.ifindex = message.ifindex;
    e.netdev = message.name;
    e.carrier_up = up;
    e.operstate = std::string(OperStateName(message.operstate));
    e.inferred = inferred;
    return e;
  };
  if (previous.has_counts && message.has_counts) {
    // u32 counters: unsigned subtraction is wrap-aware.
    uint64_t ups = static_cast<uint32_t>(message.up_count - previous.up_count);
    uint64_t downs = static_cast<uint32_t>(message.down_count - previous.down_count);
    // A counter that went backwards by a lot is a new device reusing the index: no history.
    if (ups > (1u << 20) || downs > (1u << 20)) return events;
    uint64_t n = ups + downs;
    if (n == 0) {
      if (previous.carrier != message.carrier) events.push_back(make(message.carrier, false));
      return events;
    }
    // Transitions alternate; walk back from the current state to find the first one.
    bool state = message.carrier;
    std::vector<bool> reversed;
    for (uint64_t i = 0; i < n; ++i) {
      reversed.push_back(state);
      state = !state;
    }
    for (uint64_t i = 0; i < n; ++i) {
      events.push_back(make(reversed[n - 1 - i], i + 1 < n));
    }
    return events;
  }
  if (previous.carrier != message.carrier) events.push_back(make(message.carrier, false));
  return events;
}

// ---------------------------------------------------------------- the listener

namespace {

using NlSock = std::unique_ptr<nl_sock, decltype(&nl_socket_free)>;

constexpr int kPollTimeoutMs = 200;
constexpr int kReceiveBufferBytes = 1 << 20;

std::string NlError(int err, std::string_view what) {
  return std::string(what) + ": " + nl_geterror(err);
}

bool ParseLinkMessage(nl_msg* msg, LinkMessage& out, bool& deleted) {
  nlmsghdr* hdr = nlmsg_hdr(msg);
  if (hdr->nlmsg_type != RTM_NEWLINK && hdr->nlmsg_type != RTM_DELLINK) return false;
  deleted = hdr->nlmsg_type == RTM_DELLINK;
  nlattr* tb[IFLA_MAX + 1] = {};
  if (nlmsg_parse(hdr, sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) < 0) return false;
  auto* ifi = static_cast<ifinfomsg*>(nlmsg_data(hdr));
  out.ifindex = ifi->ifi_index;
  if (tb[IFLA_IFNAME] != nullptr) out.name = nla_get_string(tb[IFLA_IFNAME]);
  // IFLA_CARRIER is absent on very old kernels; IFF_LOWER_UP carries the same bit.
  out.carrier = tb[IFLA_CARRIER] != nullptr ? nla_get_u8(tb[IFLA_CARRIER]) != 0
                                            : (ifi->ifi_flags & IFF_LOWER_UP) != 0;
  out.operstate = tb[IFLA_OPERSTATE] != nullptr ? nla_get_u8(tb[IFLA_OPERSTATE])
                                                : static_cast<uint8_t>(IF_OPER_UNKNOWN);
  out.has_counts = tb[IFLA_CARRIER_UP_COUNT] != nullptr && tb[IFLA_CARRIER_DOWN_COUNT] != nullptr;
  if (out.has_counts) {
    out.up_count = nla_get_u32(tb[IFLA_CARRIER_UP_COUNT]);
    out.down_count = nla_get_u32(tb[IFLA_CARRIER_DOWN_COUNT]);
  }
  return true;
}

}  // namespace

struct LinkEventListener::Impl {
  Impl(LinkEventLog& log, std::shared_ptr<spdlog::logger> logger, const Clock* clock)
      : log(log), logger(std::move(logger)), clock(clock) {}

  std::chrono::system_clock::time_point Now() const {
    return clock != nullptr ? clock->Now() : std::chrono::system_clock::now();
  }

  LinkEventLog& log;
  std::shared_ptr<spdlog::logger> logger;
  const Clock* clock;
  NlSock events{nullptr, &nl_socket_free};
  std::map<int, LinkTrackState> links;

  void Apply(const LinkMessage& message, bool deleted) {
    if (deleted) {
      links.erase(message.ifindex);
      return;
    }
    auto it = links.find(message.ifindex);
    if (it != links.end() && !dumping_baseline) {
      for (LinkEvent& event : TransitionsBetween(it->second, message, Now())) {
        logger->info("link {} carrier {}{} (operstate {})", event.netdev,
                     event.carrier_up ? "up" : "down", event.inferred ? " (inferred)" : "",
                     event.operstate);
        log.Record(std::move(event));
      }
    } else if (it == links.end() && !dumping_baseline) {
      logger->debug("new link {} (ifindex {}), carrier {}", message.name, message.ifindex,
                    message.carrier ? "up" : "down");
    }
    LinkTrackState& state = links[message.ifindex];
    state.name = message.name;
    state.carrier = message.carrier;
    state.has_counts = message.has_counts;
    state.up_count = message.up_count;
    state.down_count = message.down_count;
  }
  bool dumping_baseline = false;  // baseline dump: learn the state, record nothing

  static int OnMessage(nl_msg* msg, void* arg) {
    auto* self = static_cast<Impl*>(arg);
    LinkMessage message;
    bool deleted = false;
    if (ParseLinkMessage(msg, message, deleted)) self->Apply(message, deleted);
    return NL_OK;
  }

  // RTM_GETLINK dump on a short-lived socket. `baseline`: only learn the state.
  Status Dump(bool baseline) {
    NlSock sock(nl_socket_alloc(), &nl_socket_free);
    if (!sock) return Status(StatusCode::kInternal, "rtnetlink: nl_socket_alloc failed");
    if (int err = nl_connect(sock.get(), NETLINK_ROUTE); err < 0) {
      return Status(StatusCode::kUnavailable, NlError(err, "rtnetlink connect"));
    }
    timeval timeout{2, 0};
    setsockopt(nl_socket_get_fd(sock.get()), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    nl_socket_modify_cb(sock.get(), NL_CB_VALID, NL_CB_CUSTOM, &Impl::OnMessage, this);
    if (int err = nl_rtgen_request(sock.get(), RTM_GETLINK, AF_UNSPEC, NLM_F_DUMP); err < 0) {
      return Status(StatusCode::kUnavailable, NlError(err, "rtnetlink RTM_GETLINK dump"));
    }
    dumping_baseline = baseline;
    int err = nl_recvmsgs_default(sock.get());
    dumping_baseline = false;
    if (err < 0)
      return Status(StatusCode::kUnavailable, NlError(err, "rtnetlink RTM_GETLINK dump"));
    return Status::Ok();
  }

  Status Open() {
    events.reset(nl_socket_alloc());
    if (!events) return Status(StatusCode::kInternal, "rtnetlink: nl_socket_alloc failed");
    nl_socket_disable_seq_check(events.get());
    nl_socket_modify_cb(events.get(), NL_CB_VALID, NL_CB_CUSTOM, &Impl::OnMessage, this);
    if (int err = nl_connect(events.get(), NETLINK_ROUTE); err < 0) {
      return Status(StatusCode::kUnavailable, NlError(err, "rtnetlink connect"));
    }
    if (int err = nl_socket_add_memberships(events.get(), RTNLGRP_LINK, 0); err < 0) {
      return Status(StatusCode::kUnavailable, NlError(err, "rtnetlink join RTNLGRP_LINK"));
    }
    nl_socket_set_buffer_size(events.get(), kReceiveBufferBytes, 0);
    nl_socket_set_nonblocking(events.get());
    // Joined before the baseline dump, so nothing falls between the two.
    return Dump(/*baseline=*/true);
  }

  void Run(std::stop_token stop) {
    pollfd pfd{nl_socket_get_fd(events.get()), POLLIN, 0};
    while (!stop.stop_requested()) {
      int ready = poll(&pfd, 1, kPollTimeoutMs);
      if (ready < 0 && errno != EINTR) {
        logger->error("rtnetlink poll: {}", std::strerror(errno));
        break;
      }
      if (ready <= 0) continue;
      int err = nl_recvmsgs_default(events.get());
      if (err == -NLE_NOMEM) {
        // ENOBUFS: the kernel dropped notifications. Resync from a fresh dump; the carrier
        // counters let the dump recover the transitions that were missed.
        log.RecordOverrun();
        logger->warn("rtnetlink receive buffer overrun: events lost, resynchronising");
        if (Status s = Dump(/*baseline=*/false); !s.ok()) logger->warn("{}", s.ToString());
      } else if (err < 0 && err != -NLE_AGAIN) {
        logger->warn("{}", NlError(err, "rtnetlink receive"));
      }
    }
    log.SetListening(false);
  }
};

LinkEventListener::LinkEventListener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  thread_ = std::jthread([this](std::stop_token stop) {
    SetCurrentThreadName("fw-link-ev");
    impl_->Run(stop);
  });
}

LinkEventListener::~LinkEventListener() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

Result<std::unique_ptr<LinkEventListener>> LinkEventListener::Start(
    LinkEventLog& log, std::shared_ptr<spdlog::logger> logger, const Clock* clock) {
  auto impl = std::make_unique<Impl>(log, std::move(logger), clock);
  if (Status s = impl->Open(); !s.ok()) return Error(s);
  // Listening from the moment the socket joined the group: events that arrive before the thread
  // first polls wait in the socket buffer, so nothing is lost, and a collection that runs before
  // the thread starts must not report the listener down.
  log.SetListening(true);
  return std::unique_ptr<LinkEventListener>(new LinkEventListener(std::move(impl)));
}

}  // namespace fabricwatch::sys
