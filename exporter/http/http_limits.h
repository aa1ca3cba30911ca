#pragma once
// The HTTP server's bounds (http_server.h), set by the --web.* flags (exporter/config/flags.cc;
// README "HTTP server limits").

#include <chrono>
#include <cstddef>

namespace fabricwatch::exporter {

struct HttpLimits {
  size_t max_connections = 4096;
  // Connections one source address (IPv4, or an IPv6 /64) may hold. A Prometheus keeps one per
  // target, a browser on the status page six; 64 leaves room for a few of each behind one NAT
  // while 64 slow readers from one host fill at most 1/64 of the default cap. 0: no limit.
  size_t max_connections_per_address = 64;
  // At the cap, a response that has written no byte for this long may be evicted for a new
  // connection (a client that stopped reading: issue 39 item 3). A client reading over a sound
  // link makes progress every round trip; 1 s is several retransmission timeouts (200 ms min).
  std::chrono::milliseconds stalled_write{1'000};
  std::chrono::milliseconds header_timeout{10'000};  // TLS handshake + request head, in total
  std::chrono::milliseconds idle_timeout{60'000};    // keep-alive, between requests
  std::chrono::milliseconds write_timeout{30'000};   // one response
  size_t max_head_bytes = 16384;
  size_t max_header_fields = 100;
  size_t handler_threads = 4;
  size_t handler_queue = 64;
  size_t auth_threads = 2;  // concurrent bcrypt checks; each started on first need (worker_pool.h)
  size_t auth_queue = 32;
  // Failed basic-auth logins per source address: `auth_failure_burst` password checks in a
  // row, then one per `auth_failure_refill` (a token bucket; a success gives its token back).
  // A scraper with a stale password fails once per scrape interval (>= 10 s usually): 6 per
  // minute is under the 10 a minute refilled, so it is never limited, and a person mistyping
  // has 10 tries; a guesser gets 10 guesses a minute per address instead of the ~40 a second
  // the two bcrypt threads allow at cost 10. A limited address gets 429 without bcrypt.
  // 0: no limit.
  size_t auth_failure_burst = 10;
  std::chrono::milliseconds auth_failure_refill{6'000};
};

}  // namespace fabricwatch::exporter
