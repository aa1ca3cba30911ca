#include "exporter/http/render_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "exporter/http/render.h"

namespace fabricwatch::exporter {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// A steady clock the test moves by hand.
struct ManualClock {
  steady_clock::time_point now{};
  RenderCache::SteadyNow Fn() {
    return [this] { return now; };
  }
};

TEST(RenderCacheTest, ServesTheSameBodyWhileYoungAndRendersAgainWhenOld) {
  ManualClock clock;
  int renders = 0;
  RenderCache cache([&] { return "render " + std::to_string(++renders) + "\n"; },
                    milliseconds(100), clock.Fn());
  auto first = cache.Get();
  EXPECT_EQ(first->text(), "render 1\n");
  clock.now += milliseconds(99);
  EXPECT_EQ(cache.Get().get(), first.get());
  clock.now += milliseconds(1);
  auto second = cache.Get();
  EXPECT_EQ(second->text(), "render 2\n");
  EXPECT_EQ(first->text(), "render 1\n");  // a body handed out stays valid and unchanged
  EXPECT_EQ(cache.renders(), 2u);
}

TEST(RenderCacheTest, ConcurrentCallersShareOneRender) {
  std::atomic<int> renders{0};
  std::atomic<bool> release{false};
  // A render that blocks until every thread has called Get(): without the single flight each
  // caller would start its own render.
  RenderCache cache(
      [&] {
        ++renders;
        while (!release.load()) std::this_thread::yield();
        return std::string("body\n");
      },
      milliseconds(60'000));
  std::atomic<int> started{0};
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<const RenderedBody>> bodies(16);
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] {
      ++started;
      bodies[static_cast<size_t>(i)] = cache.Get();
    });
  }
  while (started.load() < 16) std::this_thread::yield();
  release = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(renders.load(), 1);
  for (const auto& body : bodies) EXPECT_EQ(body.get(), bodies[0].get());
}

TEST(RenderCacheTest, AFailedRenderKeepsThePreviousBodyAndPropagates) {
  ManualClock clock;
  bool fail = false;
  RenderCache cache(
      [&]() -> std::string {
        if (fail) throw std::runtime_error("boom");
        return "ok\n";
      },
      milliseconds(10), clock.Fn());
  auto good = cache.Get();
  fail = true;
  clock.now += milliseconds(10);
  EXPECT_THROW(cache.Get(), std::runtime_error);
  fail = false;
  EXPECT_EQ(cache.Get()->text(), "ok\n");
  EXPECT_EQ(good->text(), "ok\n");
}

TEST(RenderCacheTest, GzipIsMadeOnceAndDecodesToTheText) {
  RenderedBody body(std::string(10000, 'x'));
  const std::string* gz = body.Gzipped();
  ASSERT_NE(gz, nullptr);
  EXPECT_EQ(body.Gzipped(), gz);  // the same buffer: compressed once
  EXPECT_LT(gz->size(), 200u);
  EXPECT_EQ(static_cast<unsigned char>((*gz)[0]), 0x1f);  // RFC 1952 magic
  EXPECT_EQ(static_cast<unsigned char>((*gz)[1]), 0x8b);
  auto direct = Gzip(body.text());
  ASSERT_TRUE(direct.has_value());
  EXPECT_EQ(*gz, *direct);
}

}  // namespace
}  // namespace fabricwatch::exporter
