// The fail-closed web-config reload (issue 39 item 1): an emptied or truncated file never turns
// TLS, basic auth or the client-certificate check off; only a field does, and that is logged at
// warning and counted. The files are read off the event loop and with bounds (item 4).

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "exporter/http/web_security.h"
#include "tests/unit/exporter/http/bcrypt_test_hash.h"
#include "tests/unit/exporter/http/tls_test_pki.h"
#include "tests/unit/exporter/http/web_config_fixture.h"

namespace fabricwatch::exporter {
namespace {

std::string Hash(const std::string& password) { return testing::BcryptHash(password); }

constexpr const char* kTls =
    "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";

size_t Index(std::string_view change) {
  for (size_t i = 0; i < std::size(kSecurityChangeKinds); ++i) {
    if (kSecurityChangeKinds[i] == change) return i;
  }
  return SIZE_MAX;
}

class WebSecurityReloadTest : public testing::WebConfigFileTest {
 protected:
  void SetUp() override {
    WebConfigFileTest::SetUp();
    users_ = "basic_auth_users:\n  alice: " + Hash("secret") + "\n";
  }
  std::shared_ptr<WebSecurity> MustLoad(const std::string& text) {
    WriteConfig(text);
    return LoadWritten();
  }
  static void ExpectTlsAndAuth(const WebSecurity& web) {
    EXPECT_NE(web.Current()->tls_context(), nullptr);
    EXPECT_TRUE(web.Current()->auth_required("/metrics"));
  }
  static uint64_t Outcome(const WebSecurity& web, WebSecurity::Outcome outcome) {
    return web.stats().reloads[static_cast<size_t>(outcome)];
  }

  std::string users_;
};

TEST_F(WebSecurityReloadTest, emptied_file_keeps_tls_and_auth) {
  auto web = MustLoad(kTls + users_);
  for (const char* emptied : {"", "\n", "# cut\n"}) {
    WriteConfig(emptied);
    Status s = web->MaybeReload(true);
    ASSERT_FALSE(s.ok()) << "emptied to '" << emptied << "'";
    EXPECT_NE(s.message().find("is empty"), std::string::npos) << s.message();
    ExpectTlsAndAuth(*web);
  }
  EXPECT_EQ(web->generation(), 1u);
  EXPECT_EQ(Outcome(*web, WebSecurity::Outcome::kFailed), 3u);
  EXPECT_NE(log_.str().find("web config reload failed, keeping generation 1"), std::string::npos);
}

TEST_F(WebSecurityReloadTest, truncated_files_are_refused) {
  auto web = MustLoad(kTls + users_);
  // Cut at a key: the bare key is an error (failed). Cut before a key: the protection it held
  // would go by absence (refused).
  struct Cut {
    std::string text;
    StatusCode code;
    std::string_view says;
  };
  const Cut cuts[] = {
      {std::string(kTls) + "basic_auth_users:\n", StatusCode::kInvalidArgument, "has no value"},
      {"tls_server_config:\n", StatusCode::kInvalidArgument, "has no value"},
      {std::string(kTls), StatusCode::kFailedPrecondition, "it has no basic_auth_users"},
      {users_, StatusCode::kFailedPrecondition, "it has no TLS certificate"},
  };
  for (const Cut& cut : cuts) {
    WriteConfig(cut.text);
    Status s = web->MaybeReload(true);
    ASSERT_FALSE(s.ok()) << cut.text;
    EXPECT_EQ(s.code(), cut.code) << s.message();
    EXPECT_NE(s.message().find(cut.says), std::string::npos) << s.message();
    ExpectTlsAndAuth(*web);
  }
  EXPECT_EQ(Outcome(*web, WebSecurity::Outcome::kFailed), 2u);
  EXPECT_EQ(Outcome(*web, WebSecurity::Outcome::kRefused), 2u);
  EXPECT_NE(log_.str().find("web config reload refused, keeping generation 1"), std::string::npos);
}

TEST_F(WebSecurityReloadTest, explicit_fields_turn_protection_off_logged_and_counted) {
  auto web = MustLoad(kTls + users_);
  WriteConfig("tls_server_config: {}\nbasic_auth_users: {}\n");
  ASSERT_TRUE(web->MaybeReload(true).ok());
  EXPECT_EQ(web->Current()->tls_context(), nullptr);
  EXPECT_FALSE(web->Current()->auth_required("/metrics"));
  const WebSecurity::Stats stats = web->stats();
  EXPECT_EQ(stats.changes[Index("tls_off")], 1u);
  EXPECT_EQ(stats.changes[Index("basic_auth_off")], 1u);
  EXPECT_NE(log_.str().find("[warning] web config " + Path() + ": TLS turned off"),
            std::string::npos)
      << log_.str();
  // Back on: counted too.
  WriteConfig(kTls + users_);
  ASSERT_TRUE(web->MaybeReload(true).ok());
  EXPECT_EQ(web->stats().changes[Index("tls_on")], 1u);
  EXPECT_EQ(web->stats().changes[Index("basic_auth_on")], 1u);
}

TEST_F(WebSecurityReloadTest, client_certificate_check_is_not_dropped_by_a_missing_field) {
  const std::string verified = std::string(kTls) +
                               "  client_ca_file: ca.crt\n"
                               "  client_auth_type: RequireAndVerifyClientCert\n";
  auto web = MustLoad(verified);
  WriteConfig(kTls);  // cut before client_ca_file and client_auth_type
  Status s = web->MaybeReload(true);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.message();
  EXPECT_NE(s.message().find("it has no client_auth_type"), std::string::npos) << s.message();
  EXPECT_EQ(web->Current()->level().client_auth, ClientAuthType::kRequireAndVerifyClientCert);
  WriteConfig(std::string(kTls) + "  client_auth_type: NoClientCert\n");
  ASSERT_TRUE(web->MaybeReload(true).ok());
  EXPECT_EQ(web->stats().changes[Index("client_cert_weaker")], 1u);
}

TEST_F(WebSecurityReloadTest, sighup_load_against_the_running_generation_is_refused_too) {
  auto running = MustLoad(kTls + users_);
  WriteConfig(kTls);  // cut before basic_auth_users
  auto next = WebSecurity::Load(Path(), false, logger_, running->Current());
  ASSERT_FALSE(next.has_value());
  EXPECT_EQ(next.error().code(), StatusCode::kFailedPrecondition);
  // At start (nothing running) an empty file is an error as well.
  WriteConfig("");
  EXPECT_FALSE(WebSecurity::Load(Path(), false, logger_).has_value());
}

TEST_F(WebSecurityReloadTest, fifo_or_huge_file_over_the_config_fails_at_once) {
  auto web = MustLoad(kTls + users_);
  ASSERT_EQ(::mkfifo(pki_.Path("fifo").c_str(), 0600), 0);
  std::filesystem::rename(pki_.Path("fifo"), Path());
  Status fifo = web->MaybeReload(true);  // would block in open() without O_NONBLOCK
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.message().find("is a FIFO"), std::string::npos) << fifo.message();
  WriteConfig(std::string(kMaxWebConfigBytes + 1, '#'));
  Status huge = web->MaybeReload(true);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.message().find("larger than"), std::string::npos) << huge.message();
  ExpectTlsAndAuth(*web);
}

