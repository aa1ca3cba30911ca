// SharedLibrary, SymbolBinder and OnDemandLibrary (collectors/sys/shared_library.h) on libraries
// every test host has: zlib (libz.so.1, which the agent links anyway) and libcurl (libcurl.so.4,
// the one the kubelet client loads); a SONAME and a symbol nobody has for the errors.

#include "collectors/sys/shared_library.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "collectors/sys/curl_library.h"

namespace fabricwatch::sys {
namespace {

constexpr LibrarySpec kZlib{.soname = "libz.so.1", .package = "zlib1g", .feature = "the test"};
constexpr LibrarySpec kMissing{.soname = "libfabricwatch-absent.so.7",
                               .package = "fabricwatch-absent7",
                               .feature = "the absent feature"};

struct ZlibApi {
  decltype(&zlibVersion) version = nullptr;
  decltype(&crc32) crc = nullptr;
};

void BindZlib(SymbolBinder& b, ZlibApi& api) {
  b.Bind(api.version, "zlibVersion");
  b.Bind(api.crc, "crc32");
}

struct BrokenApi {
  decltype(&zlibVersion) version = nullptr;
  decltype(&crc32) not_there = nullptr;
  decltype(&crc32) after = nullptr;
};

void BindBroken(SymbolBinder& b, BrokenApi& api) {
  b.Bind(api.version, "zlibVersion");
  b.Bind(api.not_there, "fabricwatch_no_such_symbol");
  b.Bind(api.after, "crc32");
}

uint32_t Crc(const ZlibApi& api, std::string_view text) {
  return static_cast<uint32_t>(
      api.crc(0, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size())));
}

TEST(SharedLibrary, opens_a_library_and_calls_a_symbol) {
  auto zlib = SharedLibrary::Open(kZlib);
  ASSERT_TRUE(zlib) << zlib.error().ToString();
  auto symbol = zlib->Symbol("zlibVersion");
  ASSERT_TRUE(symbol) << symbol.error().ToString();
  const auto version = reinterpret_cast<decltype(&zlibVersion)>(*symbol);
  // The same ABI major as the header the test was built with ("1.2.13" and the like).
  EXPECT_EQ(std::string(version()).substr(0, 2), std::string(ZLIB_VERSION).substr(0, 2));
}

TEST(SharedLibrary, a_missing_soname_names_the_library_and_the_package) {
  auto missing = SharedLibrary::Open(kMissing);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kUnavailable);
  const std::string message = missing.error().message();
  EXPECT_NE(message.find("cannot load libfabricwatch-absent.so.7"), std::string::npos) << message;
  EXPECT_NE(message.find("install the Debian package fabricwatch-absent7"), std::string::npos)
      << message;
  // dlerror()'s own words are kept: they tell a missing file from a broken one.
  EXPECT_NE(message.find("No such file"), std::string::npos) << message;
}

TEST(SharedLibrary, a_missing_symbol_names_the_symbol_and_the_library) {
  auto zlib = SharedLibrary::Open(kZlib);
  ASSERT_TRUE(zlib);
  auto symbol = zlib->Symbol("fabricwatch_no_such_symbol");
  ASSERT_FALSE(symbol);
  EXPECT_EQ(symbol.error().code(), StatusCode::kNotFound);
  EXPECT_NE(symbol.error().message().find("libz.so.1 has no symbol fabricwatch_no_such_symbol"),
            std::string::npos)
      << symbol.error().message();
}

TEST(SharedLibrary, moves_keep_one_owner) {
  auto zlib = SharedLibrary::Open(kZlib);
  ASSERT_TRUE(zlib);
  SharedLibrary moved = std::move(*zlib);
  EXPECT_TRUE(moved.Symbol("crc32"));
  SharedLibrary other = std::move(*SharedLibrary::Open(kZlib));
  other = std::move(moved);  // closes other's handle, takes moved's
  EXPECT_TRUE(other.Symbol("crc32"));
}

