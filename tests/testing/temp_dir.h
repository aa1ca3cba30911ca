#pragma once
// TempDir: a directory of one test, created empty and removed with everything in it when the
// object goes. On tmpfs (/dev/shm) when there is one: the simulator rewrites its whole tree every
// step, several times faster there than on a disk file system.

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace fabricwatch::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "fw-test") {
    std::error_code ec;
    const std::filesystem::path base = std::filesystem::is_directory("/dev/shm", ec)
                                           ? std::filesystem::path("/dev/shm")
                                           : std::filesystem::temp_directory_path();
    path_ = base / (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::remove_all(path_, ec);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string str() const { return path_.string(); }
  std::string Path(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

}  // namespace fabricwatch::testing
