#pragma once
// FileSystem: the thin seam between fabricwatch and the kernel's pseudo-filesystems.
//
// Production uses RealFileSystem. Tests wrap it (tests/testing/fake_filesystem.h) to inject errno
// values on chosen paths — CI runs as root, so a chmod'ed fixture would never fail to open.
// All paths here are absolute; rooting under --path.sysfs happens in SysFs.
//
// Thread-safety: implementations are stateless or internally synchronised; any method may be
// called concurrently from several collector threads.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "collectors/sys/unique_fd.h"

namespace fabricwatch::sys {

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // open(O_RDONLY|O_CLOEXEC|O_NONBLOCK) of a regular file: it never blocks, and anything but a
  // regular file (a FIFO or a device node in place of a counter) is an InvalidArgument error
  // naming the path. The fd is kept open by callers that re-read counters.
  virtual Result<UniqueFd> Open(const std::string& path) const = 0;
  // One bounded pread at offset 0 — the way sysfs attributes are meant to be re-read: the
  // kernel regenerates the whole value on every read at offset 0. Returns bytes read.
  // `path` is only for error messages.
  virtual Result<size_t> ReadAt0(const UniqueFd& fd, std::span<char> buf,
                                 const std::string& path) const = 0;
  // Entry names (no "." / ".."), unsorted.
  virtual Result<std::vector<std::string>> ListDir(const std::string& path) const = 0;
  // ListDir into `names`, overwriting its strings in place: a collector that lists a directory
  // every sample keeps one vector and allocates nothing once it has seen the directory. The
  // default forwards to ListDir().
  virtual Status ListDirInto(const std::string& path, std::vector<std::string>& names) const;
  virtual Result<std::string> ReadLink(const std::string& path) const = 0;
};

class RealFileSystem final : public FileSystem {
 public:
  Result<UniqueFd> Open(const std::string& path) const override;
  Result<size_t> ReadAt0(const UniqueFd& fd, std::span<char> buf,
                         const std::string& path) const override;
  Result<std::vector<std::string>> ListDir(const std::string& path) const override;
  // getdents64 into a stack buffer: opendir() would malloc its own.
  Status ListDirInto(const std::string& path, std::vector<std::string>& names) const override;
  Result<std::string> ReadLink(const std::string& path) const override;
};

}  // namespace fabricwatch::sys
