#pragma once
// WorkerPool: up to a fixed number of threads taking tasks from a bounded queue. The HTTP server
// runs route bodies and bcrypt checks on pools so that its event loop never waits for them; a full
// queue is refused at once (the server answers 503 with Retry-After) instead of growing without
// bound under a flood.
//
// Threads start when work needs them (a task is queued and no started thread is free), up to
// `threads`, and then stay: an agent without basic_auth_users never starts a bcrypt thread, and
// one scraped by a single Prometheus runs one handler thread, not four (issue 40 item 2). Each is
// named "<name><index>" (sys/thread_name.h).
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
  // `name`: the threads' name prefix, at most 13 bytes so that an index fits ("fw-http-w").
  WorkerPool(size_t threads, size_t queue_capacity, std::string name = "fw-pool");
  ~WorkerPool();  // Stop() without a deadline
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // False when the queue is full or the pool is stopping; the task is then not run.
  // Starts a thread when the queued tasks outnumber the free threads and fewer than `threads` run.
  bool TryPost(std::function<void()> task);
  // True when every thread has finished by `deadline`.
  // Threads started so far (for tests and the self-metrics).
  size_t started_threads() const;
  bool Stop(std::chrono::steady_clock::time_point deadline);

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
};

}  // namespace fabricwatch::exporter
