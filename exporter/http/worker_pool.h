#pragma once
// WorkerPool: a fixed number of threads taking tasks from a bounded queue. The HTTP server runs
// route bodies and bcrypt checks on pools so that its event loop never waits for them; a full
// queue is refused at once (the server answers 503 with Retry-After) instead of growing without
// bound under a flood.
//
// Stop(deadline) drops the tasks not yet started and waits until `deadline` for the running ones.
// A task still running then keeps its thread, detached; the threads share the pool's state, so
// the pool object may be destroyed while they finish.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace fabricwatch::exporter {

class WorkerPool {
 public:
  WorkerPool(size_t threads, size_t queue_capacity);
  ~WorkerPool();  // Stop() without a deadline
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // False when the queue is full or the pool is stopping; the task is then not run.
  bool TryPost(std::function<void()> task);
  // True when every thread has finished by `deadline`.
  bool Stop(std::chrono::steady_clock::time_point deadline);

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
};

}  // namespace fabricwatch::exporter
