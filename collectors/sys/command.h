#pragma once
// Runs a short command and returns what it printed (the jobs collector's `scontrol listpids`,
// docs/design.md §5.10): posix_spawnp with stdin from /dev/null and stderr discarded, the output
// read through a pipe until the command exits, bounded in time (killed at `timeout`) and in
// bytes. Never a shell: argv is passed as is.

#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"

namespace fabricwatch::sys {

// kNotFound: the program is not in PATH; kDeadlineExceeded: killed at the timeout;
// kUnavailable: it exited non-zero (the message has its status).
Result<std::string> RunCommand(const std::vector<std::string>& argv,
                               std::chrono::milliseconds timeout, size_t max_output = 1 << 20);

}  // namespace fabricwatch::sys
