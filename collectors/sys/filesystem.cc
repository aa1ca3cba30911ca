#include "collectors/sys/filesystem.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

namespace fabricwatch::sys {

Result<UniqueFd> RealFileSystem::Open(const std::string& path) const {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error(FromErrno(errno, "open " + path));
  return UniqueFd(fd);
}

Result<size_t> RealFileSystem::ReadAt0(const UniqueFd& fd, std::span<char> buf,
                                       const std::string& path) const {
  // A single read: some hwmon/sysfs drivers return EAGAIN forever to a polling reader, and a
  // sysfs attribute is generated whole on each read at offset 0 (procfs sysreadfile.go).
  ssize_t n;
  do {
    n = ::pread(fd.get(), buf.data(), buf.size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Error(FromErrno(errno, "read " + path));
  return static_cast<size_t>(n);
}

Result<std::vector<std::string>> RealFileSystem::ListDir(const std::string& path) const {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(path.c_str()), &::closedir);
  if (!dir) return Error(FromErrno(errno, "opendir " + path));
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = ::readdir(dir.get())) {
    std::string_view name(entry->d_name);
    if (name != "." && name != "..") names.emplace_back(name);
  }
  if (errno != 0) return Error(FromErrno(errno, "readdir " + path));
  return names;
}

Result<std::string> RealFileSystem::ReadLink(const std::string& path) const {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf));
  if (n < 0) return Error(FromErrno(errno, "readlink " + path));
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace fabricwatch::sys
