// The libibverbs prober (probe.h): two RC QPs connected to each other, a bandwidth phase of
// `window` RDMA WRITEs kept in flight, then a latency phase of one small write at a time.
// Everything is polled (ibv_poll_cq, never a blocking wait) against one deadline, so the call
// ends within options.timeout plus the clean-up (a drain of up to kDrainTime and the driver's
// destroy calls), whatever the fabric does (docs/probe.md §3). One probe at a time on the node:
// Measure() holds a flock on the lock file for the whole call (probe.h).

#include "exporter/probe/verbs_probe.h"

#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <thread>
#include <vector>

#include "collectors/sys/unique_fd.h"

namespace fabricwatch::probe {
namespace {

using Clock = std::chrono::steady_clock;

// The latency phase's write: small enough to be one packet at any MTU.
constexpr uint32_t kLatencyBytes = 64;
constexpr int kLatencyMaxWrites = 1000;
// How long a failed probe waits for its flushed work requests before destroying the QPs
// (destroying them with work outstanding is allowed; the wait only keeps the CQ's account tidy).
constexpr auto kDrainTime = std::chrono::milliseconds(200);
// Empty polls between two sched_yield()s: a spinning poller must not starve a software
// provider (rxe) that does its work in softirqs and kernel threads on the same CPUs.
constexpr int kPollsPerYield = 64;
// How long Measure() waits for another probe's lock (at most half the timeout, and no longer than
// the data phases can spare: DataPhaseTime), and how often it tries again meanwhile.
constexpr auto kLockWait = std::chrono::milliseconds(2000);
constexpr auto kLockRetry = std::chrono::milliseconds(20);

std::string Seconds(std::chrono::milliseconds d) {
  char text[32];
  snprintf(text, sizeof text, "%.3g s", static_cast<double>(d.count()) / 1000);
  return text;
}

// One probe: the two sides, the deadline, and the measurement being filled.
class ProbeRun {
 public:
  // `deadline`: the call's start (before waiting for the lock) plus options.timeout.
  ProbeRun(const ProbeTarget& target, const ProbeOptions& options, ProbeMeasurement& m,
           Clock::time_point deadline)
      : target_(target),
        options_(options),
        m_(m),
        deadline_(deadline),
        description_(PortLabel(target.port) +
                     (target.partner ? " to " + PortLabel(*target.partner) : " loopback")) {}

  ~ProbeRun() {
    // On every failure after the QPs exist: flush them before their owners destroy them.
    if (m_.outcome != ProbeOutcome::kOk) {
      ResetToError(src_);
      ResetToError(dst_);
      Drain();
    }
  }

  void Run();

 private:
  StepResult SetUp();
  StepResult BandwidthPhase();
  StepResult LatencyPhase();
  StepResult PostWrite(size_t offset, uint32_t length, uint64_t wr_id);
  // Polls src_'s CQ once; adds the completions to `done`; a failed completion is kError. Every
  // completion taken off the CQ is counted out of in_flight_, the ones after a failed one too.
  StepResult Poll(int& done);
  // Past the deadline: `outcome` (kSetupError before the data phases, kTimeout in them).
  StepResult CheckDeadline(std::string_view phase, ProbeOutcome outcome) const;
  void Drain();

