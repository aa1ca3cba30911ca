// HttpServer: listeners, the epoll event loop, accepting (cap, eviction, fd shortage), timeouts
// and the hand-off of requests to the worker pools. The per-connection I/O is connection.cc; the
// routing of a parsed request is request_dispatch.cc.

#include "exporter/http/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>

#include "collectors/sys/thread_name.h"
#include "exporter/http/basic_auth.h"
#include "exporter/http/server_impl.h"

namespace fabricwatch::exporter {
namespace {

// epoll user data: the wake-up eventfd, then the listeners, then connection ids.
constexpr uint64_t kWakeId = 0;
constexpr uint64_t kFirstListenerId = 1;
// How often deadlines are checked and a paused accept is resumed.
constexpr std::chrono::milliseconds kTick{100};
// How long accepting pauses when no fd is left.
constexpr std::chrono::milliseconds kAcceptPause{100};
// Fd-shortage warnings: at most one per this period.
constexpr std::chrono::seconds kFdWarningPeriod{60};
constexpr int kAcceptsPerWakeup = 64;

// The socket address for `host` (empty: any) and `port`, IPv4 or IPv6.
std::pair<sockaddr_storage, socklen_t> SocketAddress(const std::string& host, bool ipv6, int port) {
  sockaddr_storage storage{};
  if (ipv6) {
    auto* addr = reinterpret_cast<sockaddr_in6*>(&storage);
    addr->sin6_family = AF_INET6;
    addr->sin6_port = htons(static_cast<uint16_t>(port));
    addr->sin6_addr = in6addr_any;
    if (!host.empty()) inet_pton(AF_INET6, host.c_str(), &addr->sin6_addr);
    return {storage, sizeof(sockaddr_in6)};
  }
  auto* addr = reinterpret_cast<sockaddr_in*>(&storage);
  addr->sin_family = AF_INET;
  addr->sin_port = htons(static_cast<uint16_t>(port));
  addr->sin_addr.s_addr = htonl(INADDR_ANY);
  if (!host.empty()) inet_pton(AF_INET, host.c_str(), &addr->sin_addr);
  return {storage, sizeof(sockaddr_in)};
}

Result<sys::UniqueFd> Listen(const ListenAddress& address, int& port) {
  const std::string shown =
      (address.ipv6 ? "[" + address.host + "]" : address.host) + ":" + std::to_string(address.port);
  sys::UniqueFd fd(
      ::socket(address.ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) {
    return Error(StatusCode::kUnavailable, "cannot listen on " + shown + ": " + strerror(errno));
  }
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  auto [addr, len] = SocketAddress(address.host, address.ipv6, address.port);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), len) != 0 ||
      ::listen(fd.get(), SOMAXCONN) != 0) {
    const int error = errno;
    return Error(error == EADDRINUSE ? StatusCode::kAlreadyExists : StatusCode::kUnavailable,
                 "cannot listen on " + shown + ": " + std::strerror(error));
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof(bound);
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &bound_len);
  port = ntohs(address.ipv6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return fd;
}

uint64_t FdLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1 << 20;
  return limit.rlim_cur;
}

}  // namespace

size_t EffectiveMaxConnections(size_t configured, uint64_t fd_limit) {
  const uint64_t share = std::max<uint64_t>(16, fd_limit / 4);
  return static_cast<size_t>(std::min<uint64_t>(std::max<size_t>(configured, 1), share));
}

HttpStats HttpCounters::Snapshot() const {
  HttpStats s;
  s.connections_open = open.load();
  s.accepted = accepted.load();
  s.evicted = evicted.load();
  s.rejected = rejected.load();
  s.header_timeouts = header_timeouts.load();
  s.idle_timeouts = idle_timeouts.load();
  s.write_timeouts = write_timeouts.load();
  s.tls_failures = tls_failures.load();
  s.overloaded = overloaded.load();
  s.accept_fd_errors = accept_fd_errors.load();
  s.accept_pauses = accept_pauses.load();
  s.requests = requests.load();
  s.stalled_evicted = stalled_evicted.load();
  s.per_address_rejected = per_address_rejected.load();
  s.auth_failures = auth_failures.load();
  s.auth_limited = auth_limited.load();
  s.bcrypt_runs = BcryptRunsTotal();
  return s;
}

