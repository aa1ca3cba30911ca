#include "collectors/core/device_filter.h"

namespace fabricwatch {
namespace {

Result<std::optional<std::regex>> Compile(std::string_view pattern, std::string_view option) {
  if (pattern.empty()) return std::optional<std::regex>();
  try {
    return std::optional<std::regex>(std::regex(pattern.begin(), pattern.end()));
  } catch (const std::regex_error& e) {
    return Error(StatusCode::kInvalidArgument, "--" + std::string(option) + "=\"" +
                                                   std::string(pattern) +
                                                   "\": invalid regular expression: " + e.what());
  }
}

}  // namespace

Result<DeviceFilter> DeviceFilter::Create(std::string_view include, std::string_view exclude,
                                          std::string_view what) {
  DeviceFilter filter;
  auto inc = Compile(include, std::string(what) + "-include");
  if (!inc) return Error(inc.error());
  auto exc = Compile(exclude, std::string(what) + "-exclude");
  if (!exc) return Error(exc.error());
  filter.include_ = std::move(*inc);
  filter.exclude_ = std::move(*exc);
  return filter;
}

bool DeviceFilter::Accepts(std::string_view name) const {
  if (!include_ && !exclude_) return true;
  if (auto it = decided_.find(name); it != decided_.end()) return it->second;
  const bool accepted = (!include_ || std::regex_match(name.begin(), name.end(), *include_)) &&
                        (!exclude_ || !std::regex_match(name.begin(), name.end(), *exclude_));
  if (decided_.size() >= kMaxRemembered) decided_.clear();
  decided_.emplace(name, accepted);
  return accepted;
}

}  // namespace fabricwatch
