// WorkerPool (exporter/http/worker_pool.h): threads start when work needs them, up to the limit,
// named after the pool; a full queue is refused; Stop drops what has not started.

#include "exporter/http/worker_pool.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

namespace fabricwatch::exporter {
namespace {

using std::chrono::steady_clock;

std::string ThreadName() {
  char name[16] = {};
  pthread_getname_np(pthread_self(), name, sizeof(name));
  return name;
}

TEST(WorkerPool, starts_no_thread_before_the_first_task) {
  WorkerPool pool(2, 8, "fw-test");
  EXPECT_EQ(pool.started_threads(), 0u);
  EXPECT_TRUE(pool.Stop(steady_clock::now() + std::chrono::seconds(5)));
}

TEST(WorkerPool, a_free_thread_takes_the_next_task_instead_of_a_new_one) {
  WorkerPool pool(4, 8, "fw-test");
  for (int i = 0; i < 5; ++i) {
    std::promise<std::string> ran;
    auto name = ran.get_future();
    ASSERT_TRUE(pool.TryPost([&ran] { ran.set_value(ThreadName()); }));
    EXPECT_EQ(name.get(), "fw-test0");
    // Time for the thread to be back waiting; the next task then reuses it.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // One thread did all five; a second only if the machine stalled the first past the sleep.
  EXPECT_LE(pool.started_threads(), 2u);
}

TEST(WorkerPool, grows_to_the_limit_while_tasks_block_and_no_further) {
  WorkerPool pool(2, 8, "fw-test");
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::promise<std::string> first, second;
  ASSERT_TRUE(pool.TryPost([&, gate] {
    first.set_value(ThreadName());
    gate.wait();
  }));
  ASSERT_TRUE(pool.TryPost([&, gate] {
    second.set_value(ThreadName());
    gate.wait();
  }));
  const std::string a = first.get_future().get(), b = second.get_future().get();
  EXPECT_NE(a, b);
  EXPECT_TRUE(a == "fw-test0" || a == "fw-test1") << a;
  EXPECT_TRUE(b == "fw-test0" || b == "fw-test1") << b;
  // Both threads are busy: a third task queues, and no third thread starts.
  std::promise<void> third;
  ASSERT_TRUE(pool.TryPost([&] { third.set_value(); }));
  EXPECT_EQ(pool.started_threads(), 2u);
  release.set_value();
  third.get_future().get();
  EXPECT_EQ(pool.started_threads(), 2u);
  EXPECT_TRUE(pool.Stop(steady_clock::now() + std::chrono::seconds(5)));
}

TEST(WorkerPool, a_full_queue_refuses_and_stop_drops_the_queued) {
  WorkerPool pool(1, 1, "fw-test");
  std::promise<void> release, started;
  std::shared_future<void> gate = release.get_future().share();
  ASSERT_TRUE(pool.TryPost([&, gate] {
    started.set_value();
    gate.wait();
  }));
  started.get_future().get();
  ASSERT_TRUE(pool.TryPost([] {}));
  EXPECT_FALSE(pool.TryPost([] {}));  // capacity 1, and the one thread is busy
  release.set_value();
  EXPECT_TRUE(pool.Stop(steady_clock::now() + std::chrono::seconds(5)));
  EXPECT_FALSE(pool.TryPost([] {}));  // stopped
}

}  // namespace
}  // namespace fabricwatch::exporter
