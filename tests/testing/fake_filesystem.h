#pragma once
// FakeFileSystem: the real filesystem with errno values injected on chosen paths.
//
// CI runs as root, so a chmod 000 fixture never fails to open; this fake is how tests reach
// EACCES, EINVAL (a down interface's carrier), ENODEV (a device vanishing mid-read), EAGAIN.
// Paths are absolute, as FileSystem receives them (SysFs has already joined the root).

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "collectors/sys/filesystem.h"

namespace fabricwatch::testing {

class FakeFileSystem final : public sys::FileSystem {
 public:
  enum class Op { kOpen, kRead, kListDir, kReadLink };

  // Every `op` on `path` fails with `err` from now on (until Clear).
  void Inject(Op op, const std::string& path, int err);
  // Fail the next `count` reads of `path` only, then behave normally.
  void InjectReads(const std::string& path, int err, int count);
  void Clear();
  // Replaces the content a read of `path` returns (the file need not exist on disk).
  void SetContent(const std::string& path, std::string content);

  int open_calls() const;
  int read_calls() const;

  Result<sys::UniqueFd> Open(const std::string& path) const override;
  Result<size_t> ReadAt0(const sys::UniqueFd& fd, std::span<char> buf,
                         const std::string& path) const override;
  Result<std::vector<std::string>> ListDir(const std::string& path) const override;
  Result<std::string> ReadLink(const std::string& path) const override;

 private:
  std::optional<int> Injected(Op op, const std::string& path) const;

  sys::RealFileSystem real_;
  mutable std::mutex mutex_;
  std::map<std::pair<Op, std::string>, int> errors_;
  mutable std::map<std::string, std::pair<int, int>> read_budget_;  // path -> (errno, count)
  std::map<std::string, std::string> contents_;
  mutable int open_calls_ = 0;
  mutable int read_calls_ = 0;
};

}  // namespace fabricwatch::testing
