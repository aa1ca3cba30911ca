// HttpServer's bounds (issue 19 "bounded HTTP"): every method but GET/HEAD is 405, bodies are
// refused, keep-alive, the header and idle timeouts, eviction at the connection cap, the bounded
// worker queue, basic auth off the event loop, and accept() without fds. Deadlines are generous
// bounds on conditions polled for, never timing assertions (timing is tools/bench/http_abuse.py).

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/ostream_sink.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collectors/sys/unique_fd.h"
#include "exporter/http/http_server.h"
#include "tests/unit/exporter/http/http_test_client.h"

namespace fabricwatch::exporter {
namespace {

using sys::UniqueFd;

using http_test::ClosedByServer;
using http_test::Connect;
using http_test::Get;
using http_test::NullLogger;
using http_test::PlainRoutes;
using http_test::PollUntil;
using http_test::ReadResponse;
using http_test::SendAll;
using http_test::StartServer;
using http_test::StatusOf;

TEST(HttpLimitsTest, EveryOtherMethodIs405WithAllowAndClose) {
  auto server = StartServer();
  const int port = server->ports()[0];
  for (const char* line :
       {"OPTIONS * HTTP/1.1", "OPTIONS /plain HTTP/1.1", "TRACE / HTTP/1.1",
        "CONNECT example.com:443 HTTP/1.1", "FOO /plain HTTP/1.1", "PROPFIND /plain HTTP/1.1",
        "POST /nope HTTP/1.1", "get /plain HTTP/1.1"}) {
    UniqueFd s = Connect(port);
    SendAll(s.get(), std::string(line) + "\r\nHost: x\r\n\r\n");  // keep-alive asked (HTTP/1.1)
    const std::string response = ReadResponse(s.get());
    EXPECT_EQ(StatusOf(response), 405) << line << ": " << response;
    EXPECT_NE(response.find("Allow: GET, HEAD\r\n"), std::string::npos) << line;
    EXPECT_NE(response.find("Connection: close\r\n"), std::string::npos) << line;
    EXPECT_TRUE(ClosedByServer(s.get())) << line;
  }
}

TEST(HttpLimitsTest, BodyOnGetIs400) {
  auto server = StartServer();
  UniqueFd s = Connect(server->ports()[0]);
  SendAll(s.get(), "GET /plain HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(StatusOf(ReadResponse(s.get())), 400);
  EXPECT_TRUE(ClosedByServer(s.get()));
  EXPECT_EQ(StatusOf(Get(server->ports()[0])), 200);
}

TEST(HttpLimitsTest, KeepAliveServesSeveralRequestsAndPipelining) {
  auto server = StartServer();
  UniqueFd s = Connect(server->ports()[0]);
  for (int i = 0; i < 3; ++i) {
    SendAll(s.get(), "GET /plain HTTP/1.1\r\nHost: x\r\n\r\n");
    const std::string r = ReadResponse(s.get());
    EXPECT_EQ(StatusOf(r), 200) << i;
    EXPECT_EQ(r.find("Connection: close"), std::string::npos) << i;
  }
  // Two requests in one segment: two answers, in order.
  SendAll(s.get(), "GET /plain HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(StatusOf(ReadResponse(s.get())), 200);
  EXPECT_EQ(StatusOf(ReadResponse(s.get())), 404);
  EXPECT_EQ(server->stats().accepted, 1u);
}

TEST(HttpLimitsTest, HeaderTimeoutIsTotalNotPerByte) {
  HttpLimits limits;
  limits.header_timeout = std::chrono::milliseconds(300);
  auto server = StartServer(limits);
  UniqueFd s = Connect(server->ports()[0]);
  SendAll(s.get(), "GET /plain HTTP/1.1\r\n");
  // Trickle a byte every 50 ms: each byte arrives well within 300 ms of the last, so only a
  // total deadline closes the connection.
  bool closed = false;
  for (int i = 0; i < 200 && !closed; ++i) {
    if (::send(s.get(), "X", 1, MSG_NOSIGNAL) != 1) closed = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    closed = closed || server->stats().header_timeouts > 0;
  }
  EXPECT_TRUE(closed) << "a trickling client was never timed out";
  EXPECT_EQ(server->stats().header_timeouts, 1u);
  EXPECT_TRUE(ClosedByServer(s.get()));
}

TEST(HttpLimitsTest, IdleKeepAliveConnectionIsClosed) {
  HttpLimits limits;
  limits.idle_timeout = std::chrono::milliseconds(200);
  auto server = StartServer(limits);
  UniqueFd s = Connect(server->ports()[0]);
  SendAll(s.get(), "GET /plain HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(StatusOf(ReadResponse(s.get())), 200);
  EXPECT_TRUE(ClosedByServer(s.get()));
  EXPECT_EQ(server->stats().idle_timeouts, 1u);
}

TEST(HttpLimitsTest, AtTheCapTheOldestIdleConnectionIsEvicted) {
  HttpLimits limits;
  limits.max_connections = 16;  // EffectiveMaxConnections' floor
  auto server = StartServer(limits);
  ASSERT_EQ(server->max_connections(), 16u);
  const int port = server->ports()[0];
  std::vector<UniqueFd> idle;
  for (int i = 0; i < 16; ++i) idle.push_back(Connect(port));
  ASSERT_TRUE(PollUntil([&] { return server->stats().connections_open == 16; }));
  // Five more: each one evicts the oldest that never sent a request head.
  for (int i = 0; i < 5; ++i) idle.push_back(Connect(port));
  ASSERT_TRUE(PollUntil([&] { return server->stats().evicted == 5; }));
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(ClosedByServer(idle[i].get())) << i;
  // A scraper still gets in (evicting the sixth).
  EXPECT_EQ(StatusOf(Get(port)), 200);
  EXPECT_EQ(server->stats().evicted, 6u);
  EXPECT_EQ(server->stats().rejected, 0u);
  EXPECT_EQ(server->stats().accepted, 22u);
}

TEST(HttpLimitsTest, EffectiveMaxConnectionsFollowsTheFdLimit) {
  EXPECT_EQ(EffectiveMaxConnections(4096, 1 << 20), 4096u);
  EXPECT_EQ(EffectiveMaxConnections(4096, 1024), 256u);
  EXPECT_EQ(EffectiveMaxConnections(4096, 256), 64u);
  EXPECT_EQ(EffectiveMaxConnections(4096, 20), 16u);
  EXPECT_EQ(EffectiveMaxConnections(10, 1 << 20), 10u);
}

// A route that blocks until released: fills the worker pool.
struct Gate {
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false;
  int waiting = 0;
  void Wait() {
    std::unique_lock lock(mutex);
    ++waiting;
    cv.wait(lock, [&] { return open; });
  }
  void Open() {
    std::lock_guard lock(mutex);
    open = true;
    cv.notify_all();
  }
  int Waiting() {
    std::lock_guard lock(mutex);
    return waiting;
  }
};

// Opens the gate when the test ends, even on a failed ASSERT, so that the server's destructor
// (which waits for its routes) does not wait forever. Declare it after the server.
struct OpenAtExit {
  Gate& gate;
  ~OpenAtExit() { gate.Open(); }
};

TEST(HttpLimitsTest, FullWorkerQueueIs503WithRetryAfter) {
  Gate gate;
  auto routes = PlainRoutes();
  routes["/slow"] = Route{"text/plain",
                          [&] {
                            gate.Wait();
                            return std::string("slow\n");
                          },
                          false,
                          {}};
  HttpLimits limits;
  limits.handler_threads = 1;
  limits.handler_queue = 1;
  auto server = StartServer(limits, std::move(routes));
  OpenAtExit open_at_exit{gate};
  const int port = server->ports()[0];
  UniqueFd running = Connect(port);
  SendAll(running.get(), "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(PollUntil([&] { return gate.Waiting() == 1; }));
  // Two more: one fits the queue (1), the other is refused at once.
  std::vector<UniqueFd> more;
  for (int i = 0; i < 2; ++i) {
    more.push_back(Connect(port));
    SendAll(more.back().get(), "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  ASSERT_TRUE(PollUntil([&] { return server->stats().overloaded == 1; }));
  gate.Open();
  EXPECT_EQ(StatusOf(ReadResponse(running.get())), 200);
  std::map<int, int> statuses;
  for (UniqueFd& s : more) {
    const std::string r = ReadResponse(s.get());
    ++statuses[StatusOf(r)];
    if (StatusOf(r) == 503) EXPECT_NE(r.find("Retry-After: 1\r\n"), std::string::npos);
  }
  EXPECT_EQ(statuses[200], 1);
  EXPECT_EQ(statuses[503], 1);
  EXPECT_EQ(server->stats().overloaded, 1u);
}

// Basic auth as WebSecurityState would answer: "Basic good" is cached, "Basic slow-*" needs
// bcrypt (blocked on a gate here), anything else is denied.
class FakePolicy : public SecurityPolicy {
 public:
  explicit FakePolicy(Gate& gate) : gate_(gate) {}
  SSL_CTX* tls_context() const override { return nullptr; }
  Status CheckClientCertificate(SSL*) const override { return Status::Ok(); }
  bool auth_required(std::string_view path) const override { return path != "/healthz"; }
  Auth CheckCached(std::string_view authorization) const override {
    if (authorization == "Basic good") return Auth::kAllowed;
    return authorization.rfind("Basic slow", 0) == 0 ? Auth::kNeedsSlowCheck : Auth::kDenied;
  }
  bool CheckSlow(std::string_view authorization) const override {
    gate_.Wait();
    return authorization == "Basic slow-right";
  }
  const std::vector<std::pair<std::string, std::string>>& headers() const override {
    return headers_;
  }

 private:
  Gate& gate_;
  std::vector<std::pair<std::string, std::string>> headers_{{"X-Frame-Options", "deny"}};
};

TEST(HttpLimitsTest, SlowPasswordChecksDoNotDelayCachedCredentials) {
  Gate gate;
  auto policy = std::make_shared<FakePolicy>(gate);
  HttpLimits limits;
  limits.auth_threads = 1;
  limits.auth_queue = 2;
  auto server = StartServer(limits, PlainRoutes(), [policy] { return policy; });
  OpenAtExit open_at_exit{gate};
  const int port = server->ports()[0];
  auto request = [&](const std::string& auth) {
    UniqueFd s = Connect(port);
    SendAll(s.get(), "GET /plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
                         (auth.empty() ? "" : "Authorization: " + auth + "\r\n") + "\r\n");
    return s;
  };
  // Four wrong passwords: one in bcrypt (blocked), two queued, one over the queue (503).
  std::vector<UniqueFd> flood;
  flood.push_back(request("Basic slow-wrong"));
  ASSERT_TRUE(PollUntil([&] { return gate.Waiting() == 1; }));
  for (int i = 0; i < 3; ++i) flood.push_back(request("Basic slow-wrong"));
  ASSERT_TRUE(PollUntil([&] { return server->stats().overloaded == 1; }));
  // Cached credentials are answered while bcrypt is busy.
  UniqueFd cached = request("Basic good");
  const std::string ok = ReadResponse(cached.get());
  EXPECT_EQ(StatusOf(ok), 200) << ok;
  EXPECT_NE(ok.find("X-Frame-Options: deny\r\n"), std::string::npos);
  UniqueFd missing = request("");
  const std::string denied = ReadResponse(missing.get());
  EXPECT_EQ(StatusOf(denied), 401);
  EXPECT_NE(denied.find("WWW-Authenticate: Basic realm=\"fabricwatch\"\r\n"), std::string::npos);
  gate.Open();
  std::map<int, int> statuses;
  for (UniqueFd& s : flood) ++statuses[StatusOf(ReadResponse(s.get()))];
  EXPECT_EQ(statuses[401], 3);
  EXPECT_EQ(statuses[503], 1);
  UniqueFd right = request("Basic slow-right");
  EXPECT_EQ(StatusOf(ReadResponse(right.get())), 200);
}

// accept() failing with EMFILE: the reserved fd keeps HTTP answering, accepting pauses instead
// of spinning, and one warning is logged. In-process: the client sockets are made before the
// fds run out (connect() needs no new fd).
TEST(HttpLimitsTest, OutOfFdsKeepsAnsweringWithoutSpinning) {
  std::ostringstream log_text;
  auto logger = std::make_shared<spdlog::logger>(
      "http", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text));
  Gate gate;
  auto routes = PlainRoutes();
  routes["/slow"] = Route{"text/plain",
                          [&] {
                            gate.Wait();
                            return std::string("slow\n");
                          },
                          false,
                          {}};
  auto server = StartServer({}, std::move(routes), nullptr, logger);
  OpenAtExit open_at_exit{gate};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server->ports()[0]));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  std::vector<UniqueFd> clients;
  for (int i = 0; i < 3; ++i) {
    clients.emplace_back(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    timeval tv{.tv_sec = 10, .tv_usec = 0};
    setsockopt(clients.back().get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = std::min<rlim_t>(saved.rlim_cur, 4096);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<UniqueFd> fillers;
  while (true) {
    UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!fd) break;
    fillers.push_back(std::move(fd));
  }
  ASSERT_EQ(errno, EMFILE);
  auto request = [&](int i, const std::string& path) {
    EXPECT_EQ(::connect(clients[i].get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    SendAll(clients[i].get(), "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  };
  // No fd left in the process, yet a client is served: through the reserved fd.
  request(0, "/plain");
  const std::string first = ReadResponse(clients[0].get());
  // The one fd that frees takes a request that stays in its route (not evictable)...
  request(1, "/slow");
  const bool handling = PollUntil([&] { return gate.Waiting() == 1; });
  // ...so the next client waits in the backlog, and accepting pauses rather than spins.
  request(2, "/plain");
  const bool paused = PollUntil([&] { return server->stats().accept_pauses >= 5; });
  const HttpStats during = server->stats();
  gate.Open();  // the slow request ends and frees its fd: the waiting client is served
  const std::string second = ReadResponse(clients[1].get());
  const std::string third = ReadResponse(clients[2].get());
  fillers.clear();
  setrlimit(RLIMIT_NOFILE, &saved);
  EXPECT_EQ(StatusOf(first), 200) << first;
  EXPECT_TRUE(handling);
  EXPECT_TRUE(paused) << "accepting never paused";
  EXPECT_GE(during.accept_fd_errors, 2u);
  // A spinning loop retries accept() millions of times; pausing 100 ms at a time, a few dozen.
  EXPECT_LT(during.accept_fd_errors, 1000u) << "accept() retried without pausing";
  EXPECT_EQ(StatusOf(second), 200) << second;
  EXPECT_EQ(StatusOf(third), 200) << third;
  logger->flush();
  const std::string text = log_text.str();
  size_t warnings = 0;
  for (size_t at = text.find("accept() failed"); at != std::string::npos;
       at = text.find("accept() failed", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 1u) << text;
}

}  // namespace
}  // namespace fabricwatch::exporter
