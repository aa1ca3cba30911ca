// The --web.config.file parser (exporter-toolkit's format, issue 19): every field, and every
// rejection with the file, line and field path in its message.

#include "exporter/http/web_config.h"

#include <gtest/gtest.h>

#include <initializer_list>

namespace fabricwatch::exporter {
namespace {

constexpr const char* kHash = "$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG";

Result<WebConfig> Parse(const std::string& yaml) {
  return ParseWebConfig(yaml, "/etc/fw/web.yml", "/etc/fw");
}

// The error of `yaml`, which must name the file and contain every one of `parts`.
void ExpectError(const std::string& yaml, std::initializer_list<std::string> parts) {
  auto config = Parse(yaml);
  ASSERT_FALSE(config.has_value()) << "accepted:\n" << yaml;
  const std::string& message = config.error().message();
  EXPECT_EQ(message.rfind("/etc/fw/web.yml", 0), 0u) << message;
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << "want \"" << part << "\" in: " << message;
  }
}

// An emptied file never reads as "plain HTTP, no auth" (issue 39): it is an error.
TEST(WebConfigTest, EmptyFileIsAnError) {
  for (const char* yaml : {"", "\n", "# nothing\n"}) {
    auto config = Parse(yaml);
    ASSERT_FALSE(config.has_value()) << "'" << yaml << "'";
    EXPECT_NE(config.error().message().find("/etc/fw/web.yml"), std::string::npos);
    EXPECT_NE(config.error().message().find("is empty"), std::string::npos);
  }
}

// A bare key is what a file cut at that line leaves: an error, at start too, never "none".
TEST(WebConfigTest, BareKeysAreErrors) {
  for (const char* yaml :
       {"tls_server_config:\n", "basic_auth_users:\n", "tls_server_config: ~\n",
        "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  client_allowed_sans:\n",
        "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  min_version:\n"}) {
    auto config = Parse(yaml);
    ASSERT_FALSE(config.has_value()) << yaml;
    EXPECT_NE(config.error().message().find("has no value (a file cut at this line?)"),
              std::string::npos)
        << config.error().message();
  }
  // "This line" is the key's own line, not the next one where yaml-cpp marks an empty value.
  ExpectError("tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  min_version:\n",
              {":4:3: tls_server_config.min_version: has no value"});
  ExpectError("basic_auth_users:\n", {"web.yml:1:1: basic_auth_users: has no value"});
  auto off = Parse("tls_server_config: {}\nbasic_auth_users: {}\n");
  ASSERT_TRUE(off.has_value()) << off.error().message();
  EXPECT_FALSE(off->tls_enabled);
  EXPECT_TRUE(off->tls_explicitly_off);
  EXPECT_TRUE(off->basic_auth_explicitly_off);
}

TEST(WebConfigTest, EveryField) {
  auto config = Parse(std::string(R"(
tls_server_config:
  cert_file: server.crt
  key_file: /abs/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: sub/../ca.crt
  client_allowed_sans: [client.example, 10.0.0.7]
  min_version: TLS12
  max_version: TLS13
  cipher_suites:
    - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
    - TLS_AES_256_GCM_SHA384
  prefer_server_cipher_suites: false
  curve_preferences: [X25519, CurveP256, CurveP384, CurveP521]
http_server_config:
  http2: false
  headers:
    X-Frame-Options: deny
    Strict-Transport-Security: max-age=31536000; includeSubDomains
    X-Content-Type-Options: nosniff
    X-XSS-Protection: 1
    Content-Security-Policy: "default-src 'self'"
basic_auth_users:
  alice: )") + kHash + "\n  bob: '" +
                      kHash + "'\n");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  const TlsServerConfig& tls = config->tls;
  EXPECT_TRUE(config->tls_enabled);
  // Relative paths resolve against the file's directory (exporter-toolkit's SetDirectory).
  EXPECT_EQ(tls.cert_file, "/etc/fw/server.crt");
  EXPECT_EQ(tls.key_file, "/abs/server.key");
  EXPECT_EQ(tls.client_ca_file, "/etc/fw/ca.crt");
  EXPECT_EQ(tls.client_auth_type, ClientAuthType::kRequireAndVerifyClientCert);
  EXPECT_EQ(tls.client_allowed_sans, (std::vector<std::string>{"client.example", "10.0.0.7"}));
  EXPECT_EQ(tls.min_version, kTls12);
  EXPECT_EQ(tls.max_version, kTls13);
  ASSERT_EQ(tls.cipher_suites.size(), 2u);
  EXPECT_EQ(tls.cipher_suites[0].name, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
  EXPECT_EQ(tls.cipher_suites[0].id, 0xc02f);
  EXPECT_FALSE(tls.cipher_suites[0].tls13);
  EXPECT_TRUE(tls.cipher_suites[1].tls13);
  EXPECT_FALSE(tls.prefer_server_cipher_suites);
  EXPECT_EQ(tls.curve_preferences, (std::vector<std::string>{"X25519", "P-256", "P-384", "P-521"}));
  EXPECT_FALSE(config->http2);
  EXPECT_TRUE(config->http2_given);
  EXPECT_EQ(config->headers.size(), 5u);
  EXPECT_EQ(config->headers[0], (std::pair<std::string, std::string>{"X-Frame-Options", "deny"}));
  EXPECT_EQ(config->headers[3].second, "1");
  EXPECT_EQ(config->basic_auth_users.size(), 2u);
  EXPECT_EQ(config->basic_auth_users.at("bob"), kHash);
  EXPECT_EQ(config->NamedFiles(),
            (std::vector<std::string>{"/etc/fw/server.crt", "/abs/server.key", "/etc/fw/ca.crt"}));
}

TEST(WebConfigTest, DefaultsAndAliases) {
  auto config = Parse("tls_server_config:\n  cert_file: a\n  key_file: b\n");
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->tls.client_auth_type, ClientAuthType::kNoClientCert);
  EXPECT_EQ(config->tls.min_version, kTls12);
  EXPECT_EQ(config->tls.max_version, kTls13);
  EXPECT_TRUE(config->tls.prefer_server_cipher_suites);
  EXPECT_TRUE(config->http2);
  EXPECT_FALSE(config->http2_given);
  // Inline PEM is kept as written; "RequireClientCert" is exporter-toolkit's old name.
  config = Parse(
      "tls_server_config:\n  cert: PEM1\n  key: PEM2\n  client_auth_type: RequireClientCert\n"
      "  client_ca: PEM3\n");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  EXPECT_EQ(config->tls.cert, "PEM1");
  EXPECT_EQ(config->tls.client_ca, "PEM3");
  EXPECT_EQ(config->tls.client_auth_type, ClientAuthType::kRequireAnyClientCert);
  EXPECT_TRUE(config->NamedFiles().empty());
  // A blank header value means "unset" (exporter-toolkit's docs).
  config = Parse("http_server_config:\n  headers:\n    Content-Security-Policy: ''\n");
  ASSERT_TRUE(config.has_value());
  EXPECT_TRUE(config->headers.empty());
  // Relative paths stay relative without a base directory.
  config = ParseWebConfig("tls_server_config: {cert_file: a.crt, key_file: b}", "w.yml", "");
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->tls.cert_file, "a.crt");
}

