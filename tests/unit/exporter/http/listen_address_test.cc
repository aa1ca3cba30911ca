#include "exporter/http/listen_address.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace fabricwatch::exporter {
namespace {

TEST(ListenAddressTest, valid_addresses) {
  struct Case {
    std::string_view text;
    std::string_view host;
    uint16_t port;
    bool ipv6;
  };
  const Case cases[] = {
      {":9868", "", 9868, false},
      {":0", "", 0, false},
      {":65535", "", 65535, false},
      {"127.0.0.1:0", "127.0.0.1", 0, false},
      {"0.0.0.0:9868", "0.0.0.0", 9868, false},
      {"10.1.2.3:80", "10.1.2.3", 80, false},
      {"localhost:9868", "127.0.0.1", 9868, false},
      {"[::1]:9868", "::1", 9868, true},
      {"[::]:9868", "::", 9868, true},
      {"[fe80::1:2]:443", "fe80::1:2", 443, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.text));
    auto address = ParseListenAddress(c.text);
    ASSERT_TRUE(address.has_value()) << address.error().ToString();
    EXPECT_EQ(address->host, c.host);
    EXPECT_EQ(address->port, c.port);
    EXPECT_EQ(address->ipv6, c.ipv6);
  }
}

TEST(ListenAddressTest, invalid_addresses) {
  struct Case {
    std::string_view text;
    std::string_view message_part;
  };
  const Case cases[] = {
      {"9868", "expected host:port or :port"},
      {"", "expected host:port or :port"},
      {"nonsense", "expected host:port or :port"},
      {":", "port must be a number from 0 to 65535"},
      {":abc", "port must be a number"},
      {":-1", "port must be a number"},
      {":+80", "port must be a number"},
      {":80 ", "port must be a number"},
      {":70000", "port must be a number from 0 to 65535"},
      {":65536", "port must be a number from 0 to 65535"},
      {":99999999999999999999", "port must be a number"},
      {"[::1:9868", "unterminated IPv6 literal"},
      {"[::1]9868:80", "unterminated IPv6 literal"},
      {"[not-v6]:80", "invalid IPv6 address"},
      {"[127.0.0.1]:80", "invalid IPv6 address"},
      {"[]:80", "invalid IPv6 address"},
      {"999.1.1.1:80", "host must be an IPv4 address, [IPv6] or localhost"},
      {"host.example:80", "host must be an IPv4 address"},
      {"::1:80", "host must be an IPv4 address"},  // IPv6 needs brackets
      {"localhost.:80", "host must be an IPv4 address"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.text));
    auto address = ParseListenAddress(c.text);
    ASSERT_FALSE(address.has_value())
        << "parsed as host=" << address->host << " port=" << address->port;
    EXPECT_EQ(address.error().code(), StatusCode::kInvalidArgument);
    const std::string& message = address.error().message();
    EXPECT_TRUE(message.starts_with("--web.listen-address=\"" + std::string(c.text) + "\": "))
        << message;
    EXPECT_NE(message.find(c.message_part), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace fabricwatch::exporter