TEST(SymbolBinder, keeps_the_first_missing_symbol_and_binds_nothing_after_it) {
  auto zlib = SharedLibrary::Open(kZlib);
  ASSERT_TRUE(zlib);
  SymbolBinder binder(*zlib);
  BrokenApi api;
  BindBroken(binder, api);
  EXPECT_NE(api.version, nullptr);
  EXPECT_EQ(api.not_there, nullptr);
  EXPECT_EQ(api.after, nullptr);
  EXPECT_NE(binder.status().message().find("fabricwatch_no_such_symbol"), std::string::npos);
}

std::atomic<int> zlib_inits{0};

Status CountInit(const ZlibApi& api) {
  ++zlib_inits;
  return api.version() != nullptr ? Status::Ok() : Status(StatusCode::kInternal, "no version");
}

TEST(OnDemandLibrary, loads_once_for_concurrent_first_callers) {
  zlib_inits = 0;
  OnDemandLibrary<ZlibApi> zlib(kZlib, BindZlib, CountInit);
  std::vector<const ZlibApi*> seen(8, nullptr);
  {
    std::vector<std::jthread> threads;
    for (size_t i = 0; i < seen.size(); ++i) {
      threads.emplace_back([&, i] {
        auto api = zlib.Get();
        if (api) seen[i] = *api;
      });
    }
  }
  EXPECT_EQ(zlib_inits.load(), 1);
  for (const ZlibApi* api : seen) {
    ASSERT_NE(api, nullptr);
    EXPECT_EQ(api, seen[0]);
  }
  // The CRC-32 of "123456789" is the check value of the algorithm (RFC 1952 §8's CRC, 0xCBF43926).
  EXPECT_EQ(Crc(*seen[0], "123456789"), 0xCBF43926u);
}

TEST(OnDemandLibrary, a_missing_symbol_is_the_same_error_on_every_call_and_runs_no_init) {
  OnDemandLibrary<BrokenApi> broken(
      kZlib, BindBroken, [](const BrokenApi&) { return Status(StatusCode::kInternal, "ran"); });
  auto first = broken.Get();
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().code(), StatusCode::kNotFound);
  const std::string message = first.error().message();
  EXPECT_NE(message.find("the test unavailable"), std::string::npos) << message;
  EXPECT_NE(message.find("fabricwatch_no_such_symbol"), std::string::npos) << message;
  EXPECT_EQ(message.find(": ran"), std::string::npos) << message;  // init did not run
  auto second = broken.Get();
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().message(), message);
}

TEST(OnDemandLibrary, a_missing_library_names_the_feature_that_is_off) {
  OnDemandLibrary<ZlibApi> missing(kMissing, BindZlib);
  auto api = missing.Get();
  ASSERT_FALSE(api);
  EXPECT_EQ(api.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(api.error().message().find("the absent feature unavailable"), std::string::npos);
  EXPECT_NE(api.error().message().find("fabricwatch-absent7"), std::string::npos);
}

TEST(OnDemandLibrary, a_failing_init_is_the_error) {
  OnDemandLibrary<ZlibApi> zlib(
      kZlib, BindZlib, [](const ZlibApi&) { return Status(StatusCode::kInternal, "init failed"); });
  auto api = zlib.Get();
  ASSERT_FALSE(api);
  EXPECT_NE(api.error().message().find("init failed"), std::string::npos);
}

TEST(CurlLibrary, libcurl_loads_and_initialises) {
  auto curl = Curl();
  ASSERT_TRUE(curl) << curl.error().ToString();
  auto easy = CurlEasy::Make(**curl);
  ASSERT_TRUE(easy) << easy.error().ToString();
  EXPECT_NE(easy->get(), nullptr);
  EXPECT_STREQ((*curl)->easy_strerror(CURLE_OK), "No error");
}

}  // namespace
}  // namespace fabricwatch::sys
