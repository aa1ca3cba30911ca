#include "collectors/sys/verbs_events.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <spdlog/sinks/null_sink.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
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

TEST(VerbsEventsTest, forgotten_until_listed_or_opened_again) {
  RdmaPortEventLog log;
  EXPECT_FALSE(log.IsForgotten("rxe0"));
  log.ForgetDevice("rxe0");
  log.ForgetDevice("rxe1");
  EXPECT_TRUE(log.IsForgotten("rxe0"));
  log.DeviceOpened("rxe0", {});
  EXPECT_FALSE(log.IsForgotten("rxe0"));
  // Issue 34 review: listed by libibverbs again, even if its open fails: not forgotten.
  log.Listed({"mlx5_0", "rxe1"});
  EXPECT_FALSE(log.IsForgotten("rxe1"));
}

TEST(VerbsEventsTest, the_forgotten_set_stays_bounded) {
  // Issue 34 review: VF churn forgot devices without end. The rdma collector's rediscovery drops
  // those it no longer lists; a cap bounds it without one.
  RdmaPortEventLog log;
  log.ForgetDevice("vf0");
  log.ForgetDevice("vf1");
  log.RetainForgotten({"vf1", "mlx5_0"});  // vf1 is still listed by sysfs: no zeros for it yet
  EXPECT_FALSE(log.IsForgotten("vf0"));
  EXPECT_TRUE(log.IsForgotten("vf1"));
  for (size_t i = 0; i < 3 * RdmaPortEventLog::kMaxForgotten; ++i) {
    log.ForgetDevice("churn" + std::to_string(i));
  }
  size_t forgotten = log.IsForgotten("vf1") ? 1 : 0;
  for (size_t i = 0; i < 3 * RdmaPortEventLog::kMaxForgotten; ++i) {
    forgotten += log.IsForgotten("churn" + std::to_string(i)) ? 1 : 0;
  }
  EXPECT_EQ(forgotten, RdmaPortEventLog::kMaxForgotten);
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
  // The listing failed and the uverbs directory was read and is empty: all gone. (A directory
  // that could not be read is no listing at all: PlanVerbsSync forgets nothing, see below.)
  EXPECT_EQ(GoneVerbsDevices(known, {}, nullptr, {}),
            (std::vector<std::string>{"mlx5_0", "rxe0", "rxe1"}));
}

// The listener's Sync decisions (issue 34 review): open set {entry, d_ino, name} and listings.
const std::vector<VerbsOpenRecord> kOpen = {{"uverbs0", 100, "mlx5_0", false},
                                            {"uverbs1", 101, "rxe0", false}};
const std::vector<UverbsEntry> kEntries = {{"uverbs0", 100}, {"uverbs1", 101}};
const std::map<std::string, std::string> kIbdevs = {{"uverbs0", "mlx5_0"}, {"uverbs1", "rxe0"}};
const std::vector<VerbsListedDevice> kListed = {{"mlx5_0", "uverbs0"}, {"rxe0", "uverbs1"}};
const std::set<std::string> kKnown = {"mlx5_0", "rxe0"};

TEST(VerbsEventsTest, sync_changes_nothing_when_nothing_changed) {
  const VerbsSyncPlan plan = PlanVerbsSync(kOpen, &kEntries, kIbdevs, &kListed, kKnown);
  EXPECT_TRUE(plan.close.empty());
  EXPECT_TRUE(plan.open.empty());
  EXPECT_TRUE(plan.forget.empty());
  EXPECT_EQ(plan.listed, (std::vector<std::string>{"mlx5_0", "rxe0"}));
  // The listing failed: nothing changes either.
  EXPECT_TRUE(PlanVerbsSync(kOpen, &kEntries, kIbdevs, nullptr, kKnown).forget.empty());
}

