// The rdma collector's export of libibverbs port events (the listener itself needs hardware;
// tests/unit/sys/verbs_events_test.cc covers what can run without it).

#include "collectors/rdma/rdma_events.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "collectors/rdma/rdma.h"
#include "collectors/sys/sysfs.h"
#include "collectors/sys/verbs_events.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::rdma {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(RdmaEventsTest, port_events_are_counted_and_pre_initialised) {
  sys::RdmaPortEventLog log;
  log.SetState(true, 2);
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1795000042));
  log.Record({t, "mlx5_0", 1, "port_err"});
  log.Record({t, "mlx5_0", 1, "port_active"});
  log.Record({t, "mlx5_0", 1, "port_err"});
  log.Record({t, "mlx5_0", 1, "port_err"});  // a repeat: no transition
  log.Record({t, "mlx5_9", 0, "device_fatal"});

  testing::CollectorTestContext inputs(testing::FixturePath("sysfs/roce-node/sys"));
  CollectorContext context = inputs.Context();
  context.rdma_events = &log;
  auto collector = NewRdmaCollector(context);
  ASSERT_TRUE(collector);
  MetricSink sink;
  ASSERT_TRUE((*collector)->Collect(sink).ok());
  const std::string text = testing::Exposition(sink.TakeFamilies());
  EXPECT_THAT(text, HasSubstr("fabric_rdma_port_events_total{device=\"mlx5_0\",port=\"1\","
                              "event=\"port_err\"} 2"));
  EXPECT_THAT(text, HasSubstr("fabric_rdma_port_events_total{device=\"mlx5_0\",port=\"1\","
                              "event=\"port_active\"} 1"));
  // Ports without events start at zero; device-wide events appear as seen.
  EXPECT_THAT(text, HasSubstr("fabric_rdma_port_events_total{device=\"mlx5_2\",port=\"1\","
                              "event=\"port_err\"} 0"));
  EXPECT_THAT(text, HasSubstr("fabric_rdma_port_events_total{device=\"mlx5_9\",port=\"0\","
                              "event=\"device_fatal\"} 1"));
  EXPECT_THAT(text, HasSubstr("fabric_rdma_port_last_event_timestamp_seconds{device=\"mlx5_0\","
                              "port=\"1\"} 1795000042"));
  // A repeat of the port's last state event is counted apart, never as a transition.
  EXPECT_THAT(text, HasSubstr("fabric_rdma_port_events_repeated_total{device=\"mlx5_0\","
                              "port=\"1\",event=\"port_err\"} 1"));
  EXPECT_THAT(text, HasSubstr("fabricwatch_verbs_listener_up 1"));
  EXPECT_THAT(text, HasSubstr("fabricwatch_verbs_devices_open 2"));
}

TEST(RdmaEventsTest, a_forgotten_device_leaves_the_exposition) {
  sys::RdmaPortEventLog log;
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1795000042));
  log.Record({t, "rxe1", 1, "port_err"});
  log.Record({t, "rxe1", 1, "port_err"});
  log.ForgetDevice("rxe1");  // the listener does this when the device is gone (rdma link delete)
  MetricSink sink;
  EmitPortEvents(log, log.Counts(), sink);
  const std::string text = testing::Exposition(sink.TakeFamilies());
  EXPECT_THAT(text, Not(HasSubstr("rxe1")));
}

TEST(RdmaEventsTest, a_device_the_log_forgot_gets_no_zero_series_while_still_listed) {
  // Issue 34 review: the collector lists a deleted device until its next rediscovery; it must not
  // pre-fill zeros for it once the listener forgot it, or /metrics would go N -> 0 -> absent.
  sys::RdmaPortEventLog log;
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1795000042));
  log.Record({t, "mlx5_2", 1, "port_err"});
  log.ForgetDevice("mlx5_2");
  testing::CollectorTestContext inputs(testing::FixturePath("sysfs/roce-node/sys"));
  CollectorContext context = inputs.Context();
  context.rdma_events = &log;
  auto collector = NewRdmaCollector(context);
  ASSERT_TRUE(collector);
  auto collect = [&] {
    MetricSink sink;
    EXPECT_TRUE((*collector)->Collect(sink).ok());
    return testing::Exposition(sink.TakeFamilies());
  };
  std::string text = collect();
  EXPECT_THAT(text, HasSubstr("fabric_rdma_port_info{device=\"mlx5_2\""));  // still listed
  EXPECT_THAT(text, Not(HasSubstr("fabric_rdma_port_events_total{device=\"mlx5_2\"")));
  EXPECT_THAT(text, HasSubstr("fabric_rdma_port_events_total{device=\"mlx5_0\",port=\"1\","
                              "event=\"port_err\"} 0"));
  // Opened again by the listener (re-added): its ports start at zero again.
  log.DeviceOpened("mlx5_2", {{1, true}});
  text = collect();
  EXPECT_THAT(text, HasSubstr("fabric_rdma_port_events_total{device=\"mlx5_2\",port=\"1\","
                              "event=\"port_err\"} 0"));
}

}  // namespace
}  // namespace fabricwatch::rdma
