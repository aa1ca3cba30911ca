#pragma once
// HttpServer: civetweb serving a fixed set of routes.
//
// Every request goes through one router: an exact path match, GET and HEAD only (anything else is
// 405 with an Allow header), unknown paths 404. civetweb itself answers malformed and oversized
// requests with 4xx (max_request_size bounds the request head) and keeps serving; a request with
// more headers than civetweb can hold (MG_MAX_HEADERS, 64) gets 431 instead of being served with
// the excess silently dropped. Bodies are produced by the route's function at request time and
// gzip-compressed when the route allows it and the client asks (Accept-Encoding). Keep-alive is
// off: Prometheus opens a connection per scrape anyway.
//
// Stopping: civetweb's workers notice the stop flag only between 2 s poll quanta, so a client
// that holds a connection open without sending a request delays mg_stop() by up to 2 s.
// Stop(budget) therefore waits at most `budget`; if civetweb has not finished by then, it keeps
// stopping on a background thread and the caller (main) exits the process without waiting.
//
// Thread-safety: route functions are called concurrently from civetweb's worker threads.

#include <spdlog/logger.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectors/core/status.h"
#include "exporter/config/listen_address.h"
#include "exporter/http/render_cache.h"

struct mg_context;
struct mg_connection;

namespace fabricwatch::exporter {

struct Route {
  std::string content_type;
  std::function<std::string()> body;
  bool gzip = false;
  // When set, used instead of `body`: a body shared between requests (RenderCache), served
  // without a copy, its gzip made once.
  std::function<std::shared_ptr<const RenderedBody>()> shared_body;
};

class HttpServer {
 public:
  // Binds and starts serving. Bind failure: kAlreadyExists/kUnavailable naming the address.
  static Result<std::unique_ptr<HttpServer>> Start(const ListenAddress& address,
                                                   std::map<std::string, Route> routes,
                                                   std::shared_ptr<spdlog::logger> logger,
                                                   int worker_threads = 8);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The ports actually bound (resolves port 0).
  std::vector<int> ports() const;

  // Stops accepting and waits up to `budget` for civetweb to finish. True if it finished; false
  // if a worker is still held by a client, in which case the routes may still be called until
  // the process exits, and the caller must exit the process rather than destroy what the routes
  // reference. The destructor calls Stop() with an unbounded budget.
  bool Stop(std::chrono::milliseconds budget);

 private:
  HttpServer(std::map<std::string, Route> routes, std::shared_ptr<spdlog::logger> logger);
  static int Handle(mg_connection* conn, void* self);
  int HandleRequest(mg_connection* conn);

  std::map<std::string, Route> routes_;
  std::shared_ptr<spdlog::logger> logger_;
  mg_context* context_ = nullptr;
  std::string wake_host_;  // where Stop() connects to wake civetweb's accept loop
  bool wake_ipv6_ = false;
};

}  // namespace fabricwatch::exporter