TEST(WebConfigTest, UnknownAndUnsupportedFields) {
  ExpectError("tls_server_confg:\n  cert_file: a\n", {":1:1:", "tls_server_confg", "unknown"});
  ExpectError("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_cert: c\n",
              {":4:3:", "tls_server_config.client_cert", "unknown field"});
  ExpectError("http_server_config:\n  keepalive: true\n", {"http_server_config.keepalive"});
  ExpectError("rate_limit:\n  interval: 1s\n  burst: 10\n", {"rate_limit", "not supported"});
  ExpectError("- a\n- b\n", {"must be a mapping"});
  ExpectError("tls_server_config: [a]\n", {"tls_server_config", "must be a mapping"});
  ExpectError("tls_server_config: {cert_file: [a], key_file: b}\n",
              {"tls_server_config.cert_file", "must be a string"});
  ExpectError("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_allowed_sans: x\n",
              {"client_allowed_sans", "list"});
  ExpectError("tls_server_config: {cert_file: a\n", {"/etc/fw/web.yml"});  // YAML syntax
}

TEST(WebConfigTest, DuplicateKeysAreErrors) {
  ExpectError("basic_auth_users: {}\nbasic_auth_users: {}\n",
              {":2:1:", "basic_auth_users", "duplicate key"});
  ExpectError("tls_server_config:\n  cert_file: a\n  key_file: b\n  cert_file: c\n",
              {":4:3:", "tls_server_config.cert_file", "duplicate key"});
  ExpectError(std::string("basic_auth_users:\n  alice: ") + kHash + "\n  alice: " + kHash + "\n",
              {"basic_auth_users.alice", "duplicate key"});
  ExpectError(
      "http_server_config:\n  headers:\n    X-Frame-Options: deny\n"
      "    X-Frame-Options: sameorigin\n",
      {"http_server_config.headers.X-Frame-Options", "duplicate"});
}

