// TLS of --web.config.file: certificates from the openssl CLI, real handshakes in-process
// between the SSL_CTX that tls_context.cc builds and an OpenSSL client (issue 19).

#include "exporter/http/tls_context.h"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <filesystem>

#include "exporter/http/web_config.h"
#include "exporter/http/web_security.h"
#include "tests/unit/exporter/http/tls_test_pki.h"

namespace fabricwatch::exporter {
namespace {

using testing::HandshakeResult;
using testing::TlsClient;

class TlsContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(pki_.Make(error)) << error;
  }

  // A web config whose tls_server_config is the server certificate plus `extra` lines.
  Result<std::shared_ptr<const WebSecurityState>> State(const std::string& extra) {
    const std::string yaml =
        "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n" + extra;
    auto config = ParseWebConfig(yaml, pki_.Path("web.yml"), pki_.dir());
    if (!config) return Error(config.error());
    return WebSecurityState::Build(*config, false);
  }
  std::shared_ptr<const WebSecurityState> MustState(const std::string& extra) {
    auto state = State(extra);
    EXPECT_TRUE(state.has_value()) << state.error().message();
    return state ? *state : WebSecurityState::Plain(false);
  }
  TlsClient Client(const std::string& cert = "") const {
    TlsClient client;
    client.ca_file = pki_.Path("ca.crt");
    if (!cert.empty()) {
      client.cert_file = pki_.Path(cert + ".crt");
      client.key_file = pki_.Path(cert + ".key");
    }
    return client;
  }
  std::string LoadError(const std::string& extra) {
    auto state = State(extra);
    EXPECT_FALSE(state.has_value());
    return state ? "" : state.error().message();
  }

  testing::TestPki pki_;
};

TEST_F(TlsContextTest, DefaultPolicyServesTls13AndTls12WithAeadOnly) {
  auto state = MustState("");
  ASSERT_NE(state->tls_context(), nullptr);
  {
    HandshakeResult r;
    testing::Handshake(state->tls_context(), Client(), r);
    ASSERT_TRUE(r.server_ok);
    EXPECT_EQ(r.version, "TLSv1.3");
    EXPECT_TRUE(state->CheckClientCertificate(r.server).ok());
  }
  {
    TlsClient client = Client();
    client.max_version = TLS1_2_VERSION;
    HandshakeResult r;
    testing::Handshake(state->tls_context(), client, r);
    ASSERT_TRUE(r.server_ok);
    EXPECT_EQ(r.version, "TLSv1.2");
    EXPECT_EQ(r.cipher.rfind("TLS_ECDHE_ECDSA_WITH_", 0), 0u) << r.cipher;
  }
  for (const char* cbc : {"ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA384"}) {
    TlsClient client = Client();
    client.max_version = TLS1_2_VERSION;
    client.tls12_ciphers = cbc;  // CBC: outside the default policy
    HandshakeResult r;
    testing::Handshake(state->tls_context(), client, r);
    EXPECT_FALSE(r.server_ok) << cbc;
  }
  {
    TlsClient client = Client();
    client.max_version = TLS1_1_VERSION;
    client.tls12_ciphers = "DEFAULT:@SECLEVEL=0";
    HandshakeResult r;
    testing::Handshake(state->tls_context(), client, r);
    EXPECT_FALSE(r.server_ok) << "TLS 1.1 is never offered";
  }
}