TEST(VerbsEventsTest, sync_closes_and_forgets_nothing_when_the_uverbs_directory_is_unreadable) {
  // Finding 1: opendir failing (EMFILE, ENOMEM) read as "no device" closed every context and
  // forgot every device. Now it is no listing: every context stays, nothing is forgotten.
  VerbsSyncPlan plan = PlanVerbsSync(kOpen, nullptr, {}, &kListed, kKnown);
  EXPECT_TRUE(plan.close.empty());
  EXPECT_TRUE(plan.open.empty());
  EXPECT_TRUE(plan.forget.empty());
  plan = PlanVerbsSync(kOpen, nullptr, {}, nullptr, kKnown);
  EXPECT_TRUE(plan.close.empty());
  EXPECT_TRUE(plan.forget.empty());
  // A fatal context reads nothing more: it alone is closed (reopened once the directory reads).
  std::vector<VerbsOpenRecord> open = kOpen;
  open[1].fatal = true;
  plan = PlanVerbsSync(open, nullptr, {}, nullptr, kKnown);
  EXPECT_EQ(plan.close, std::vector<size_t>{1});
  EXPECT_TRUE(plan.open.empty());
  EXPECT_TRUE(plan.forget.empty());
  // Readable again: the fatal one is closed and reopened, on the same entry.
  plan = PlanVerbsSync(open, &kEntries, kIbdevs, &kListed, kKnown);
  EXPECT_EQ(plan.close, std::vector<size_t>{1});
  ASSERT_EQ(plan.open.size(), 1u);
  EXPECT_EQ(plan.open[0].first, 1u);
  EXPECT_EQ(plan.open[0].second.device, "rxe0");
  EXPECT_TRUE(plan.forget.empty());
}

TEST(VerbsEventsTest, sync_reopens_a_renamed_device_under_its_new_name_and_forgets_the_old) {
  // Finding 2: `rdma dev set rxe0 name foo` keeps uverbs1. Matched by name, foo looked not open
  // and got a second context on the same device (every event twice) and rxe0 stayed.
  const std::map<std::string, std::string> ibdevs = {{"uverbs0", "mlx5_0"}, {"uverbs1", "foo"}};
  for (const char* libibverbs_name : {"foo", "rxe0"}) {  // libibverbs may still say rxe0
    const std::vector<VerbsListedDevice> listed = {{"mlx5_0", "uverbs0"},
                                                   {libibverbs_name, "uverbs1"}};
    const VerbsSyncPlan plan = PlanVerbsSync(kOpen, &kEntries, ibdevs, &listed, kKnown);
    EXPECT_EQ(plan.close, std::vector<size_t>{1}) << libibverbs_name;
    ASSERT_EQ(plan.open.size(), 1u) << libibverbs_name;
    EXPECT_EQ(plan.open[0].first, 1u);
    EXPECT_EQ(plan.open[0].second.device, "foo");
    EXPECT_EQ(plan.open[0].second.uverbs, "uverbs1");
    EXPECT_EQ(plan.open[0].second.ino, 101u);
    EXPECT_EQ(plan.forget, std::vector<std::string>{"rxe0"}) << libibverbs_name;
    EXPECT_EQ(plan.listed, (std::vector<std::string>{"mlx5_0", "foo"}));
  }
  // Once reopened as foo, the next Sync changes nothing.
  const std::vector<VerbsOpenRecord> open = {kOpen[0], {"uverbs1", 101, "foo", false}};
  const std::vector<VerbsListedDevice> listed = {{"mlx5_0", "uverbs0"}, {"foo", "uverbs1"}};
  const VerbsSyncPlan plan = PlanVerbsSync(open, &kEntries, ibdevs, &listed, {"mlx5_0", "foo"});
  EXPECT_TRUE(plan.close.empty());
  EXPECT_TRUE(plan.open.empty());
  EXPECT_TRUE(plan.forget.empty());
}

TEST(VerbsEventsTest, sync_closes_a_context_whose_uverbs_entry_was_reused) {
  // Finding 3: `rdma link delete rxe0` waits for our context, but ib_uverbs freed uverbs1 first
  // and a new device took it. Same names, new inode: rxe0's context is closed (the delete can
  // finish) and the new device is opened on the new entry.
  const std::vector<UverbsEntry> entries = {{"uverbs0", 100}, {"uverbs1", 202}};
  const std::map<std::string, std::string> ibdevs = {{"uverbs0", "mlx5_0"}, {"uverbs1", "rxe1"}};
  const std::vector<VerbsListedDevice> listed = {{"mlx5_0", "uverbs0"}, {"rxe1", "uverbs1"}};
  VerbsSyncPlan plan = PlanVerbsSync(kOpen, &entries, ibdevs, &listed, kKnown);
  EXPECT_EQ(plan.close, std::vector<size_t>{1});
  ASSERT_EQ(plan.open.size(), 1u);
  EXPECT_EQ(plan.open[0].second.device, "rxe1");
  EXPECT_EQ(plan.open[0].second.ino, 202u);
  EXPECT_EQ(plan.forget, std::vector<std::string>{"rxe0"});
  // Even when the new device reuses the name too (rxe0 re-added at once): a new context.
  const std::vector<VerbsListedDevice> same_name = kListed;
  plan = PlanVerbsSync(kOpen, &entries, kIbdevs, &same_name, kKnown);
  EXPECT_EQ(plan.close, std::vector<size_t>{1});
  ASSERT_EQ(plan.open.size(), 1u);
  EXPECT_EQ(plan.open[0].second.ino, 202u);
  EXPECT_TRUE(plan.forget.empty());
  // The presence check sees the change although the sorted names are the same.
  EXPECT_NE(entries, kEntries);
}

