#include "collectors/sys/filesystem.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string_view>

#include "collectors/sys/bounded_file.h"

namespace fabricwatch::sys {
Result<UniqueFd> RealFileSystem::Open(const std::string& path) const {
  // O_NONBLOCK: opening a FIFO for reading waits for a writer, and a device node may wait for
  // its hardware (open(2), fifo(7)); a collector must never block there. It changes nothing
  // for the regular files of sysfs, procfs and a replay root (regular files never block).
  // O_NOATIME: reading a counter must not dirty its inode. sysfs keeps no access times, but a
  // replay root on a disk file system would otherwise have every sample update them
  // (open(2): allowed to the file's owner or with CAP_FOWNER; anyone else gets EPERM and
  // opens it plainly).
  constexpr int kFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
  UniqueFd fd(::open(path.c_str(), kFlags | O_NOATIME));
  if (!fd && errno == EPERM) fd.Reset(::open(path.c_str(), kFlags));
  if (!fd) return Error(FromErrno(errno, "open " + path));
  // Every file read through here is a regular file (sysfs attributes, proc files, replay
  // files). Anything else (a FIFO, a socket, a device node in place of a counter) would block
  // or misbehave on read: refused, naming the path.
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error(FromErrno(errno, "stat " + path));
  if (!S_ISREG(st.st_mode)) {
    return Error(StatusCode::kInvalidArgument, "open " + path + ": not a regular file (" +
                                                   std::string(FileTypeName(st.st_mode)) + ")");
  }
  return fd;
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

Status FileSystem::ListDirInto(const std::string& path, std::vector<std::string>& names) const {
  auto listed = ListDir(path);
  if (!listed) return listed.error();
  names = std::move(*listed);
  return Status::Ok();
}

Result<std::vector<std::string>> RealFileSystem::ListDir(const std::string& path) const {
  std::vector<std::string> names;
  if (Status status = ListDirInto(path, names); !status.ok()) return Error(std::move(status));
  return names;
}

Status RealFileSystem::ListDirInto(const std::string& path, std::vector<std::string>& names) const {
  UniqueFd dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return FromErrno(errno, "opendir " + path);
  size_t count = 0;
  // struct linux_dirent64 records (getdents(2)); a big directory takes several calls.
  alignas(struct dirent64) char buffer[8192];
  for (;;) {
    ssize_t n = ::getdents64(dir.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return FromErrno(errno, "readdir " + path);
    if (n == 0) break;
    for (ssize_t offset = 0; offset < n;) {
      const auto* entry = reinterpret_cast<const struct dirent64*>(buffer + offset);
      offset += entry->d_reclen;
      const std::string_view name(entry->d_name);
      if (name == "." || name == "..") continue;
      if (count < names.size()) {
        names[count].assign(name);
      } else {
        names.emplace_back(name);
      }
      ++count;
    }
  }
  names.resize(count);
  return Status::Ok();
}

Result<std::string> RealFileSystem::ReadLink(const std::string& path) const {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf));
  if (n < 0) return Error(FromErrno(errno, "readlink " + path));
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace fabricwatch::sys
