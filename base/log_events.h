#pragma once
// Log events: what a collector that reads a log (the kernel log, collector `kmsg`) hands the
// detectors besides its metric families (docs/design.md §5.2). Counters say how many; the
// detectors also need the lines themselves, to show them as evidence with their times.
//
// One LogEvent per (event, device, netdev) that had records in one collection: the number of
// records and the newest few lines, so a flood of 10,000 lines per second costs one entry and
// kMaxLogLinesPerEvent lines per collection, never one per record.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace fabricwatch {

// The most lines a LogEvent (and a finding's evidence) carries.
inline constexpr size_t kMaxLogLinesPerEvent = 5;

struct LogLine {
  std::chrono::system_clock::time_point time;
  std::string text;  // the record's message, unescaped, bounded like a label value
};

struct LogEvent {
  std::string event;   // the pattern table's name (bounded, never raw text)
  std::string device;  // RDMA device, or ""
  std::string netdev;  // netdev, or ""
  uint64_t count = 0;  // records of this event and entity in the collection
  std::chrono::system_clock::time_point last_time;
  std::vector<LogLine> lines;  // the newest, at most kMaxLogLinesPerEvent, oldest first
};

}  // namespace fabricwatch
