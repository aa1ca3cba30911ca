#pragma once
// TempDir: a directory of one test, created empty and removed with everything in it when the
// object goes. On tmpfs (/dev/shm) when there is one: the simulator rewrites its whole tree every
// step, several times faster there than on a disk file system.

#include <unistd.h>

#include <filesystem>
#include <fstream>
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

  // Writes `text` to <dir>/<relative>, creating the directories above it (a sysfs tree's file).
  void Write(const std::string& relative, const std::string& text) const {
    const std::filesystem::path file = path_ / relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }
  // The symbolic link <dir>/<relative> -> target, directories created; kept if it exists.
  void Link(const std::string& relative, const std::string& target) const {
    const std::filesystem::path link = path_ / relative;
    std::filesystem::create_directories(link.parent_path());
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(link, ec))) {
      std::filesystem::create_directory_symlink(target, link);
    }
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

}  // namespace fabricwatch::testing
