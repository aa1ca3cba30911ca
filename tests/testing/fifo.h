#pragma once
// FIFOs in place of the regular files a collector reads (issue 19: opening one for reading waits
// for a writer, fifo(7), and hung the collector forever).
//
//   MakeFifo(path);                       // mkfifo, parents created
//   BlockedOpenGuard guard({path});       // rescues a test whose open blocks
//   ... read path through the code under test: it must answer with an error ...
//   EXPECT_FALSE(guard.fired());
//
// The guard keeps a test from hanging if an open ever blocks again: after `patience` it opens
// the write end of every FIFO (O_RDWR never blocks on Linux, fifo(7)) and keeps it open, which
// lets a blocked open return; the pread that follows fails with ESPIPE at once. The test then
// fails on fired() instead of hanging until ctest's timeout.

#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collectors/sys/unique_fd.h"

namespace fabricwatch::testing {

// Creates a FIFO at `path` (replacing a file there). False on failure.
inline bool MakeFifo(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::filesystem::remove(path, ec);
  return ::mkfifo(path.c_str(), 0644) == 0;
}

class BlockedOpenGuard {
 public:
  explicit BlockedOpenGuard(std::vector<std::string> fifos,
                            std::chrono::seconds patience = std::chrono::seconds(10))
      : fifos_(std::move(fifos)), thread_([this, patience] { Watch(patience); }) {}
  ~BlockedOpenGuard() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  BlockedOpenGuard(const BlockedOpenGuard&) = delete;
  BlockedOpenGuard& operator=(const BlockedOpenGuard&) = delete;

  // Whether an open had to be rescued (or the test ran past `patience` for another reason).
  bool fired() const {
    std::lock_guard lock(mutex_);
    return fired_;
  }

 private:
  void Watch(std::chrono::seconds patience) {
    std::unique_lock lock(mutex_);
    if (wake_.wait_for(lock, patience, [this] { return done_; })) return;
    fired_ = true;
    for (const std::string& fifo : fifos_) {
      writers_.emplace_back(::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
    }
    wake_.wait(lock, [this] { return done_; });
  }

  const std::vector<std::string> fifos_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  bool fired_ = false;
  std::vector<sys::UniqueFd> writers_;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace fabricwatch::testing
