#pragma once
// Where the kmsg collector is in the kernel log: the sequence number of the last record it read
// (docs/design.md §5.2). The collector sets it; the detector engine keeps it in the state file
// (same boot only: sequence numbers restart at boot) and restores it before collection starts,
// so a restarted agent reads on from there: nothing replayed as new, nothing missed.
//
// Thread-safety: all methods may be called concurrently (collector thread, engine thread).

#include <atomic>
#include <cstdint>
#include <optional>

namespace fabricwatch::sys {

class KmsgCursor {
 public:
  void Set(uint64_t sequence) {
    sequence_.store(sequence, std::memory_order_relaxed);
    valid_.store(true, std::memory_order_release);
  }
  std::optional<uint64_t> Get() const {
    if (!valid_.load(std::memory_order_acquire)) return std::nullopt;
    return sequence_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> sequence_{0};
  std::atomic<bool> valid_{false};
};

}  // namespace fabricwatch::sys