  const ProbeTarget& target_;
  const ProbeOptions& options_;
  ProbeMeasurement& m_;
  const Clock::time_point deadline_;
  const std::string description_;
  uint32_t in_flight_ = 0;
  uint32_t message_bytes_ = 0;
  // The destructor flushes both QPs first; then the members go, dst_ before src_, each in the
  // verbs order (verbs_probe_resources.h).
  ProbeSide src_;
  ProbeSide dst_;
};

StepResult ProbeRun::CheckDeadline(std::string_view phase, ProbeOutcome outcome) const {
  if (Clock::now() < deadline_) return std::nullopt;
  return ProbeFailure{outcome, description_ + ": not done within the " + Seconds(options_.timeout) +
                                   " timeout, in " + std::string(phase) + " (" +
                                   std::to_string(in_flight_) + " writes outstanding, " +
                                   std::to_string(m_.writes_completed) + " completed)"};
}

StepResult ProbeRun::SetUp() {
  if (auto failed = OpenSide(target_.port, src_)) return failed;
  if (auto failed = OpenSide(target_.partner.value_or(target_.port), dst_)) return failed;
  // A set-up past the deadline is a starved host (CPU, a slow driver), not the port's evidence.
  if (auto failed = CheckDeadline("set-up", ProbeOutcome::kSetupError)) return failed;
  for (ProbeSide* side : {&src_, &dst_}) {
    if (auto failed = ResolveAddress(*side)) return failed;
  }
  // Source and destination buffers of `window` slots each (probe.h: 2 × message × window).
  const size_t bytes = static_cast<size_t>(message_bytes_) * options_.window;
  if (auto failed = CreateResources(src_, bytes, options_.window)) return failed;
  m_.registered_bytes = src_.buffer.size();
  if (auto failed = CreateResources(dst_, bytes, 1)) return failed;
  m_.registered_bytes += dst_.buffer.size();
  if (auto failed = CheckDeadline("set-up", ProbeOutcome::kSetupError)) return failed;
  if (auto failed = ConnectPair(src_, dst_)) return failed;
  return CheckDeadline("set-up", ProbeOutcome::kSetupError);
}

StepResult ProbeRun::PostWrite(size_t offset, uint32_t length, uint64_t wr_id) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(src_.buffer.get() + offset);
  sge.length = length;
  sge.lkey = src_.mr->lkey;
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(dst_.buffer.get() + offset);
  wr.wr.rdma.rkey = dst_.mr->rkey;
  ibv_send_wr* bad = nullptr;
  if (int err = ibv_post_send(src_.qp.get(), &wr, &bad); err != 0) {
    // A QP that a failed completion moved to ERR refuses new work on some providers (rxe:
    // EINVAL): that completion, still on the CQ, is the port's evidence. Otherwise the refusal
    // is the host's (a full send queue, ENOMEM).
    int done = 0;
    if (auto wc_failed = Poll(done); wc_failed && wc_failed->outcome == ProbeOutcome::kError) {
      return wc_failed;
    }
    return ProbeFailure{ProbeOutcome::kSetupError,
                        description_ + ": ibv_post_send on " + src_.label + ": " + strerror(err)};
  }
  ++in_flight_;
  return std::nullopt;
}

StepResult ProbeRun::Poll(int& done) {
  ibv_wc wc[16];
  const int n = ibv_poll_cq(src_.cq.get(), 16, wc);
  if (n < 0) {
    return ProbeFailure{ProbeOutcome::kSetupError, description_ + ": ibv_poll_cq on " + src_.label +
                                                       " failed (" + std::to_string(n) + ")"};
  }
  StepResult failed;
  for (int i = 0; i < n; ++i) {
    // Every entry taken off the CQ is one write less outstanding, the ones after a failed
    // completion too: Drain() then waits only for the writes still on the QP.
    in_flight_ -= std::min<uint32_t>(in_flight_, 1);
    if (wc[i].status != IBV_WC_SUCCESS) {
      if (!failed) {
        failed = ProbeFailure{ProbeOutcome::kError,
                              description_ + ": RDMA WRITE completed with status " +
                                  ibv_wc_status_str(wc[i].status) + " (vendor error " +
                                  std::to_string(wc[i].vendor_err) + ") on " + src_.label};
      }
      continue;
    }
    ++m_.writes_completed;
    // wr_id carries the write's length: a send completion's byte_len is undefined.
    m_.bytes_written += wc[i].wr_id;
  }
  done += n;
  return failed;
}

StepResult ProbeRun::BandwidthPhase() {
  const auto start = Clock::now();
  const auto stop_posting = start + options_.duration;
  auto last_completion = start;
  uint64_t slot = 0;
  int idle = 0;
  for (;;) {
    if (auto failed = CheckDeadline("the bandwidth phase", ProbeOutcome::kTimeout)) return failed;
    const bool posting = Clock::now() < stop_posting;
    while (posting && in_flight_ < options_.window) {
      const size_t offset = static_cast<size_t>(slot++ % options_.window) * message_bytes_;
      if (auto failed = PostWrite(offset, message_bytes_, message_bytes_)) return failed;
    }
    if (!posting && in_flight_ == 0) break;
    int done = 0;
    if (auto failed = Poll(done)) return failed;
    if (done > 0) {
      last_completion = Clock::now();
      idle = 0;
    } else if (++idle % kPollsPerYield == 0) {
      sched_yield();
    }
  }
  const double seconds = std::chrono::duration<double>(last_completion - start).count();
  m_.bandwidth_bytes_per_second = seconds > 0 ? static_cast<double>(m_.bytes_written) / seconds : 0;
  return std::nullopt;
}

StepResult ProbeRun::LatencyPhase() {
  const auto stop = Clock::now() + options_.duration / 10;
  std::vector<Clock::duration> samples;
  samples.reserve(kLatencyMaxWrites);
  const uint64_t bandwidth_bytes = m_.bytes_written;
  const uint64_t bandwidth_writes = m_.writes_completed;
  while (samples.empty() ||
         (static_cast<int>(samples.size()) < kLatencyMaxWrites && Clock::now() < stop)) {
    const auto posted = Clock::now();
    if (auto failed = PostWrite(0, kLatencyBytes, kLatencyBytes)) return failed;
    int done = 0;
    for (int idle = 1; done == 0; ++idle) {
      if (auto failed = CheckDeadline("the latency phase", ProbeOutcome::kTimeout)) return failed;
      if (auto failed = Poll(done)) return failed;
      if (done == 0 && idle % kPollsPerYield == 0) sched_yield();
    }
    samples.push_back(Clock::now() - posted);
  }
  // The counters are the bandwidth phase's (probe.h): the latency writes are not added.
  m_.bytes_written = bandwidth_bytes;
  m_.writes_completed = bandwidth_writes;
  auto middle = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  std::nth_element(samples.begin(), middle, samples.end());
  m_.latency_median = std::chrono::duration_cast<std::chrono::nanoseconds>(*middle);
  m_.latency_max = std::chrono::duration_cast<std::chrono::nanoseconds>(
      *std::max_element(samples.begin(), samples.end()));
  return std::nullopt;
}

void ProbeRun::Drain() {
  if (!src_.cq) return;
  const auto until = Clock::now() + kDrainTime;
  ibv_wc wc[16];
  while (in_flight_ > 0 && Clock::now() < until) {
    const int n = ibv_poll_cq(src_.cq.get(), 16, wc);
    if (n < 0) break;
    in_flight_ -= std::min<uint32_t>(in_flight_, static_cast<uint32_t>(n));
    if (n == 0) sched_yield();
  }
}

void ProbeRun::Run() {
  m_.path = target_.partner ? "pair" : "loopback";
  StepResult failed;
  if (options_.gpu_memory) {
    failed = ProbeFailure{ProbeOutcome::kUnsupported,
                          description_ + ": GPU buffers are not built into this version"};
  } else if (options_.window == 0 || options_.message_bytes == 0 ||
             options_.duration.count() <= 0 || options_.timeout.count() <= 0) {
    failed = ProbeFailure{ProbeOutcome::kUnsupported,
                          description_ +
                              ": message size, window, duration and timeout must "
                              "be positive"};
  } else {
    // The latency writes use the first slot: it holds at least kLatencyBytes.
    message_bytes_ = std::max(options_.message_bytes, kLatencyBytes);
    failed = SetUp();
    if (!failed) {
      // A slow lock wait or set-up must not leave the bandwidth phase too little time: its
      // timeout would read as the port's failure (kTimeout), not the host's.
      if (std::string why = DataPhaseShortfall(deadline_ - Clock::now(), options_); !why.empty()) {
        failed = ProbeFailure{ProbeOutcome::kSetupError, description_ + ": " + why};
      } else if (options_.on_phase) {
        options_.on_phase("data", m_);
      }
    }
    if (!failed) failed = BandwidthPhase();
    if (!failed) failed = LatencyPhase();
  }
  if (failed) {
    m_.outcome = failed->outcome;
    m_.error = std::move(failed->message);
    m_.bandwidth_bytes_per_second = 0;
    return;
  }
  m_.outcome = ProbeOutcome::kOk;
  m_.error.clear();
}

// Opens the node-wide lock file (probe.h) read-only, creating it 0644 when missing and this
// process may (root, in root's /run), and flocks it, waiting up to `wait` for another holder;
// `held` keeps the lock and `state` says "held", or "unlocked: <why>" when the file is missing
// and cannot be created (no such directory, a read-only /run, no write access): then the probe
// runs without the lock, which is cooperation between probes, not a security boundary.
StepResult LockNode(const std::string& path, Clock::duration wait, sys::UniqueFd& held,
                    std::string& state) {
  // O_NOFOLLOW: a link is refused, not followed; O_NONBLOCK: a FIFO cannot block the open.
  // Read-only: flock(2) needs no write access, so the agent's DynamicUser opens root's file.
  constexpr int kFlags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
  sys::UniqueFd fd(open(path.c_str(), kFlags));
  if (!fd && errno == ENOENT) {
    fd.Reset(open(path.c_str(), kFlags | O_CREAT | O_EXCL, 0644));
    const int err = errno;
    if (fd) {
      fchmod(fd.get(), 0644);  // whatever the umask: every user's probe opens it
    } else if (err == EEXIST) {
      fd.Reset(open(path.c_str(), kFlags));  // another probe created it meanwhile
    } else if (err == ENOENT || err == EROFS || err == EACCES || err == EPERM) {
      state = "unlocked: " + path + " is missing and cannot be created (" + strerror(err) + ")";
      return std::nullopt;
    } else {
      errno = err;
    }
  }
  if (!fd) {
    const int err = errno;
    return ProbeFailure{ProbeOutcome::kSetupError,
                        "the probe lock " + path + ": open: " + strerror(err)};
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return ProbeFailure{ProbeOutcome::kSetupError,
                        "the probe lock " + path + " is not a regular file"};
  }
  const auto until = Clock::now() + wait;
  for (;;) {
    if (flock(fd.get(), LOCK_EX | LOCK_NB) == 0) {
      held = std::move(fd);
      state = "held";
      return std::nullopt;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) {
      return ProbeFailure{ProbeOutcome::kSetupError,
                          "the probe lock " + path + ": flock: " + strerror(errno)};
    }
    if (Clock::now() >= until) {
      return ProbeFailure{ProbeOutcome::kUnsupported,
                          "another probe runs on this node (" + path + " is locked)"};
    }
    std::this_thread::sleep_for(kLockRetry);
  }
}

class VerbsProber : public PortProber {
 public:
  explicit VerbsProber(std::string lock_path) : lock_path_(std::move(lock_path)) {}

