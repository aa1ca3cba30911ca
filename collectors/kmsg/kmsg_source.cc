#include "collectors/kmsg/kmsg_source.h"

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "collectors/kmsg/kmsg_parse.h"
#include "collectors/sys/unique_fd.h"

namespace fabricwatch::kmsg {
namespace {

Status Errno(std::string_view what, const std::string& path, int error) {
  const StatusCode code = error == ENOENT                     ? StatusCode::kNotFound
                          : error == EACCES || error == EPERM ? StatusCode::kPermissionDenied
                                                              : StatusCode::kUnavailable;
  return Status(code, std::string(what) + " " + path + ": " + std::strerror(error));
}

// The kernel's log: one read() returns one whole record (devkmsg_read), at most 8 KB with the
// continuation lines (kernel/printk/printk.c CONSOLE_EXT_LOG_MAX).
class DeviceKmsgSource final : public KmsgSource {
 public:
  DeviceKmsgSource(std::string path, bool from_oldest)
      : path_(std::move(path)), from_oldest_(from_oldest) {}

  Status Open() override {
    if (fd_.valid()) return Status::Ok();
    sys::UniqueFd fd(::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) return Errno("cannot open", path_, errno);
    // Without a saved position, start after the newest record: what is already in the ring
    // happened before the agent, and replaying it would raise old faults as new.
    if (!from_oldest_ && ::lseek(fd.get(), 0, SEEK_END) < 0) {
      return Errno("cannot seek to the end of", path_, errno);
    }
    fd_ = std::move(fd);
    return Status::Ok();
  }

  Status Read(size_t max_records, std::vector<std::string>& records,
              KmsgReadStats& stats) override {
    records.clear();
    while (records.size() < max_records) {
      const ssize_t n = ::read(fd_.get(), buffer_, sizeof(buffer_));
      if (n > 0) {
        records.emplace_back(buffer_, static_cast<size_t>(n));
        continue;
      }
      if (n == 0 || errno == EAGAIN) break;
      if (errno == EINTR) continue;
      // Overwritten records: the position moved to the oldest one; the sequence jump says how
      // many were lost.
      if (errno == EPIPE) {
        ++stats.overruns;
        continue;
      }
      return Errno("cannot read", path_, errno);
    }
    backlog_ = records.size() >= max_records;
    return Status::Ok();
  }

  int ReadyFd() const override { return fd_.get(); }
  bool backlog() const override { return backlog_; }
  bool replay() const override { return false; }
  const std::string& path() const override { return path_; }

 private:
  std::string path_;
  bool from_oldest_;
  bool backlog_ = false;
  sys::UniqueFd fd_;
  char buffer_[kmsg::kMaxKmsgRecordBytes];
};

// The inotify(7) watch of a replay file: what its writer does to it (IN_MODIFY also for a
// truncation, IN_CLOSE_WRITE), its rotation (IN_MOVE_SELF, IN_DELETE_SELF, IN_ATTRIB for the
// link count of a file replaced by a rename over it), and a new file at its path (the directory's
// IN_CREATE and IN_MOVED_TO: a file moved away leaves nothing to watch until one comes back).
// Only wakes: what changed is read from the file itself (ReplayKmsgSource::CheckRotation).
class ReplayWatch {
 public:
  // Watches `path` (again: after a rotation the path names another inode).
  Status Watch(const std::string& path) {
    if (!fd_.valid()) {
      fd_ = sys::UniqueFd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
      if (!fd_.valid()) return Errno("cannot make an inotify instance for", path, errno);
    }
    if (dir_wd_ < 0) {
      std::string dir = std::filesystem::path(path).parent_path().string();
      if (dir.empty()) dir = ".";
      dir_wd_ = ::inotify_add_watch(fd_.get(), dir.c_str(), IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
      if (dir_wd_ < 0) return Fail(Errno("cannot watch the directory of", path, errno));
    }
    const int wd =
        ::inotify_add_watch(fd_.get(), path.c_str(),
                            IN_MODIFY | IN_CLOSE_WRITE | IN_MOVE_SELF | IN_DELETE_SELF | IN_ATTRIB);
    if (wd < 0) return Fail(Errno("cannot watch", path, errno));
    // The old inode's watch, if it is another (removed by the kernel already when it was freed).
    if (file_wd_ >= 0 && file_wd_ != wd) ::inotify_rm_watch(fd_.get(), file_wd_);
    file_wd_ = wd;
    return Status::Ok();
  }
  int fd() const { return fd_.get(); }
  // Reads the queued events: only their arrival mattered.
  void Drain() {
    alignas(inotify_event) char events[4096];
    while (fd_.valid() && ::read(fd_.get(), events, sizeof(events)) > 0) {
    }
  }

 private:
  Status Fail(Status status) {
    fd_.Reset();  // no half watch: the collector reads on its interval instead
    dir_wd_ = file_wd_ = -1;
    return status;
  }
  sys::UniqueFd fd_;
  int dir_wd_ = -1;
  int file_wd_ = -1;
};

// A file of records that a writer appends to (the simulator, a capture being copied). It may be
// truncated or replaced (rotation) while read: then it is read again from its start, and the
// record cut in half is counted.
class ReplayKmsgSource final : public KmsgSource {
 public:
  explicit ReplayKmsgSource(std::string path) : path_(std::move(path)) {}

