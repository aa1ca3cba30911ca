#pragma once
// A raw HTTP/1.1 client on loopback for the HttpServer tests (http_limits_test.cc,
// http_peer_limits_test.cc): blocking sockets with a 10 s receive timeout, one response read by
// its Content-Length, and polling for a condition with a generous bound (never a timing
// assertion: timing is tools/bench/http_abuse.py).

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/null_sink.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "collectors/sys/unique_fd.h"
#include "exporter/http/http_server.h"

namespace fabricwatch::exporter::http_test {

// Connects to 127.0.0.1:`port` from `source` (any 127/8 address is local on Linux, so tests can
// be several peers) with a receive buffer of `rcvbuf` bytes when nonzero (set before connect:
// it bounds the window the client offers). An invalid fd when the connect fails.
inline sys::UniqueFd Connect(int port, const char* source = nullptr, int rcvbuf = 0) {
  sys::UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  timeval tv{.tv_sec = 10, .tv_usec = 0};
  setsockopt(s.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (rcvbuf > 0) setsockopt(s.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
  if (source != nullptr) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    inet_pton(AF_INET, source, &local.sin_addr);
    if (::bind(s.get(), reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) return {};
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return {};
  return s;
}

inline void SendAll(int fd, const std::string& data) {
  ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
}

// Reads one response (head + Content-Length body) from `fd`; "" when the connection closes or
// times out first.
// One response, and not a byte more: with pipelining (and TCP_NODELAY) the next response may
// already wait in the socket, so the data is peeked first and only this response's bytes are
// consumed; the next ReadResponse finds the rest.
inline std::string ReadResponse(int fd) {
  std::string data;
  char buf[8192];
  while (true) {
    const ssize_t peeked = ::recv(fd, buf, sizeof(buf), MSG_PEEK);
    if (peeked <= 0) return data.find("\r\n\r\n") != std::string::npos ? data : "";
    const std::string view = data + std::string(buf, static_cast<size_t>(peeked));
    size_t take = static_cast<size_t>(peeked);
    const size_t end = view.find("\r\n\r\n");
    if (end != std::string::npos) {
      const size_t cl = view.find("Content-Length: ");
      const size_t length = cl < end ? std::stoul(view.substr(cl + 16)) : 0;
      if (view.size() >= end + 4 + length) take = end + 4 + length - data.size();
    }
    const ssize_t n = ::recv(fd, buf, take, 0);
    if (n <= 0) return data.find("\r\n\r\n") != std::string::npos ? data : "";
    data.append(buf, static_cast<size_t>(n));
    const size_t done = data.find("\r\n\r\n");
    if (done != std::string::npos) {
      const size_t cl = data.find("Content-Length: ");
      const size_t length = cl < done ? std::stoul(data.substr(cl + 16)) : 0;
      if (data.size() >= done + 4 + length) return data;
    }
  }
}

inline int StatusOf(const std::string& response) {
  return response.size() > 12 ? std::atoi(response.substr(9, 3).c_str()) : 0;
}

// Whether the server closed `fd` (reads EOF or a reset) within 10 s.
inline bool ClosedByServer(int fd) {
  char buf[256];
  while (true) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n > 0) continue;
    return n == 0 || errno == ECONNRESET;
  }
}

inline bool PollUntil(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

inline std::shared_ptr<spdlog::logger> NullLogger() {
  return std::make_shared<spdlog::logger>("http", std::make_shared<spdlog::sinks::null_sink_mt>());
}

inline std::map<std::string, Route> PlainRoutes() {
  std::map<std::string, Route> routes;
  routes["/plain"] = Route{"text/plain", [] { return std::string("ok\n"); }, false, {}};
  return routes;
}

inline std::unique_ptr<HttpServer> StartServer(
    HttpLimits limits = {}, std::map<std::string, Route> routes = PlainRoutes(),
    SecuritySource security = nullptr, std::shared_ptr<spdlog::logger> logger = NullLogger()) {
  auto started = HttpServer::Start(ListenAddress{"127.0.0.1", 0, false}, std::move(routes),
                                   std::move(logger), limits, std::move(security));
  EXPECT_TRUE(started) << started.error().ToString();
  return started ? std::move(*started) : nullptr;
}

// A GET of `path` with Connection: close from `source`; the response, "" on failure.
inline std::string Get(int port, const std::string& path = "/plain", const char* source = nullptr) {
  sys::UniqueFd s = Connect(port, source);
  if (!s) return "";
  SendAll(s.get(), "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  return ReadResponse(s.get());
}

}  // namespace fabricwatch::exporter::http_test