  ProbeMeasurement Measure(const ProbeTarget& target, const ProbeOptions& options) override {
    const auto start = Clock::now();
    ProbeMeasurement m;
    m.outcome = ProbeOutcome::kSetupError;  // until Run() says otherwise
    m.path = target.partner ? "pair" : "loopback";
    if (options.on_phase) options.on_phase("setup", m);
    // The wait for the lock is part of the timeout; it leaves the probe at least half of it, and
    // the data phases their time (DataPhaseTime): a longer wait could only end in kSetupError.
    const auto wait = std::max<Clock::duration>(
        Clock::duration::zero(),
        std::min<Clock::duration>(
            {options.timeout / 2, kLockWait, options.timeout - DataPhaseTime(options.duration)}));
    sys::UniqueFd lock;  // released after the probe's resources are gone
    if (auto failed = LockNode(lock_path_, wait, lock, m.lock)) {
      m.outcome = failed->outcome;
      m.error = PortLabel(target.port) + ": " + failed->message;
    } else {
      ProbeRun run(target, options, m, start + options.timeout);
      run.Run();
      // The result is known; the clean-up (~ProbeRun: flush, drain, destroy) is still to come
      // and can block in the driver.
      if (options.on_phase) {
        m.elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start);
        options.on_phase("cleanup", m);
      }
    }  // every verbs resource is gone here: elapsed includes the clean-up
    m.elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start);
    return m;
  }

 private:
  std::string lock_path_;
};

}  // namespace

std::unique_ptr<PortProber> NewVerbsProber(std::string lock_path) {
  return std::make_unique<VerbsProber>(std::move(lock_path));
}

}  // namespace fabricwatch::probe
