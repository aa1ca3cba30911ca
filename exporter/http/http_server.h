#pragma once
// HttpServer: a small event-driven HTTP/1.1 server (epoll, one event-loop thread) serving a fixed
// set of routes, with TLS through OpenSSL. Built to stay answerable under abuse (issue 19, README
// "HTTP server limits"):
//
// - The event loop only does I/O, parsing (request_head.h) and the connection state machine
//   (connection.h); route bodies run on a small worker pool with a bounded queue (503 with
//   Retry-After when it is full), bcrypt checks on a pool of their own, so a flood of wrong
//   passwords cannot delay a client whose credentials are cached.
// - A connection must finish its TLS handshake and request head within the header timeout (in
//   total, not per byte: slowloris), keep-alive connections are closed after the idle timeout,
//   and a response must be written within the write timeout.
// - At most `max_connections` are open (also bounded by the fd limit, see EffectiveMaxConnections),
//   and at most `max_connections_per_address` from one source address (peer_limits.h). When
//   full, the oldest connection that has not completed a request head is evicted for the new
//   one, else the oldest idle keep-alive one, else the oldest response that wrote nothing for
//   `stalled_write` (a client that does not read: issue 39 item 3), so neither idle attackers
//   nor slow readers can lock a scraper out. Accepted sockets get TCP_NODELAY.
// - Failed basic-auth logins are limited per source address (HttpLimits::auth_failure_burst):
//   past the limit a request needing a password check is answered 429 with Retry-After,
//   without bcrypt.
// - accept() failing for want of fds (EMFILE/ENFILE) evicts such a connection or uses a reserved
//   fd, else pauses accepting for 100 ms; it never spins, and it is logged once a minute at most.
//
// Routing: an exact path match; GET and HEAD only, every other method (OPTIONS *, TRACE,
// CONNECT, unknown ones) is 405 with `Allow: GET, HEAD` and the connection closed; unknown paths
// 404; a request with a body 400; a head over max_head_bytes or with more than max_header_fields
// fields 431. Bodies are produced by the route at request time and gzip-compressed when the route
// allows it and the client asks (Accept-Encoding). Responses carry Cache-Control: no-store.
// Keep-alive: HTTP/1.1 by default, HTTP/1.0 with "Connection: keep-alive".
//
// TLS and basic auth come from a SecurityPolicy, fetched for each accepted connection and kept
// for its life (a configuration reload never changes a connection midway).
//
// The process must ignore SIGPIPE (main does): OpenSSL writes to the socket with write().
//
// Thread-safety: route functions are called concurrently from the worker threads.

#include <openssl/ssl.h>
#include <spdlog/logger.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "exporter/http/listen_address.h"
#include "exporter/http/http_limits.h"
#include "exporter/http/render_cache.h"
#include "exporter/http/response.h"

namespace fabricwatch::exporter {

struct Route {
  std::string content_type;
  std::function<std::string()> body;
  bool gzip = false;
  // When set, used instead of `body`: a body shared between requests (RenderCache), served
  // without a copy, its gzip made once.
  std::function<std::shared_ptr<const RenderedBody>()> shared_body;
  // Sent with a 200 answer after the web configuration's headers (the status page's
  // Content-Security-Policy, exporter/pages/status_html.h).
  HeaderList headers = {};
};

// The connection cap actually used: `configured`, but at most a quarter of the open-file limit
// `fd_limit` (the rest is for the collectors' kept-open files, the state file and the hooks,
// exporter/file_limit.h), and at least 16.
size_t EffectiveMaxConnections(size_t configured, uint64_t fd_limit);

// What a connection needs from the web configuration (--web.config.file): TLS, client
// certificate checks, basic auth and extra headers. One immutable generation.
class SecurityPolicy {
 public:
  enum class Auth { kAllowed, kDenied, kNeedsSlowCheck };
  virtual ~SecurityPolicy() = default;
  // nullptr: plain HTTP.
  virtual SSL_CTX* tls_context() const = 0;
  // After a successful handshake; an error closes the connection.
  virtual Status CheckClientCertificate(SSL* ssl) const = 0;
  virtual bool auth_required(std::string_view path) const = 0;
  // Fast: never runs bcrypt. `authorization` is the Authorization field's value ("" if absent).
  virtual Auth CheckCached(std::string_view authorization) const = 0;
  // Slow (bcrypt); run on the auth pool. Thread-safe.
  virtual bool CheckSlow(std::string_view authorization) const = 0;
  virtual const std::vector<std::pair<std::string, std::string>>& headers() const = 0;
};
// Called on the event loop for each accepted connection: the current generation (nullptr: plain
// HTTP, no auth). Must be cheap; it may re-check the configuration file (at most once a second).
using SecuritySource = std::function<std::shared_ptr<const SecurityPolicy>()>;

// Counters since start (and the open connections now), for the agent's self-metrics.
struct HttpStats {
  uint64_t connections_open = 0;
  uint64_t accepted = 0;
  uint64_t evicted = 0;          // closed to make room for a new one (cap or fds)
  uint64_t rejected = 0;         // refused at the cap with nothing to evict
  uint64_t header_timeouts = 0;  // handshake + head not done in time
  uint64_t idle_timeouts = 0;
  uint64_t write_timeouts = 0;
  uint64_t tls_failures = 0;          // handshake or client-certificate check failed
  uint64_t overloaded = 0;            // 503: a worker queue was full
  uint64_t accept_fd_errors = 0;      // accept() failed with EMFILE/ENFILE
  uint64_t accept_pauses = 0;         // times accepting was paused for want of fds
  uint64_t requests = 0;              // responses sent, any status
  uint64_t stalled_evicted = 0;       // of `evicted`: responses that made no progress
  uint64_t per_address_rejected = 0;  // refused at max_connections_per_address
  uint64_t auth_failures = 0;         // 401 to a request that carried credentials
  uint64_t auth_limited = 0;          // 429: the address had too many failed logins
  uint64_t bcrypt_runs = 0;           // process-wide (basic_auth.h BcryptRunsTotal)
};

class HttpServer {
 public:
  // Binds and starts serving. Bind failure: kAlreadyExists/kUnavailable naming the address and
  // the errno's text.
  static Result<std::unique_ptr<HttpServer>> Start(const ListenAddress& address,
                                                   std::map<std::string, Route> routes,
                                                   std::shared_ptr<spdlog::logger> logger,
                                                   HttpLimits limits = {},
                                                   SecuritySource security = nullptr);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The ports actually bound (resolves port 0).
  std::vector<int> ports() const;
  HttpStats stats() const;
  // The connection cap in force (HttpLimits::max_connections bounded by the fd limit).
  size_t max_connections() const;

  // Stops accepting, closes every connection and waits up to `budget` for routes still running.
  // True if everything finished; false if a route is still running, in which case it may still
  // be called until the process exits, and the caller must exit the process rather than destroy
  // what the routes reference. The destructor calls Stop() with an unbounded budget.
  bool Stop(std::chrono::milliseconds budget);

 private:
  struct Impl;
  explicit HttpServer(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace fabricwatch::exporter
