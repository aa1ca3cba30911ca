#include "collectors/sys/bounded_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "collectors/sys/unique_fd.h"

namespace fabricwatch::sys {
namespace {

std::string Prefix(const std::string& path, const BoundedFileOptions& options) {
  return std::string(options.kind) + " " + path;
}

Status NotRegular(const std::string& path, const BoundedFileOptions& options, mode_t mode) {
  return Status(
      StatusCode::kInvalidArgument,
      Prefix(path, options) + ": is " + std::string(FileTypeName(mode)) + ", not a regular file");
}

Status TooLarge(const std::string& path, const BoundedFileOptions& options) {
  return Status(StatusCode::kInvalidArgument, Prefix(path, options) + ": larger than " +
                                                  std::to_string(options.max_bytes) +
                                                  " bytes, more than such a file can be");
}

}  // namespace

std::string_view FileTypeName(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

Result<BoundedFile> ReadBoundedFile(const std::string& path, const BoundedFileOptions& options) {
  // The type is checked before the open as well: opening some devices acts (a watchdog arms, a
  // tape rewinds). The fstat() after the open is what holds against a swap in between.
  if (Status s = CheckRegularOrAbsent(path, options); !s.ok()) return Error(s);
  int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  if (!options.follow_symlinks) flags |= O_NOFOLLOW;
  UniqueFd fd(::open(path.c_str(), flags));
  if (!fd) {
    const int err = errno;
    if (err == ENOENT) {
      return Error(Status(StatusCode::kNotFound, Prefix(path, options) + ": does not exist", err));
    }
    if (err == ELOOP && !options.follow_symlinks) {
      return Error(Status(StatusCode::kInvalidArgument,
                          Prefix(path, options) + ": is a symbolic link, which is not followed",
                          err));
    }
    return Error(FromErrno(err, "open " + Prefix(path, options)));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error(FromErrno(errno, "stat " + Prefix(path, options)));
  if (!S_ISREG(st.st_mode)) return Error(NotRegular(path, options, st.st_mode));
  if (static_cast<uint64_t>(st.st_size) > options.max_bytes) {
    return Error(TooLarge(path, options));
  }
  BoundedFile file{.text = {}, .owner = st.st_uid, .mode = st.st_mode};
  file.text.reserve(static_cast<size_t>(st.st_size));
  std::array<char, 16384> buf;
  while (true) {
    const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error(FromErrno(errno, "read " + Prefix(path, options)));
    }
    if (n == 0) break;
    if (file.text.size() + static_cast<size_t>(n) > options.max_bytes) {
      return Error(TooLarge(path, options));  // it grew while read
    }
    file.text.append(buf.data(), static_cast<size_t>(n));
  }
  return file;
}

Status CheckRegularOrAbsent(const std::string& path, const BoundedFileOptions& options) {
  struct stat st {};
  const int rc = options.follow_symlinks ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st);
  if (rc != 0) {
    const int err = errno;
    if (err == ENOENT) return Status::Ok();
    return FromErrno(err, "stat " + Prefix(path, options));
  }
  if (S_ISLNK(st.st_mode)) {
    return Status(StatusCode::kInvalidArgument,
                  Prefix(path, options) + ": is a symbolic link, which is not followed");
  }
  if (!S_ISREG(st.st_mode)) return NotRegular(path, options, st.st_mode);
  return Status::Ok();
}

}  // namespace fabricwatch::sys
