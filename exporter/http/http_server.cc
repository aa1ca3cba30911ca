#include "exporter/http/http_server.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "collectors/sys/unique_fd.h"
#include "exporter/http/render.h"

namespace fabricwatch::exporter {
namespace {

// Bounds the request line plus headers; civetweb answers larger requests with 413/431.
constexpr const char* kMaxRequestSize = "16384";
constexpr const char* kRequestTimeoutMs = "10000";

void SendResponse(mg_connection* conn, int code, std::string_view content_type,
                  std::string_view body, bool head, const char* content_encoding = nullptr,
                  const char* allow = nullptr) {
  mg_response_header_start(conn, code);
  mg_response_header_add(conn, "Content-Type", content_type.data(),
                         static_cast<int>(content_type.size()));
  const std::string length = std::to_string(body.size());
  mg_response_header_add(conn, "Content-Length", length.c_str(), -1);
  mg_response_header_add(conn, "Cache-Control", "no-store", -1);
  if (content_encoding != nullptr) {
    mg_response_header_add(conn, "Content-Encoding", content_encoding, -1);
    mg_response_header_add(conn, "Vary", "Accept-Encoding", -1);
  }
  if (allow != nullptr) mg_response_header_add(conn, "Allow", allow, -1);
  mg_response_header_send(conn);
  if (!head && !body.empty()) mg_write(conn, body.data(), body.size());
}

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

// A connection that is closed at once: enough to make poll() on the listener return.
void PokeListener(const std::string& host, bool ipv6, int port) {
  sys::UniqueFd fd(
      ::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return;
  auto [addr, len] = SocketAddress(host, ipv6, port);
  ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), len);
}

// civetweb reports a failed bind only as "Failed to setup server ports"; bind a probe socket to
// the same address to learn the errno the operator needs to see.
std::string BindErrorDetail(const ListenAddress& address) {
  sys::UniqueFd fd(::socket(address.ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return {};
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  auto [addr, len] = SocketAddress(address.host, address.ipv6, address.port);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), len) == 0) return {};
  return std::strerror(errno);
}

}  // namespace

HttpServer::HttpServer(std::map<std::string, Route> routes, std::shared_ptr<spdlog::logger> logger)
    : routes_(std::move(routes)), logger_(std::move(logger)) {}

HttpServer::~HttpServer() { Stop(std::chrono::milliseconds::max()); }

bool HttpServer::Stop(std::chrono::milliseconds budget) {
  if (context_ == nullptr) return true;
  // mg_stop() waits for civetweb's master thread, which only sees the stop flag when its poll()
  // on the listening sockets returns — up to a second later. Connecting to ourselves wakes it.
  struct Stopping {
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
  };
  auto stopping = std::make_shared<Stopping>();
  const std::vector<int> bound = ports();
  std::thread([context = context_, stopping] {
    mg_stop(context);
    std::lock_guard lock(stopping->mutex);
    stopping->done = true;
    stopping->done_cv.notify_all();
  }).detach();
  context_ = nullptr;
  const auto deadline = budget == std::chrono::milliseconds::max()
                            ? std::chrono::steady_clock::time_point::max()
                            : std::chrono::steady_clock::now() + budget;
  std::unique_lock lock(stopping->mutex);
  while (!stopping->done && std::chrono::steady_clock::now() < deadline) {
    lock.unlock();
    for (int port : bound) PokeListener(wake_host_, wake_ipv6_, port);
    lock.lock();
    stopping->done_cv.wait_for(lock, std::chrono::milliseconds(20));
  }
  return stopping->done;
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const ListenAddress& address,
                                                      std::map<std::string, Route> routes,
                                                      std::shared_ptr<spdlog::logger> logger,
                                                      int worker_threads) {
  mg_init_library(0);
  std::unique_ptr<HttpServer> server(new HttpServer(std::move(routes), std::move(logger)));
  const std::string ports = CivetwebPorts(address);
  const std::string threads = std::to_string(worker_threads);
  const char* options[] = {"listening_ports",
                           ports.c_str(),
                           "num_threads",
                           threads.c_str(),
                           "request_timeout_ms",
                           kRequestTimeoutMs,
                           "max_request_size",
                           kMaxRequestSize,
                           "enable_keep_alive",
                           "no",
                           nullptr};
  mg_callbacks callbacks{};
  // civetweb would print its own errors to stderr; they reach us through mg_error_data instead.
  callbacks.log_message = [](const mg_connection*, const char*) { return 1; };
  mg_init_data init{};
  init.callbacks = &callbacks;
  init.user_data = server.get();
  init.configuration_options = options;
  char error_text[256] = {};
  unsigned error_code = 0;
  mg_error_data error{};
  error.code = &error_code;
  error.text = error_text;
  error.text_buffer_size = sizeof(error_text);
  server->context_ = mg_start2(&init, &error);
  if (server->context_ == nullptr) {
    const std::string shown = (address.ipv6 ? "[" + address.host + "]" : address.host) + ":" +
                              std::to_string(address.port);
    const std::string detail = BindErrorDetail(address);
    const bool in_use = detail.find("in use") != std::string::npos;
    return Error(in_use ? StatusCode::kAlreadyExists : StatusCode::kUnavailable,
                 "cannot listen on " + shown + ": " +
                     (!detail.empty()         ? detail
                      : error_text[0] != '\0' ? std::string(error_text)
                                              : "civetweb failed to start"));
  }
  server->wake_ipv6_ = address.ipv6;
  server->wake_host_ = address.host.empty() ? "127.0.0.1" : address.host;
  mg_set_request_handler(server->context_, "/", &HttpServer::Handle, server.get());
  return server;
}

