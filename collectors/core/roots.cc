#include "collectors/core/roots.h"

#include <filesystem>
#include <system_error>

namespace fabricwatch {

std::string Roots::Replay(const SourceSpec& source) const {
  auto it = replays.find(source.name);
  return it == replays.end() ? std::string() : it->second;
}

std::string Roots::PathOf(const SourceSpec& source) const {
  std::string replay = Replay(source);
  if (!replay.empty()) return replay;
  return host ? std::string(source.host_path) : std::string();
}

std::string Roots::Flags() const {
  std::string flags = "--path.sysfs=" + sysfs;
  if (!ethtool.empty()) flags += " --path.ethtool=" + ethtool;
  for (const auto& [name, path] : replays) {
    if (!path.empty()) flags += " --path." + name + "=" + path;
  }
  return flags;
}

bool IsHostSysfs(const std::string& path) {
  std::error_code ec;
  return std::filesystem::equivalent(path, "/sys", ec);
}

}  // namespace fabricwatch
