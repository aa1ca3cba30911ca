// WebSecurity (issue 19): generations, auth and healthz exemption, reload when the file or a
// certificate changes, and keep-the-old-generation on a bad reload, logged once.

#include "exporter/http/web_security.h"

#include <gtest/gtest.h>
#include <openssl/x509.h>
#include <spdlog/sinks/ostream_sink.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "tests/unit/exporter/http/bcrypt_test_hash.h"
#include "tests/unit/exporter/http/tls_test_pki.h"
#include "tests/unit/exporter/http/web_config_fixture.h"

namespace fabricwatch::exporter {
namespace {

std::string Hash(const std::string& password) { return testing::BcryptHash(password); }

// "Basic " + base64("alice:secret")
constexpr const char* kAliceSecret = "Basic YWxpY2U6c2VjcmV0";

class WebSecurityTest : public testing::WebConfigFileTest {
 protected:
  std::shared_ptr<WebSecurity> MustLoad(bool healthz_exempt = false) {
    return LoadWritten(healthz_exempt);
  }
  static std::string ServedSerial(const WebSecurityState& state) {
    X509* cert = SSL_CTX_get0_certificate(state.tls_context());
    BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
    char* hex = BN_bn2hex(bn);
    std::string serial(hex);
    OPENSSL_free(hex);
    BN_free(bn);
    return serial;
  }
};

TEST_F(WebSecurityTest, PlainIsOpenHttp) {
  auto web = WebSecurity::Plain();
  auto state = web->Current();
  EXPECT_EQ(state->tls_context(), nullptr);
  EXPECT_FALSE(state->auth_required("/metrics"));
  EXPECT_EQ(state->CheckCached(""), WebSecurityState::Auth::kAllowed);
  EXPECT_TRUE(state->headers().empty());
  EXPECT_TRUE(web->MaybeReload(true).ok());
  EXPECT_EQ(web->generation(), 0u);
  EXPECT_EQ(web->path(), "");
}

TEST_F(WebSecurityTest, AuthEverywhereUnlessHealthzIsExempted) {
  WriteConfig("basic_auth_users:\n  alice: " + Hash("secret") +
              "\nhttp_server_config:\n  headers:\n    X-Content-Type-Options: nosniff\n");
  for (bool exempt : {false, true}) {
    auto state = MustLoad(exempt)->Current();
    EXPECT_EQ(state->tls_context(), nullptr);
    EXPECT_TRUE(state->auth_required("/metrics"));
    EXPECT_TRUE(state->auth_required("/"));
    EXPECT_EQ(state->auth_required("/healthz"), !exempt);
    EXPECT_TRUE(state->auth_required("/healthz/"));  // exact path only
    EXPECT_EQ(state->CheckCached(""), WebSecurityState::Auth::kDenied);
    EXPECT_EQ(state->CheckCached(kAliceSecret), WebSecurityState::Auth::kNeedsSlowCheck);
    EXPECT_TRUE(state->CheckSlow(kAliceSecret));
    EXPECT_EQ(state->CheckCached(kAliceSecret), WebSecurityState::Auth::kAllowed);
    EXPECT_EQ(state->bcrypt_runs(), 1u);
    EXPECT_FALSE(state->CheckSlow("Basic YWxpY2U6d3Jvbmc="));  // alice:wrong
    ASSERT_EQ(state->headers().size(), 1u);
    EXPECT_EQ(state->headers()[0].second, "nosniff");
    EXPECT_EQ(state->source(), Path());
  }
}

TEST_F(WebSecurityTest, LoadErrorNamesTheFile) {
  auto missing = WebSecurity::Load(pki_.Path("absent.yml"), false, logger_);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find(pki_.Path("absent.yml")), std::string::npos);
  WriteConfig("basic_auth_users:\n  alice: plaintext\n");
  auto bad = WebSecurity::Load(Path(), false, logger_);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find(Path() + ":2:10: basic_auth_users.alice"), std::string::npos)
      << bad.error().message();
}

