// Basic auth of --web.config.file (issue 19): bcrypt through libxcrypt, hashes made in the test
// with libxcrypt's crypt_gensalt_rn, and the cache that spares a repeated scrape its bcrypt.

#include "exporter/http/basic_auth.h"

#include <crypt.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "exporter/http/web_config.h"
#include "tests/unit/exporter/http/bcrypt_test_hash.h"

namespace fabricwatch::exporter {
namespace {

std::string Hash(const std::string& password, const char* prefix = "$2b$", int cost = 4) {
  std::string hash = testing::BcryptHash(password, prefix, cost);
  EXPECT_TRUE(ValidateBcryptHash(hash).ok()) << hash;
  return hash;
}

std::string Base64(const std::string& in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t n = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (i + 2 < in.size()) n |= static_cast<unsigned char>(in[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

std::string Header(const std::string& user, const std::string& password) {
  return "Basic " + Base64(user + ":" + password);
}

TEST(BasicAuthTest, ParsesTheAuthorizationHeader) {
  auto c = ParseBasicAuthorization(Header("alice", "pa:ss word"));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->user, "alice");
  EXPECT_EQ(c->password, "pa:ss word");  // split at the first colon (RFC 7617 §2)
  c = ParseBasicAuthorization("bAsIc " + Base64("u:"));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->password, "");
  for (const std::string& bad :
       {std::string(""), std::string("Basic"), std::string("Basic "), "Bearer " + Base64("u:p"),
        "Basic " + Base64("nocolon"), "Basic " + Base64("u:p").substr(1), std::string("Basic !!!!"),
        "Basic " + Base64("u:p") + "=", std::string("Basic YQ=A"),
        "Basic " + Base64(std::string("u:pw\0x", 6))}) {
    EXPECT_FALSE(ParseBasicAuthorization(bad).has_value()) << bad;
  }
}

TEST(BasicAuthTest, CachedSuccessCostsNoBcrypt) {
  BasicAuth auth({{"alice", Hash("secret")}, {"bob", Hash("hunter2", "$2y$")}});
  const std::string good = Header("alice", "secret");
  EXPECT_EQ(auth.CheckCached(good), BasicAuth::Cached::kUnknown);
  EXPECT_EQ(auth.bcrypt_runs(), 0u);
  EXPECT_TRUE(auth.CheckSlow(good));
  EXPECT_EQ(auth.bcrypt_runs(), 1u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(auth.CheckCached(good), BasicAuth::Cached::kAllowed);
    EXPECT_TRUE(auth.CheckSlow(good));
  }
  EXPECT_EQ(auth.bcrypt_runs(), 1u) << "a cached check must not run bcrypt";
  EXPECT_TRUE(auth.CheckSlow(Header("bob", "hunter2")));  // a $2y$ hash
  EXPECT_EQ(auth.bcrypt_runs(), 2u);
}

TEST(BasicAuthTest, FailuresAreNotCachedAndUnknownUsersCostABcrypt) {
  BasicAuth auth({{"alice", Hash("secret")}});
  const std::string wrong = Header("alice", "Secret");
  EXPECT_FALSE(auth.CheckSlow(wrong));
  EXPECT_EQ(auth.CheckCached(wrong), BasicAuth::Cached::kUnknown);
  EXPECT_FALSE(auth.CheckSlow(wrong));
  EXPECT_EQ(auth.bcrypt_runs(), 2u);
  // An unknown user is not told apart by a fast answer: it goes the slow way and pays a bcrypt.
  const std::string stranger = Header("mallory", "secret");
  EXPECT_EQ(auth.CheckCached(stranger), BasicAuth::Cached::kUnknown);
  EXPECT_FALSE(auth.CheckSlow(stranger));
  EXPECT_EQ(auth.bcrypt_runs(), 3u);
  // Malformed headers are denied without any bcrypt.
  EXPECT_EQ(auth.CheckCached("Basic !!"), BasicAuth::Cached::kDenied);
  EXPECT_EQ(auth.CheckCached(""), BasicAuth::Cached::kDenied);
  EXPECT_FALSE(auth.CheckSlow("Basic !!"));
  EXPECT_EQ(auth.bcrypt_runs(), 3u);
  // A password with a NUL would be cut there by crypt(): "secret\0x" must not pass as "secret".
  EXPECT_FALSE(auth.CheckSlow("Basic " + Base64(std::string("alice:secret\0x", 14))));
}

// issue 39 item 9: one dear user must not make every guessed user name cost its bcrypt.
TEST(BasicAuthTest, AnUnknownUserCostsTheMedianConfiguredCost) {
  BasicAuth odd(
      {{"a", Hash("x", "$2b$", 4)}, {"b", Hash("x", "$2b$", 5)}, {"dear", Hash("x", "$2b$", 10)}});
  EXPECT_EQ(odd.dummy_cost(), 5) << "the median of 4, 5 and 10, not the highest";
  BasicAuth even({{"a", Hash("x", "$2b$", 4)},
                  {"b", Hash("x", "$2b$", 5)},
                  {"c", Hash("x", "$2b$", 6)},
                  {"d", Hash("x", "$2b$", 7)}});
  EXPECT_EQ(even.dummy_cost(), 5) << "the lower middle of an even count";
  BasicAuth one({{"a", Hash("x", "$2b$", 6)}});
  EXPECT_EQ(one.dummy_cost(), 6);
  // The unknown user still pays one bcrypt, counted process-wide (the self-metric).
  const uint64_t runs = BcryptRunsTotal();
  EXPECT_FALSE(odd.CheckSlow(Header("mallory", "x")));
  EXPECT_EQ(BcryptRunsTotal(), runs + 1);
  EXPECT_EQ(odd.bcrypt_runs(), 1u);
}

TEST(BasicAuthTest, CacheStaysBoundedAndKeepsWorking) {
  std::map<std::string, std::string, std::less<>> users;
  const int n = static_cast<int>(BasicAuth::kCacheSize) + 20;
  for (int i = 0; i < n; ++i) users["u" + std::to_string(i)] = Hash("p" + std::to_string(i));
  BasicAuth auth(users);
  for (int i = 0; i < n; ++i) {
    EXPECT_TRUE(auth.CheckSlow(Header("u" + std::to_string(i), "p" + std::to_string(i))));
  }
  EXPECT_LE(auth.cached(), BasicAuth::kCacheSize);
  EXPECT_GT(auth.cached(), BasicAuth::kCacheSize / 2);
  // The latest success is always kept.
  const std::string last = Header("u" + std::to_string(n - 1), "p" + std::to_string(n - 1));
  EXPECT_EQ(auth.CheckCached(last), BasicAuth::Cached::kAllowed);
}

TEST(BasicAuthTest, ConcurrentChecks) {
  BasicAuth auth({{"alice", Hash("secret")}});
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        ok += auth.CheckSlow(Header("alice", "secret"));
        ok += auth.CheckSlow(Header("alice", "wrong")) ? 100 : 0;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 80);
}

}  // namespace
}  // namespace fabricwatch::exporter
