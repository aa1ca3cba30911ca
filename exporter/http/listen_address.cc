#include "exporter/http/listen_address.h"

#include <arpa/inet.h>

#include <cctype>
#include <charconv>

namespace fabricwatch::exporter {

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  const std::string flag = "--web.listen-address=\"" + std::string(text) + "\": ";
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return Error(StatusCode::kInvalidArgument, flag + "expected host:port or :port");
  }
  std::string_view host = text.substr(0, colon);
  std::string_view port_text = text.substr(colon + 1);
  ListenAddress address;
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port > 65535) {
    return Error(StatusCode::kInvalidArgument, flag + "port must be a number from 0 to 65535");
  }
  address.port = static_cast<uint16_t>(port);
  if (!host.empty() && host.front() == '[') {
    if (host.back() != ']') {
      return Error(StatusCode::kInvalidArgument, flag + "unterminated IPv6 literal");
    }
    host = host.substr(1, host.size() - 2);
    in6_addr v6{};
    if (inet_pton(AF_INET6, std::string(host).c_str(), &v6) != 1) {
      return Error(StatusCode::kInvalidArgument, flag + "invalid IPv6 address");
    }
    address.ipv6 = true;
  } else if (!host.empty()) {
    in_addr v4{};
    if (host == "localhost") {
      host = "127.0.0.1";
    } else if (inet_pton(AF_INET, std::string(host).c_str(), &v4) != 1) {
      return Error(StatusCode::kInvalidArgument,
                   flag + "host must be an IPv4 address, [IPv6] or localhost");
    }
  }
  address.host = std::string(host);
  return address;
}

}  // namespace fabricwatch::exporter
