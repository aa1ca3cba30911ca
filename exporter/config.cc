#include "exporter/config.h"

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "collectors/core/duration.h"
#include "collectors/core/registry.h"
#include "detectors/core/anomaly_tracker.h"
#include "detectors/core/registry.h"
#include "exporter/detector_engine.h"
#include "exporter/hook_runner.h"
#include "exporter/listen_address.h"
#include "exporter/self_metrics.h"
#include "exporter/version.h"

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

Config Defaults() {
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
      bool enabled;
      if (!YAML::convert<bool>::decode(value, enabled)) {
        return Status(StatusCode::kInvalidArgument,
                      where + ": expected true or false, got \"" + value.Scalar() + "\"");
      }
      out.enabled = enabled;
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
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return Status(StatusCode::kInvalidArgument, source + ": invalid YAML: " + e.what());
  }
  if (root.IsNull()) return Status::Ok();  // an empty file is a valid, empty configuration
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
      } else if (key == "store") {
        if (Status s = ExpectMap(value, "store", source); !s.ok()) return s;
        for (const auto& entry : value) {
          const std::string sub = entry.first.as<std::string>();
          const std::string where = Where(entry.second, source) + ": store." + sub;
          if (sub != "history_samples") {
            return Status(StatusCode::kInvalidArgument,
                          where + ": unknown key (known: history_samples)");
          }
          int samples = 0;
          if (!YAML::convert<int>::decode(entry.second, samples) || samples < 2 ||
              samples > 100000) {
            return Status(StatusCode::kInvalidArgument,
                          where + ": expected an integer between 2 and 100000");
          }
          config.history_samples = static_cast<size_t>(samples);
        }
      } else if (key == "detectors") {
        if (value.IsNull()) continue;
        if (Status s = ExpectMap(value, "detectors", source); !s.ok()) return s;
        for (const auto& entry : value) {
          const std::string name = entry.first.as<std::string>();
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
              bool enabled;
              if (!YAML::convert<bool>::decode(option.second, enabled)) {
                return Status(StatusCode::kInvalidArgument,
                              where + ": expected true or false, got \"" +
                                  option.second.Scalar() + "\"");
              }
              d.enabled = enabled;
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
      } else {
        return Status(StatusCode::kInvalidArgument,
                      Where(section.first, source) + ": unknown top-level key \"" + key +
                          "\" (known: collectors, store, detectors, hooks)");
      }
    }
  } catch (const YAML::Exception& e) {
    return Status(StatusCode::kInvalidArgument, source + ": " + e.what());
  }
  return Status::Ok();
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
      return Status(StatusCode::kInvalidArgument,
                    "collector " + name + ": interval " + FormatDuration(c.interval) +
                        " is below the minimum of 10ms");
    }
  }
  if (!any) {
    return Status(StatusCode::kInvalidArgument,
                  "every collector is disabled; enable at least one (known: " +
                      KnownCollectorNames() + ")");
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

Result<ParsedCommandLine> ParseCommandLine(int argc, const char* const* argv) {
  ParsedCommandLine parsed;
  Config& config = parsed.config;
  config = Defaults();

  CLI::App app(
      "fabricwatch samples the RDMA fabric (InfiniBand, RoCE) of this node on its own cadence, "
      "detects faults and exports Prometheus metrics.",
      "fabricwatch");
  app.get_formatter()->column_width(44);
  Config flags = config;  // values flags write into; applied only when given
  std::string interval_text;
  bool version = false;
  bool help_metrics = false;
  auto* listen = app.add_option("--web.listen-address", flags.listen_address,
                                "Address to listen on for HTTP (host:port, :port for all "
                                "interfaces, port 0 picks a free one). Default " +
                                    std::string(kDefaultListenAddress));
  auto* telemetry = app.add_option("--web.telemetry-path", flags.telemetry_path,
                                   "Path under which metrics are exposed. Default /metrics");
  auto* sysfs = app.add_option("--path.sysfs", flags.sysfs_path,
                               "sysfs mount point, or a replay root shaped like /sys. Default /sys");
  auto* ethtool = app.add_option(
      "--path.ethtool", flags.ethtool_path,
      "Replay directory for ethtool data (DIR/<netdev>/statistics, DIR/<netdev>/module-eeprom) "
      "instead of the kernel; read by the ethtool and optics collectors");
  app.add_option("--config.file", config.config_file,
                 "YAML file with collector intervals and options");
  app.add_flag("--config.check", config.config_check,
               "Validate the configuration, probe every enabled collector once, print a summary "
               "and exit (0 if all usable, 1 otherwise)");
  auto* level = app.add_option("--log.level", flags.log_level,
                               "Log level: debug, info, warn, error. Default info");
  auto* format = app.add_option("--log.format", flags.log_format,
                                "Log format: logfmt or json. Default logfmt");
  app.add_flag("--version", version, "Print the version and exit");
  app.add_flag("--help-metrics", help_metrics,
               "Print the metric reference of every collector (Markdown) and exit");

  struct CollectorFlags {
    bool enabled = false;
    CLI::Option* enable_flag = nullptr;
    std::string interval;
    CLI::Option* interval_flag = nullptr;
    std::map<std::string, std::pair<std::string, CLI::Option*>> options;
  };
  std::map<std::string, CollectorFlags> collector_flags;
  for (const CollectorInfo& info : CollectorRegistry()) {
    const std::string name(info.name);
    CollectorFlags& f = collector_flags[name];
    f.enable_flag = app.add_flag(
        "--collector." + name + ",!--no-collector." + name, f.enabled,
        "Enable the " + name + " collector (default: " +
            (info.enabled_by_default ? "enabled" : "disabled") + "). " +
            std::string(info.description));
    f.interval_flag = app.add_option("--collector." + name + ".interval", f.interval,
                                     "Sampling interval of " + name + " (default " +
                                         FormatDuration(info.default_interval) + ")");
    for (const CollectorOptionSpec& option : info.options) {
      auto& slot = f.options[std::string(option.key)];
      std::string help(option.help);
      if (!option.default_value.empty()) help += " Default \"" + std::string(option.default_value) + "\"";
      slot.second =
          app.add_option("--collector." + name + "." + std::string(option.key), slot.first, help);
    }
  }
  struct DetectorFlags {
    bool enabled = false;
    CLI::Option* enable_flag = nullptr;
    std::map<std::string, std::pair<std::string, CLI::Option*>> options;
  };
  std::map<std::string, DetectorFlags> detector_flags;
  for (const detect::DetectorInfo& info : detect::DetectorRegistry()) {
    const std::string name(info.name);
    DetectorFlags& f = detector_flags[name];
    f.enable_flag = app.add_flag("--detector." + name + ",!--no-detector." + name, f.enabled,
                                 "Enable the " + name + " detector (default: " +
                                     (info.enabled_by_default ? "enabled" : "disabled") + "). " +
                                     std::string(info.description));
    for (const detect::DetectorOptionSpec& option : info.options) {
      auto& slot = f.options[std::string(option.key)];
      slot.second = app.add_option("--detector." + name + "." + std::string(option.key),
                                   slot.first,
                                   std::string(option.help) + " Default " +
                                       std::string(option.default_value));
    }
  }
  auto* state_file = app.add_option(
      "--state.file", flags.state_file,
      "File where detector state (flap history, baselines, active anomalies) survives restarts; "
      "written atomically. Empty (default): not persisted");
  app.footer(
      "Collectors sample on their own cadence into an in-memory snapshot; a scrape renders the "
      "latest snapshot and never touches a device. See README.md for the metric reference.");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    parsed.action = Action::kHelp;
    parsed.output = app.help();
    return parsed;
  } catch (const CLI::ParseError& e) {
    return Error(StatusCode::kInvalidArgument, std::string(e.what()) + " (see --help)");
  }
  if (version) {
    parsed.action = Action::kVersion;
    parsed.output = std::string("fabricwatch ") + kVersion + " (revision " + kRevision + ")\n";
    return parsed;
  }
  if (help_metrics) {
    parsed.action = Action::kHelpMetrics;
    parsed.output = MetricReferenceMarkdown();
    return parsed;
  }

  if (!config.config_file.empty()) {
    std::error_code ec;
    if (std::filesystem::is_directory(config.config_file, ec)) {
      return Error(StatusCode::kInvalidArgument,
                   "--config.file=\"" + config.config_file + "\": is a directory, not a file");
    }
    std::ifstream in(config.config_file);
    if (!in) {
      return Error(StatusCode::kInvalidArgument,
                   "--config.file=\"" + config.config_file + "\": cannot be read: " +
                       std::strerror(errno));
    }
    std::stringstream text;
    text << in.rdbuf();
    if (in.bad()) {
      return Error(StatusCode::kInvalidArgument,
                   "--config.file=\"" + config.config_file + "\": read error");
    }
    if (Status s = ApplyYaml(text.str(), config.config_file, config); !s.ok()) return Error(s);
  }

  // Flags given on the command line win over the file.
  if (listen->count() > 0) config.listen_address = flags.listen_address;
  if (telemetry->count() > 0) config.telemetry_path = flags.telemetry_path;
  if (sysfs->count() > 0) config.sysfs_path = flags.sysfs_path;
  if (ethtool->count() > 0) config.ethtool_path = flags.ethtool_path;
  if (level->count() > 0) config.log_level = flags.log_level;
  if (format->count() > 0) config.log_format = flags.log_format;
  for (auto& [name, f] : collector_flags) {
    CollectorConfig& c = config.collectors[name];
    if (f.enable_flag->count() > 0) c.enabled = f.enabled;
    if (f.interval_flag->count() > 0) {
      auto interval = ParseDuration(f.interval);
      if (!interval) return Error(interval.error().WithContext("--collector." + name + ".interval"));
      c.interval = *interval;
    }
    for (auto& [key, slot] : f.options) {
      if (slot.second->count() > 0) c.options[key] = slot.first;
    }
  }
  for (auto& [name, f] : detector_flags) {
    DetectorConfig& d = config.detectors[name];
    if (f.enable_flag->count() > 0) d.enabled = f.enabled;
    for (auto& [key, slot] : f.options) {
      if (slot.second->count() > 0) d.options[key] = slot.first;
    }
  }
  if (state_file->count() > 0) config.state_file = flags.state_file;
  if (Status s = Validate(config); !s.ok()) return Error(s);
  return parsed;
}

