#pragma once
// Heap allocations counted per thread: a replacement of the global operator new that binaries
// measuring allocations link (fabricbench, the steady-state allocation test); the agent does not.
//
//   StartCountingAllocations();
//   CollectOnce(...);
//   uint64_t n = StopCountingAllocations();  // operator new calls of this thread in between
//
// Only the calling thread's allocations count, so a test framework's or another thread's do not.

#include <cstdint>

namespace fabricwatch::bench {

void StartCountingAllocations();
uint64_t StopCountingAllocations();

}  // namespace fabricwatch::bench
