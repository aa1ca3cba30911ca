#include "collectors/sys/fd_budget.h"

namespace fabricwatch::sys {

void FdBudget::Slot::Reset() {
  if (budget_ != nullptr) budget_->taken_.fetch_sub(1, std::memory_order_relaxed);
  budget_ = nullptr;
}

FdBudget::Slot FdBudget::Take() {
  size_t taken = taken_.load(std::memory_order_relaxed);
  while (taken < limit_) {
    if (taken_.compare_exchange_weak(taken, taken + 1, std::memory_order_relaxed)) {
      return Slot(this);
    }
  }
  // Said once for the life of the process: the budget is spent again and again while a node
  // has more counter files than it allows, and each time it costs only syscalls, not data.
  if (!exhausted_.exchange(true, std::memory_order_relaxed) && logger_ != nullptr) {
    logger_->warn(
        "the {} counter files the open-file limit leaves to the collectors are all open: further "
        "files are read open/read/close (more syscalls per sample, same data); raise the limit "
        "(LimitNOFILE=) to keep them open",
        limit_);
  }
  return Slot();
}

}  // namespace fabricwatch::sys
