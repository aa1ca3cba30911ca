#pragma once
// Link up/down events from rtnetlink (RTNLGRP_LINK), docs/reference.md §7.1.
//
// LinkEventListener joins the RTNLGRP_LINK multicast group with libnl-3 and records every carrier
// transition of every netdev, with its time, in a LinkEventLog. The kernel's notifications go
// through linkwatch and can coalesce a quick down+up into one message, so the listener also reads
// IFLA_CARRIER_UP_COUNT / IFLA_CARRIER_DOWN_COUNT (u32, kernel ≥ 4.16; libnl's rtnl_link does
// not parse them, so the message is parsed raw) and records the transitions a coalesced message
// implies, marked `inferred`. On a receive-buffer overrun (ENOBUFS, libnl -NLE_NOMEM) events were
// lost: it counts the overrun and re-dumps all links (RTM_GETLINK) to resynchronise, again
// inferring the missed transitions from the counters. Polling the sysfs carrier counters
// (collector `netdev`) stays the cross-check.
//
// Thread-safety: LinkEventLog is internally synchronised; the listener runs its own thread and
// stops within its poll timeout (200 ms) when destroyed.

#include <spdlog/logger.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace fabricwatch::sys {

struct LinkEvent {
  std::chrono::system_clock::time_point time;
  int ifindex = 0;
  std::string netdev;
  bool carrier_up = false;  // the state the link went to
  std::string operstate;    // RFC 2863 name at notification time ("up", "down", ...)
  bool inferred = false;    // implied by the carrier counters, not seen as its own message
};

struct LinkEventCounts {
  uint64_t up = 0;
  uint64_t down = 0;
  std::chrono::system_clock::time_point last_event;
};

class LinkEventLog {
 public:
  explicit LinkEventLog(size_t capacity = 4096) : capacity_(capacity) {}

  void Record(LinkEvent event);
  void RecordOverrun();
  void SetListening(bool listening);

  // The newest `max` events, oldest first.
  std::vector<LinkEvent> Recent(size_t max) const;
  std::map<std::string, LinkEventCounts, std::less<>> CountsByNetdev() const;
  uint64_t total() const;
  uint64_t overruns() const;
  bool listening() const;

  // Blocks until more than `seen` events were recorded or `timeout` passes; returns total().
  // Lets a detector wake on a link event instead of waiting for its next tick.
  uint64_t WaitForEvents(uint64_t seen, std::chrono::milliseconds timeout) const;

 private:
  size_t capacity_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::deque<LinkEvent> events_;
  std::map<std::string, LinkEventCounts, std::less<>> counts_;
  uint64_t total_ = 0;
  uint64_t overruns_ = 0;
  bool listening_ = false;
};

// Per-link state the listener tracks between messages (exposed for the parser tests).
struct LinkTrackState {
  std::string name;
  bool carrier = false;
  bool has_counts = false;
  uint32_t up_count = 0;
  uint32_t down_count = 0;
};

// What one RTM_NEWLINK message says about a link.
struct LinkMessage {
  int ifindex = 0;
  std::string name;
  bool carrier = false;
  uint8_t operstate = 0;
  bool has_counts = false;
  uint32_t up_count = 0;
  uint32_t down_count = 0;
};

// Pure: the transitions between `previous` and `message`, oldest first, all stamped `now`.
// With counters on both sides the number of transitions is the counter delta (u32 wrap-aware)
// and they alternate, ending in the message's carrier state; the earlier ones are `inferred`.
// Without counters, a carrier change is one transition.
std::vector<LinkEvent> TransitionsBetween(const LinkTrackState& previous,
                                          const LinkMessage& message,
                                          std::chrono::system_clock::time_point now);

std::string_view OperStateName(uint8_t operstate);

class LinkEventListener {
 public:
  // Opens the sockets, dumps the current links as the baseline and starts the thread. Events
  // are stamped with `clock` (the agent's, base/agent_clock.h; it must outlive the
  // listener), or the wall clock when null.
  static Result<std::unique_ptr<LinkEventListener>> Start(LinkEventLog& log,
                                                          std::shared_ptr<spdlog::logger> logger,
                                                          const Clock* clock = nullptr);
  ~LinkEventListener();
  LinkEventListener(const LinkEventListener&) = delete;
  LinkEventListener& operator=(const LinkEventListener&) = delete;

  struct Impl;

 private:
  explicit LinkEventListener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::jthread thread_;
};

}  // namespace fabricwatch::sys
