#pragma once
// HttpServer: civetweb serving a fixed set of routes.
//
// Every request goes through one router: an exact path match, GET and HEAD only (anything else is
// 405 with an Allow header), unknown paths 404. civetweb itself answers malformed and oversized
// requests with 4xx (max_request_size bounds the request head) and keeps serving. Bodies are
// produced by the route's function at request time and gzip-compressed when the route allows it
// and the client asks (Accept-Encoding). Keep-alive is off so that Stop() never waits on an idle
// client connection.
//
// Thread-safety: route functions are called concurrently from civetweb's worker threads.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "collectors/core/status.h"
#include "exporter/listen_address.h"

struct mg_context;
struct mg_connection;

namespace fabricwatch::exporter {

struct Route {
  std::string content_type;
  std::function<std::string()> body;
  bool gzip = false;
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
