#include "exporter/file_limit.h"

#include <sys/resource.h>

#include <algorithm>
#include <limits>

namespace fabricwatch::exporter {

void RaiseFileLimit(spdlog::logger& log) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    rlim_t before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) == 0) {
      log.debug("raised the open-file limit from {} to {}", before, limit.rlim_cur);
    }
  }
}

uint64_t OpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return std::numeric_limits<uint64_t>::max();
  }
  return limit.rlim_cur;
}

uint64_t ReservedFiles(uint64_t limit) {
  return std::max<uint64_t>(16, limit / 4) + kFixedFileReserve;
}

size_t KeptOpenFileBudget(uint64_t limit) {
  const uint64_t reserved = ReservedFiles(limit);
  if (limit <= reserved) return 0;
  return static_cast<size_t>(
      std::min<uint64_t>(limit - reserved, std::numeric_limits<size_t>::max()));
}

}  // namespace fabricwatch::exporter
