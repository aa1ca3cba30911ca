#pragma once
// Parser of /dev/kmsg records (issue 23, groundwork for the `kmsg` collector): the structured
// form the kernel gives each reader (Documentation/ABI/testing/dev-kmsg), which the replay file
// of --path.kmsg repeats record after record:
//     <prefix>;<message>\n
//      SUBSYSTEM=pci\n                 continuation lines: a space, then KEY=value
//      DEVICE=+pci:0000:3b:00.0\n
// The prefix is comma-separated: the syslog value (3 lowest bits the priority, the next 8 the
// facility), the 64-bit sequence number, the timestamp in microseconds since boot, the flags
// ('-' whole line, 'c' a fragment of a continued line; older kernels also '+'), and fields newer
// kernels add (caller=T123) that are ignored. The kernel escapes a non-printable byte and the
// backslash in the message as \xNN; the message is kept as the kernel wrote it (escaped), and
// Unescape() gives the bytes.
//
// Bad input is an error naming it and never a crash: a record longer than kMaxRecordBytes, a
// message longer than kMaxMessageBytes (the kernel's own line limit is 1 KB), a prefix field
// that is not a number, a missing ';', invalid UTF-8 (the kernel writes ASCII; a replay file
// may not), a continuation line without a record. Thread-safety: functions of their arguments.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace fabricwatch::kmsg {

struct KmsgRecord {
  uint8_t priority = 0;   // 0 emerg .. 7 debug
  uint32_t facility = 0;  // 0 kernel; a userspace writer cannot use 0
  uint64_t sequence = 0;
  uint64_t timestamp_us = 0;  // since boot (CLOCK_MONOTONIC)
  bool fragment = false;      // flag 'c' or '+': part of a continued line
  std::string message;        // as the kernel escaped it
  std::string subsystem;      // SUBSYSTEM= continuation ("pci", "net", "infiniband"), or ""
  std::string device;         // DEVICE= continuation ("+pci:0000:3b:00.0", "n2", "c4:64"), or ""
};

inline constexpr size_t kMaxKmsgRecordBytes = 8192;   // the kernel's CONSOLE_EXT_LOG_MAX
inline constexpr size_t kMaxKmsgMessageBytes = 1024;  // a longer line is skipped and counted

// One record as one read() of /dev/kmsg returns it (the trailing newline optional).
Result<KmsgRecord> ParseKmsgRecord(std::string_view text);

// The message with \xNN escapes turned back into bytes.
std::string UnescapeKmsg(std::string_view message);

// Splits a stream of records (a replay file, read in chunks) into records. Feed() appends text;
// Next() returns the next complete record's text, or empty when none is complete yet. A record
// is complete when the line after it starts a new record (not a space) or the input ended
// (Finish()). Continuation lines before the first record, and a record that grows past
// kMaxKmsgRecordBytes, are dropped and counted in `dropped()`.
class KmsgSplitter {
 public:
  void Feed(std::string_view text);
  void Finish() { finished_ = true; }
  // The reader of a growing file has read all there is for now: a record whose last line is
  // complete is taken as complete (writers append whole records, continuation lines included),
  // instead of waiting for the next record to start. Feed() ends this.
  void MarkInputEnd() { at_end_ = true; }
  // The next complete record, moved into `record`; false when none is complete.
  bool Next(std::string& record);
  size_t dropped() const { return dropped_; }
  // Of dropped(): the continuation lines with no record before them (the rest were too long).
  size_t orphans() const { return orphans_; }
  size_t buffered() const { return buffer_.size() - start_; }

 private:
  std::string buffer_;
  size_t start_ = 0;
  size_t dropped_ = 0;
  size_t orphans_ = 0;
  bool finished_ = false;
  bool at_end_ = false;
};

}  // namespace fabricwatch::kmsg
