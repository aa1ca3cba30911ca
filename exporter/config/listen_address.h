#pragma once
// --web.listen-address in the Prometheus form ("host:port", ":port", "[v6]:port") and its
// translation into civetweb's listening_ports syntax.

#include <cstdint>
#include <string>
#include <string_view>

#include "collectors/core/status.h"

namespace fabricwatch::exporter {

struct ListenAddress {
  std::string host;  // empty: every interface; IPv6 literals without brackets
  uint16_t port = 0;
  bool ipv6 = false;
};

Result<ListenAddress> ParseListenAddress(std::string_view text);
// civetweb's "listening_ports" value: "127.0.0.1:9868", "[::1]:9868", "9868".
std::string CivetwebPorts(const ListenAddress& address);

}  // namespace fabricwatch::exporter
