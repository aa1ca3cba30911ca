#include "exporter/pipeline/scheduler.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <utility>

#include "collectors/sys/thread_name.h"

namespace fabricwatch::exporter {

std::shared_ptr<Snapshot> CollectionBuffers::TakeSnapshot() {
  for (std::shared_ptr<Snapshot>& kept : kept_) {
    if (kept != nullptr && kept.use_count() == 1) {
      // The reader that dropped the last other reference did so with a release; this acquire
      // orders its reads before the writes of the next collection.
      std::atomic_thread_fence(std::memory_order_acquire);
      return std::exchange(kept, nullptr);
    }
  }
  return std::make_shared<Snapshot>();
}

void CollectionBuffers::Keep(std::shared_ptr<Snapshot> snapshot) {
  // In place of the slot TakeSnapshot() emptied, else of the oldest (still read elsewhere: that
  // reader frees it); the newest goes last.
  auto slot = std::find(kept_.begin(), kept_.end(), nullptr);
  if (slot == kept_.end()) slot = kept_.begin();
  std::rotate(slot, slot + 1, kept_.end());
  kept_.back() = std::move(snapshot);
}

CollectionOutcome CollectOnce(ScheduledCollector& collector, const Clock& clock,
                              CollectionBuffers* buffers) {
  CollectionOutcome outcome;
  MetricSink one_off_sink;
  MetricSink& sink = buffers != nullptr ? buffers->sink() : one_off_sink;
  std::shared_ptr<Snapshot> snapshot =
      buffers != nullptr ? buffers->TakeSnapshot() : std::make_shared<Snapshot>();
  sink.Reset(std::move(snapshot->families));
  const auto taken_at = clock.Now();
  const auto start = std::chrono::steady_clock::now();
  Status status;
  try {
    status = collector.collector->Collect(sink);
  } catch (const std::exception& e) {
    status = Status(StatusCode::kInternal, std::string("collector threw: ") + e.what());
  } catch (...) {
    status = Status(StatusCode::kInternal, "collector threw a non-standard exception");
  }
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  snapshot->collector.assign(collector.name);
  snapshot->time = taken_at;
  snapshot->families = sink.TakeFamilies();
  snapshot->log_events = sink.TakeLogEvents();
  outcome.run.series = sink.sample_count();
  outcome.run.partial_errors = sink.error_count();
  outcome.errors = sink.errors();
  outcome.run.status = std::move(status);
  outcome.run.time = taken_at;
  outcome.run.duration_seconds = elapsed.count();
  if (buffers != nullptr) buffers->Keep(snapshot);
  outcome.snapshot = std::move(snapshot);
  return outcome;
}

std::chrono::steady_clock::time_point NextCollection(
    std::chrono::steady_clock::time_point next, bool events_pending,
    std::chrono::steady_clock::time_point last_start, std::chrono::milliseconds min_gap) {
  if (!events_pending) return next;
  return std::min(next, last_start + min_gap);
}

Scheduler::Scheduler(std::vector<ScheduledCollector> collectors, SnapshotStore& store,
                     SelfMetrics& self_metrics, const Clock& clock)
    : collectors_(std::move(collectors)),
      store_(store),
      self_metrics_(self_metrics),
      clock_(clock) {}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::Start() {
  {
    std::lock_guard lock(exit_mutex_);
    ended_.assign(collectors_.size(), false);
  }
  for (size_t i = 0; i < collectors_.size(); ++i) {
    threads_.emplace_back([this, i](std::stop_token stop) {
      sys::SetCurrentThreadName("fw-c-" + collectors_[i].name);  // cut to 15 bytes
      Run(collectors_[i], stop);
      std::lock_guard lock(exit_mutex_);
      ended_[i] = true;
      exited_.notify_all();
    });
  }
}

bool Scheduler::Stop(std::chrono::milliseconds budget) {
  for (std::jthread& thread : threads_) thread.request_stop();
  const auto all_ended = [&] {
    return std::find(ended_.begin(), ended_.end(), false) == ended_.end();
  };
  bool ended;
  {
    std::unique_lock lock(exit_mutex_);
    if (budget == std::chrono::milliseconds::max()) {
      exited_.wait(lock, all_ended);
    } else {
      exited_.wait_for(lock, budget, all_ended);
    }
    ended = all_ended();
    if (!ended) {
      for (size_t i = 0; i < ended_.size(); ++i) {
        if (ended_[i]) continue;
        // The thread is blocked where no stop token reaches (a read of a FIFO or a hung
        // device): joining it could take forever.
        collectors_[i].logger->warn(
            "collector did not stop within {} ms: its collection is stuck, left running",
            budget.count());
      }
    }
  }
  if (!ended) return false;
  for (std::jthread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
  return true;
}

// What the collector's thread carries from one collection to the wait for the next.
struct Scheduler::WaitState {
  WakeSignal* signal = nullptr;  // the collector's EventWake signal, or its own (stop only)
  uint64_t seen = 0;             // the signal's sequence when the last collection started
  CollectorReadiness readiness;  // what the collector said after the last collection
  bool readable = false;         // readiness.fd was readable since the last collection started
  std::chrono::steady_clock::time_point next;        // the timer
  std::chrono::steady_clock::time_point last_start;  // of the last collection
  std::chrono::milliseconds period{0};  // the timer's period: the interval, or the fallback
  bool early = false;                   // the coming collection is ahead of `next`
};

void Scheduler::Run(ScheduledCollector& collector, std::stop_token stop) {
  // Without an event source the signal only carries Stop(): the thread sleeps in ppoll() until
  // its interval either way.
  const std::shared_ptr<WakeSignal> signal =
      collector.wake.signal != nullptr ? collector.wake.signal : std::make_shared<WakeSignal>();
  std::stop_callback on_stop(stop, [&signal] { signal->Interrupt(); });
  if (signal->fd() < 0) {
    collector.logger->warn("no eventfd for the collector's thread: it looks for events every {} ms",
                           WakeSignal::kUnsignalledPoll.count());
  }
  WaitState state;
  state.signal = signal.get();
  state.next = std::chrono::steady_clock::now();
  state.period = collector.interval;
  StatusCode last_code = StatusCode::kOk;
  bool first = true;
  bool overran_stale = false;  // the last collection took more than kStaleIntervals intervals
  CollectionBuffers buffers;
  while (!stop.stop_requested()) {
    state.last_start = std::chrono::steady_clock::now();
    state.seen = signal->sequence();  // this collection sees every event notified so far
    state.readable = false;
    self_metrics_.RecordStart(collector.name, state.last_start);
    CollectionOutcome outcome = CollectOnce(collector, clock_, &buffers);
    const Status& status = outcome.run.status;
    // A failed collection publishes nothing new: the previous snapshot would be stale data
    // presented as fresh, so an empty one replaces it; success=0 tells why.
    store_.Publish(std::move(outcome.snapshot));
    // The snapshot keeps the agent's time (the detectors'); its age is shown in wall time.
    outcome.run.time = clock_.ToWall(outcome.run.time);
    self_metrics_.RecordRun(collector.name, outcome.run);

    if (first || status.code() != last_code) {
      if (status.ok()) {
        if (!first) collector.logger->info("collector recovered");
      } else if (status.no_data()) {
        collector.logger->debug("no data: {}", status.message());
      } else {
        collector.logger->warn("collection failed: {}", status.ToString());
      }
    } else if (!status.ok() && !status.no_data()) {
      collector.logger->debug("collection still failing: {}", status.ToString());
    }
    first = false;
    last_code = status.code();

    // A collector its source wakes collects on the timer only as a fallback.
    state.readiness = collector.collector->Readiness();
    const auto period = state.readiness.event_driven
                            ? std::max(collector.interval, kEventDrivenFallback)
                            : collector.interval;
    if (period != state.period) {
      state.period = period;
      state.next = state.last_start;
      state.early = false;
      self_metrics_.SetInterval(collector.name, period);
    }
    // An early collection leaves the interval's cadence as it was.
    if (!std::exchange(state.early, false)) state.next += state.period;
    const auto now = std::chrono::steady_clock::now();
    // Once when a collection is so slow that it was reported stale, once when they are back
    // on time (the self-metrics showed it while it ran).
    const bool stale = outcome.run.duration_seconds >
                       kStaleIntervals * std::chrono::duration<double>(state.period).count();
    if (stale && !std::exchange(overran_stale, true)) {
      collector.logger->warn(
          "collection took {:.1f}s, more than {} intervals: it was reported "
          "stale meanwhile",
          outcome.run.duration_seconds, kStaleIntervals);
    } else if (!stale && std::exchange(overran_stale, false)) {
      collector.logger->info("collection within {} intervals again ({:.3f}s)", kStaleIntervals,
                             outcome.run.duration_seconds);
    }
    if (state.next < now) {
      // Overran its interval: skip the missed ticks instead of running back to back.
      collector.logger->debug("collection took {:.3f}s, longer than the interval",
                              outcome.run.duration_seconds);
      state.next = now + state.period;
    }
    if (!Wait(collector, state, stop)) break;
  }
}

bool Scheduler::Wait(const ScheduledCollector& collector, WaitState& state,
                     const std::stop_token& stop) {
  using Steady = std::chrono::steady_clock;
  const CollectorReadiness& source = state.readiness;
  while (!stop.stop_requested()) {
    const bool notified = state.signal->sequence() != state.seen;
    // The source's data waits for the collector's interval since its last collection: a flood
    // of records costs at most one collection per interval, as the timer did.
    const bool ready = source.event_driven && (source.backlog || state.readable);
    const Steady::time_point due =
        std::min(NextCollection(state.next, notified, state.last_start, collector.wake.min_gap),
                 NextCollection(state.next, ready, state.last_start, collector.interval));
    const Steady::time_point now = Steady::now();
    if (due <= now) {
      state.early = due < state.next;
      return true;
    }
    std::array<pollfd, 2> fds{};
    nfds_t count = 0;
    if (state.signal->fd() >= 0) fds[count++] = {state.signal->fd(), POLLIN, 0};
    // The source is watched until it is readable once; from then on its collection waits only
    // for the debounce, so a source that stays readable (records not read yet) wakes nobody.
    const bool watch_source = source.event_driven && source.fd >= 0 && !ready;
    if (watch_source) fds[count++] = {source.fd, POLLIN, 0};
    auto timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(due - now);
    if (state.signal->fd() < 0)
      timeout = std::min<std::chrono::nanoseconds>(timeout, WakeSignal::kUnsignalledPoll);
    const timespec ts{.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000),
                      .tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000)};
    // ppoll(2): a relative CLOCK_MONOTONIC timeout with nanoseconds, as steady_clock counts.
    const int rc = ::ppoll(fds.data(), count, &ts, nullptr);
    if (rc < 0) {
      if (errno == EINTR) continue;
      // ENOMEM: nothing to wait on; sleep the slice instead of spinning.
      collector.logger->debug("ppoll: {}", std::strerror(errno));
      std::this_thread::sleep_for(
          std::min<std::chrono::nanoseconds>(timeout, WakeSignal::kUnsignalledPoll));
      continue;
    }
    if (state.signal->fd() >= 0 && fds[0].revents != 0) state.signal->Drain();
    // POLLIN, or POLLERR/POLLHUP/POLLNVAL: a collection reads what it is (and reopens a source
    // that went away), after the debounce.
    if (watch_source && fds[count - 1].revents != 0) state.readable = true;
  }
  return false;
}

WakeSignal::WakeSignal() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

void WakeSignal::Notify() {
  sequence_.fetch_add(1, std::memory_order_acq_rel);
  Interrupt();
}

void WakeSignal::Interrupt() {
  if (!fd_.valid()) return;
  const uint64_t one = 1;
  // EAGAIN only when the counter is at its maximum: the waiter is woken already.
  [[maybe_unused]] const ssize_t n = ::write(fd_.get(), &one, sizeof(one));
}

void WakeSignal::Drain() {
  if (!fd_.valid()) return;
  uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = ::read(fd_.get(), &count, sizeof(count));
}

}  // namespace fabricwatch::exporter
