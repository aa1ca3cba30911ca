#pragma once
// The agent keeps every counter file open (docs/design.md §8: re-read with pread), about 70 per HCA
// port, so a node with many ports needs more descriptors than the usual soft limit of 1024.
// Without them the reads fall back to open-per-read. Raising the soft limit to the hard one needs
// no privilege; the agent and the benchmark both do it at start.

#include <spdlog/logger.h>

namespace fabricwatch::exporter {

void RaiseFileLimit(spdlog::logger& log);

}  // namespace fabricwatch::exporter