HttpServer::HttpServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(std::chrono::milliseconds::max()); }

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const ListenAddress& address,
                                                      std::map<std::string, Route> routes,
                                                      std::shared_ptr<spdlog::logger> logger,
                                                      HttpLimits limits, SecuritySource security) {
  auto impl = std::make_shared<Impl>();
  impl->routes = std::move(routes);
  impl->logger = std::move(logger);
  impl->limits = limits;
  impl->security = std::move(security);
  impl->cap = EffectiveMaxConnections(limits.max_connections, FdLimit());
  impl->auth_limiter =
      std::make_unique<AuthFailureLimiter>(limits.auth_failure_burst, limits.auth_failure_refill);
  int port = 0;
  auto listener = Listen(address, port);
  if (!listener) return Error(listener.error());
  impl->listeners.push_back(std::move(*listener));
  impl->ports.push_back(port);
  impl->epoll = sys::UniqueFd(epoll_create1(EPOLL_CLOEXEC));
  impl->wake = sys::UniqueFd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!impl->epoll || !impl->wake) {
    return Error(StatusCode::kUnavailable, std::string("HTTP event loop: ") + strerror(errno));
  }
  impl->reserve = sys::UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.u64 = kWakeId;
  epoll_ctl(impl->epoll.get(), EPOLL_CTL_ADD, impl->wake.get(), &wake);
  for (size_t i = 0; i < impl->listeners.size(); ++i) {
    epoll_event listen_event{};
    listen_event.events = EPOLLIN;
    listen_event.data.u64 = kFirstListenerId + i;
    epoll_ctl(impl->epoll.get(), EPOLL_CTL_ADD, impl->listeners[i].get(), &listen_event);
  }
  impl->next_id = kFirstListenerId + impl->listeners.size();
  // Both pools start their threads on first use (worker_pool.h): no bcrypt thread runs unless a
  // request asks for a password check, which only basic_auth_users do.
  impl->handlers =
      std::make_unique<WorkerPool>(limits.handler_threads, limits.handler_queue, "fw-http-w");
  impl->auth = std::make_unique<WorkerPool>(limits.auth_threads, limits.auth_queue, "fw-auth");
  impl->loop = std::thread([impl] {
    sys::SetCurrentThreadName("fw-http");
    impl->Run();
  });
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

std::vector<int> HttpServer::ports() const { return impl_->ports; }
size_t HttpServer::max_connections() const { return impl_->cap; }
HttpStats HttpServer::stats() const { return impl_->counters.Snapshot(); }

bool HttpServer::Stop(std::chrono::milliseconds budget) {
  std::lock_guard lock(impl_->stop_mutex);
  if (impl_->stopped) return impl_->stopped_cleanly;
  const auto deadline =
      budget == std::chrono::milliseconds::max() ? Clock::time_point::max() : Clock::now() + budget;
  impl_->stopping = true;
  impl_->Wake();
  // The loop never blocks but in epoll_wait (woken just now): it returns at once.
  impl_->loop.join();
  const bool handlers = impl_->handlers->Stop(deadline);
  const bool auth = impl_->auth->Stop(deadline);
  impl_->stopped = true;
  impl_->stopped_cleanly = handlers && auth;
  return impl_->stopped_cleanly;
}

void HttpServer::Impl::Wake() {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake.get(), &one, sizeof(one));
}

void HttpServer::Impl::Complete(Completion completion) {
  {
    std::lock_guard lock(completions_mutex);
    completions.push_back(std::move(completion));
  }
  Wake();
}

void HttpServer::Impl::Run() {
  epoll_event events[256];
  Clock::time_point last_tick = Clock::now();
  while (!stopping) {
    const int n = epoll_wait(epoll.get(), events, 256, WaitMilliseconds(Clock::now(), last_tick));
    const Clock::time_point now = Clock::now();
    for (int i = 0; i < n; ++i) {
      const uint64_t id = events[i].data.u64;
      if (id == kWakeId) {
        uint64_t value = 0;
        [[maybe_unused]] ssize_t r = ::read(wake.get(), &value, sizeof(value));
      } else if (id < kFirstListenerId + listeners.size()) {
        Accept(listeners[id - kFirstListenerId].get(), now);
      } else {
        Process(id, now);
      }
    }
    DrainCompletions(now);
    if (now - last_tick >= kTick) {
      Tick(now);
      last_tick = now;
    }
  }
  connections.clear();
  counters.open = 0;
  listeners.clear();
}

