#include "collectors/peer/lldp_listener.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "collectors/sys/thread_name.h"
#include "collectors/sys/unique_fd.h"

namespace fabricwatch::peer {

// ---------------------------------------------------------------- LldpNeighborTable

uint64_t LldpFrameCounts::rejected_total() const {
  uint64_t total = 0;
  for (uint64_t n : rejected) total += n;
  return total;
}

namespace {

// §9.2.7.7.1: a neighbour is identified by its MSAP, the chassis id and the port id.
bool SameMsap(const LldpNeighbor& a, const LldpNeighbor& b) {
  return a.chassis_id_subtype == b.chassis_id_subtype && a.chassis_id == b.chassis_id &&
         a.port_id_subtype == b.port_id_subtype && a.port_id == b.port_id;
}

}  // namespace

void LldpNeighborTable::UpdateLocked(std::string_view netdev, const LldpNeighbor& neighbor,
                                     Clock::time_point now) {
  ++counts_.parsed;
  auto it = by_netdev_.find(netdev);
  if (it == by_netdev_.end())
    it = by_netdev_.emplace(std::string(netdev), std::vector<Entry>{}).first;
  std::vector<Entry>& entries = it->second;
  auto same = std::find_if(entries.begin(), entries.end(),
                           [&](const Entry& e) { return SameMsap(e.neighbor, neighbor); });
  if (neighbor.ttl_seconds == 0) {
    // §9.2.7.7.3: a shutdown LLDPDU deletes the MSAP's information at once.
    ++counts_.shutdowns;
    if (same != entries.end()) entries.erase(same);
    if (entries.empty()) by_netdev_.erase(it);
    return;
  }
  if (same == entries.end()) {
    if (entries.size() >= kMaxLldpNeighborsPerNetdev) {
      entries.erase(
          std::min_element(entries.begin(), entries.end(),
                           [](const Entry& a, const Entry& b) { return a.heard < b.heard; }));
    }
    entries.push_back(Entry{});
    same = entries.end() - 1;
  }
  same->neighbor = neighbor;
  same->heard = now;
  same->expires = now + std::chrono::seconds(neighbor.ttl_seconds);
}

void LldpNeighborTable::ExpireLocked(Clock::time_point now) {
  for (auto it = by_netdev_.begin(); it != by_netdev_.end();) {
    std::vector<Entry>& entries = it->second;
    const size_t before = entries.size();
    std::erase_if(entries, [&](const Entry& e) { return now >= e.expires; });
    counts_.expired += before - entries.size();
    it = entries.empty() ? by_netdev_.erase(it) : std::next(it);
  }
}

bool LldpNeighborTable::ReceiveFrame(std::string_view netdev, std::span<const uint8_t> frame,
                                     Clock::time_point now) {
  LldpReject reason = LldpReject::kTruncated;
  auto parsed = ParseLldpFrame(frame, &reason);
  {
    std::lock_guard lock(mutex_);
    ++counts_.received;
    if (parsed) {
      UpdateLocked(netdev, *parsed, now);
    } else {
      ++counts_.rejected[static_cast<size_t>(reason)];
    }
  }
  changed_.notify_all();
  return parsed.has_value();
}

void LldpNeighborTable::Update(std::string_view netdev, const LldpNeighbor& neighbor,
                               Clock::time_point now) {
  {
    std::lock_guard lock(mutex_);
    ++counts_.received;
    UpdateLocked(netdev, neighbor, now);
  }
  changed_.notify_all();
}

void LldpNeighborTable::CountRejected(LldpReject reason) {
  {
    std::lock_guard lock(mutex_);
    ++counts_.received;
    ++counts_.rejected[static_cast<size_t>(reason)];
  }
  changed_.notify_all();
}

std::map<std::string, LldpNeighbor, std::less<>> LldpNeighborTable::Neighbors(
    Clock::time_point now) {
  std::lock_guard lock(mutex_);
  ExpireLocked(now);
  std::map<std::string, LldpNeighbor, std::less<>> out;
  for (const auto& [netdev, entries] : by_netdev_) {
    const auto newest =
        std::max_element(entries.begin(), entries.end(),
                         [](const Entry& a, const Entry& b) { return a.heard < b.heard; });
    out.emplace(netdev, newest->neighbor);
  }
  return out;
}

std::optional<LldpNeighbor> LldpNeighborTable::NeighborOf(std::string_view netdev,
                                                          Clock::time_point now) {
  auto all = Neighbors(now);
  auto it = all.find(netdev);
  if (it == all.end()) return std::nullopt;
  return std::move(it->second);
}

LldpFrameCounts LldpNeighborTable::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

void LldpNeighborTable::SetListening(bool listening) {
  std::lock_guard lock(mutex_);
  listening_ = listening;
}

bool LldpNeighborTable::listening() const {
  std::lock_guard lock(mutex_);
  return listening_;
}

uint64_t LldpNeighborTable::WaitForFrames(uint64_t seen, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return counts_.received > seen; });
  return counts_.received;
}

// ---------------------------------------------------------------- the listener

namespace {

constexpr int kPollTimeoutMs = 200;
constexpr size_t kFrameBufferBytes = 9216;  // a jumbo frame; LLDPDUs are far smaller
constexpr int kMaxFramesPerWake = 64;       // so a flood cannot hold off the stop request

// IEEE 802.1AB-2016 §7.1 table 7-1: the nearest-bridge group address, the one all LLDP agents
// send to by default.
constexpr uint8_t kNearestBridge[ETH_ALEN] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e};

