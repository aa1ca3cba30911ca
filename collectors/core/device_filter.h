#pragma once
// Include/exclude regular expressions over device names (node_exporter device_filter.go):
// a name is accepted when it matches `include` (or include is empty) and does not match
// `exclude`. Patterns are ECMAScript regexes matched against the whole name.

#include <optional>
#include <regex>
#include <string>
#include <string_view>

#include "collectors/core/status.h"

namespace fabricwatch {

class DeviceFilter {
 public:
  // `what` names the options for error messages, e.g. "collector.netdev.device".
  static Result<DeviceFilter> Create(std::string_view include, std::string_view exclude,
                                     std::string_view what);
  bool Accepts(std::string_view name) const;

 private:
  std::optional<std::regex> include_;
  std::optional<std::regex> exclude_;
};

}  // namespace fabricwatch