TEST(WebConfigTest, ClientAuthTypeAndVersions) {
  const std::string base = "tls_server_config:\n  cert_file: a\n  key_file: b\n";
  ExpectError(base + "  client_auth_type: RequireAndVerify\n",
              {"tls_server_config.client_auth_type", "invalid client_auth_type",
               "RequireAndVerifyClientCert"});
  ExpectError(base + "  min_version: TLS10\n",
              {"tls_server_config.min_version", "TLS 1.2 and 1.3 only"});
  ExpectError(base + "  min_version: TLS11\n", {"min_version", "TLS 1.2 and 1.3 only"});
  ExpectError(base + "  max_version: TLS11\n", {"max_version", "TLS 1.2 and 1.3 only"});
  ExpectError(base + "  max_version: TLS1.3\n", {"max_version", "unknown TLS version"});
  ExpectError(base + "  min_version: TLS13\n  max_version: TLS12\n", {"above max_version"});
  ExpectError(base + "  cipher_suites: [TLS_ECDHE_RSA_WITH_RC4_128_SHA]\n",
              {"tls_server_config.cipher_suites", "unknown cipher", "RC4"});
  ExpectError(base + "  cipher_suites: [ECDHE-RSA-AES128-GCM-SHA256]\n",
              {"unknown cipher"});  // OpenSSL's names are not the format's
  ExpectError(base + "  curve_preferences: [P-256]\n", {"curve_preferences", "unknown curve"});
}

TEST(WebConfigTest, CrossFieldRules) {
  ExpectError("tls_server_config:\n  key_file: b\n", {"exactly one of cert_file and cert"});
  ExpectError("tls_server_config:\n  cert_file: a\n", {"exactly one of key_file and key"});
  ExpectError("tls_server_config:\n  cert_file: a\n  cert: x\n  key_file: b\n",
              {"exactly one of cert_file and cert"});
  ExpectError("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n",
              {"client_auth_type", "without a client_auth_type"});
  ExpectError(
      "tls_server_config:\n  cert_file: a\n  key_file: b\n"
      "  client_auth_type: RequireAndVerifyClientCert\n",
      {"client_ca_file", "needs client_ca_file"});
  ExpectError("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_allowed_sans: [x]\n",
              {"client_allowed_sans", "asks for a client certificate"});
  ExpectError("tls_server_config:\n  min_version: TLS13\n", {"without a certificate"});
  ExpectError(
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequestClientCert\n"
      "  client_ca_file: c\n  client_ca: d\n",
      {"at most one of client_ca_file and client_ca"});
}

TEST(WebConfigTest, BooleansAreYamlBooleansOnly) {
  for (const char* v : {"\"false\"", "'true'", "yes", "no", "off", "1", "[true]"}) {
    ExpectError(std::string("http_server_config:\n  http2: ") + v + "\n",
                {"http_server_config.http2", "expected true or false"});
  }
  auto config = Parse("http_server_config:\n  http2: True\n");
  ASSERT_TRUE(config.has_value());
  EXPECT_TRUE(config->http2);
}

TEST(WebConfigTest, Headers) {
  ExpectError("http_server_config:\n  headers:\n    Server: fabricwatch\n",
              {"http_server_config.headers.Server", "can not be configured"});
  ExpectError("http_server_config:\n  headers:\n    x-frame-options: deny\n",
              {"can not be configured"});  // exact names, as Go's map lookup
  ExpectError("http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
              {"X-Frame-Options", "must be one of \"deny\" \"sameorigin\""});
  ExpectError("http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n",
              {"\"nosniff\""});
  ExpectError(
      "http_server_config:\n  headers:\n    Content-Security-Policy: \"a\\r\\nSet-Cookie: x\"\n",
      {"control characters"});
}

TEST(WebConfigTest, BcryptHashesAreCheckedAtLoad) {
  const std::string good = kHash;
  for (const std::string& bad : {
           std::string("plaintext"),
           std::string("$1$abc$def"),                   // MD5-crypt
           "$2x$10$" + good.substr(7),                  // the buggy legacy variant
           "$2y$1$" + good.substr(7),                   // one-digit cost
           "$2y$03$" + good.substr(7),                  // cost below 4
           "$2y$32$" + good.substr(7),                  // cost above 31
           good.substr(0, 59),                          // truncated
           good + "x",                                  // too long
           good.substr(0, 20) + "!" + good.substr(21),  // not bcrypt base64
       }) {
    ExpectError("basic_auth_users:\n  alice: '" + bad + "'\n",
                {"basic_auth_users.alice", "not a bcrypt hash"});
    // The message never echoes the hash.
    auto config = Parse("basic_auth_users:\n  alice: '" + bad + "'\n");
    ASSERT_FALSE(config.has_value());
    if (bad.size() > 8) {
      EXPECT_EQ(config.error().message().find(bad), std::string::npos);
    }
  }
  for (const std::string variant : {"$2a$", "$2b$", "$2y$"}) {
    EXPECT_TRUE(ValidateBcryptHash(variant + good.substr(4)).ok()) << variant;
  }
  EXPECT_EQ(BcryptCost(good), 10);
  ExpectError(std::string("basic_auth_users:\n  'a:b': ") + kHash + "\n", {"can never log in"});
  ExpectError("basic_auth_users:\n  alice: [x]\n", {"basic_auth_users.alice", "string"});
}

}  // namespace
}  // namespace fabricwatch::exporter
