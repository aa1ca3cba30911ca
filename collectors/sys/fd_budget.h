#pragma once
// FdBudget: how many files the collectors may keep open between samples, all of them together.
//
// Counter files are kept open and re-read with pread (docs/design.md §8). Under a low open-file
// limit (`prlimit --nofile=256`) they would otherwise take every descriptor, and the HTTP server
// and the state file would find none. The agent sizes one budget from the soft limit minus a
// reserve (exporter/file_limit.h) and hands it to SysFs; every AttributeFile takes a slot before
// it keeps its fd and gives it back when it closes. A file that finds the budget spent is read
// open/read/close instead (one more syscall pair per sample, nothing lost), and takes a slot
// again as soon as one is free. The first refusal is logged once.
//
// Thread-safety: Take() and the Slots may be used from any collector thread.

#include <atomic>
#include <cstddef>
#include <memory>
#include <utility>

#include <spdlog/logger.h>

namespace fabricwatch::sys {

class FdBudget {
 public:
  // A slot of the budget, given back when destroyed. Empty when the budget was spent.
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&& other) noexcept : budget_(std::exchange(other.budget_, nullptr)) {}
    Slot& operator=(Slot&& other) noexcept {
      if (this != &other) {
        Reset();
        budget_ = std::exchange(other.budget_, nullptr);
      }
      return *this;
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() { Reset(); }

    explicit operator bool() const { return budget_ != nullptr; }
    void Reset();

   private:
    friend class FdBudget;
    explicit Slot(FdBudget* budget) : budget_(budget) {}
    FdBudget* budget_ = nullptr;
  };

  // `limit` files may be kept open at once. `logger` (may be null) gets the one line that says
  // the budget ran out.
  explicit FdBudget(size_t limit, std::shared_ptr<spdlog::logger> logger = nullptr)
      : limit_(limit), logger_(std::move(logger)) {}
  FdBudget(const FdBudget&) = delete;
  FdBudget& operator=(const FdBudget&) = delete;

  // A slot, or an empty one when `limit` are taken.
  Slot Take();

  size_t limit() const { return limit_; }
  size_t taken() const { return taken_.load(std::memory_order_relaxed); }
  // Whether a Take() has ever been refused.
  bool ever_exhausted() const { return exhausted_.load(std::memory_order_relaxed); }

 private:
  const size_t limit_;
  std::shared_ptr<spdlog::logger> logger_;
  std::atomic<size_t> taken_{0};
  std::atomic<bool> exhausted_{false};
};

}  // namespace fabricwatch::sys
