#include "exporter/snapshot_store.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/metric_family.h>
#include <prometheus/metric_type.h>

namespace fabricwatch::exporter {
namespace {

using Clock = std::chrono::system_clock;
using Labels = std::vector<std::pair<std::string, std::string>>;

const Clock::time_point kT0 = Clock::time_point(std::chrono::seconds(1'700'000'000));

Clock::time_point At(int seconds) { return kT0 + std::chrono::seconds(seconds); }

prometheus::ClientMetric Sample(const Labels& labels, double value, prometheus::MetricType type) {
  prometheus::ClientMetric metric;
  for (const auto& [name, v] : labels) metric.label.push_back({name, v});
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  return metric;
}

prometheus::MetricFamily Family(std::string name, prometheus::MetricType type,
                                std::vector<std::pair<Labels, double>> samples) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = "help";
  family.type = type;
  for (const auto& [labels, value] : samples) family.metric.push_back(Sample(labels, value, type));
  return family;
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

std::vector<double> Values(const std::vector<HistoryPoint>& points) {
  std::vector<double> out;
  for (const HistoryPoint& p : points) out.push_back(p.value);
  return out;
}

TEST(SnapshotStoreTest, latest_and_all_latest) {
  SnapshotStore store(10);
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

TEST(SnapshotStoreTest, history_only_for_watched_families) {
  SnapshotStore store(10);
  store.Watch("fabric_carrier_changes_total");
  store.Publish(MakeSnapshot("netdev", At(0),
                             {Family("fabric_carrier_changes_total", kCounter, {{kEth0, 4}}),
                              Family("fabric_mtu_bytes", kGauge, {{kEth0, 1500}})}));
  const auto watched = store.History("fabric_carrier_changes_total", kEth0);
  ASSERT_EQ(watched.size(), 1u);
  EXPECT_EQ(watched[0].time, At(0));
  EXPECT_EQ(watched[0].value, 4);
  EXPECT_TRUE(store.History("fabric_mtu_bytes", kEth0).empty());
  EXPECT_TRUE(store.History("fabric_carrier_changes_total", kEth1).empty());
  EXPECT_EQ(store.tracked_series(), 1u);
}

TEST(SnapshotStoreTest, no_watch_no_history) {
  SnapshotStore store(10);
  store.Publish(MakeSnapshot("netdev", At(0),
                             {Family("fabric_carrier_changes_total", kCounter, {{kEth0, 4}})}));
  EXPECT_TRUE(store.History("fabric_carrier_changes_total", kEth0).empty());
  EXPECT_EQ(store.tracked_series(), 0u);
}

TEST(SnapshotStoreTest, history_is_oldest_first_and_bounded_by_depth) {
  struct Case {
    size_t depth;
    int publishes;
    std::vector<double> expected;  // the values are 10 * i for publish i
  };
  const Case cases[] = {
      {3, 1, {0}},
      {3, 2, {0, 10}},
      {3, 3, {0, 10, 20}},
      {3, 4, {10, 20, 30}},
      {3, 5, {20, 30, 40}},
      {3, 7, {40, 50, 60}},
      {2, 5, {30, 40}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("depth " + std::to_string(c.depth) + ", " + std::to_string(c.publishes) +
                 " publishes");
    SnapshotStore store(c.depth);
    store.Watch("fabric_rx_bytes_total");
    for (int i = 0; i < c.publishes; ++i) {
      store.Publish(MakeSnapshot("netdev", At(i),
                                 {Family("fabric_rx_bytes_total", kCounter, {{kEth0, 10.0 * i}})}));
    }
    const auto history = store.History("fabric_rx_bytes_total", kEth0);
    EXPECT_EQ(Values(history), c.expected);
    for (size_t k = 0; k < history.size(); ++k) {
      EXPECT_EQ(history[k].time, At(static_cast<int>(c.expected[k] / 10)));
    }
  }
}

TEST(SnapshotStoreTest, counter_and_gauge_values) {
  SnapshotStore store(5);
  store.Watch("fabric_rx_bytes_total");
  store.Watch("fabric_carrier");
  for (int i = 0; i < 2; ++i) {
    store.Publish(MakeSnapshot("netdev", At(i),
                               {Family("fabric_rx_bytes_total", kCounter, {{kEth0, 100.0 + i}}),
                                Family("fabric_carrier", kGauge, {{kEth0, static_cast<double>(i)}})}));
  }
  EXPECT_EQ(Values(store.History("fabric_rx_bytes_total", kEth0)), (std::vector<double>{100, 101}));
  EXPECT_EQ(Values(store.History("fabric_carrier", kEth0)), (std::vector<double>{0, 1}));
  EXPECT_EQ(store.tracked_series(), 2u);
}

TEST(SnapshotStoreTest, series_are_keyed_by_labels_in_order) {
  SnapshotStore store(5);
  store.Watch("fabric_port_state");
  const Labels labels = {{"device", "mlx5_0"}, {"port", "1"}};
  const Labels port2 = {{"device", "mlx5_0"}, {"port", "2"}};
  store.Publish(MakeSnapshot("infiniband", At(0),
                             {Family("fabric_port_state", kGauge, {{labels, 4}, {port2, 1}})}));
  EXPECT_EQ(Values(store.History("fabric_port_state", labels)), (std::vector<double>{4}));
  EXPECT_EQ(Values(store.History("fabric_port_state", port2)), (std::vector<double>{1}));
  const Labels reversed = {{"port", "1"}, {"device", "mlx5_0"}};
  EXPECT_TRUE(store.History("fabric_port_state", reversed).empty());
  EXPECT_TRUE(store.History("fabric_port_state", {{"device", "mlx5_0"}}).empty());
  EXPECT_EQ(store.tracked_series(), 2u);
}

TEST(SnapshotStoreTest, series_absent_from_next_snapshot_are_dropped) {
  SnapshotStore store(5);
  store.Watch("fabric_rx_bytes_total");
  store.Publish(MakeSnapshot("netdev", At(0),
                             {Family("fabric_rx_bytes_total", kCounter, {{kEth0, 1}, {kEth1, 2}})}));
  store.Publish(MakeSnapshot("other", At(0),
                             {Family("fabric_rx_bytes_total", kCounter,
                                     {{{{"netdev", "ib0"}}, 7}})}));
  EXPECT_EQ(store.tracked_series(), 3u);

  // eth1 goes away.
  store.Publish(MakeSnapshot("netdev", At(1),
                             {Family("fabric_rx_bytes_total", kCounter, {{kEth0, 3}})}));
  EXPECT_EQ(Values(store.History("fabric_rx_bytes_total", kEth0)), (std::vector<double>{1, 3}));
  EXPECT_TRUE(store.History("fabric_rx_bytes_total", kEth1).empty());
  // Another collector's series is unaffected.
  EXPECT_EQ(Values(store.History("fabric_rx_bytes_total", {{"netdev", "ib0"}})),
            (std::vector<double>{7}));
  EXPECT_EQ(store.tracked_series(), 2u);

  // When eth1 comes back its history starts afresh.
  store.Publish(MakeSnapshot("netdev", At(2),
                             {Family("fabric_rx_bytes_total", kCounter, {{kEth0, 4}, {kEth1, 9}})}));
  EXPECT_EQ(Values(store.History("fabric_rx_bytes_total", kEth1)), (std::vector<double>{9}));

  // A failed collection publishes an empty snapshot: all of its series go.
  store.Publish(MakeSnapshot("netdev", At(3), {}));
  EXPECT_TRUE(store.History("fabric_rx_bytes_total", kEth0).empty());
  EXPECT_TRUE(store.History("fabric_rx_bytes_total", kEth1).empty());
  EXPECT_EQ(store.tracked_series(), 1u);
  EXPECT_EQ(Values(store.History("fabric_rx_bytes_total", {{"netdev", "ib0"}})),
            (std::vector<double>{7}));
}

TEST(SnapshotStoreTest, concurrent_publish_and_read_smoke) {
  SnapshotStore store(16);
  store.Watch("fabric_rx_bytes_total");
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
      const auto history = store.History("fabric_rx_bytes_total", {{"netdev", "a-eth0"}});
      ASSERT_LE(history.size(), 16u);
      for (size_t k = 1; k < history.size(); ++k) {
        ASSERT_LT(history[k - 1].value, history[k].value);  // oldest first, strictly increasing
      }
      store.tracked_series();
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
  EXPECT_EQ(Values(store.History("fabric_rx_bytes_total", {{"netdev", "a-eth0"}})).back(),
            kIterations - 1);
  EXPECT_EQ(store.History("fabric_rx_bytes_total", {{"netdev", "b-eth0"}}).size(), 16u);
  // Each collector's last snapshot has two series.
  EXPECT_EQ(store.tracked_series(), 4u);
}

}  // namespace
}  // namespace fabricwatch::exporter