  Status Open() override {
    if (fd_.valid()) return Status::Ok();
    sys::UniqueFd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return Errno("cannot open", path_, errno);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return Errno("cannot stat", path_, errno);
    inode_ = st.st_ino;
    offset_ = 0;
    fd_ = std::move(fd);
    watch_status_ = watch_.Watch(path_);
    return Status::Ok();
  }

  Status Read(size_t max_records, std::vector<std::string>& records,
              KmsgReadStats& stats) override {
    records.clear();
    // First: a write that lands while the file is read wakes the next wait.
    watch_.Drain();
    if (Status s = CheckRotation(stats); !s.ok()) return s;
    const size_t orphans = splitter_.orphans(), dropped = splitter_.dropped();
    // What is still buffered counts against the budget: a backlog larger than max_records per
    // collection must not grow the buffer without bound.
    size_t budget = kMaxBytesPerRead - std::min(kMaxBytesPerRead, splitter_.buffered());
    while (budget > 0) {
      const ssize_t n = ::pread(fd_.get(), chunk_, sizeof(chunk_), offset_);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Errno("cannot read", path_, errno);
      if (n == 0) break;
      offset_ += n;
      budget -= std::min(budget, static_cast<size_t>(n));
      RememberTail(std::string_view(chunk_, static_cast<size_t>(n)));
      splitter_.Feed(std::string_view(chunk_, static_cast<size_t>(n)));
    }
    if (budget > 0) splitter_.MarkInputEnd();
    std::string record;
    while (records.size() < max_records && splitter_.Next(record)) records.push_back(record);
    backlog_ = budget == 0 || records.size() >= max_records || (budget > 0 && PathReplaced());
    stats.orphans += splitter_.orphans() - orphans;
    stats.too_long += (splitter_.dropped() - dropped) - (splitter_.orphans() - orphans);
    return Status::Ok();
  }

  int ReadyFd() const override { return watch_.fd(); }
  bool backlog() const override { return backlog_; }
  Status ReadyStatus() const override { return watch_status_; }
  bool replay() const override { return true; }
  const std::string& path() const override { return path_; }

 private:
  // The path names another file than the one open: rotated while records were left in the old
  // one, which CheckRotation reads to its end first. The new file's writes wake nobody until the
  // watch moves to it at the next Read(), so that one is due at once (the backlog), not at the
  // fallback a minute later.
  bool PathReplaced() const {
    struct stat path_st {};
    return ::stat(path_.c_str(), &path_st) == 0 && path_st.st_ino != inode_;
  }

  // A file that shrank (truncated) or whose path now names another file (replaced): start over.
  // A replaced file is first read to its end through the old descriptor (the writer may have
  // appended before rotating).
  Status CheckRotation(KmsgReadStats& stats) {
    struct stat open_st {
    }, path_st{};
    if (::fstat(fd_.get(), &open_st) != 0) return Errno("cannot stat", path_, errno);
    const bool truncated = open_st.st_size < offset_ || !TailUnchanged();
    const bool replaced = ::stat(path_.c_str(), &path_st) == 0 && path_st.st_ino != inode_ &&
                          open_st.st_size == offset_;
    if (!truncated && !replaced) return Status::Ok();
    if (splitter_.buffered() > 0) ++stats.rotated;
    splitter_ = kmsg::KmsgSplitter();
    stats.restarted = true;
    tail_.clear();
    if (replaced) {
      fd_.Reset();
      Status opened = Open();
      // Closing the old file and moving the watch queue IN_DELETE_SELF and IN_IGNORED: ours, not
      // the writer's, and the new file is read from its start right after.
      watch_.Drain();
      return opened;
    }
    offset_ = 0;
    return Status::Ok();
  }

  // The last bytes read, and whether the file still holds them: a file truncated and written
  // again past the old length (copytruncate and a busy writer) is caught too.
  void RememberTail(std::string_view read) {
    if (read.size() >= kTailBytes) {
      tail_.assign(read.substr(read.size() - kTailBytes));
    } else {
      tail_.append(read);
      if (tail_.size() > kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
    }
  }
  bool TailUnchanged() {
    if (tail_.empty() || offset_ < static_cast<off_t>(tail_.size())) return true;
    char now[kTailBytes];
    const ssize_t n = ::pread(fd_.get(), now, tail_.size(), offset_ - tail_.size());
    return n == static_cast<ssize_t>(tail_.size()) && std::string_view(now, n) == tail_;
  }

  // One collection reads at most this much; the rest waits for the next (a huge file, or a
  // flood, costs bounded memory and time per collection).
  static constexpr size_t kMaxBytesPerRead = 8 << 20;
  std::string path_;
  sys::UniqueFd fd_;
  ReplayWatch watch_;
  Status watch_status_;
  bool backlog_ = false;
  ino_t inode_ = 0;
  off_t offset_ = 0;
  static constexpr size_t kTailBytes = 64;
  std::string tail_;
  kmsg::KmsgSplitter splitter_;
  char chunk_[64 << 10];
};

}  // namespace

std::unique_ptr<KmsgSource> NewDeviceKmsgSource(std::string path, bool from_oldest) {
  return std::make_unique<DeviceKmsgSource>(std::move(path), from_oldest);
}

std::unique_ptr<KmsgSource> NewReplayKmsgSource(std::string path) {
  return std::make_unique<ReplayKmsgSource>(std::move(path));
}

std::unique_ptr<KmsgSource> NewKmsgSource(const std::string& path, bool from_oldest) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) {
    return NewDeviceKmsgSource(path, from_oldest);
  }
  return NewReplayKmsgSource(path);
}

}  // namespace fabricwatch::kmsg
