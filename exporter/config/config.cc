#include "exporter/config/config.h"

#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <utility>

#include "collectors/core/duration.h"
#include "collectors/core/registry.h"
#include "collectors/core/yaml_checks.h"
#include "detectors/core/registry.h"
#include "exporter/config/listen_address.h"
#include "exporter/config/probe_options.h"

namespace fabricwatch::exporter {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string KnownCollectorNames() {
  std::string names;
  for (const CollectorInfo& info : CollectorRegistry()) {
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

}  // namespace

Config RegistryDefaults() {
  Config config;
  for (const CollectorInfo& info : CollectorRegistry()) {
    CollectorConfig c;
    c.enabled = info.enabled_by_default;
    c.interval = info.default_interval;
    for (const CollectorOptionSpec& option : info.options) {
      if (!option.default_value.empty()) {
        c.options.emplace(std::string(option.key), std::string(option.default_value));
      }
    }
    config.collectors.emplace(std::string(info.name), std::move(c));
  }
  for (const detect::DetectorInfo& info : detect::DetectorRegistry()) {
    config.detectors[std::string(info.name)].enabled = info.enabled_by_default;
  }
  return config;
}

namespace {

std::string KnownDetectorNames() {
  std::string names;
  for (const detect::DetectorInfo& info : detect::DetectorRegistry()) {
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

std::string Where(const YAML::Node& node, const std::string& source) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return source;
  return source + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

Status ExpectMap(const YAML::Node& node, const std::string& key, const std::string& source) {
  if (!node.IsMap()) {
    return Status(StatusCode::kInvalidArgument,
                  Where(node, source) + ": " + key + " must be a mapping");
  }
  return Status::Ok();
}

Status ApplyCollectorYaml(const CollectorInfo& info, const YAML::Node& node,
                          const std::string& source, CollectorConfig& out) {
  const std::string prefix = "collectors." + std::string(info.name);
  if (node.IsNull()) return Status::Ok();
  if (Status s = ExpectMap(node, prefix, source); !s.ok()) return s;
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    const YAML::Node& value = entry.second;
    const std::string where = Where(value, source) + ": " + prefix + "." + key;
    if (!value.IsScalar()) {
      return Status(StatusCode::kInvalidArgument, where + " must be a scalar");
    }
    if (key == "enabled") {
      auto enabled = StrictBool(value, source, prefix + "." + key);
      if (!enabled) return enabled.error();
      out.enabled = *enabled;
    } else if (key == "interval") {
      auto interval = ParseDuration(value.Scalar());
      if (!interval) return interval.error().WithContext(where);
      out.interval = *interval;
    } else {
      bool known = false;
      for (const CollectorOptionSpec& option : info.options) known |= option.key == key;
      if (!known) {
        std::string options = "enabled, interval";
        for (const CollectorOptionSpec& option : info.options) {
          options += ", " + std::string(option.key);
        }
        return Status(StatusCode::kInvalidArgument,
                      where + ": unknown option (known: " + options + ")");
      }
      out.options[key] = value.Scalar();
    }
  }
  return Status::Ok();
}

}  // namespace

Status ApplyYaml(const std::string& yaml_text, const std::string& source, Config& config) {
  auto loaded = LoadStrictYaml(yaml_text, source);
  if (!loaded) return loaded.error();
  YAML::Node root = std::move(*loaded);    // not const: operator[] const on an absent key throws
  if (root.IsNull()) return Status::Ok();  // an empty file is a valid, empty configuration
  if (Status s = CheckNoDuplicateKeys(root, source); !s.ok()) return s;
  if (Status s = ExpectMap(root, "the top level", source); !s.ok()) return s;
  try {
    for (const auto& section : root) {
      const std::string key = section.first.as<std::string>();
      const YAML::Node& value = section.second;
      if (key == "collectors") {
        if (value.IsNull()) continue;
        if (Status s = ExpectMap(value, "collectors", source); !s.ok()) return s;
        for (const auto& entry : value) {
          const std::string name = entry.first.as<std::string>();
          const CollectorInfo* info = FindCollector(name);
          if (info == nullptr) {
            return Status(StatusCode::kInvalidArgument,
                          Where(entry.first, source) + ": collectors." + name +
                              ": unknown collector (known: " + KnownCollectorNames() + ")");
          }
          Status s = ApplyCollectorYaml(*info, entry.second, source, config.collectors[name]);
          if (!s.ok()) return s;
        }
      } else if (key == "detectors") {
        if (value.IsNull()) continue;
        if (Status s = ExpectMap(value, "detectors", source); !s.ok()) return s;
        for (const auto& entry : value) {
          const std::string name = entry.first.as<std::string>();
          if (IsEngineDetectorKey(name)) {
            const std::string where = Where(entry.second, source) + ": detectors." + name;
            if (!entry.second.IsScalar()) {
              return Status(StatusCode::kInvalidArgument, where + " must be a scalar");
            }
            Status s = ApplyEngineDetectorOption(name, entry.second.Scalar(), where, config);
            if (!s.ok()) return s;
            continue;
          }
          const detect::DetectorInfo* info = detect::FindDetector(name);
          if (info == nullptr) {
            return Status(StatusCode::kInvalidArgument,
                          Where(entry.first, source) + ": detectors." + name +
                              ": unknown detector (known: " + KnownDetectorNames() + ")");
          }
          if (entry.second.IsNull()) continue;
          const std::string prefix = "detectors." + name;
          if (Status s = ExpectMap(entry.second, prefix, source); !s.ok()) return s;
          DetectorConfig& d = config.detectors[name];
          for (const auto& option : entry.second) {
            const std::string sub = option.first.as<std::string>();
            const std::string where = Where(option.second, source) + ": " + prefix + "." + sub;
            if (!option.second.IsScalar()) {
              return Status(StatusCode::kInvalidArgument, where + " must be a scalar");
            }
            if (sub == "enabled") {
              auto enabled = StrictBool(option.second, source, prefix + "." + sub);
              if (!enabled) return enabled.error();
              d.enabled = *enabled;
              continue;
            }
            bool known = false;
            std::string keys = "enabled";
            for (const detect::DetectorOptionSpec& spec : info->options) {
              known |= spec.key == sub;
              keys += ", " + std::string(spec.key);
            }
            if (!known) {
              return Status(StatusCode::kInvalidArgument,
                            where + ": unknown option (known: " + keys + ")");
            }
            d.options[sub] = option.second.Scalar();
          }
        }
      } else if (key == "hooks") {
        auto hooks = ParseHookConfig(value, source);
        if (!hooks) return hooks.error();
        config.hooks = std::move(*hooks);
      } else if (key == "probe") {
        if (Status s = ApplyProbeYaml(value, source, config.probe); !s.ok()) return s;
      } else {
        return Status(StatusCode::kInvalidArgument,
                      Where(section.first, source) + ": unknown top-level key \"" + key +
                          "\" (known: collectors, detectors, hooks, probe)");
      }
    }
  } catch (const YAML::Exception& e) {
    return Status(StatusCode::kInvalidArgument, source + ": " + e.what());
  }
  return Status::Ok();
}

bool IsEngineDetectorKey(std::string_view key) {
  return key == "escalation-count" || key == "escalation-window";
}

Status ApplyEngineDetectorOption(std::string_view key, const std::string& value,
                                 const std::string& where, Config& config) {
  if (key == "escalation-count") {
    uint64_t count = 0;
    const char* end = value.data() + value.size();
    auto [ptr, ec] = std::from_chars(value.data(), end, count);
    if (ec != std::errc() || ptr != end || value.empty() || count > 1000) {
      return Status(StatusCode::kInvalidArgument,
                    where + ": \"" + value + "\": expected a count from 0 (off) to 1000");
    }
    config.escalation_count = count;
    return Status::Ok();
  }
  if (key == "escalation-window") {
    auto window = ParseDuration(value);
    if (!window || window->count() <= 0) {
      return Status(StatusCode::kInvalidArgument,
                    where + ": \"" + value + "\": expected a duration > 0 such as 1h or 30m");
    }
    config.escalation_window = *window;
    return Status::Ok();
  }
  return Status(StatusCode::kInvalidArgument, where + ": not an engine-wide detector setting");
}

Status Validate(const Config& config) {
  if (auto address = ParseListenAddress(config.listen_address); !address) {
    return address.error();
  }
  if (config.telemetry_path.empty() || config.telemetry_path.front() != '/' ||
      config.telemetry_path == "/" || config.telemetry_path == "/healthz" ||
      config.telemetry_path.find_first_of(" ?#\t\r\n") != std::string::npos) {
    return Status(StatusCode::kInvalidArgument,
                  "--web.telemetry-path=\"" + config.telemetry_path +
                      "\": must be an absolute URL path such as /metrics, other than / and "
                      "/healthz");
  }
  if (!IsDirectory(config.sysfs_path)) {
    return Status(StatusCode::kInvalidArgument,
                  "--path.sysfs=\"" + config.sysfs_path + "\": not a directory");
  }
  if (!config.ethtool_path.empty() && !IsDirectory(config.ethtool_path)) {
    return Status(StatusCode::kInvalidArgument,
                  "--path.ethtool=\"" + config.ethtool_path + "\": not a directory");
  }
  for (const auto& [flag, path] :
       {std::pair<const char*, const std::string*>{"--path.smp", &config.smp_path},
        {"--path.lldp", &config.lldp_path},
        {"--path.procfs", &config.procfs_path}}) {
    if (!path->empty() && !IsDirectory(*path)) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(flag) + "=\"" + *path + "\": not a directory");
    }
  }
  // A replay file may not exist yet (its writer starts after the agent); a directory is a typo.
  if (!config.kmsg_path.empty() && IsDirectory(config.kmsg_path)) {
    return Status(StatusCode::kInvalidArgument,
                  "--path.kmsg=\"" + config.kmsg_path + "\": a directory, not a kernel log file");
  }
  if (config.log_level != "debug" && config.log_level != "info" && config.log_level != "warn" &&
      config.log_level != "error") {
    return Status(StatusCode::kInvalidArgument,
                  "--log.level=\"" + config.log_level + "\": expected debug, info, warn or error");
  }
  if (config.log_format != "logfmt" && config.log_format != "json") {
    return Status(StatusCode::kInvalidArgument,
                  "--log.format=\"" + config.log_format + "\": expected logfmt or json");
  }
  bool any = false;
  for (const auto& [name, c] : config.collectors) {
    if (!c.enabled) continue;
    any = true;
    if (c.interval < std::chrono::milliseconds(10)) {
      return Status(StatusCode::kInvalidArgument, "collector " + name + ": interval " +
                                                      FormatDuration(c.interval) +
                                                      " is below the minimum of 10ms");
    }
  }
  if (!any) {
    return Status(
        StatusCode::kInvalidArgument,
        "every collector is disabled; enable at least one (known: " + KnownCollectorNames() + ")");
  }
  if (Status s = ValidateProbeConfig(config.probe); !s.ok()) return s;
  // A drain that waits for a probe no one runs would never drain (issue 37).
  if (config.hooks.confirm_with_probe && !config.probe.enabled) {
    return Status(StatusCode::kInvalidArgument,
                  "hooks.confirm_with_probe needs probe.enabled: true (--probe.enabled)");
  }
  // A hooks.user or hooks.group the system does not know fails now, not at the first drain.
  if (auto credentials = ResolveHookCredentials(config.hooks); !credentials) {
    return credentials.error();
  }
  // Build every enabled detector once: its factory validates the options (names the option).
  for (const auto& [name, d] : config.detectors) {
    if (!d.enabled) continue;
    const detect::DetectorInfo* info = detect::FindDetector(name);
    if (info == nullptr) continue;
    if (auto detector = info->factory(d.options); !detector) return detector.error();
  }
  return Status::Ok();
}

}  // namespace fabricwatch::exporter
