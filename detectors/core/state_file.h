#pragma once
// The state file (--state.file): what must survive a restart of the agent — detector state
// (flap penalties and histories, optics baselines keyed by module serial, storm hysteresis) and
// the active anomalies with their start times (docs/detection.md §0.2: persist across restarts,
// keyed by boot ID).
//
// Format: one JSON document
//   {"format": "fabricwatch-state", "version": 1, "boot_id": "...", "saved": <unix s>,
//    "detectors": {"<name>": <Detector::SaveState()>, ...}, "anomalies": [...]}
// Written atomically: a temporary file in the same directory, fsync, rename, fsync of the
// directory — a crash leaves the old file or the new one, never a torn one.
// Boot ID: detector state is hardware history and is restored whatever the boot; the active
// anomalies are restored only on the same boot (after a reboot the detectors re-detect from
// fresh counters, §0.2 "on host reboot clear state and re-baseline"). Raw counter values are
// never persisted: CounterTracker re-baselines on its first sample.
// A missing file is normal (first start); an unreadable or corrupt one is reported and ignored.
// Neither is ever fatal — the caller logs and counts.
//
// The path is an operator's flag and the agent often runs as root, so it is never trusted
// (issue 39: --state.file=/dev/zero turned the host's /dev/zero into a JSON file):
//   - a path that exists and is not a regular file (a device, FIFO, socket, directory or a
//     symlink) is refused at start (CheckStatePath, exit 1), never read, locked or replaced;
//   - the file and its lock are opened O_NOFOLLOW | O_NONBLOCK and checked with fstat, so a FIFO
//     never blocks and a link is never followed; a file owned by another user is not trusted
//     (not loaded, not replaced);
//   - at most kMaxStateBytes (a real file is a few kB; 4 MiB parses in well under a second);
//   - errors never quote the file's bytes (a link to /etc/shadow must not reach the log);
//   - temporaries a killed save left behind (".<name>.XXXXXX" beside it, ours) are removed once
//     the lock is held.

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/unique_fd.h"
#include "detectors/core/detector.h"

namespace fabricwatch::detect {

inline constexpr std::string_view kBootIdPath = "/proc/sys/kernel/random/boot_id";

// The kernel's boot ID (a UUID), through the filesystem seam so tests inject it.
Result<std::string> ReadBootId(const sys::FileSystem& filesystem,
                               const std::string& path = std::string(kBootIdPath));

inline constexpr size_t kMaxStateBytes = 4 << 20;

// Ok when `state_path` and its lock file are absent or regular files of this user (not links)
// and its directory exists; otherwise kInvalidArgument or kPermissionDenied saying what is there.
Status CheckStatePath(const std::string& state_path);

struct SavedState {
  std::string boot_id;
  TimePoint saved;
  nlohmann::json detectors = nlohmann::json::object();
  nlohmann::json anomalies = nlohmann::json::array();
};

// The lock that keeps two agents off one state file (issue 19): flock(LOCK_EX | LOCK_NB) on
// "<state file>.lock" beside it, held for the agent's whole life (a SIGHUP reload keeps it). The
// holder writes its pid into the lock file, so a second agent can name it. A separate file,
// not the state file itself: Save() replaces the state file by rename, which would orphan a
// lock taken on the old inode. The kernel drops the lock when the holder dies, however it dies.
class StateFileLock {
 public:
  // kUnavailable (the message names the lock file and the holder's pid) when another process
  // holds it; other codes when the lock file cannot be opened.
  static Result<StateFileLock> Acquire(const std::string& state_path);
  const std::string& path() const { return path_; }
  // The temporary files removed at Acquire() (a save killed midway leaves one).
  size_t stale_temporaries_removed() const { return stale_removed_; }

 private:
  StateFileLock(std::string path, sys::UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}
  std::string path_;
  sys::UniqueFd fd_;
  size_t stale_removed_ = 0;
};

class StateFile {
 public:
  StateFile(std::string path, std::string boot_id)
      : path_(std::move(path)), boot_id_(std::move(boot_id)) {}

  // kNotFound: no file (first start). kInvalidArgument: corrupt (not JSON, wrong format or
  // version, wrong shapes). Other codes: the file could not be read.
  Result<SavedState> Load() const;
  // Atomic replace; `saved` is written as the save time.
  Status Save(const nlohmann::json& detectors, const nlohmann::json& anomalies,
              TimePoint saved) const;

  const std::string& path() const { return path_; }
  const std::string& boot_id() const { return boot_id_; }

 private:
  std::string path_;
  std::string boot_id_;
};

}  // namespace fabricwatch::detect