std::vector<int> HttpServer::ports() const {
  mg_server_port ports[8] = {};
  int n = mg_get_server_ports(context_, 8, ports);
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(ports[i].port);
  return out;
}

int HttpServer::Handle(mg_connection* conn, void* self) {
  return static_cast<HttpServer*>(self)->HandleRequest(conn);
}

int HttpServer::HandleRequest(mg_connection* conn) {
  const mg_request_info* request = mg_get_request_info(conn);
  const std::string_view method = request->request_method != nullptr ? request->request_method : "";
  const std::string_view path = request->local_uri != nullptr ? request->local_uri : "";
  auto route = routes_.find(std::string(path));
  if (route == routes_.end()) {
    SendResponse(conn, 404, "text/plain; charset=utf-8", "404 page not found\n", method == "HEAD");
    return 404;
  }
  const bool head = method == "HEAD";
  if (request->num_headers >= MG_MAX_HEADERS) {
    // civetweb stops parsing at MG_MAX_HEADERS and drops the rest without telling us; serving
    // the request would silently ignore headers the client sent (RFC 6585 §5).
    SendResponse(conn, 431, "text/plain; charset=utf-8", "431 request header fields too large\n",
                 head);
    return 431;
  }
  if (method != "GET" && !head) {
    SendResponse(conn, 405, "text/plain; charset=utf-8", "405 method not allowed\n", false, nullptr,
                 "GET, HEAD");
    return 405;
  }
  std::string body;
  std::shared_ptr<const RenderedBody> shared;
  try {
    if (route->second.shared_body) {
      shared = route->second.shared_body();
    } else {
      body = route->second.body();
    }
  } catch (const std::exception& e) {
    logger_->error("{}: rendering failed: {}", path, e.what());
    SendResponse(conn, 500, "text/plain; charset=utf-8", "500 internal server error\n", head);
    return 500;
  }
  const char* accept = mg_get_header(conn, "Accept-Encoding");
  if (route->second.gzip && accept != nullptr && AcceptsGzip(accept)) {
    if (shared != nullptr) {
      if (const std::string* compressed = shared->Gzipped()) {
        SendResponse(conn, 200, route->second.content_type, *compressed, head, "gzip");
        return 200;
      }
    } else if (auto compressed = Gzip(body)) {
      SendResponse(conn, 200, route->second.content_type, *compressed, head, "gzip");
      return 200;
    }
  }
  SendResponse(conn, 200, route->second.content_type, shared ? shared->text() : body, head);
  return 200;
}

}  // namespace fabricwatch::exporter
