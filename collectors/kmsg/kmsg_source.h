#pragma once
// Where kernel log records come from (docs/design.md §5.2, docs/reference.md §9.1): the kernel's
// /dev/kmsg, or a --path.kmsg replay file in the same record format that grows while it is read.
// Both hand out raw records, one string each, for kmsg::ParseKmsgRecord; the collector does the
// rest. I/O only: parsing and matching live elsewhere.
//
// Thread-safety: one collector thread.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace fabricwatch::kmsg {

struct KmsgReadStats {
  uint64_t overruns = 0;   // EPIPE: records overwritten since the last read (counted by sequence)
  uint64_t orphans = 0;    // replay: continuation lines with no record
  uint64_t too_long = 0;   // replay: records longer than 8 KB
  uint64_t rotated = 0;    // replay: a partial record lost when the file shrank or was replaced
  bool restarted = false;  // replay: the file is read again from its start
};

class KmsgSource {
 public:
  virtual ~KmsgSource() = default;
  // Opens the source when it is not open. An error names the path and the reason (EACCES
  // without CAP_SYSLOG under kernel.dmesg_restrict, ENOENT for a replay file not written yet).
  virtual Status Open() = 0;
  // The records available now, at most `max_records`, into `records` (cleared first). Never
  // blocks.
  virtual Status Read(size_t max_records, std::vector<std::string>& records,
                      KmsgReadStats& stats) = 0;
  // What tells that records may have arrived (issue 40 item 3): a descriptor poll() reports
  // readable (POLLIN) then, for the scheduler to wait on between collections; -1 when there is
  // none (not open, or inotify refused). /dev/kmsg is its own (devkmsg_poll() in
  // kernel/printk/printk.c: POLLIN while a record after the reader's position exists); a replay
  // file has an inotify watch on it and on its directory (inotify(7)), which Read() drains.
  virtual int ReadyFd() const = 0;
  // Why ReadyFd() is -1 on an open source (inotify refused: fs.inotify.max_user_watches).
  virtual Status ReadyStatus() const { return Status::Ok(); }
  // The last Read() stopped at `max_records` or its byte budget: records are left for the next.
  virtual bool backlog() const = 0;
  // A replay file: record times are read times, not boot time + µs.
  virtual bool replay() const = 0;
  virtual const std::string& path() const = 0;
};

// /dev/kmsg (a character device): from the end of the log, or from its oldest record when
// `from_oldest` (the collector resumes after a saved sequence and skips what it has seen).
std::unique_ptr<KmsgSource> NewDeviceKmsgSource(std::string path, bool from_oldest);
// A replay file, read from its start.
std::unique_ptr<KmsgSource> NewReplayKmsgSource(std::string path);
// The source of `path`: a character device is the kernel's log, anything else a replay file.
std::unique_ptr<KmsgSource> NewKmsgSource(const std::string& path, bool from_oldest);

}  // namespace fabricwatch::kmsg
