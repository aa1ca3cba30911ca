#include "exporter/pipeline/snapshot_store.h"

#include <gtest/gtest.h>
#include <prometheus/metric_family.h>
#include <prometheus/metric_type.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/testing/families.h"

namespace fabricwatch::exporter {
namespace {

using Clock = std::chrono::system_clock;
using Labels = std::vector<std::pair<std::string, std::string>>;

const Clock::time_point kT0 = Clock::time_point(std::chrono::seconds(1'700'000'000));

Clock::time_point At(int seconds) { return kT0 + std::chrono::seconds(seconds); }

prometheus::MetricFamily Family(std::string name, prometheus::MetricType type,
                                std::vector<std::pair<Labels, double>> samples) {
  return fabricwatch::testing::MakeFamily(std::move(name), type, std::move(samples));
}

std::shared_ptr<const Snapshot> MakeSnapshot(std::string collector, Clock::time_point time,
                                             std::vector<prometheus::MetricFamily> families) {
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->collector = std::move(collector);
  snapshot->time = time;
  snapshot->families = std::move(families);
  return snapshot;
}

constexpr auto kCounter = prometheus::MetricType::Counter;
constexpr auto kGauge = prometheus::MetricType::Gauge;
const Labels kEth0 = {{"netdev", "eth0"}};
const Labels kEth1 = {{"netdev", "eth1"}};

TEST(SnapshotStoreTest, latest_and_all_latest) {
  SnapshotStore store;
  EXPECT_EQ(store.Latest("netdev"), nullptr);
  EXPECT_TRUE(store.AllLatest().empty());

  auto first = MakeSnapshot("netdev", At(0), {Family("fabric_mtu_bytes", kGauge, {{kEth0, 1500}})});
  store.Publish(first);
  EXPECT_EQ(store.Latest("netdev"), first);
  EXPECT_EQ(store.Latest("infiniband"), nullptr);

  auto second = MakeSnapshot("netdev", At(1), {});
  store.Publish(second);
  EXPECT_EQ(store.Latest("netdev"), second);

  auto other = MakeSnapshot("infiniband", At(1), {});
  store.Publish(other);
  const auto all = store.AllLatest();
  ASSERT_EQ(all.size(), 2u);
  // One entry per collector, the newest of each.
  EXPECT_TRUE((all[0] == second && all[1] == other) || (all[0] == other && all[1] == second));
  // A snapshot handed out stays valid after it is replaced.
  EXPECT_EQ(first->families.size(), 1u);
}

TEST(SnapshotStoreTest, concurrent_publish_and_read_smoke) {
  SnapshotStore store;
  constexpr int kIterations = 300;
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0};

  auto publisher = [&](std::string collector) {
    for (int i = 0; i < kIterations; ++i) {
      store.Publish(MakeSnapshot(
          collector, At(i),
          {Family("fabric_rx_bytes_total", kCounter,
                  {{{{"netdev", collector + "-eth0"}}, static_cast<double>(i)},
                   {{{"netdev", collector + "-eth" + std::to_string(i % 3 + 1)}}, 1.0}})}));
    }
  };
  auto reader = [&] {
    do {
      for (const auto& snapshot : store.AllLatest()) {
        ASSERT_NE(snapshot, nullptr);
        ASSERT_EQ(snapshot->families.size(), 1u);
        ASSERT_EQ(snapshot->families[0].metric.size(), 2u);
      }
      // A collector's latest snapshot only moves forward.
      if (auto a = store.Latest("a")) {
        ASSERT_LE(a->time, At(kIterations - 1));
      }
      reads.fetch_add(1);
    } while (!stop.load());
  };

  std::thread r1(reader), r2(reader);
  std::thread p1(publisher, "a"), p2(publisher, "b");
  p1.join();
  p2.join();
  stop.store(true);
  r1.join();
  r2.join();

  EXPECT_GT(reads.load(), 0);
  ASSERT_NE(store.Latest("a"), nullptr);
  ASSERT_NE(store.Latest("b"), nullptr);
  EXPECT_EQ(store.Latest("a")->time, At(kIterations - 1));
  EXPECT_EQ(store.Latest("b")->time, At(kIterations - 1));
  EXPECT_EQ(store.AllLatest().size(), 2u);
}

}  // namespace
}  // namespace fabricwatch::exporter
