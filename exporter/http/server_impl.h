#pragma once
// HttpServer's internals, shared by http_server.cc (loop, accepting, timeouts) and
// request_dispatch.cc (what a parsed request gets). Not part of the public interface.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "exporter/http/connection.h"
#include "exporter/http/http_server.h"
#include "exporter/http/peer_limits.h"
#include "exporter/http/response.h"
#include "exporter/http/worker_pool.h"

namespace fabricwatch::exporter {

// What a worker hands back to the event loop for connection `id`.
struct Completion {
  enum class Kind { kResponse, kAuthorized, kUnauthorized };
  uint64_t id = 0;
  Kind kind = Kind::kResponse;
  PendingResponse response;  // kResponse
  std::string peer;          // kAuthorized, kUnauthorized: the failed-login limit's key
};

struct HttpCounters {
  std::atomic<uint64_t> open{0}, accepted{0}, evicted{0}, rejected{0}, header_timeouts{0},
      idle_timeouts{0}, write_timeouts{0}, tls_failures{0}, overloaded{0}, accept_fd_errors{0},
      accept_pauses{0}, requests{0}, stalled_evicted{0}, per_address_rejected{0}, auth_failures{0},
      auth_limited{0};
  HttpStats Snapshot() const;  // http_server.cc
};

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  // Set at start, read-only afterwards (the workers read routes and limits).
  std::map<std::string, Route> routes;
  std::shared_ptr<spdlog::logger> logger;
  HttpLimits limits;
  SecuritySource security;
  size_t cap = 0;
  std::vector<int> ports;
  std::unique_ptr<WorkerPool> handlers;
  std::unique_ptr<WorkerPool> auth;
  HttpCounters counters;

  // Workers → loop.
  sys::UniqueFd wake;
  std::mutex completions_mutex;
  std::vector<Completion> completions;
  void Wake();
  void Complete(Completion completion);

  // Stop().
  std::mutex stop_mutex;
  std::atomic<bool> stopping{false};
  bool stopped = false;
  bool stopped_cleanly = true;
  std::thread loop;

  // The event loop's own (only its thread touches these).
  sys::UniqueFd epoll;
  std::vector<sys::UniqueFd> listeners;
  sys::UniqueFd reserve;  // a spare fd, given up to accept a connection when none is left
  std::map<uint64_t, std::unique_ptr<Connection>> connections;  // by id = accept order
  using ConnectionIt = std::map<uint64_t, std::unique_ptr<Connection>>::iterator;
  PeerConnections peers;  // open connections per source address
  std::unique_ptr<AuthFailureLimiter> auth_limiter;
  uint64_t next_id = 0;
  bool accept_paused = false;
  Clock::time_point accept_resume;
  std::optional<Clock::time_point> last_accept_warning;
  uint64_t accept_warnings_suppressed = 0;

  void Run();
  void Accept(int listener, Clock::time_point now);
  static bool Pending(int listener);  // a connection waits in the backlog
  void AddConnection(sys::UniqueFd fd, std::string peer, Clock::time_point now);
  // Whether `peer` may have one more connection (evicting one of its own if it must).
  bool AdmitPeer(const std::string& peer, Clock::time_point now);
  // Closes a connection to make room: one that never sent a request head, then one idle
  // between requests, then a response that made no progress (Connection::Stalled); oldest
  // first; only `peer`'s when given. False when none qualifies.
  bool Evict(Clock::time_point now, const std::string* peer = nullptr);
  ConnectionIt Erase(ConnectionIt it);  // keeps `peers` and the open gauge
  void PauseAccepting(Clock::time_point now);
  void WarnAcceptFailure(int error, Clock::time_point now);
  void Tick(Clock::time_point now);
  // How long epoll_wait may sleep: until the next Tick() has work (a connection's deadline, the
  // end of an accept pause, a spare fd to open again), never sooner than kTick after the last
  // one; -1 (until an event) when nothing can time out, so an idle agent's loop does not wake.
  int WaitMilliseconds(Clock::time_point now, Clock::time_point last_tick) const;
  void Process(uint64_t id, Clock::time_point now);
  void DrainCompletions(Clock::time_point now);

  // request_dispatch.cc
  void Dispatch(uint64_t id, Connection& c, Clock::time_point now);
  void RunRoute(uint64_t id, Connection& c, Clock::time_point now);
  void Answer(Connection& c, int status, HeaderList extra, bool close, Clock::time_point now);
  void AnswerUnauthorized(Connection& c, Clock::time_point now);
  HeaderList PolicyHeaders(const Connection& c) const;
};

}  // namespace fabricwatch::exporter