TEST_F(WebSecurityTest, ForcedReloadSwapsGenerationsAndKeepsOldOnError) {
  WriteConfig("http_server_config:\n  headers:\n    X-Frame-Options: deny\n");
  auto web = MustLoad();
  EXPECT_EQ(web->generation(), 1u);
  auto first = web->Current();
  WriteConfig("http_server_config:\n  headers:\n    X-Frame-Options: sameorigin\n");
  ASSERT_TRUE(web->MaybeReload(true).ok());
  EXPECT_EQ(web->generation(), 2u);
  EXPECT_EQ(web->Current()->headers()[0].second, "sameorigin");
  // A connection that took the first generation keeps it.
  EXPECT_EQ(first->headers()[0].second, "deny");

  WriteConfig("http_server_config:\n  headers:\n    X-Frame-Options: maybe\n");
  for (int i = 0; i < 3; ++i) {
    Status s = web->MaybeReload(true);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(Path()), std::string::npos) << s.message();
  }
  EXPECT_EQ(web->generation(), 2u);
  EXPECT_EQ(web->Current()->headers()[0].second, "sameorigin");
  EXPECT_EQ(Count("web config reload failed, keeping generation 2"), 1u) << log_.str();
  // A different error is logged again; a good file ends the episode.
  WriteConfig("http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n");
  EXPECT_FALSE(web->MaybeReload(true).ok());
  EXPECT_EQ(Count("web config reload failed"), 2u) << log_.str();
  WriteConfig("http_server_config:\n  headers:\n    X-Frame-Options: deny\n");
  ASSERT_TRUE(web->MaybeReload(true).ok());
  EXPECT_EQ(web->generation(), 3u);
  // A forced reload re-reads an unchanged file too (SIGHUP).
  ASSERT_TRUE(web->MaybeReload(true).ok());
  EXPECT_EQ(web->generation(), 4u);
}

// Polls MaybeReload(false) (throttled to one look per second) until the generation changes.
bool ReloadsWithin(WebSecurity& web, std::chrono::seconds bound) {
  const uint64_t before = web.generation();
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Status s = web.MaybeReload(false); !s.ok()) return false;
    if (web.generation() != before) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // poll, bounded above
  }
  return false;
}

TEST_F(WebSecurityTest, RotatedCertificateIsPickedUpWithoutForce) {
  WriteConfig("tls_server_config:\n  cert_file: served.crt\n  key_file: served.key\n");
  std::filesystem::copy_file(pki_.Path("server.crt"), pki_.Path("served.crt"));
  std::filesystem::copy_file(pki_.Path("server.key"), pki_.Path("served.key"));
  auto web = MustLoad();
  auto first = web->Current();
  const std::string first_serial = ServedSerial(*first);
  // Rotate: another certificate of the CA with its key. Key first, then the certificate: in
  // between, the pair does not match and the reload must keep the old generation.
  std::filesystem::copy_file(pki_.Path("server2.key"), pki_.Path("served.key"),
                             std::filesystem::copy_options::overwrite_existing);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  Status failed;
  while (failed.ok() && std::chrono::steady_clock::now() < deadline) {
    failed = web->MaybeReload(false);
    if (failed.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_FALSE(failed.ok()) << "the mismatched key was never noticed";
  EXPECT_NE(failed.message().find("does not match"), std::string::npos) << failed.message();
  EXPECT_EQ(web->generation(), 1u);
  EXPECT_EQ(ServedSerial(*web->Current()), first_serial);
  std::filesystem::copy_file(pki_.Path("server2.crt"), pki_.Path("served.crt"),
                             std::filesystem::copy_options::overwrite_existing);
  ASSERT_TRUE(ReloadsWithin(*web, std::chrono::seconds(10)));
  EXPECT_EQ(web->generation(), 2u);
  EXPECT_NE(ServedSerial(*web->Current()), first_serial);
  EXPECT_EQ(ServedSerial(*first), first_serial);  // the old generation is untouched
  // The rotated generation serves real handshakes.
  testing::TlsClient client;
  client.ca_file = pki_.Path("ca.crt");
  testing::HandshakeResult r;
  testing::Handshake(web->Current()->tls_context(), client, r);
  EXPECT_TRUE(r.server_ok);
}

TEST_F(WebSecurityTest, ChangedConfigFileIsPickedUpWithoutForce) {
  WriteConfig("http_server_config:\n  headers:\n    X-Frame-Options: deny\n");
  auto web = MustLoad();
  EXPECT_FALSE(web->Current()->auth_required("/metrics"));
  WriteConfig("basic_auth_users:\n  alice: " + Hash("secret") + "\n");
  ASSERT_TRUE(ReloadsWithin(*web, std::chrono::seconds(10)));
  EXPECT_TRUE(web->Current()->auth_required("/metrics"));
  EXPECT_EQ(Count("loaded (generation 2)"), 1u) << log_.str();
}

}  // namespace
}  // namespace fabricwatch::exporter
