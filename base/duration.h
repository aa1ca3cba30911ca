#pragma once
// Durations in the Prometheus style: "100ms", "1s", "1m30s", "2h", "500us".

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"

namespace fabricwatch {

Result<std::chrono::milliseconds> ParseDuration(std::string_view text);
std::string FormatDuration(std::chrono::milliseconds duration);

}  // namespace fabricwatch
