#pragma once
// The agent keeps every counter file open (docs/design.md §8: re-read with pread), about 70 per HCA
// port, so a node with many ports needs more descriptors than the usual soft limit of 1024.
// Without them the reads fall back to open-per-read. Raising the soft limit to the hard one needs
// no privilege; the agent and the benchmark both do it at start.
//
// When the hard limit itself is low (`prlimit --nofile=256`, LimitNOFILE=256), the kept-open files
// get what is left after a reserve (KeptOpenFileBudget), so that HTTP and the state file always
// find descriptors; past the budget, counter files are read open/read/close
// (collectors/sys/fd_budget.h).

#include <spdlog/logger.h>

#include <cstddef>
#include <cstdint>

namespace fabricwatch::exporter {

void RaiseFileLimit(spdlog::logger& log);

// The soft RLIMIT_NOFILE now (UINT64_MAX when unlimited).
uint64_t OpenFileLimit();

// Descriptors never given to kept-open counter files:
//   - a quarter of the limit, at least 16: the HTTP server's connections (exporter/http caps
//     its concurrent connections at that share of the limit);
//   - kFixedReserve for everything else: stdio, the listening sockets, the state file with its
//     temporary file and directory, the rtnetlink, ethtool netlink and ioctl sockets, the
//     libibverbs device contexts, hook pipes and /dev/null, and the one file each collector
//     opens at a time for an open/read/close read.
inline constexpr uint64_t kFixedFileReserve = 64;
uint64_t ReservedFiles(uint64_t limit);
// How many counter files the collectors may keep open together under `limit`: the limit minus
// ReservedFiles(), 0 when nothing is left (every read is then open/read/close).
size_t KeptOpenFileBudget(uint64_t limit);

}  // namespace fabricwatch::exporter