TEST_F(TlsContextTest, VersionsCiphersAndCurvesFromTheFile) {
  {
    auto state = MustState("  min_version: TLS13\n");
    TlsClient client = Client();
    client.max_version = TLS1_2_VERSION;
    HandshakeResult r;
    testing::Handshake(state->tls_context(), client, r);
    EXPECT_FALSE(r.server_ok);
  }
  {
    auto state = MustState("  max_version: TLS12\n");
    HandshakeResult r;
    testing::Handshake(state->tls_context(), Client(), r);
    ASSERT_TRUE(r.server_ok);
    EXPECT_EQ(r.version, "TLSv1.2");
  }
  {
    auto state = MustState(
        "  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA]\n");
    TlsClient client = Client();
    client.tls12_ciphers = "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-GCM-SHA384";
    HandshakeResult r;
    testing::Handshake(state->tls_context(), client, r);
    ASSERT_TRUE(r.server_ok);
    EXPECT_EQ(r.cipher, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA");
  }
  {
    // prefer_server_cipher_suites: the server's order wins over the client's.
    auto state = MustState(
        "  max_version: TLS12\n  cipher_suites:\n"
        "    - TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256\n"
        "    - TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384\n");
    TlsClient client = Client();
    client.tls12_ciphers = "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305";
    HandshakeResult r;
    testing::Handshake(state->tls_context(), client, r);
    ASSERT_TRUE(r.server_ok);
    EXPECT_EQ(r.cipher, "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256");
  }
  {
    auto state = MustState("  cipher_suites: [TLS_CHACHA20_POLY1305_SHA256]\n");
    HandshakeResult r;
    testing::Handshake(state->tls_context(), Client(), r);
    ASSERT_TRUE(r.server_ok);
    EXPECT_EQ(r.cipher, "TLS_CHACHA20_POLY1305_SHA256");
  }
  auto p384 = MustState("  curve_preferences: [CurveP384]\n");
  {
    TlsClient client = Client();
    client.groups = "X25519:P-384";
    HandshakeResult r;
    testing::Handshake(p384->tls_context(), client, r);
    ASSERT_TRUE(r.server_ok);
    EXPECT_EQ(r.group_nid, NID_secp384r1);
  }
  {
    TlsClient client = Client();
    client.groups = "X25519";
    HandshakeResult r;
    testing::Handshake(p384->tls_context(), client, r);
    EXPECT_FALSE(r.server_ok);
  }
}

// Go's five ClientAuthType values, each against no certificate, a certificate the CA did not sign
// (rogue) and one it did (client).
TEST_F(TlsContextTest, EveryClientAuthType) {
  struct Case {
    std::string type;
    bool none, rogue, trusted;
  };
  const Case cases[] = {
      {"NoClientCert", true, true, true},
      {"RequestClientCert", true, true, true},
      {"RequireAnyClientCert", false, true, true},
      {"RequireClientCert", false, true, true},  // exporter-toolkit's old name
      {"VerifyClientCertIfGiven", true, false, true},
      {"RequireAndVerifyClientCert", false, false, true},
  };
  for (const Case& c : cases) {
    const std::string ca = c.type == "NoClientCert" ? "" : "  client_ca_file: ca.crt\n";
    auto state = MustState("  client_auth_type: " + c.type + "\n" + ca);
    for (auto [cert, want] :
         {std::pair<std::string, bool>{"", c.none}, {"rogue", c.rogue}, {"client", c.trusted}}) {
      HandshakeResult r;
      testing::Handshake(state->tls_context(), Client(cert), r);
      EXPECT_EQ(r.server_ok, want) << c.type << " with " << (cert.empty() ? "none" : cert);
      if (r.server_ok && !cert.empty()) {
        // The server saw the certificate exactly when it asked for one.
        EXPECT_EQ(SSL_get0_peer_certificate(r.server) != nullptr, c.type != "NoClientCert");
      }
    }
  }
}

TEST_F(TlsContextTest, ClientAllowedSansMatchDnsIpEmailAndUri) {
  for (const std::string san :
       {"client.example", "10.0.0.7", "ops@example.com", "spiffe://cluster/prometheus"}) {
    auto state = MustState(
        "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n"
        "  client_allowed_sans: [nobody.example, \"" +
        san + "\"]\n");
    HandshakeResult ok;
    testing::Handshake(state->tls_context(), Client("client"), ok);
    ASSERT_TRUE(ok.server_ok);
    EXPECT_TRUE(state->CheckClientCertificate(ok.server).ok()) << san;
    HandshakeResult other;
    testing::Handshake(state->tls_context(), Client("other"), other);
    ASSERT_TRUE(other.server_ok);  // the CA signed it: the handshake passes, the SAN check not
    Status denied = state->CheckClientCertificate(other.server);
    EXPECT_FALSE(denied.ok());
    EXPECT_NE(denied.message().find("other.example"), std::string::npos) << denied.message();
  }
  // A SAN list with a mode that lets a client come without a certificate: no certificate fails.
  auto state = MustState(
      "  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ca.crt\n"
      "  client_allowed_sans: [client.example]\n");
  HandshakeResult none;
  testing::Handshake(state->tls_context(), Client(), none);
  ASSERT_TRUE(none.server_ok);
  EXPECT_FALSE(state->CheckClientCertificate(none.server).ok());
}

TEST_F(TlsContextTest, SubjectAltNamesAsGoPrintsThem) {
  FILE* f = std::fopen(pki_.Path("client.crt").c_str(), "r");
  ASSERT_NE(f, nullptr);
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  ASSERT_NE(cert, nullptr);
  EXPECT_EQ(SubjectAltNames(cert),
            (std::vector<std::string>{"client.example", "ops@example.com",
                                      "spiffe://cluster/prometheus", "10.0.0.7"}));
  X509_free(cert);
}

TEST_F(TlsContextTest, InlineCertificateKeyAndClientCa) {
  auto indent = [](const std::string& pem) {
    std::string out;
    for (char c : pem) out += c == '\n' ? std::string("\n    ") : std::string(1, c);
    return out;
  };
  const std::string yaml =
      "tls_server_config:\n  cert: |\n    " +
      indent(testing::TestPki::Read(pki_.Path("server.crt"))) + "\n  key: |\n    " +
      indent(testing::TestPki::Read(pki_.Path("server.key"))) +
      "\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca: |\n    " +
      indent(testing::TestPki::Read(pki_.Path("ca.crt"))) + "\n";
  auto config = ParseWebConfig(yaml, "inline.yml", "");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  auto state = WebSecurityState::Build(*config, false);
  ASSERT_TRUE(state.has_value()) << state.error().message();
  HandshakeResult r;
  testing::Handshake((*state)->tls_context(), Client("client"), r);
  EXPECT_TRUE(r.server_ok);
}

TEST_F(TlsContextTest, LoadErrorsNameTheFile) {
  const std::string dir = pki_.dir();
  auto expect = [&](const std::string& yaml, std::vector<std::string> parts) {
    auto config = ParseWebConfig(yaml, pki_.Path("web.yml"), dir);
    ASSERT_TRUE(config.has_value()) << config.error().message();
    auto state = WebSecurityState::Build(*config, false);
    ASSERT_FALSE(state.has_value()) << yaml;
    for (const std::string& part : parts) {
      EXPECT_NE(state.error().message().find(part), std::string::npos)
          << "want \"" << part << "\" in: " << state.error().message();
    }
  };
  expect("tls_server_config: {cert_file: missing.crt, key_file: server.key}",
         {pki_.Path("missing.crt"), "does not exist"});
  expect("tls_server_config: {cert_file: server.crt, key_file: absent.key}",
         {pki_.Path("absent.key"), "does not exist"});
  // A FIFO named as the key must not block the reload (issue 39): refused at once.
  ASSERT_EQ(::mkfifo(pki_.Path("fifo.key").c_str(), 0600), 0);
  expect("tls_server_config: {cert_file: server.crt, key_file: fifo.key}",
         {pki_.Path("fifo.key"), "is a FIFO"});
  std::filesystem::create_directory(pki_.Path("adir"));
  expect("tls_server_config: {cert_file: adir, key_file: server.key}",
         {pki_.Path("adir"), "directory"});
  pki_.Write("garbage.crt", "not a certificate\n");
  expect("tls_server_config: {cert_file: garbage.crt, key_file: server.key}",
         {pki_.Path("garbage.crt"), "no PEM certificate"});
  expect("tls_server_config: {cert_file: server.crt, key_file: stranger.key}",
         {pki_.Path("stranger.key"), "does not match", pki_.Path("server.crt")});
  expect("tls_server_config: {cert_file: server.crt, key_file: server.crt}",
         {pki_.Path("server.crt"), "no unencrypted PEM private key"});
  expect("tls_server_config: {cert_file: expired.crt, key_file: expired.key}",
         {pki_.Path("expired.crt"), "expired", "2020"});
  expect(
      "tls_server_config: {cert_file: server.crt, key_file: server.key,"
      " client_auth_type: RequireAndVerifyClientCert, client_ca_file: garbage.crt}",
      {pki_.Path("garbage.crt"), "client_ca_file", "no PEM certificate"});
  expect(
      "tls_server_config: {cert_file: server.crt, key_file: server.key,"
      " client_auth_type: RequireAndVerifyClientCert, client_ca_file: nope.crt}",
      {pki_.Path("nope.crt"), "does not exist"});
  // The inline form names the field and the config file.
  expect("tls_server_config: {cert: garbage, key_file: server.key}",
         {"tls_server_config.cert in " + pki_.Path("web.yml")});
}

}  // namespace
}  // namespace fabricwatch::exporter
