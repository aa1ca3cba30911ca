#include "collectors/sys/link_events.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace fabricwatch::sys {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

constexpr uint8_t kOperUp = 6;
constexpr uint8_t kOperDown = 2;

const system_clock::time_point kNow = system_clock::time_point(std::chrono::seconds(1'700'000'000));

LinkTrackState State(bool carrier) {
  LinkTrackState s;
  s.name = "eth0";
  s.carrier = carrier;
  return s;
}
LinkTrackState State(bool carrier, uint32_t up, uint32_t down) {
  LinkTrackState s = State(carrier);
  s.has_counts = true;
  s.up_count = up;
  s.down_count = down;
  return s;
}
LinkMessage Message(bool carrier) {
  LinkMessage m;
  m.ifindex = 7;
  m.name = "eth0";
  m.carrier = carrier;
  m.operstate = carrier ? kOperUp : kOperDown;
  return m;
}
LinkMessage Message(bool carrier, uint32_t up, uint32_t down) {
  LinkMessage m = Message(carrier);
  m.has_counts = true;
  m.up_count = up;
  m.down_count = down;
  return m;
}

// An event as (carrier_up, inferred), for compact expectations.
using Shape = std::vector<std::pair<bool, bool>>;
Shape ShapeOf(const std::vector<LinkEvent>& events) {
  Shape out;
  for (const LinkEvent& e : events) out.emplace_back(e.carrier_up, e.inferred);
  return out;
}

constexpr bool kUp = true;
constexpr bool kDown = false;
constexpr bool kInferred = true;
constexpr bool kSeen = false;

TEST(TransitionsBetweenTest, table) {
  struct Case {
    std::string_view what;
    LinkTrackState previous;
    LinkMessage message;
    Shape expected;
  };
  const Case cases[] = {
      {"no counts, carrier up", State(false), Message(true), {{kUp, kSeen}}},
      {"no counts, carrier down", State(true), Message(false), {{kDown, kSeen}}},
      {"no counts, no change", State(true), Message(true), {}},
      {"counts only in message", State(false), Message(true, 3, 3), {{kUp, kSeen}}},
      {"counts only in previous", State(true, 3, 3), Message(true), {}},
      {"counts, delta 0, same carrier", State(true, 4, 3), Message(true, 4, 3), {}},
      {"counts, delta 0, carrier changed", State(true, 4, 3), Message(false, 4, 3),
       {{kDown, kSeen}}},
      {"up, down+1 up+1, up", State(true, 5, 4), Message(true, 6, 5),
       {{kDown, kInferred}, {kUp, kSeen}}},
      {"up, 2 downs 2 ups, up", State(true, 5, 4), Message(true, 7, 6),
       {{kDown, kInferred}, {kUp, kInferred}, {kDown, kInferred}, {kUp, kSeen}}},
      {"down, up+1", State(false, 5, 5), Message(true, 6, 5), {{kUp, kSeen}}},
      {"up, down+1", State(true, 6, 5), Message(false, 6, 6), {{kDown, kSeen}}},
      {"down, up+1 down+1, down", State(false, 5, 5), Message(false, 6, 6),
       {{kUp, kInferred}, {kDown, kSeen}}},
      {"u32 wrap of up count", State(false, 0xffffffffu, 10), Message(true, 1, 10),
       {{kDown, kInferred}, {kUp, kSeen}}},
      {"u32 wrap of both", State(true, 0xffffffffu, 0xffffffffu), Message(true, 1, 1),
       {{kDown, kInferred}, {kUp, kInferred}, {kDown, kInferred}, {kUp, kSeen}}},
      {"absurd jump", State(true, 0, 0), Message(true, 5'000'000, 5'000'000), {}},
      {"just above 2^20", State(true, 0, 0), Message(true, (1u << 20) + 1, 0), {}},
      {"counter went backwards", State(true, 10, 10), Message(true, 9, 9), {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.what));
    const auto events = TransitionsBetween(c.previous, c.message, kNow);
    EXPECT_EQ(ShapeOf(events), c.expected);
  }
}

TEST(TransitionsBetweenTest, wrap_counts_two_transitions) {
  const auto events =
      TransitionsBetween(State(true, 0xffffffffu, 7), Message(true, 1, 7), kNow);
  EXPECT_EQ(events.size(), 2u);
}

TEST(TransitionsBetweenTest, events_carry_link_identity_and_time) {
  LinkMessage message = Message(true, 6, 5);
  message.ifindex = 42;
  message.name = "ens1f0np0";
  message.operstate = 5;  // dormant
  const auto events = TransitionsBetween(State(true, 5, 4), message, kNow);
  ASSERT_EQ(events.size(), 2u);
  for (const LinkEvent& e : events) {
    EXPECT_EQ(e.ifindex, 42);
    EXPECT_EQ(e.netdev, "ens1f0np0");
    EXPECT_EQ(e.operstate, "dormant");
    EXPECT_EQ(e.time, kNow);
  }
}

TEST(TransitionsBetweenTest, many_transitions_alternate_and_end_in_current_state) {
  const auto events = TransitionsBetween(State(false, 100, 100), Message(false, 110, 110), kNow);
  ASSERT_EQ(events.size(), 20u);
  for (size_t i = 0; i < events.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(events[i].carrier_up, i % 2 == 0);  // up, down, up, ..., down
    EXPECT_EQ(events[i].inferred, i + 1 < events.size());
  }
  EXPECT_FALSE(events.back().carrier_up);
}

TEST(OperStateNameTest, table) {
  const std::pair<uint8_t, std::string_view> cases[] = {
      {0, "unknown"}, {1, "notpresent"}, {2, "down"},     {3, "lowerlayerdown"},
      {4, "testing"}, {5, "dormant"},    {6, "up"},       {7, "unknown"},
      {99, "unknown"}, {255, "unknown"},
  };
  for (const auto& [code, name] : cases) {
    SCOPED_TRACE(static_cast<int>(code));
    EXPECT_EQ(OperStateName(code), name);
  }
}

// ---------------------------------------------------------------- LinkEventLog

LinkEvent Event(std::string netdev, bool up, int seconds, bool inferred = false) {
  LinkEvent e;
  e.time = kNow + std::chrono::seconds(seconds);
  e.ifindex = 3;
  e.netdev = std::move(netdev);
  e.carrier_up = up;
  e.operstate = up ? "up" : "down";
  e.inferred = inferred;
  return e;
}

TEST(LinkEventLogTest, starts_empty) {
  LinkEventLog log;
  EXPECT_EQ(log.total(), 0u);
  EXPECT_EQ(log.overruns(), 0u);
  EXPECT_FALSE(log.listening());
  EXPECT_TRUE(log.Recent(10).empty());
  EXPECT_TRUE(log.CountsByNetdev().empty());
}

TEST(LinkEventLogTest, record_updates_counts_by_netdev) {
  LinkEventLog log;
  log.Record(Event("eth0", kDown, 1));
  log.Record(Event("eth0", kUp, 2, /*inferred=*/true));
  log.Record(Event("eth0", kDown, 3));
  log.Record(Event("eth1", kUp, 4));
  EXPECT_EQ(log.total(), 4u);

  const auto counts = log.CountsByNetdev();
  ASSERT_EQ(counts.size(), 2u);
  const LinkEventCounts& eth0 = counts.at("eth0");
  EXPECT_EQ(eth0.up, 1u);
  EXPECT_EQ(eth0.down, 2u);
  EXPECT_EQ(eth0.last_event, kNow + std::chrono::seconds(3));
  const LinkEventCounts& eth1 = counts.at("eth1");
  EXPECT_EQ(eth1.up, 1u);
  EXPECT_EQ(eth1.down, 0u);
  EXPECT_EQ(eth1.last_event, kNow + std::chrono::seconds(4));
}

TEST(LinkEventLogTest, recent_is_newest_last_and_bounded) {
  LinkEventLog log;
  for (int i = 0; i < 5; ++i) log.Record(Event("eth" + std::to_string(i), i % 2 == 0, i));

  const auto all = log.Recent(100);
  ASSERT_EQ(all.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(all[i].netdev, "eth" + std::to_string(i));

  const auto last2 = log.Recent(2);
  ASSERT_EQ(last2.size(), 2u);
  EXPECT_EQ(last2[0].netdev, "eth3");
  EXPECT_EQ(last2[1].netdev, "eth4");
  EXPECT_EQ(last2[1].carrier_up, true);
  EXPECT_EQ(last2[1].operstate, "up");

  EXPECT_TRUE(log.Recent(0).empty());
}

TEST(LinkEventLogTest, capacity_evicts_oldest_but_counts_keep_everything) {
  LinkEventLog log(3);
  for (int i = 0; i < 5; ++i) log.Record(Event("eth0", i % 2 == 1, i));
  EXPECT_EQ(log.total(), 5u);
  const auto recent = log.Recent(10);
  ASSERT_EQ(recent.size(), 3u);
  EXPECT_EQ(recent[0].time, kNow + std::chrono::seconds(2));
  EXPECT_EQ(recent[1].time, kNow + std::chrono::seconds(3));
  EXPECT_EQ(recent[2].time, kNow + std::chrono::seconds(4));
  const auto counts = log.CountsByNetdev();
  EXPECT_EQ(counts.at("eth0").up, 2u);
  EXPECT_EQ(counts.at("eth0").down, 3u);
}

TEST(LinkEventLogTest, overruns_and_listening) {
  LinkEventLog log;
  log.RecordOverrun();
  log.RecordOverrun();
  EXPECT_EQ(log.overruns(), 2u);
  EXPECT_EQ(log.total(), 0u);  // an overrun is not an event
  log.SetListening(true);
  EXPECT_TRUE(log.listening());
  log.SetListening(false);
  EXPECT_FALSE(log.listening());
}

TEST(LinkEventLogTest, wait_for_events_returns_when_events_exist) {
  LinkEventLog log;
  log.Record(Event("eth0", kDown, 1));
  log.Record(Event("eth0", kUp, 2));
  EXPECT_EQ(log.WaitForEvents(0, milliseconds(50)), 2u);
  EXPECT_EQ(log.WaitForEvents(1, milliseconds(50)), 2u);
}

TEST(LinkEventLogTest, wait_for_events_times_out_without_new_events) {
  LinkEventLog log;
  EXPECT_EQ(log.WaitForEvents(0, milliseconds(50)), 0u);
  log.Record(Event("eth0", kDown, 1));
  EXPECT_EQ(log.WaitForEvents(1, milliseconds(50)), 1u);
}

TEST(LinkEventLogTest, wait_for_events_wakes_on_record) {
  LinkEventLog log;
  uint64_t seen = 0;
  std::thread waiter([&] { seen = log.WaitForEvents(0, std::chrono::seconds(10)); });
  log.Record(Event("eth0", kDown, 1));
  waiter.join();
  EXPECT_EQ(seen, 1u);
}

}  // namespace
}  // namespace fabricwatch::sys
