#pragma once
// SysFs: sysfs rooted at --path.sysfs (default /sys).
//
// Every collector reads sysfs through this class, never through a hard-coded "/sys", so a replay
// root (docs/design.md §5), a fixture tree or the real kernel are the same to the code. Relative
// paths are joined under the root: SysFs("/tmp/root").Path("class/net") == "/tmp/root/class/net".
//
// Failure modes: every error names the absolute path and the errno text. A value longer than a
// page (sysfs attributes never are) is an InvalidArgument, not a truncated read.
// Thread-safety: const methods only; safe to share between collector threads.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "collectors/sys/fd_budget.h"
#include "collectors/sys/filesystem.h"

namespace fabricwatch::sys {

class SysFs {
 public:
  // `fs` (and `fd_budget`, when given) must outlive this object. Without a budget, every
  // AttributeFile built with keep_open keeps its fd.
  SysFs(std::string root, const FileSystem& fs, FdBudget* fd_budget = nullptr);

  const std::string& root() const { return root_; }
  const FileSystem& fs() const { return fs_; }
  FdBudget* fd_budget() const { return fd_budget_; }
  std::string Path(std::string_view relative) const;
  // Path() into `path`, reusing its memory.
  void AssignPath(std::string_view relative, std::string& path) const;

  // Whole small attribute (≤ 4 KiB), open + one read + close. Surrounding whitespace trimmed.
  Result<std::string> ReadString(std::string_view relative) const;
  Result<uint64_t> ReadUint64(std::string_view relative) const;
  Result<int64_t> ReadInt64(std::string_view relative) const;
  // A binary attribute (PCI `config`), open + one pread at 0 of at most buf.size() bytes +
  // close, untrimmed. Returns the bytes read: the kernel may return fewer than the file's size
  // (pci-sysfs.c gives an unprivileged reader only the first 64 bytes of config space).
  Result<size_t> ReadBinary(std::string_view relative, std::span<uint8_t> buf) const;
  // Sorted entry names.
  Result<std::vector<std::string>> ListDir(std::string_view relative) const;
  // ListDir() into `names`, reusing its strings: for the directories listed every sample.
  Status ListDirInto(std::string_view relative, std::vector<std::string>& names) const;
  Result<std::string> ReadLink(std::string_view relative) const;
  // The last path component of a symlink's target: "device" -> "0000:03:00.0",
  // "device/driver" -> "mlx5_core".
  Result<std::string> ReadLinkBasename(std::string_view relative) const;

 private:
  std::string root_;
  const FileSystem& fs_;
  FdBudget* fd_budget_;
};

// A sysfs attribute that is read again and again (a counter). With keep_open it holds its fd and
// re-reads with pread(fd, buf, n, 0) — one syscall per sample (docs/design.md §8); the fd is
// dropped on any error so the next read reopens it (a device that went away and came back). Without
// keep_open (a collector's own cap is reached), or while the SysFs's FdBudget has no slot left
// (fd_budget.h: a low open-file limit), each read is open + pread + close.
// A file that does not exist (ENOENT: an attribute this kernel or driver lacks) is remembered as
// absent and not looked up again, so optional files cost no syscall per sample; owners notice
// new files by rebuilding their AttributeFiles when they rediscover a device.
// Not thread-safe: owned by one collector.
class AttributeFile {
 public:
  AttributeFile(const SysFs& sysfs, std::string relative, bool keep_open = true);

  AttributeFile(AttributeFile&&) = default;
  AttributeFile& operator=(AttributeFile&&) = default;

  // The value with surrounding whitespace trimmed; valid until the next Read() or a move.
  Result<std::string_view> Read();
  Result<uint64_t> ReadUint64();
  Result<int64_t> ReadInt64();

  const std::string& path() const { return path_; }
  bool is_open() const { return fd_.valid(); }
  bool known_absent() const { return absent_.has_value(); }

 private:
  // Counters, states and rates fit in the object itself, beside its fd: sampling a vector of
  // them walks one array, where a buffer allocated apart for each file cost a cache miss per
  // file per sample (a counter collector wakes to cold caches every second).
  static constexpr size_t kInlineBytes = 48;

  const FileSystem* fs_;
  FdBudget* fd_budget_;
  std::string path_;
  bool keep_open_;
  UniqueFd fd_;
  FdBudget::Slot slot_;  // held while fd_ is kept open under a budget
  std::array<char, kInlineBytes> inline_{};
  std::string overflow_;          // a page, once a value did not fit inline_; used from then on
  std::optional<Status> absent_;  // the ENOENT of the first open, replayed without a syscall
};

}  // namespace fabricwatch::sys
