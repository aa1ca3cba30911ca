#pragma once
// The explicit collector registry: one line per collector in registry.cc, no static-initialiser
// magic. It drives the --collector.<name> flags, the config keys, --help-metrics and the README.

#include <span>
#include <string_view>

#include "collectors/core/collector_info.h"

namespace fabricwatch {

std::span<const CollectorInfo> CollectorRegistry();
const CollectorInfo* FindCollector(std::string_view name);

}  // namespace fabricwatch
