#include "detectors/core/state_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <filesystem>

#include "base/value_parse.h"
#include "collectors/sys/bounded_file.h"
#include "collectors/sys/unique_fd.h"
#include "detectors/core/hysteresis.h"

namespace fabricwatch::detect {
namespace {

constexpr std::string_view kFormat = "fabricwatch-state";
constexpr int kVersion = 1;
constexpr sys::BoundedFileOptions kStateRead{
    .kind = "state file", .max_bytes = kMaxStateBytes, .follow_symlinks = false};
constexpr sys::BoundedFileOptions kLockCheck{
    .kind = "state lock file", .max_bytes = 4096, .follow_symlinks = false};

Status NotOurs(std::string_view kind, const std::string& path, uid_t owner) {
  return Status(StatusCode::kPermissionDenied,
                std::string(kind) + " " + path + ": owned by uid " + std::to_string(owner) +
                    ", not by this agent's uid " + std::to_string(::geteuid()) +
                    "; not trusted (remove it, or give it to the agent's user)");
}

// Ok when nothing is at `path`, or a regular file (not a link) of this user.
Status CheckOwnRegularOrAbsent(const std::string& path, const sys::BoundedFileOptions& options) {
  if (Status s = sys::CheckRegularOrAbsent(path, options); !s.ok()) return s;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && st.st_uid != ::geteuid()) {
    return NotOurs(options.kind, path, st.st_uid);
  }
  return Status::Ok();
}

// ".<name>.XXXXXX": the temporary files Save() makes with mkostemp beside the state file.
bool IsOurTemporary(const std::string& entry, const std::string& state_name) {
  const std::string prefix = "." + state_name + ".";
  return entry.size() == prefix.size() + 6 && entry.starts_with(prefix);
}

size_t RemoveStaleTemporaries(const std::string& state_path) {
  const std::filesystem::path target(state_path);
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  size_t removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!IsOurTemporary(name, target.filename().string())) continue;
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != ::geteuid()) {
      continue;
    }
    if (::unlink(entry.path().c_str()) == 0) ++removed;
  }
  return removed;
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return FromErrno(errno, "write " + path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> ReadBootId(const sys::FileSystem& filesystem, const std::string& path) {
  auto fd = filesystem.Open(path);
  if (!fd) return Error(fd.error());
  std::array<char, 128> buf{};
  auto n = filesystem.ReadAt0(*fd, buf, path);
  if (!n) return Error(n.error());
  std::string_view id = TrimSpace(std::string_view(buf.data(), *n));
  if (id.empty()) return Error(StatusCode::kInvalidArgument, path + ": empty boot id");
  return std::string(id);
}

Status CheckStatePath(const std::string& state_path) {
  if (Status s = CheckOwnRegularOrAbsent(state_path, kStateRead); !s.ok()) return s;
  if (Status s = CheckOwnRegularOrAbsent(state_path + ".lock", kLockCheck); !s.ok()) return s;
  std::filesystem::path dir = std::filesystem::path(state_path).parent_path();
  if (dir.empty()) dir = ".";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return FromErrno(errno, "state file " + state_path + ": directory " + dir.string());
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status(StatusCode::kInvalidArgument,
                  "state file " + state_path + ": " + dir.string() + " is not a directory");
  }
  return Status::Ok();
}

Result<StateFileLock> StateFileLock::Acquire(const std::string& state_path) {
  const std::string path = state_path + ".lock";
  if (Status s = CheckOwnRegularOrAbsent(path, kLockCheck); !s.ok()) return Error(s);
  sys::UniqueFd fd(
      ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600));
  if (!fd) return Error(FromErrno(errno, "open state lock file " + path));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error(FromErrno(errno, "stat " + path));
  if (!S_ISREG(st.st_mode)) {
    return Error(StatusCode::kInvalidArgument, "state lock file " + path + ": is " +
                                                   std::string(sys::FileTypeName(st.st_mode)) +
                                                   ", not a regular file");
  }
  if (st.st_uid != ::geteuid()) return Error(NotOurs("state lock file", path, st.st_uid));
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err != EWOULDBLOCK) return Error(FromErrno(err, "lock " + path));
    std::array<char, 32> buf{};
    const ssize_t n = ::pread(fd.get(), buf.data(), buf.size() - 1, 0);
    const std::string holder(
        TrimSpace(std::string_view(buf.data(), n > 0 ? static_cast<size_t>(n) : 0)));
    return Error(Status(StatusCode::kUnavailable,
                        "state file " + state_path + " is in use by another fabricwatch (pid " +
                            (holder.empty() ? std::string("unknown") : holder) +
                            " holds the lock " + path + ")",
                        err));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd.get(), 0) != 0 || ::pwrite(fd.get(), pid.data(), pid.size(), 0) < 0) {
    return Error(FromErrno(errno, "write the pid into " + path));
  }
  StateFileLock lock(path, std::move(fd));
  // Only the lock holder saves, so a temporary file now is a save that was killed midway.
  lock.stale_removed_ = RemoveStaleTemporaries(state_path);
  return lock;
}

