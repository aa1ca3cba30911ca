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

TEST(VerbsEventsTest, a_repeated_state_event_is_no_transition) {
  // Pure decision (issue 34): rxe sends PORT_ACTIVE twice for one admin-up (rxe_net.c
  // rxe_notify: NETDEV_UP, then NETDEV_CHANGE with carrier), see ClassifyPortEvent.
  EXPECT_EQ(ClassifyPortEvent("", "port_active"), PortEventClass::kTransition);
  EXPECT_EQ(ClassifyPortEvent("", "port_err"), PortEventClass::kTransition);
  EXPECT_EQ(ClassifyPortEvent("port_err", "port_active"), PortEventClass::kTransition);
  EXPECT_EQ(ClassifyPortEvent("port_active", "port_err"), PortEventClass::kTransition);
  EXPECT_EQ(ClassifyPortEvent("port_active", "port_active"), PortEventClass::kRepeat);
  EXPECT_EQ(ClassifyPortEvent("port_err", "port_err"), PortEventClass::kRepeat);
  EXPECT_EQ(ClassifyPortEvent("port_active", "lid_change"), PortEventClass::kOther);
  EXPECT_EQ(ClassifyPortEvent("", "device_fatal"), PortEventClass::kOther);
}

TEST(VerbsEventsTest, six_rxe_flaps_count_six_transitions_each_way) {
  // The sequence the soft-RoCE guest delivered for six admin flaps of the netdev:
  // port_err, port_active, port_active (NETDEV_DOWN; NETDEV_UP; NETDEV_CHANGE).
  RdmaPortEventLog log;
  const auto t0 = std::chrono::system_clock::time_point(std::chrono::seconds(100));
  for (int i = 0; i < 6; ++i) {
    const auto t = t0 + std::chrono::seconds(2 * i);
    EXPECT_TRUE(log.Record({t, "rxe1", 1, "port_err"}));
    EXPECT_TRUE(log.Record({t + std::chrono::milliseconds(500), "rxe1", 1, "port_active"}));
    EXPECT_FALSE(log.Record({t + std::chrono::milliseconds(501), "rxe1", 1, "port_active"}));
  }
  // Other events never count as repeats, and do not reset the port's last state.
  EXPECT_TRUE(log.Record({t0 + std::chrono::seconds(20), "rxe1", 1, "gid_change"}));
  EXPECT_TRUE(log.Record({t0 + std::chrono::seconds(20), "rxe1", 1, "gid_change"}));
  EXPECT_FALSE(log.Record({t0 + std::chrono::seconds(21), "rxe1", 1, "port_active"}));
  auto counts = log.Counts();
  EXPECT_EQ((counts[{"rxe1", 1, "port_err"}]), 6u);
  EXPECT_EQ((counts[{"rxe1", 1, "port_active"}]), 6u);
  EXPECT_EQ((counts[{"rxe1", 1, "gid_change"}]), 2u);
  auto repeated = log.RepeatedCounts();
  EXPECT_EQ((repeated[{"rxe1", 1, "port_active"}]), 7u);
  EXPECT_EQ(repeated.count({"rxe1", 1, "port_err"}), 0u);
  // A repeat is not an event of the ring, the wake-up total or the last-event time.
  EXPECT_EQ(log.total(), 14u);
  EXPECT_EQ(log.Recent(100).size(), 14u);
  EXPECT_EQ((log.LastEvent()[{"rxe1", 1}]), t0 + std::chrono::seconds(20));
  // Another port's state is its own.
  EXPECT_TRUE(log.Record({t0, "rxe0", 1, "port_active"}));
}

TEST(VerbsEventsTest, a_forgotten_device_leaves_every_series_and_restarts_at_zero) {
  RdmaPortEventLog log;
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(100));
  log.Record({t, "rxe0", 1, "port_err"});
  log.Record({t, "rxe1", 1, "port_active"});
  log.Record({t, "rxe1", 1, "port_active"});
  log.Record({t, "rxe1", 0, "device_fatal"});
  log.ForgetDevice("rxe1");
  for (const auto& [key, count] : log.Counts()) EXPECT_NE(std::get<0>(key), "rxe1");
  EXPECT_TRUE(log.RepeatedCounts().empty());
  EXPECT_EQ(log.LastEvent().size(), 1u);
  EXPECT_EQ((log.Counts()[{"rxe0", 1, "port_err"}]), 1u);
  // Re-added: counts start from 0 and its first state event is a transition again.
  EXPECT_TRUE(log.Record({t, "rxe1", 1, "port_active"}));
  EXPECT_EQ((log.Counts()[{"rxe1", 1, "port_active"}]), 1u);
  // Its history stays in the ring.
  EXPECT_EQ(log.Recent(100).size(), 4u);
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
