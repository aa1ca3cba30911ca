#pragma once
// --web.listen-address in the Prometheus form ("host:port", ":port", "[v6]:port").

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace fabricwatch::exporter {

struct ListenAddress {
  std::string host;  // empty: every interface; IPv6 literals without brackets
  uint16_t port = 0;
  bool ipv6 = false;
};

Result<ListenAddress> ParseListenAddress(std::string_view text);

}  // namespace fabricwatch::exporter
