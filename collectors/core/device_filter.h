#pragma once
// Include/exclude regular expressions over device names (node_exporter device_filter.go):
// a name is accepted when it matches `include` (or include is empty) and does not match
// `exclude`. Patterns are ECMAScript regexes matched against the whole name.

#include <map>
#include <optional>
#include <regex>
#include <string>
#include <string_view>

#include "base/status.h"

namespace fabricwatch {

// Thread-safety: none (it remembers its decisions); each collector owns its filter.
class DeviceFilter {
 public:
  // `what` names the options for error messages, e.g. "collector.netdev.device".
  static Result<DeviceFilter> Create(std::string_view include, std::string_view exclude,
                                     std::string_view what);
  bool Accepts(std::string_view name) const;

 private:
  // std::regex allocates on every match and collectors filter the names they list every sample,
  // so decisions are remembered; bounded, because container hosts churn veth names.
  static constexpr size_t kMaxRemembered = 1024;
  std::optional<std::regex> include_;
  std::optional<std::regex> exclude_;
  mutable std::map<std::string, bool, std::less<>> decided_;
};

}  // namespace fabricwatch
