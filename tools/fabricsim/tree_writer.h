#pragma once
// TreeWriter: writes a replay root the way the kernel updates sysfs.
//
// The agent keeps counter files open and re-reads them with pread(fd, 0) (docs/design.md §8), so a
// value is rewritten IN PLACE: same inode, open without O_TRUNC, pwrite at offset 0, then
// ftruncate to the new length. Never write-and-rename: a renamed file is a new inode and the
// agent's open fd would keep reading the old value forever. A value that grows or keeps its
// length (counters almost always do) is one pwrite, which a concurrent pread sees whole; a
// shorter value ("4: ACTIVE" -> "1: DOWN") leaves a window of one syscall in which a reader can
// see the old tail, as short as we can make it without sysfs's own seq_file buffer.
// Unchanged values are not written at all (the last content of every file is remembered).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/status.h"

namespace fabricwatch::sim {

class TreeWriter {
 public:
  explicit TreeWriter(std::string root) : root_(std::move(root)) {}

  const std::string& root() const { return root_; }
  std::string Path(std::string_view relative) const;

  // Writes `content` to root/relative (creating parent directories) when it differs from what
  // this writer last wrote there.
  Status Write(std::string_view relative, std::string_view content);
  Status WriteBytes(std::string_view relative, std::span<const uint8_t> content);
  // Appends `content` to root/relative (created if absent) with one write() on an O_APPEND
  // descriptor (continued if short): a log the agent tails (the kernel-log replay file) only
  // ever grows and is never renamed. A reader racing the write may see part of the batch; the
  // kmsg splitter holds a record back until the line after it has arrived.
  Status Append(std::string_view relative, std::string_view content);
  // A decimal counter as sysfs prints it: "123\n".
  Status WriteU64(std::string_view relative, uint64_t value) {
    return Write(relative, std::to_string(value) + "\n");
  }
  // root/relative -> target (relative target, as the kernel's links are); replaced if present.
  Status Symlink(std::string_view relative, std::string_view target);
  Status MakeDirs(std::string_view relative);
  // Removes root/relative (file, link or tree) and forgets what was written under it.
  Status Remove(std::string_view relative);

  uint64_t writes() const { return writes_; }

 private:
  std::string root_;
  std::unordered_map<std::string, std::string> last_;
  uint64_t writes_ = 0;
};

}  // namespace fabricwatch::sim
