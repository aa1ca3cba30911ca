#include "exporter/file_limit.h"

#include <sys/resource.h>

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

}  // namespace fabricwatch::exporter
