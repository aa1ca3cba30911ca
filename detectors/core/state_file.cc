#include "detectors/core/state_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <filesystem>

#include "collectors/core/value_parse.h"
#include "collectors/sys/unique_fd.h"
#include "detectors/core/hysteresis.h"

namespace fabricwatch::detect {
namespace {

constexpr std::string_view kFormat = "fabricwatch-state";
constexpr int kVersion = 1;
// A state file is a few kB per port; anything much larger is not ours.
constexpr size_t kMaxBytes = 64 << 20;

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

Result<StateFileLock> StateFileLock::Acquire(const std::string& state_path) {
  const std::string path = state_path + ".lock";
  sys::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return Error(FromErrno(errno, "open state lock file " + path));
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
  return StateFileLock(path, std::move(fd));
}

Result<SavedState> StateFile::Load() const {
  sys::UniqueFd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    const int err = errno;
    if (err == ENOENT) {
      return Error(Status(StatusCode::kNotFound, "state file " + path_ + " does not exist", err));
    }
    return Error(FromErrno(err, "open state file " + path_));
  }
  std::string text;
  std::array<char, 65536> buf;
  while (true) {
    const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error(FromErrno(errno, "read state file " + path_));
    }
    if (n == 0) break;
    text.append(buf.data(), static_cast<size_t>(n));
    if (text.size() > kMaxBytes) {
      return Error(StatusCode::kInvalidArgument,
                   "state file " + path_ + ": larger than " + std::to_string(kMaxBytes) + " bytes");
    }
  }
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Error(StatusCode::kInvalidArgument,
                 "state file " + path_ + ": not valid JSON (" + std::to_string(text.size()) +
                     " bytes, starts " + QuoteForMessage(text, 32) + ")");
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
  const nlohmann::json doc = {{"format", kFormat},         {"version", kVersion},
                              {"boot_id", boot_id_},       {"saved", EpochSeconds(saved)},
                              {"detectors", detectors},    {"anomalies", anomalies}};
  // dump() with replacement: a label value with invalid UTF-8 must not make the save throw.
  const std::string text = doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";

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
