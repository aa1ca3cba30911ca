#include "collectors/sys/verbs_events.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <spdlog/sinks/null_sink.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

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

TEST(VerbsEventsTest, an_opened_device_is_seeded_with_its_ports_state_now) {
  // Issue 34 review: while a device was closed (a reopen, a fatal reset) events are lost; its
  // ports' last state is what ibv_query_port says at the open, not what it was before.
  RdmaPortEventLog log;
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(100));
  EXPECT_TRUE(log.Record({t, "mlx5_0", 1, "port_active"}));
  // Missed while closed: port_err. Seeded from the query: port 1 is down.
  log.DeviceOpened("mlx5_0", {{1, false}, {2, true}});
  EXPECT_TRUE(log.Record({t, "mlx5_0", 1, "port_active"}));   // the up is a transition
  EXPECT_FALSE(log.Record({t, "mlx5_0", 2, "port_active"}));  // port 2 was up already
  EXPECT_TRUE(log.Record({t, "mlx5_0", 2, "port_err"}));
  // Missed while closed: port_active, then the next real port_err must count.
  log.DeviceOpened("mlx5_0", {{1, true}});
  EXPECT_TRUE(log.Record({t, "mlx5_0", 1, "port_err"}));
  // A port the query did not answer for has no state: its first event is a transition.
  EXPECT_TRUE(log.Record({t, "mlx5_0", 2, "port_err"}));
  EXPECT_EQ((log.Counts()[{"mlx5_0", 1, "port_active"}]), 2u);
  EXPECT_EQ((log.Counts()[{"mlx5_0", 1, "port_err"}]), 1u);
  EXPECT_EQ((log.RepeatedCounts()[{"mlx5_0", 2, "port_active"}]), 1u);
}

TEST(VerbsEventsTest, device_fatal_drops_the_ports_state) {
  RdmaPortEventLog log;
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(100));
  EXPECT_TRUE(log.Record({t, "mlx5_0", 1, "port_err"}));
  EXPECT_TRUE(log.Record({t, "mlx5_1", 1, "port_err"}));
  EXPECT_TRUE(log.Record({t, "mlx5_0", 0, "device_fatal"}));
  EXPECT_TRUE(log.Record({t, "mlx5_0", 1, "port_err"}));   // no longer a repeat
  EXPECT_FALSE(log.Record({t, "mlx5_1", 1, "port_err"}));  // another device keeps its state
  EXPECT_EQ((log.Counts()[{"mlx5_0", 1, "port_err"}]), 2u);
}

TEST(VerbsEventsTest, forgotten_until_opened_again) {
  RdmaPortEventLog log;
  EXPECT_TRUE(log.Forgotten().empty());
  log.ForgetDevice("rxe0");
  EXPECT_EQ(log.Forgotten(), std::set<std::string>{"rxe0"});
  log.DeviceOpened("rxe0", {});
  EXPECT_TRUE(log.Forgotten().empty());
}

TEST(VerbsEventsTest, a_device_is_forgotten_only_when_every_source_says_it_is_gone) {
  // Issue 34 review: a failed ibv_get_device_list (EMFILE, ENOMEM) forgot every device.
  const std::set<std::string> known = {"mlx5_0", "rxe0", "rxe1"};
  const std::vector<std::string> open = {"mlx5_0"};
  const std::vector<std::string> listed = {"mlx5_0", "rxe0"};
  const std::vector<std::string> ibdevs = {"mlx5_0", "rxe0", "rxe1"};
  // The listing failed: every device still has its uverbs entry, nothing is forgotten.
  EXPECT_TRUE(GoneVerbsDevices(known, {}, nullptr, ibdevs).empty());
  // The listing failed and rxe1's entry left: rxe1 alone.
  EXPECT_EQ(GoneVerbsDevices(known, open, nullptr, {"mlx5_0", "rxe0"}),
            std::vector<std::string>{"rxe1"});
  // Listed, or open, or with an entry: kept.
  EXPECT_TRUE(GoneVerbsDevices(known, open, &listed, ibdevs).empty());
  EXPECT_EQ(GoneVerbsDevices(known, open, &listed, {"mlx5_0"}), std::vector<std::string>{"rxe1"});
  EXPECT_EQ(GoneVerbsDevices(known, {}, &listed, {}), std::vector<std::string>{"rxe1"});
  EXPECT_EQ(GoneVerbsDevices(known, {}, nullptr, {}),
            (std::vector<std::string>{"mlx5_0", "rxe0", "rxe1"}));
}

TEST(VerbsEventsTest, uverbs_entries_and_their_ibdev) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("fw_uverbs_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  for (const char* entry : {"uverbs1", "uverbs0", "abi_version", "uverbs2"}) {
    std::filesystem::create_directories(dir / entry);
  }
  std::ofstream(dir / "uverbs0" / "ibdev") << "mlx5_0\n";
  std::ofstream(dir / "uverbs1" / "ibdev") << "rxe0\n";  // uverbs2: no ibdev file (racing)
  std::vector<std::string> entries = {"stale"};
  entries.reserve(8);
  const auto* storage = entries.data();
  ListUverbsInto(dir.string(), entries);
  EXPECT_EQ(entries, (std::vector<std::string>{"uverbs0", "uverbs1", "uverbs2"}));
  EXPECT_EQ(entries.data(), storage);  // the vector is reused
  EXPECT_EQ(ReadUverbsIbdevs(dir.string(), entries), (std::vector<std::string>{"mlx5_0", "rxe0"}));
  std::filesystem::remove_all(dir);
  ListUverbsInto(dir.string(), entries);
  EXPECT_TRUE(entries.empty());
}

}  // namespace
}  // namespace fabricwatch::sys