Result<SavedState> StateFile::Load() const {
  auto file = sys::ReadBoundedFile(path_, kStateRead);
  if (!file) return Error(file.error());
  if (file->owner != ::geteuid()) return Error(NotOurs("state file", path_, file->owner));
  const std::string& text = file->text;
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    // No bytes of it in the message: the path may name a file that is not ours to show.
    return Error(StatusCode::kInvalidArgument, "state file " + path_ + ": not valid JSON (" +
                                                   std::to_string(text.size()) + " bytes)");
  }
  try {
    if (!doc.is_object() || doc.value("format", "") != kFormat) {
      return Error(StatusCode::kInvalidArgument,
                   "state file " + path_ + ": not a fabricwatch state file");
    }
    if (doc.at("version").get<int>() != kVersion) {
      return Error(StatusCode::kInvalidArgument,
                   "state file " + path_ + ": version " + doc.at("version").dump() +
                       " is not the supported " + std::to_string(kVersion));
    }
    SavedState state;
    state.boot_id = doc.at("boot_id").get<std::string>();
    // Only for the log line; an impossible save time (NaN, inf, beyond 2200) reads as 0.
    const double saved = doc.at("saved").get<double>();
    state.saved =
        std::isfinite(saved) && saved >= 0 && saved < 7.2e9 ? FromEpochSeconds(saved) : TimePoint{};
    state.detectors = doc.at("detectors");
    state.anomalies = doc.at("anomalies");
    if (!state.detectors.is_object() || !state.anomalies.is_array()) {
      return Error(StatusCode::kInvalidArgument,
                   "state file " + path_ + ": detectors must be an object, anomalies an array");
    }
    return state;
  } catch (const nlohmann::json::exception& e) {
    return Error(StatusCode::kInvalidArgument, "state file " + path_ + ": " + e.what());
  }
}

Status StateFile::Save(const nlohmann::json& detectors, const nlohmann::json& anomalies,
                       TimePoint saved) const {
  const nlohmann::json doc = {{"format", kFormat},      {"version", kVersion},
                              {"boot_id", boot_id_},    {"saved", EpochSeconds(saved)},
                              {"detectors", detectors}, {"anomalies", anomalies}};
  // dump() with replacement: a label value with invalid UTF-8 must not make the save throw.
  const std::string text = doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";

  // Never replace what is not a regular file of ours (a device, a FIFO, a link, another user's
  // file): rename() would put a JSON file where /dev/zero was.
  if (Status s = CheckOwnRegularOrAbsent(path_, kStateRead); !s.ok()) {
    return s.WithContext("state not saved");
  }
  const std::filesystem::path target(path_);
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  std::string temp = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
  sys::UniqueFd fd(::mkostemp(temp.data(), O_CLOEXEC));
  if (!fd) return FromErrno(errno, "create temporary state file " + temp);
  auto discard = [&](Status status) {
    ::unlink(temp.c_str());
    return status;
  };
  if (::fchmod(fd.get(), 0600) != 0) return discard(FromErrno(errno, "chmod " + temp));
  if (Status s = WriteAll(fd.get(), text, temp); !s.ok()) return discard(s);
  if (::fsync(fd.get()) != 0) return discard(FromErrno(errno, "fsync " + temp));
  fd.Reset();
  if (::rename(temp.c_str(), path_.c_str()) != 0) {
    return discard(FromErrno(errno, "rename " + temp + " to " + path_));
  }
  // The rename is durable only once the directory is synced.
  sys::UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd) ::fsync(dir_fd.get());
  return Status::Ok();
}

}  // namespace fabricwatch::detect