void HttpServer::Impl::Accept(int listener, Clock::time_point now) {
  for (int i = 0; i < kAcceptsPerWakeup; ++i) {
    sockaddr_storage address{};
    socklen_t address_length = sizeof(address);
    sys::UniqueFd fd(accept4(listener, reinterpret_cast<sockaddr*>(&address), &address_length,
                             SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) {
      const int error = errno;
      if (error == EINTR || error == ECONNABORTED) continue;
      if (error == EAGAIN || error == EWOULDBLOCK) return;
      if (error == EMFILE || error == ENFILE) {
        // Linux reserves the new fd before looking at the backlog: EMFILE also comes when
        // nothing is pending, and then there is nothing to make room for.
        if (!Pending(listener)) return;
        ++counters.accept_fd_errors;
        // Make room rather than leave the connection in the backlog, where epoll would report
        // it again at once and the loop would spin.
        if (Evict(now)) continue;
        if (reserve) {
          reserve.Reset();  // this fd serves the next connection; reopened in Tick()
          continue;
        }
      }
      WarnAcceptFailure(error, now);
      PauseAccepting(now);
      return;
    }
    std::string peer = PeerKey(address, address_length);
    if (!AdmitPeer(peer, now)) {
      ++counters.per_address_rejected;
      continue;  // closed by `fd`
    }
    if (connections.size() >= cap && !Evict(now)) {
      ++counters.rejected;
      continue;
    }
    AddConnection(std::move(fd), std::move(peer), now);
  }
}

bool HttpServer::Impl::AdmitPeer(const std::string& peer, Clock::time_point now) {
  const size_t limit = limits.max_connections_per_address;
  if (limit == 0 || peer.empty() || peers.count(peer) < limit) return true;
  return Evict(now, &peer);
}

bool HttpServer::Impl::Pending(int listener) {
  pollfd p{.fd = listener, .events = POLLIN, .revents = 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

void HttpServer::Impl::AddConnection(sys::UniqueFd fd, std::string peer, Clock::time_point now) {
  // Responses are written whole (one sendmsg, or one TLS record for head and body start):
  // Nagle would only hold their last segment back until the client's delayed ACK (~40 ms).
  const int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::shared_ptr<const SecurityPolicy> policy = security ? security() : nullptr;
  std::unique_ptr<SSL, SslDeleter> ssl;
  if (policy != nullptr && policy->tls_context() != nullptr) {
    ssl.reset(SSL_new(policy->tls_context()));
    if (!ssl || SSL_set_fd(ssl.get(), fd.get()) != 1) {
      ++counters.tls_failures;
      return;
    }
    SSL_set_mode(ssl.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  }
  const int raw = fd.get();
  const uint64_t id = next_id++;
  auto connection = std::make_unique<Connection>(std::move(fd), std::move(ssl), std::move(policy),
                                                 limits, now, peer);
  epoll_event event{};
  event.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  event.data.u64 = id;
  if (epoll_ctl(epoll.get(), EPOLL_CTL_ADD, raw, &event) != 0) return;
  connections.emplace(id, std::move(connection));
  peers.Add(peer);
  ++counters.accepted;
  counters.open = connections.size();
  Process(id, now);
}

HttpServer::Impl::ConnectionIt HttpServer::Impl::Erase(ConnectionIt it) {
  peers.Remove(it->second->peer());
  it = connections.erase(it);
  counters.open = connections.size();
  return it;
}

bool HttpServer::Impl::Evict(Clock::time_point now, const std::string* peer) {
  // Oldest first (ids grow with accept order) of the busiest address: a connection that never
  // completed a head, then
  // one waiting for its next head (keep-alive), then a response whose client stopped reading. A
  // candidate is driven first: a scraper whose request arrived since the last event, or whose
  // client read meanwhile, is then no longer one (under a flood of new connections, the accepts
  // of one wake-up come before the reads and writes).
  int reads_left = 8;
  for (int pass = 0; pass < 3; ++pass) {
    const auto is_candidate = [pass, peer, now](Connection& c) {
      if (peer != nullptr && c.peer() != *peer) return false;
      switch (pass) {
        case 0:
          return c.AwaitingHead() && !c.ever_completed_head();
        case 1:
          return c.AwaitingHead() || c.state() == Connection::State::kIdle;
        default:
          return c.Stalled(now);
      }
    };
    // Idle and headless connections are taken from the address that holds the most of them: a
    // flood from other addresses cannot evict a scraper that has one connection open while its
    // request is still on its way (pass 2, a stalled response, is its own client's doing).
    size_t busiest = 0;
    if (peer == nullptr && pass < 2) {
      for (const auto& [id, connection] : connections) {
        if (is_candidate(*connection)) busiest = std::max(busiest, peers.count(connection->peer()));
      }
    }
    const auto is_victim = [&](Connection& c) {
      return is_candidate(c) && (busiest == 0 || peers.count(c.peer()) >= busiest);
    };
    uint64_t after = 0;
    while (true) {
      auto it = connections.upper_bound(after);
      while (it != connections.end() && !is_victim(*it->second)) ++it;
      if (it == connections.end()) break;
      const uint64_t id = it->first;
      after = id;
      if (reads_left-- > 0) {
        Process(id, now);
        it = connections.find(id);
        if (it == connections.end()) return true;  // it closed by itself: room made
        if (!is_victim(*it->second)) continue;
      }
      if (pass == 2) {
        it->second->Abort();  // drop what the kernel still holds for it
        ++counters.stalled_evicted;
      }
      Erase(it);
      ++counters.evicted;
      return true;
    }
  }
  return false;
}

void HttpServer::Impl::PauseAccepting(Clock::time_point now) {
  for (size_t i = 0; i < listeners.size(); ++i) {
    epoll_event event{};
    event.events = 0;
    event.data.u64 = kFirstListenerId + i;
    epoll_ctl(epoll.get(), EPOLL_CTL_MOD, listeners[i].get(), &event);
  }
  accept_paused = true;
  accept_resume = now + kAcceptPause;
  ++counters.accept_pauses;
}

void HttpServer::Impl::WarnAcceptFailure(int error, Clock::time_point now) {
  ++accept_warnings_suppressed;
  if (last_accept_warning && now - *last_accept_warning < kFdWarningPeriod) return;
  logger->warn(
      "accept() failed: {} (open-file limit {}, {} connections open); pausing new connections "
      "for {} ms; {} such failures since the last warning (at most one warning a minute)",
      std::strerror(error), FdLimit(), connections.size(), kAcceptPause.count(),
      accept_warnings_suppressed);
  accept_warnings_suppressed = 0;
  last_accept_warning = now;
}

int HttpServer::Impl::WaitMilliseconds(Clock::time_point now, Clock::time_point last_tick) const {
  Clock::time_point next = Clock::time_point::max();
  if (!reserve) next = now;  // open the spare fd again at the next tick
  if (accept_paused) next = std::min(next, accept_resume);
  for (const auto& [id, connection] : connections) {
    if (connection->timeout_kind() != Connection::Timeout::kNone) {
      next = std::min(next, connection->deadline());
    }
  }
  if (next == Clock::time_point::max()) return -1;
  // Deadlines are enforced at tick granularity (Run): waking sooner would find Tick not due.
  next = std::max(next, last_tick + kTick);
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
  return static_cast<int>(std::clamp<int64_t>(wait, 0, std::numeric_limits<int>::max()));
}

void HttpServer::Impl::Tick(Clock::time_point now) {
  if (accept_paused && now >= accept_resume) {
    for (size_t i = 0; i < listeners.size(); ++i) {
      epoll_event event{};
      event.events = EPOLLIN;
      event.data.u64 = kFirstListenerId + i;
      epoll_ctl(epoll.get(), EPOLL_CTL_MOD, listeners[i].get(), &event);
    }
    accept_paused = false;
  }
  if (!reserve) reserve = sys::UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  for (auto it = connections.begin(); it != connections.end();) {
    const Connection& c = *it->second;
    const Connection::Timeout kind = c.timeout_kind();
    if (kind == Connection::Timeout::kNone || now < c.deadline()) {
      ++it;
      continue;
    }
    if (kind == Connection::Timeout::kHeader) ++counters.header_timeouts;
    if (kind == Connection::Timeout::kIdle) ++counters.idle_timeouts;
    if (kind == Connection::Timeout::kWrite) {
      ++counters.write_timeouts;
      it->second->Abort();
    }
    it = Erase(it);
  }
}

void HttpServer::Impl::Process(uint64_t id, Clock::time_point now) {
  auto it = connections.find(id);
  if (it == connections.end()) return;
  Connection& c = *it->second;
  while (true) {
    switch (c.Drive(now)) {
      case Connection::Event::kNone:
        return;
      case Connection::Event::kClose:
        if (c.tls_failed()) {
          ++counters.tls_failures;
          logger->debug("connection closed: {}", c.close_reason());
        }
        Erase(it);
        return;
      case Connection::Event::kHeadReady:
        Dispatch(id, c, now);
        break;
      case Connection::Event::kHeadError:
        logger->debug("refused a request: {}", c.head_error().reason);
        Answer(c, c.head_error().status, {}, /*close=*/true, now);
        break;
    }
  }
}

void HttpServer::Impl::DrainCompletions(Clock::time_point now) {
  std::vector<Completion> done;
  {
    std::lock_guard lock(completions_mutex);
    done.swap(completions);
  }
  for (Completion& completion : done) {
    // The failed-login limit learns the outcome even when the connection is gone.
    if (completion.kind == Completion::Kind::kAuthorized) {
      auth_limiter->Refund(completion.peer, now);
    } else if (completion.kind == Completion::Kind::kUnauthorized) {
      ++counters.auth_failures;
    }
    auto it = connections.find(completion.id);
    if (it == connections.end()) continue;  // closed meanwhile (Stop)
    Connection& c = *it->second;
    if (c.state() != Connection::State::kHandling) continue;
    switch (completion.kind) {
      case Completion::Kind::kResponse:
        ++counters.requests;
        c.Respond(std::move(completion.response), now);
        break;
      case Completion::Kind::kAuthorized:
        RunRoute(completion.id, c, now);
        break;
      case Completion::Kind::kUnauthorized:
        AnswerUnauthorized(c, now);
        break;
    }
    Process(completion.id, now);
  }
}

}  // namespace fabricwatch::exporter
