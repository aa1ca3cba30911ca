#include "exporter/http/worker_pool.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace fabricwatch::exporter {

struct WorkerPool::Shared {
  std::mutex mutex;
  std::condition_variable work_cv;
  std::condition_variable done_cv;
  std::deque<std::function<void()>> queue;
  size_t capacity = 0;
  size_t running_threads = 0;
  bool stopping = false;
  std::vector<std::thread> threads;
};

WorkerPool::WorkerPool(size_t threads, size_t queue_capacity)
    : shared_(std::make_shared<Shared>()) {
  shared_->capacity = queue_capacity;
  shared_->running_threads = threads;
  for (size_t i = 0; i < threads; ++i) {
    // Each thread holds the shared state: a detached thread outlives the pool safely.
    shared_->threads.emplace_back([shared = shared_] {
      std::unique_lock lock(shared->mutex);
      while (true) {
        shared->work_cv.wait(lock, [&] { return shared->stopping || !shared->queue.empty(); });
        if (shared->stopping) break;
        std::function<void()> task = std::move(shared->queue.front());
        shared->queue.pop_front();
        lock.unlock();
        task();
        task = nullptr;  // destroy what it captured outside the lock
        lock.lock();
      }
      --shared->running_threads;
      shared->done_cv.notify_all();
    });
  }
}

WorkerPool::~WorkerPool() { Stop(std::chrono::steady_clock::time_point::max()); }

bool WorkerPool::TryPost(std::function<void()> task) {
  {
    std::lock_guard lock(shared_->mutex);
    if (shared_->stopping || shared_->queue.size() >= shared_->capacity) return false;
    shared_->queue.push_back(std::move(task));
  }
  shared_->work_cv.notify_one();
  return true;
}

bool WorkerPool::Stop(std::chrono::steady_clock::time_point deadline) {
  std::deque<std::function<void()>> dropped;
  std::unique_lock lock(shared_->mutex);
  shared_->stopping = true;
  dropped.swap(shared_->queue);
  shared_->work_cv.notify_all();
  const auto finished = [&] { return shared_->running_threads == 0; };
  bool done = true;
  if (deadline == std::chrono::steady_clock::time_point::max()) {
    shared_->done_cv.wait(lock, finished);  // wait_until(max) overflows in libstdc++
  } else {
    done = shared_->done_cv.wait_until(lock, deadline, finished);
  }
  std::vector<std::thread> threads = std::move(shared_->threads);
  lock.unlock();
  for (std::thread& t : threads) {
    if (done) {
      t.join();
    } else {
      t.detach();
    }
  }
  return done;
}

}  // namespace fabricwatch::exporter