TEST(VerbsEventsTest, sync_closes_a_removed_device_and_never_reopens_it) {
  // rxe0's entry left (rdma link delete): closed; libibverbs may still list it, but it is not
  // opened again (its removal waits for our contexts) and is forgotten once no source names it.
  const std::vector<UverbsEntry> entries = {{"uverbs0", 100}};
  const std::map<std::string, std::string> ibdevs = {{"uverbs0", "mlx5_0"}};
  VerbsSyncPlan plan = PlanVerbsSync(kOpen, &entries, ibdevs, &kListed, kKnown);
  EXPECT_EQ(plan.close, std::vector<size_t>{1});
  EXPECT_TRUE(plan.open.empty());
  EXPECT_TRUE(plan.forget.empty());  // still listed by libibverbs
  const std::vector<VerbsListedDevice> listed = {{"mlx5_0", "uverbs0"}};
  plan = PlanVerbsSync(kOpen, &entries, ibdevs, &listed, kKnown);
  EXPECT_EQ(plan.forget, std::vector<std::string>{"rxe0"});
  // A new device is opened with its entry's inode.
  const std::vector<UverbsEntry> added = {{"uverbs0", 100}, {"uverbs1", 101}, {"uverbs2", 300}};
  const std::vector<VerbsListedDevice> more = {
      {"mlx5_0", "uverbs0"}, {"rxe0", "uverbs1"}, {"siw0", "uverbs2"}};
  plan = PlanVerbsSync(kOpen, &added, kIbdevs, &more, kKnown);
  EXPECT_TRUE(plan.close.empty());
  ASSERT_EQ(plan.open.size(), 1u);
  EXPECT_EQ(plan.open[0].first, 2u);
  EXPECT_EQ(plan.open[0].second.device, "siw0");  // no ibdev file yet: the libibverbs name
  EXPECT_EQ(plan.open[0].second.ino, 300u);
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
  std::vector<UverbsEntry> entries = {{"stale", 1}};
  entries.reserve(8);
  const auto* storage = entries.data();
  ASSERT_TRUE(ListUverbsInto(dir.string(), entries));
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].name, "uverbs0");
  EXPECT_EQ(entries[1].name, "uverbs1");
  EXPECT_EQ(entries[2].name, "uverbs2");
  EXPECT_NE(entries[1].ino, 0u);
  EXPECT_NE(entries[0].ino, entries[1].ino);  // d_ino
  EXPECT_EQ(entries.data(), storage);         // the vector is reused
  EXPECT_EQ(ReadUverbsIbdevs(dir.string(), entries),
            (std::map<std::string, std::string>{{"uverbs0", "mlx5_0"}, {"uverbs1", "rxe0"}}));
  // A new node under the same name has a new inode (kernfs, and here the test's file system).
  std::filesystem::create_directories(dir / "keep");  // holds uverbs1's old inode number busy
  std::filesystem::rename(dir / "uverbs1", dir / "keep" / "old");
  std::filesystem::create_directories(dir / "uverbs1");
  std::vector<UverbsEntry> again;
  ASSERT_TRUE(ListUverbsInto(dir.string(), again));
  ASSERT_EQ(again.size(), 3u);
  EXPECT_EQ(again[1].name, "uverbs1");
  EXPECT_NE(again[1].ino, entries[1].ino);
  EXPECT_NE(again, entries);
  // Finding 1: a directory that cannot be read is no listing (false), not "no device".
  std::ofstream(dir / "file") << "x";
  EXPECT_FALSE(ListUverbsInto((dir / "file").string(), entries));  // ENOTDIR
  EXPECT_TRUE(entries.empty());
  // One that does not exist (ib_uverbs not loaded) has no device.
  std::filesystem::remove_all(dir);
  entries = {{"stale", 1}};
  EXPECT_TRUE(ListUverbsInto(dir.string(), entries));
  EXPECT_TRUE(entries.empty());
}

}  // namespace
}  // namespace fabricwatch::sys