struct Port {
  std::string netdev;
  int ifindex = 0;
  sys::UniqueFd fd;
};

Result<Port> OpenPort(const std::string& netdev) {
  Port port;
  port.netdev = netdev;
  port.ifindex = static_cast<int>(if_nametoindex(netdev.c_str()));
  if (port.ifindex == 0) return Error(FromErrno(errno, "netdev " + netdev));
  port.fd.Reset(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(ETH_P_LLDP)));
  if (!port.fd) {
    Status s = FromErrno(errno, "socket(AF_PACKET, SOCK_RAW, ETH_P_LLDP)");
    if (s.code() == StatusCode::kPermissionDenied) {
      return Error(Status(StatusCode::kPermissionDenied, s.message() + " (needs CAP_NET_RAW)",
                          s.sys_errno()));
    }
    return Error(s);
  }
  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(ETH_P_LLDP);
  addr.sll_ifindex = port.ifindex;
  if (::bind(port.fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Error(FromErrno(errno, "bind AF_PACKET socket to " + netdev));
  }
  packet_mreq mreq{};
  mreq.mr_ifindex = port.ifindex;
  mreq.mr_type = PACKET_MR_MULTICAST;
  mreq.mr_alen = ETH_ALEN;
  std::memcpy(mreq.mr_address, kNearestBridge, ETH_ALEN);
  if (::setsockopt(port.fd.get(), SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof(mreq)) != 0) {
    return Error(FromErrno(errno, "join 01:80:c2:00:00:0e on " + netdev));
  }
  return port;
}

}  // namespace

struct LldpListener::Impl {
  LldpNeighborTable& table;
  std::shared_ptr<spdlog::logger> logger;
  std::vector<Port> ports;
  std::vector<uint8_t> buffer = std::vector<uint8_t>(kFrameBufferBytes);

  // Reads what is queued on `port` (bounded per wake).
  void Drain(const Port& port) {
    for (int i = 0; i < kMaxFramesPerWake; ++i) {
      sockaddr_ll from{};
      socklen_t from_len = sizeof(from);
      const ssize_t n = ::recvfrom(port.fd.get(), buffer.data(), buffer.size(), MSG_TRUNC,
                                   reinterpret_cast<sockaddr*>(&from), &from_len);
      if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          logger->warn("lldp receive on {}: {}", port.netdev, std::strerror(errno));
        }
        return;
      }
      // Our own transmissions (a local lldpd) loop back to packet sockets as PACKET_OUTGOING.
      if (from.sll_pkttype == PACKET_OUTGOING || from.sll_ifindex != port.ifindex) continue;
      const auto now = LldpNeighborTable::Clock::now();
      if (static_cast<size_t>(n) > buffer.size()) {
        table.CountRejected(LldpReject::kTooLong);
        logger->debug("lldp: {}-byte frame on {} over the buffer, rejected", n, port.netdev);
        continue;
      }
      const std::span frame(buffer.data(), static_cast<size_t>(n));
      if (!table.ReceiveFrame(port.netdev, frame, now) &&
          logger->should_log(spdlog::level::debug)) {
        logger->debug("lldp: frame on {} rejected: {}", port.netdev,
                      ParseLldpFrame(frame).error().message());
      }
    }
  }

  void Run(std::stop_token stop) {
    std::vector<pollfd> fds;
    for (const Port& port : ports) fds.push_back(pollfd{port.fd.get(), POLLIN, 0});
    while (!stop.stop_requested()) {
      const int ready = ::poll(fds.data(), fds.size(), kPollTimeoutMs);
      if (ready < 0 && errno != EINTR) {
        logger->error("lldp poll: {}", std::strerror(errno));
        break;
      }
      if (ready <= 0) continue;
      for (size_t i = 0; i < fds.size(); ++i) {
        if (fds[i].revents & POLLIN) Drain(ports[i]);
        if (fds[i].revents & (POLLERR | POLLNVAL)) {
          // The netdev went away (ENETDOWN after unregister): stop polling this socket.
          logger->warn("lldp: socket on {} failed, no longer listening there", ports[i].netdev);
          fds[i].fd = -1;
        }
      }
    }
    table.SetListening(false);
  }
};

LldpListener::LldpListener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  thread_ = std::jthread([this](std::stop_token stop) {
    sys::SetCurrentThreadName("fw-lldp");
    impl_->Run(stop);
  });
}

LldpListener::~LldpListener() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

std::vector<std::string> LldpListener::netdevs() const {
  std::vector<std::string> out;
  for (const Port& port : impl_->ports) out.push_back(port.netdev);
  return out;
}

Result<std::unique_ptr<LldpListener>> LldpListener::Start(LldpNeighborTable& table,
                                                          const std::vector<std::string>& netdevs,
                                                          std::shared_ptr<spdlog::logger> logger) {
  auto impl = std::make_unique<Impl>(Impl{table, std::move(logger)});
  for (const std::string& netdev : netdevs) {
    auto port = OpenPort(netdev);
    if (port) {
      impl->ports.push_back(std::move(*port));
      continue;
    }
    // No privilege is no privilege on every netdev: say it once, as the caller's answer.
    if (port.error().code() == StatusCode::kPermissionDenied) return Error(port.error());
    impl->logger->warn("lldp: not listening on {}: {}", netdev, port.error().ToString());
  }
  if (impl->ports.empty()) {
    return Error(StatusCode::kNotFound, "lldp: none of the netdevs to listen on could be opened");
  }
  table.SetListening(true);
  return std::unique_ptr<LldpListener>(new LldpListener(std::move(impl)));
}

}  // namespace fabricwatch::peer
