#pragma once
// Names the calling thread (pthread_setname_np(3)), so that top -H, perf and the benchmark
// (tools/bench, issue 40 item 1) can tell the agent's threads apart from /proc/PID/task/*/comm.
// The kernel keeps at most 15 bytes (TASK_COMM_LEN 16 with the NUL, include/linux/sched.h); a
// longer name is cut there rather than refused (pthread_setname_np fails with ERANGE).
// Every name starts "fw-" (docs/libraries.md "Threads").

#include <pthread.h>

#include <string>
#include <string_view>

namespace fabricwatch::sys {

inline constexpr size_t kMaxThreadNameBytes = 15;

inline void SetCurrentThreadName(std::string_view name) {
  const std::string cut(name.substr(0, kMaxThreadNameBytes));
  (void)pthread_setname_np(pthread_self(), cut.c_str());  // naming is best effort
}

}  // namespace fabricwatch::sys
