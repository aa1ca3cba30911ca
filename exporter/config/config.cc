#include "exporter/config/config.h"

#include <sys/stat.h>

#include <charconv>
#include <span>
#include <utility>

#include "base/duration.h"
#include "collectors/registry.h"
#include "base/yaml_reader.h"
#include "detectors/registry.h"
#include "exporter/http/listen_address.h"
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

// The keys of one collector or detector section: enabled (and interval), then its options.
std::vector<std::string_view> SectionKeys(std::initializer_list<std::string_view> fixed,
                                          std::span<const std::string_view> options) {
  std::vector<std::string_view> keys(fixed);
  keys.insert(keys.end(), options.begin(), options.end());
  return keys;
}

// `collectors.<name>` or `detectors.<name>`: enabled, interval (collectors only), and the
// options the registry declares, each a scalar.
Status ApplySectionYaml(const YamlValue& section, std::span<const std::string_view> keys,
                        bool& enabled, std::chrono::milliseconds* interval,
                        std::map<std::string, std::string, std::less<>>& options) {
  auto entries = section.Entries();
  if (!entries) return entries.error();
  if (Status s = section.CheckKeys(keys, "option"); !s.ok()) return s;
  for (const YamlEntry& entry : *entries) {
    if (entry.key == "enabled") {
      auto v = entry.value.Bool();
      if (!v) return v.error();
      enabled = *v;
    } else if (entry.key == "interval" && interval != nullptr) {
      auto v = entry.value.Duration(YamlZero::kAllowed);  // Validate() names the minimum
      if (!v) return v.error();
      *interval = *v;
    } else {
      auto v = entry.value.Scalar();
      if (!v) return v.error();
      options[entry.key] = std::move(*v);
    }
  }
  return Status::Ok();
}

Status ApplyCollectorsYaml(const YamlValue& collectors, Config& config) {
  auto entries = collectors.Entries();
  if (!entries) return entries.error();
  for (const YamlEntry& entry : *entries) {
    const CollectorInfo* info = FindCollector(entry.key);
    if (info == nullptr) {
      return entry.key_node.Fail("unknown collector (known: " + KnownCollectorNames() + ")");
    }
    std::vector<std::string_view> options;
    for (const CollectorOptionSpec& option : info->options) options.push_back(option.key);
    CollectorConfig& c = config.collectors[entry.key];
    Status s = ApplySectionYaml(entry.value, SectionKeys({"enabled", "interval"}, options),
                                c.enabled, &c.interval, c.options);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status ApplyDetectorsYaml(const YamlValue& detectors, Config& config) {
  auto entries = detectors.Entries();
  if (!entries) return entries.error();
  for (const YamlEntry& entry : *entries) {
    if (IsEngineDetectorKey(entry.key)) {
      auto value = entry.value.Scalar();
      if (!value) return value.error();
      const std::string where = entry.value.Where() + ": " + entry.value.path();
      if (Status s = ApplyEngineDetectorOption(entry.key, *value, where, config); !s.ok()) {
        return s;
      }
      continue;
    }
    const detect::DetectorInfo* info = detect::FindDetector(entry.key);
    if (info == nullptr) {
      return entry.key_node.Fail("unknown detector (known: " + KnownDetectorNames() + ")");
    }
    std::vector<std::string_view> options;
    for (const detect::DetectorOptionSpec& spec : info->options) options.push_back(spec.key);
    DetectorConfig& d = config.detectors[entry.key];
    Status s = ApplySectionYaml(entry.value, SectionKeys({"enabled"}, options), d.enabled, nullptr,
                                d.options);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

Status ApplyYaml(const std::string& yaml_text, const std::string& source, Config& config) {
  auto document = YamlDocument::Parse(yaml_text, source);
  if (!document) return document.error();
  if (document->empty()) return Status::Ok();  // an empty file is a valid, empty configuration
  const YamlValue& root = document->root();
  if (!root.IsMap()) return root.Fail("the top level must be a mapping");
  static constexpr std::string_view kSections[] = {"collectors", "detectors", "hooks", "probe"};
  if (Status s = root.CheckKeys(kSections, "top-level key"); !s.ok()) return s;
  if (Status s = ApplyCollectorsYaml(root.Get("collectors"), config); !s.ok()) return s;
  if (Status s = ApplyDetectorsYaml(root.Get("detectors"), config); !s.ok()) return s;
  if (const YamlValue hooks = root.Get("hooks"); hooks.present()) {
    auto parsed = ParseHookConfig(hooks);
    if (!parsed) return parsed.error();
    config.hooks = std::move(*parsed);
  }
  return ApplyProbeYaml(root.Get("probe"), config.probe);
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
  if (!IsDirectory(config.roots.sysfs)) {
    return Status(StatusCode::kInvalidArgument,
                  "--path.sysfs=\"" + config.roots.sysfs + "\": not a directory");
  }
  if (!config.roots.ethtool.empty() && !IsDirectory(config.roots.ethtool)) {
    return Status(StatusCode::kInvalidArgument,
                  "--path.ethtool=\"" + config.roots.ethtool + "\": not a directory");
  }
  for (const CollectorInfo& info : CollectorRegistry()) {
    for (const SourceSpec& source : info.sources) {
      const std::string path = config.roots.Replay(source);
      if (path.empty()) continue;
      const std::string flag = "--path." + std::string(source.name) + "=\"" + path + "\"";
      // A replay file may not exist yet (its writer starts after the agent); a directory is a
      // typo.
      if (source.kind == SourceSpec::Kind::kFile && IsDirectory(path)) {
        return Status(StatusCode::kInvalidArgument, flag + ": a directory, not a file");
      }
      if (source.kind == SourceSpec::Kind::kDirectory && !IsDirectory(path)) {
        return Status(StatusCode::kInvalidArgument, flag + ": not a directory");
      }
    }
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
  // Every enabled detector's options, checked as its factory checks them (the messages name the
  // option) without building it: the agent builds each detector once, from these options.
  for (const auto& [name, d] : config.detectors) {
    if (!d.enabled) continue;
    const detect::DetectorInfo* info = detect::FindDetector(name);
    if (info == nullptr) continue;
    if (Status s = detect::ValidateDetectorOptions(*info, d.options); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace fabricwatch::exporter
