#pragma once
// The HTTP server's bounds (http_server.h), set by the --web.* flags (exporter/config/flags.cc;
// README "HTTP server limits").

#include <chrono>
#include <cstddef>

namespace fabricwatch::exporter {

struct HttpLimits {
  size_t max_connections = 4096;
  std::chrono::milliseconds header_timeout{10'000};  // TLS handshake + request head, in total
  std::chrono::milliseconds idle_timeout{60'000};    // keep-alive, between requests
  std::chrono::milliseconds write_timeout{30'000};   // one response
  size_t max_head_bytes = 16384;
  size_t max_header_fields = 100;
  size_t handler_threads = 4;
  size_t handler_queue = 64;
  size_t auth_threads = 2;  // concurrent bcrypt checks
  size_t auth_queue = 32;
};

}  // namespace fabricwatch::exporter
