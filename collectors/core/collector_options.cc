#include "collectors/core/collector_options.h"

#include "base/duration.h"

namespace fabricwatch {

std::string CollectorOptionReader::Value(std::string_view key) const {
  // A configured empty value stays empty: `--collector.netdev.device-exclude=` clears the
  // default exclusion.
  if (auto it = options_.find(key); it != options_.end()) return it->second;
  return Default(key);
}

std::string CollectorOptionReader::Default(std::string_view key) const {
  for (const CollectorOptionSpec& spec : specs_) {
    if (spec.key == key) return std::string(spec.default_value);
  }
  return {};
}

bool CollectorOptionReader::IsSet(std::string_view key) const {
  auto it = options_.find(key);
  return it != options_.end() && !it->second.empty();
}

Result<DeviceFilter> CollectorOptionReader::Devices() const {
  return DeviceFilter::Create(Value("device-include"), Value("device-exclude"),
                              "collector." + collector_ + ".device");
}

Result<std::chrono::milliseconds> CollectorOptionReader::Duration(std::string_view key) const {
  // An empty duration is no duration: the spec's default applies.
  std::string text = Value(key);
  if (text.empty()) text = Default(key);
  auto duration = ParseDuration(text);
  if (!duration) return Error(duration.error().WithContext(Flag(key)));
  return *duration;
}

std::string CollectorOptionReader::Flag(std::string_view key) const {
  return "--collector." + collector_ + "." + std::string(key);
}

}  // namespace fabricwatch
