#include "collectors/sys/verbs_events.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <spdlog/sinks/null_sink.h>

namespace fabricwatch::sys {
namespace {

TEST(VerbsEventsTest, port_events_are_named_and_classified) {
  const std::tuple<int, const char*, bool> cases[] = {
      {IBV_EVENT_PORT_ACTIVE, "port_active", true},
      {IBV_EVENT_PORT_ERR, "port_err", true},
      {IBV_EVENT_LID_CHANGE, "lid_change", true},
      {IBV_EVENT_PKEY_CHANGE, "pkey_change", true},
      {IBV_EVENT_SM_CHANGE, "sm_change", true},
      {IBV_EVENT_CLIENT_REREGISTER, "client_reregister", true},
      {IBV_EVENT_GID_CHANGE, "gid_change", true},
      {IBV_EVENT_DEVICE_FATAL, "device_fatal", false},
      {IBV_EVENT_QP_FATAL, "qp_fatal", false},
      {IBV_EVENT_CQ_ERR, "cq_err", false},
  };
  for (const auto& [type, name, port] : cases) {
    EXPECT_EQ(AsyncEventName(type), name);
    EXPECT_EQ(IsPortEvent(type), port) << name;
  }
  EXPECT_EQ(AsyncEventName(999), "event_999");
  EXPECT_FALSE(IsPortEvent(999));
}

TEST(VerbsEventsTest, log_counts_by_device_port_and_event) {
  RdmaPortEventLog log(3);
  const auto t0 = std::chrono::system_clock::time_point(std::chrono::seconds(100));
  const auto t1 = std::chrono::system_clock::time_point(std::chrono::seconds(101));
  log.Record({t0, "mlx5_0", 1, "port_err"});
  log.Record({t1, "mlx5_0", 1, "port_active"});
  log.Record({t1, "mlx5_0", 1, "port_err"});
  log.Record({t1, "mlx5_1", 1, "port_err"});
  auto counts = log.Counts();
  EXPECT_EQ((counts[{"mlx5_0", 1, "port_err"}]), 2u);
  EXPECT_EQ((counts[{"mlx5_0", 1, "port_active"}]), 1u);
  EXPECT_EQ((counts[{"mlx5_1", 1, "port_err"}]), 1u);
  EXPECT_EQ((log.LastEvent()[{"mlx5_0", 1}]), t1);
  // The ring keeps the newest `capacity` events; the counts keep everything.
  auto recent = log.Recent(10);
  ASSERT_EQ(recent.size(), 3u);
  EXPECT_EQ(recent.front().event, "port_active");
  EXPECT_EQ(recent.back().device, "mlx5_1");
  EXPECT_EQ(log.Recent(1).size(), 1u);
}

TEST(VerbsEventsTest, listener_runs_quietly_without_devices) {
  // This machine (and CI) has no RDMA device: the listener must start, report zero devices
  // and stop promptly; on a host with HCAs it opens them instead.
  RdmaPortEventLog log;
  auto logger =
      std::make_shared<spdlog::logger>("verbs", std::make_shared<spdlog::sinks::null_sink_mt>());
  auto listener = VerbsPortListener::Start(log, logger);
  ASSERT_TRUE(listener) << listener.error().ToString();
  EXPECT_TRUE(log.listening());
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list != nullptr) ibv_free_device_list(list);
  EXPECT_LE(log.devices_open(), static_cast<size_t>(count));
  listener->reset();
  EXPECT_FALSE(log.listening());
}

}  // namespace
}  // namespace fabricwatch::sys
