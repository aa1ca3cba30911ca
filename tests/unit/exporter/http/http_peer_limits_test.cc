// HttpServer's bounds per client (issue 39 items 3 and 9): a response whose client stopped
// reading is evicted at the cap, connections per source address are limited, accepted sockets
// have TCP_NODELAY, and failed basic-auth logins are counted and limited per address. Clients
// are several peers through 127/8 source addresses. Deadlines are generous bounds on conditions
// polled for, never timing assertions.

#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collectors/sys/unique_fd.h"
#include "exporter/http/http_server.h"
#include "exporter/http/peer_limits.h"
#include "tests/unit/exporter/http/http_test_client.h"

namespace fabricwatch::exporter {
namespace {

using http_test::ClosedByServer;
using http_test::Connect;
using http_test::Get;
using http_test::PlainRoutes;
using http_test::PollUntil;
using http_test::ReadResponse;
using http_test::SendAll;
using http_test::StartServer;
using http_test::StatusOf;
using sys::UniqueFd;

// A body far larger than what a loopback socket buffers for a client with a 4 KB window.
constexpr size_t kBigBody = 8 << 20;

std::map<std::string, Route> RoutesWithBig() {
  auto routes = PlainRoutes();
  auto big = std::make_shared<const RenderedBody>(std::string(kBigBody, 'x'));
  routes["/big"] = Route{"text/plain", nullptr, false, [big] { return big; }};
  return routes;
}

// A client that asks for /big and never reads: its response stays in the writing state.
UniqueFd SlowReader(int port, const char* source = nullptr) {
  UniqueFd s = Connect(port, source, /*rcvbuf=*/4096);
  if (s) SendAll(s.get(), "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  return s;
}

TEST(HttpPeerLimitsTest, AtTheCapAResponseThatMakesNoProgressIsEvicted) {
  HttpLimits limits;
  limits.max_connections = 16;  // EffectiveMaxConnections' floor
  limits.max_connections_per_address = 0;
  limits.stalled_write = std::chrono::milliseconds(200);
  auto server = StartServer(limits, RoutesWithBig());
  const int port = server->ports()[0];
  std::vector<UniqueFd> slow;
  for (int i = 0; i < 16; ++i) slow.push_back(SlowReader(port));
  // Every one is being answered (a response handed to its connection), none can finish.
  ASSERT_TRUE(PollUntil([&] { return server->stats().requests == 16; }));
  ASSERT_EQ(server->stats().connections_open, 16u);
  // A scraper gets in: the oldest stalled response is closed for it (after 200 ms of no
  // progress; Get's connect waits in the backlog meanwhile, or retries below).
  std::string response;
  ASSERT_TRUE(PollUntil([&] {
    response = Get(port);
    return StatusOf(response) == 200;
  })) << "the slow readers locked the scraper out: "
      << server->stats().rejected << " rejected";
  EXPECT_GE(server->stats().stalled_evicted, 1u);
  EXPECT_EQ(server->stats().stalled_evicted, server->stats().evicted);
  // The oldest was reset, and only it: a slow reader's socket reports it without being read.
  std::vector<pollfd> fds;
  for (const UniqueFd& s : slow) fds.push_back({.fd = s.get(), .events = 0, .revents = 0});
  EXPECT_EQ(::poll(fds.data(), fds.size(), 10'000), 1);
  EXPECT_NE(fds[0].revents & POLLHUP, 0) << "the oldest stalled response was not the one";
}

TEST(HttpPeerLimitsTest, AResponseBeingReadIsNotEvicted) {
  HttpLimits limits;
  limits.max_connections = 16;
  limits.max_connections_per_address = 0;
  limits.stalled_write = std::chrono::seconds(60);  // nothing is stalled for long enough
  auto server = StartServer(limits, RoutesWithBig());
  const int port = server->ports()[0];
  std::vector<UniqueFd> slow;
  for (int i = 0; i < 16; ++i) slow.push_back(SlowReader(port));
  ASSERT_TRUE(PollUntil([&] { return server->stats().requests == 16; }));
  UniqueFd refused = Connect(port);
  SendAll(refused.get(), "GET /plain HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(ReadResponse(refused.get()), "");
  ASSERT_TRUE(PollUntil([&] { return server->stats().rejected >= 1; }));
  EXPECT_EQ(server->stats().evicted, 0u);
}

TEST(HttpPeerLimitsTest, ConnectionsPerAddressAreLimited) {
  HttpLimits limits;
  limits.max_connections_per_address = 4;
  limits.stalled_write = std::chrono::seconds(60);
  auto server = StartServer(limits, RoutesWithBig());
  const int port = server->ports()[0];
  // Four responses in progress from 127.0.0.2: a fifth connection from there is refused.
  std::vector<UniqueFd> slow;
  for (int i = 0; i < 4; ++i) slow.push_back(SlowReader(port, "127.0.0.2"));
  ASSERT_TRUE(PollUntil([&] { return server->stats().requests == 4; }));
  UniqueFd fifth = Connect(port, "127.0.0.2");
  ASSERT_TRUE(fifth);
  EXPECT_TRUE(ClosedByServer(fifth.get()));
  EXPECT_EQ(server->stats().per_address_rejected, 1u);
  // Another address is served.
  EXPECT_EQ(StatusOf(Get(port, "/plain", "127.0.0.3")), 200);
  // Four idle connections from 127.0.0.4: a fifth from there evicts the oldest of them.
  std::vector<UniqueFd> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(Connect(port, "127.0.0.4"));
  ASSERT_TRUE(PollUntil([&] { return server->stats().connections_open == 8; }));
  EXPECT_EQ(StatusOf(Get(port, "/plain", "127.0.0.4")), 200);
  EXPECT_TRUE(ClosedByServer(idle[0].get()));
  EXPECT_EQ(server->stats().evicted, 1u);
  EXPECT_EQ(server->stats().per_address_rejected, 1u);
}

// At the cap, the connection without a request head that makes room is taken from the address
// holding the most: a scraper's fresh connection from another address is not the one closed,
// though it is the oldest headless one (its request still on its way).
TEST(HttpPeerLimitsTest, AtTheCapTheBusiestAddressGivesWay) {
  HttpLimits limits;
  limits.max_connections = 16;  // EffectiveMaxConnections' floor
  auto server = StartServer(limits, PlainRoutes());
  const int port = server->ports()[0];
  UniqueFd scraper = Connect(port, "127.0.0.5");  // oldest, no request yet
  std::vector<UniqueFd> flood;
  for (int i = 0; i < 15; ++i) flood.push_back(Connect(port, "127.0.0.6"));
  ASSERT_TRUE(PollUntil([&] { return server->stats().connections_open == 16; }));
  UniqueFd next = Connect(port, "127.0.0.6");
  ASSERT_TRUE(PollUntil([&] { return server->stats().evicted == 1; }));
  EXPECT_TRUE(ClosedByServer(flood[0].get()));
  // The scraper's request, sent now, is answered on its connection.
  SendAll(scraper.get(), "GET /plain HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(StatusOf(ReadResponse(scraper.get())), 200);
}

// The server's accepted sockets are in this process: found by their local port.
std::vector<int> AcceptedSockets(int port) {
  std::vector<int> fds;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  while (dirent* entry = readdir(dir)) {
    const int fd = std::atoi(entry->d_name);
    sockaddr_storage local{};
    socklen_t length = sizeof(local);
    int listening = 0;
    socklen_t int_length = sizeof(listening);
    if (fd <= 2 || getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0 ||
        local.ss_family != AF_INET ||
        ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port) != port ||
        getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &int_length) != 0 || listening) {
      continue;
    }
    fds.push_back(fd);
  }
  closedir(dir);
  return fds;
}

TEST(HttpPeerLimitsTest, AcceptedSocketsHaveTcpNoDelay) {
  auto server = StartServer();
  const int port = server->ports()[0];
  UniqueFd client = Connect(port);
  SendAll(client.get(), "GET /plain HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(StatusOf(ReadResponse(client.get())), 200);  // kept alive: still open
  const std::vector<int> accepted = AcceptedSockets(port);
  ASSERT_EQ(accepted.size(), 1u);
  int nodelay = 0;
  socklen_t length = sizeof(nodelay);
  ASSERT_EQ(getsockopt(accepted[0], IPPROTO_TCP, TCP_NODELAY, &nodelay, &length), 0);
  EXPECT_EQ(nodelay, 1) << "Nagle holds the last segment of a response for the delayed ACK";
}

// Basic auth as WebSecurityState answers it, without bcrypt: "Basic right" passes the slow
// check, any other "Basic ..." fails it, "Basic cached" is a cached success.
class CountingPolicy : public SecurityPolicy {
 public:
  SSL_CTX* tls_context() const override { return nullptr; }
  Status CheckClientCertificate(SSL*) const override { return Status::Ok(); }
  bool auth_required(std::string_view) const override { return true; }
  Auth CheckCached(std::string_view authorization) const override {
    if (authorization == "Basic cached") return Auth::kAllowed;
    return authorization.starts_with("Basic ") ? Auth::kNeedsSlowCheck : Auth::kDenied;
  }
  bool CheckSlow(std::string_view authorization) const override {
    ++slow_checks;
    return authorization == "Basic right";
  }
  const std::vector<std::pair<std::string, std::string>>& headers() const override {
    return headers_;
  }
  mutable std::atomic<int> slow_checks{0};

 private:
  std::vector<std::pair<std::string, std::string>> headers_;
};

TEST(HttpPeerLimitsTest, FailedLoginsAreCountedAndLimitedPerAddress) {
  auto policy = std::make_shared<CountingPolicy>();
  HttpLimits limits;
  limits.auth_failure_burst = 3;
  limits.auth_failure_refill = std::chrono::minutes(10);
  auto server = StartServer(limits, PlainRoutes(), [policy] { return policy; });
  const int port = server->ports()[0];
  auto request = [&](const char* source, const std::string& authorization) {
    UniqueFd s = Connect(port, source);
    SendAll(s.get(), "GET /plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
                         (authorization.empty() ? "" : "Authorization: " + authorization + "\r\n") +
                         "\r\n");
    return ReadResponse(s.get());
  };
  // No credentials: the challenge, not a failed login.
  EXPECT_EQ(StatusOf(request("127.0.0.2", "")), 401);
  EXPECT_EQ(server->stats().auth_failures, 0u);
  // A right password gives its token back: it never counts against the address.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(StatusOf(request("127.0.0.2", "Basic right")), 200);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(StatusOf(request("127.0.0.2", "Basic wrong")), 401) << i;
  EXPECT_EQ(server->stats().auth_failures, 3u);
  EXPECT_EQ(policy->slow_checks, 8);
  // The fourth failure in a row is not checked: 429 with Retry-After, even with the right
  // password (checking it would let a guesser go on).
  for (const char* authorization : {"Basic wrong", "Basic right"}) {
    const std::string limited = request("127.0.0.2", authorization);
    EXPECT_EQ(StatusOf(limited), 429) << limited;
    EXPECT_NE(limited.find("Retry-After: "), std::string::npos) << limited;
  }
  EXPECT_EQ(policy->slow_checks, 8) << "a limited address still ran password checks";
  EXPECT_EQ(server->stats().auth_limited, 2u);
  // Cached credentials need no check and are served; another address has its own budget.
  EXPECT_EQ(StatusOf(request("127.0.0.2", "Basic cached")), 200);
  EXPECT_EQ(StatusOf(request("127.0.0.3", "Basic wrong")), 401);
  EXPECT_EQ(StatusOf(request("127.0.0.3", "Basic right")), 200);
  // A malformed header is a failed login too (denied without a check).
  EXPECT_EQ(StatusOf(request("127.0.0.3", "Bearer x")), 401);
  EXPECT_EQ(server->stats().auth_failures, 5u);
}

TEST(HttpPeerLimitsTest, PeerKeys) {
  auto v4 = [](const char* text) {
    sockaddr_storage s{};
    auto* in = reinterpret_cast<sockaddr_in*>(&s);
    in->sin_family = AF_INET;
    inet_pton(AF_INET, text, &in->sin_addr);
    return PeerKey(s, sizeof(sockaddr_in));
  };
  auto v6 = [](const char* text) {
    sockaddr_storage s{};
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&s);
    in6->sin6_family = AF_INET6;
    inet_pton(AF_INET6, text, &in6->sin6_addr);
    return PeerKey(s, sizeof(sockaddr_in6));
  };
  EXPECT_EQ(PeerKeyText(v4("10.0.0.7")), "10.0.0.7");
  EXPECT_NE(v4("10.0.0.7"), v4("10.0.0.8"));
  EXPECT_EQ(v6("::ffff:10.0.0.7"), v4("10.0.0.7"));  // a v4-mapped address is the v4 one
  EXPECT_EQ(v6("2001:db8:1:2::1"), v6("2001:db8:1:2:ffff::9"));  // one /64
  EXPECT_NE(v6("2001:db8:1:2::1"), v6("2001:db8:1:3::1"));
  EXPECT_EQ(PeerKeyText(v6("2001:db8:1:2::1")), "2001:db8:1:2::/64");
}

TEST(HttpPeerLimitsTest, AuthFailureLimiterRefillsAndRefunds) {
  using namespace std::chrono_literals;
  AuthFailureLimiter limiter(2, 6s, /*max_keys=*/2);
  const auto t0 = AuthFailureLimiter::Clock::time_point{} + 1h;
  std::chrono::seconds retry{};
  EXPECT_TRUE(limiter.TryTake("a", t0, retry));
  EXPECT_TRUE(limiter.TryTake("a", t0, retry));
  EXPECT_FALSE(limiter.TryTake("a", t0 + 1s, retry));
  EXPECT_EQ(retry, 5s);
  EXPECT_TRUE(limiter.TryTake("a", t0 + 6s, retry));  // one token refilled
  EXPECT_FALSE(limiter.TryTake("a", t0 + 6s, retry));
  limiter.Refund("a", t0 + 6s);  // a right password gives its token back
  EXPECT_TRUE(limiter.TryTake("a", t0 + 6s, retry));
  // Bounded: a third key prunes full buckets ("b", refilled) and is admitted.
  EXPECT_TRUE(limiter.TryTake("b", t0, retry));
  EXPECT_TRUE(limiter.TryTake("c", t0 + 1min, retry));
  EXPECT_LE(limiter.keys(), 2u);
  AuthFailureLimiter off(0, 6s);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(off.TryTake("a", t0, retry));
}

}  // namespace
}  // namespace fabricwatch::exporter