TEST_F(WebSecurityReloadTest, request_check_reloads_on_its_own_thread) {
  auto web = MustLoad(kTls + users_);
  WriteConfig(kTls + users_ + "http_server_config:\n  headers:\n    X-Frame-Options: deny\n");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (web->generation() == 1 && std::chrono::steady_clock::now() < deadline) {
    web->RequestCheck();  // returns at once: the event loop's call
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(web->generation(), 2u);
  ASSERT_EQ(web->Current()->headers().size(), 1u);
}

// client_allowed_sans and min_version are held the same way: a cut file never widens who may
// connect or which protocol version is offered.
TEST_F(WebSecurityReloadTest, san_restriction_and_min_version_are_not_dropped_by_a_missing_field) {
  const std::string client =
      "  client_ca_file: ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n";
  auto web = MustLoad(kTls + client + "  client_allowed_sans: [prometheus.test]\n" +
                      "  min_version: TLS13\n");
  WriteConfig(kTls + client);
  Status s = web->MaybeReload(true);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("it has no client_allowed_sans"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("it has no min_version"), std::string::npos) << s.message();
  EXPECT_TRUE(web->Current()->level().client_sans_restricted);
  WriteConfig(kTls + client + "  client_allowed_sans: []\n  min_version: TLS12\n");
  ASSERT_TRUE(web->MaybeReload(true).ok());
  EXPECT_EQ(web->stats().changes[Index("client_sans_off")], 1u);
  EXPECT_EQ(web->stats().changes[Index("min_version_lower")], 1u);
}

// A request made inside the one-second throttle is not dropped: the thread waits for the end of
// the second and looks then, with no further connection.
TEST_F(WebSecurityReloadTest, a_request_inside_the_throttle_is_kept) {
  auto web = MustLoad(kTls + users_);  // Load counts as a look: the throttle runs from now
  WriteConfig(kTls + users_ + "http_server_config:\n  headers:\n    X-Frame-Options: deny\n");
  web->RequestCheck();  // once, inside the second
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (web->generation() == 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(web->generation(), 2u);
}

}  // namespace
}  // namespace fabricwatch::exporter
