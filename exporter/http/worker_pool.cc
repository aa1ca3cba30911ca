#include "exporter/http/worker_pool.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "collectors/sys/thread_name.h"

namespace fabricwatch::exporter {

struct WorkerPool::Shared {
  std::mutex mutex;
  std::condition_variable work_cv;
  std::condition_variable done_cv;
  std::deque<std::function<void()>> queue;
  size_t capacity = 0;
  size_t max_threads = 0;
  size_t running_threads = 0;  // started and not finished
  size_t idle_threads = 0;     // waiting for a task
  bool stopping = false;
  std::string name;
  std::vector<std::thread> threads;

  // A worker's loop. Each thread holds the shared state: a detached thread outlives the pool.
  static void Work(const std::shared_ptr<Shared>& shared, size_t index) {
    sys::SetCurrentThreadName(shared->name + std::to_string(index));
    std::unique_lock lock(shared->mutex);
    while (true) {
      ++shared->idle_threads;
      shared->work_cv.wait(lock, [&] { return shared->stopping || !shared->queue.empty(); });
      --shared->idle_threads;
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
  }

  // Under `mutex`: one more thread if the queue holds more tasks than free threads can take.
  // False only when no thread runs and none could be started (the queued task would never run).
  bool GrowLocked(const std::shared_ptr<Shared>& self) {
    if (queue.size() <= idle_threads || threads.size() >= max_threads) return true;
    try {
      threads.emplace_back([self, index = threads.size()] { Work(self, index); });
      ++running_threads;
    } catch (const std::system_error&) {
      return !threads.empty();  // EAGAIN: the started threads will take it
    }
    return true;
  }
};

WorkerPool::WorkerPool(size_t threads, size_t queue_capacity, std::string name)
    : shared_(std::make_shared<Shared>()) {
  shared_->capacity = queue_capacity;
  shared_->max_threads = threads;
  shared_->name = std::move(name);
}

WorkerPool::~WorkerPool() { Stop(std::chrono::steady_clock::time_point::max()); }

bool WorkerPool::TryPost(std::function<void()> task) {
  {
    std::lock_guard lock(shared_->mutex);
    if (shared_->stopping || shared_->queue.size() >= shared_->capacity) return false;
    shared_->queue.push_back(std::move(task));
    if (!shared_->GrowLocked(shared_)) {
      shared_->queue.pop_back();
      return false;
    }
  }
  shared_->work_cv.notify_one();
  return true;
}

size_t WorkerPool::started_threads() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->threads.size();
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