namespace {

std::string MetricTable(std::span<const MetricDesc> metrics) {
  std::string out = "| metric | type | labels | description |\n|---|---|---|---|\n";
  for (const MetricDesc& desc : metrics) {
      std::string labels;
      for (std::string_view label : desc.labels) {
        if (!labels.empty()) labels += ", ";
        labels += "`" + std::string(label) + "`";
      }
      const char* type = desc.kind == MetricKind::kCounter   ? "counter"
                         : desc.kind == MetricKind::kInfo    ? "info"
                         : desc.kind == MetricKind::kUntyped ? "untyped"
                                                             : "gauge";
      std::string help(desc.help);
      for (char& c : help) {
        if (c == '|') c = '/';
      }
      out += "| `" + std::string(desc.name) + "` | " + type + " | " + labels + " | " + help +
             " |\n";
  }
  return out + "\n";
}

}  // namespace

std::string MetricReferenceMarkdown() {
  std::string out = "### The agent itself (always exported)\n\n" + MetricTable(SelfMetricDescs());
  out += "### Node-drain hooks (always exported; `hook` series per configured hook)\n\n" +
         MetricTable(HookRunner::MetricDescs());
  for (const CollectorInfo& info : CollectorRegistry()) {
    out += "### Collector `" + std::string(info.name) + "`\n\n" + MetricTable(info.metrics);
  }
  out += "### Anomalies (every detector, design.md §5)\n\n" +
         MetricTable(detect::AnomalyTracker::Metrics()) +
         "### The detector engine\n\n" + MetricTable(DetectorEngine::Metrics());
  for (const detect::DetectorInfo& info : detect::DetectorRegistry()) {
    out += "### Detector `" + std::string(info.name) + "`\n\n" + MetricTable(info.metrics);
  }
  return out;
}

}  // namespace fabricwatch::exporter
