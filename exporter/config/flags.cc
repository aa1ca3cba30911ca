// ParseCommandLine: the flags, in the Prometheus exporter style, generated from the registries
// (--collector.<name>[.<option>], --detector.<name>[.<option>]), applied over the YAML file.

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/duration.h"
#include "collectors/registry.h"
#include "collectors/sys/bounded_file.h"
#include "detectors/registry.h"
#include "exporter/config/config.h"
#include "exporter/config/probe_options.h"
#include "exporter/version.h"

namespace fabricwatch::exporter {
namespace {

// A flag's value and whether it was given (only given flags override the file).
using Slot = std::pair<std::string, CLI::Option*>;

struct CollectorFlags {
  bool enabled = false;
  CLI::Option* enable_flag = nullptr;
  std::string interval;
  CLI::Option* interval_flag = nullptr;
  std::map<std::string, Slot> options;
};

struct DetectorFlags {
  bool enabled = false;
  CLI::Option* enable_flag = nullptr;
  std::map<std::string, Slot> options;
};

// The agent-wide flags; `flags` receives their values.
struct GlobalFlags {
  CLI::Option* listen;
  CLI::Option* telemetry;
  CLI::Option* sysfs;
  CLI::Option* ethtool;
  // --path.<source> of each source a collector declares (CollectorInfo::sources).
  std::vector<std::pair<const SourceSpec*, CLI::Option*>> sources;
  CLI::Option* level;
  CLI::Option* format;
  CLI::Option* state_file;
  CLI::Option* shape_file;
  // --detector.escalation-count / -window, as text until validated.
  std::string escalation_count, escalation_window;
  CLI::Option* escalation_count_flag = nullptr;
  CLI::Option* escalation_window_flag = nullptr;
};

// The HTTP server's bounds (README "HTTP server limits"); durations as text until validated.
struct HttpFlags {
  std::string header_timeout, idle_timeout, write_timeout;
  CLI::Option* max_connections = nullptr;
  CLI::Option* max_per_address = nullptr;
  CLI::Option* max_request_size = nullptr;
};

void AddHttpFlags(CLI::App& app, Config& flags, HttpFlags& h) {
  const HttpLimits defaults;
  h.max_connections = app.add_option(
      "--web.max-connections", flags.http.max_connections,
      "Most HTTP connections open at once (also at most a quarter of the open-file limit); when "
      "full, the oldest connection still sending its request head is closed for the new one. "
      "Default " +
          std::to_string(defaults.max_connections));
  h.max_per_address = app.add_option(
      "--web.max-connections-per-address", flags.http.max_connections_per_address,
      "Most HTTP connections open at once from one source address (IPv4, or IPv6 /64); when "
      "full, that address's oldest idle or stalled connection is closed for the new one, else "
      "the new one is refused. 0: no limit. Default " +
          std::to_string(defaults.max_connections_per_address));
  app.add_option("--web.header-timeout", h.header_timeout,
                 "Time a connection has for its TLS handshake and request head together "
                 "(slowloris bound). Default 10s");
  app.add_option("--web.idle-timeout", h.idle_timeout,
                 "Time a keep-alive connection may wait for its next request. Default 60s");
  app.add_option("--web.write-timeout", h.write_timeout,
                 "Time a client has to read one response. Default 30s");
  h.max_request_size = app.add_option(
      "--web.max-request-size", flags.http.max_head_bytes,
      "Largest request head (request line and header fields) in bytes; larger gets 431. "
      "Default " +
          std::to_string(defaults.max_head_bytes));
}

Status ApplyHttpFlags(const HttpFlags& h, const Config& flags, Config& config) {
  if (h.max_connections->count() > 0) {
    if (flags.http.max_connections == 0) {
      return Status(StatusCode::kInvalidArgument, "--web.max-connections must be at least 1");
    }
    config.http.max_connections = flags.http.max_connections;
  }
  if (h.max_per_address->count() > 0) {
    config.http.max_connections_per_address = flags.http.max_connections_per_address;
  }
  if (h.max_request_size->count() > 0) {
    if (flags.http.max_head_bytes < 256) {
      return Status(StatusCode::kInvalidArgument, "--web.max-request-size must be at least 256");
    }
    config.http.max_head_bytes = flags.http.max_head_bytes;
  }
  const std::pair<const std::string*, std::chrono::milliseconds*> durations[] = {
      {&h.header_timeout, &config.http.header_timeout},
      {&h.idle_timeout, &config.http.idle_timeout},
      {&h.write_timeout, &config.http.write_timeout}};
  const char* names[] = {"--web.header-timeout", "--web.idle-timeout", "--web.write-timeout"};
  for (size_t i = 0; i < 3; ++i) {
    if (durations[i].first->empty()) continue;
    auto value = ParseDuration(*durations[i].first);
    if (!value) return value.error().WithContext(names[i]);
    if (value->count() <= 0) {
      return Status(StatusCode::kInvalidArgument, std::string(names[i]) + " must be positive");
    }
    *durations[i].second = *value;
  }
  return Status::Ok();
}

GlobalFlags AddGlobalFlags(CLI::App& app, Config& flags, Config& config) {
  GlobalFlags g{};
  g.listen = app.add_option("--web.listen-address", flags.listen_address,
                            "Address to listen on for HTTP (host:port, :port for all "
                            "interfaces, port 0 picks a free one). Default " +
                                std::string(kDefaultListenAddress));
  g.telemetry = app.add_option("--web.telemetry-path", flags.telemetry_path,
                               "Path under which metrics are exposed. Default /metrics");
  g.sysfs = app.add_option("--path.sysfs", flags.roots.sysfs,
                           "sysfs mount point, or a replay root shaped like /sys. Default /sys");
  g.ethtool = app.add_option(
      "--path.ethtool", flags.roots.ethtool,
      "Replay directory for ethtool data (DIR/<netdev>/statistics, DIR/<netdev>/module-eeprom) "
      "instead of the kernel; read by the ethtool and optics collectors");
  for (const CollectorInfo& info : CollectorRegistry()) {
    for (const SourceSpec& source : info.sources) {
      std::string help =
          std::string(source.help) + "; read by the " + std::string(info.name) + " collector";
      if (!source.host_path.empty()) {
        help += ". Default: " + std::string(source.host_path) +
                " when --path.sysfs is the host's /sys, else none";
      }
      std::string& value = flags.roots.replays[std::string(source.name)];
      g.sources.emplace_back(
          &source, app.add_option("--path." + std::string(source.name), value, std::move(help)));
    }
  }
  app.add_flag("--metrics.all", config.metrics_all,
               "Export every series the collectors and detectors make, beyond the series budget "
               "(README \"Series budget\"; about 4,400 series on an 8-port RoCE node)");
  app.add_option("--metrics.include", config.metrics_include,
                 "Families the series budget trims to export whole again, comma-separated; a "
                 "name, or a prefix ending in '*' (README \"Series budget\" lists them)")
      ->delimiter(',');
  app.add_option("--web.config.file", config.web_config_file,
                 "exporter-toolkit web configuration file: TLS, client certificates, basic auth, "
                 "response headers (README \"Security\"). Re-read when it changes; an empty "
                 "file or a key with no value is an error, and a reload never turns TLS or auth "
                 "off by a missing field. Default: plain HTTP, no auth");
  app.add_flag("--web.healthz-unauthenticated", config.web_healthz_unauthenticated,
               "Serve /healthz without basic auth (default: every path needs it when "
               "basic_auth_users is set)");
  app.add_option("--config.file", config.config_file,
                 "YAML file with collector intervals and options");
  app.add_flag("--config.check", config.config_check,
               "Validate the configuration and the web configuration file, probe every enabled "
               "collector once, check that every hook is executable by the user it runs as, print "
               "a summary and exit (0 if all usable, 1 otherwise)");
  app.add_flag("--shape.print", config.shape_print,
               "Collect once, print this node's fabric shape (every RDMA port: rate, width, lane "
               "speed, state, firmware, PCIe link, nearest GPU) as YAML and exit; the output is a "
               "valid --shape.file (README \"Fabric shape\")");
  g.level = app.add_option("--log.level", flags.log_level,
                           "Log level: debug, info, warn, error. Default info");
  g.format = app.add_option("--log.format", flags.log_format,
                            "Log format: logfmt or json. Default logfmt");
  return g;
}

std::map<std::string, CollectorFlags> AddCollectorFlags(CLI::App& app) {
  std::map<std::string, CollectorFlags> collector_flags;
  for (const CollectorInfo& info : CollectorRegistry()) {
    const std::string name(info.name);
    CollectorFlags& f = collector_flags[name];
    f.enable_flag = app.add_flag("--collector." + name + ",!--no-collector." + name, f.enabled,
                                 "Enable the " + name + " collector (default: " +
                                     (info.enabled_by_default ? "enabled" : "disabled") + "). " +
                                     std::string(info.description));
    f.interval_flag = app.add_option("--collector." + name + ".interval", f.interval,
                                     "Sampling interval of " + name + " (default " +
                                         FormatDuration(info.default_interval) + ")");
    for (const CollectorOptionSpec& option : info.options) {
      Slot& slot = f.options[std::string(option.key)];
      std::string help(option.help);
      if (!option.default_value.empty()) {
        help += " Default \"" + std::string(option.default_value) + "\"";
      }
      slot.second =
          app.add_option("--collector." + name + "." + std::string(option.key), slot.first, help);
    }
  }
  return collector_flags;
}

std::map<std::string, DetectorFlags> AddDetectorFlags(CLI::App& app) {
  std::map<std::string, DetectorFlags> detector_flags;
  for (const detect::DetectorInfo& info : detect::DetectorRegistry()) {
    const std::string name(info.name);
    DetectorFlags& f = detector_flags[name];
    f.enable_flag = app.add_flag("--detector." + name + ",!--no-detector." + name, f.enabled,
                                 "Enable the " + name + " detector (default: " +
                                     (info.enabled_by_default ? "enabled" : "disabled") + "). " +
                                     std::string(info.description));
    for (const detect::DetectorOptionSpec& option : info.options) {
      Slot& slot = f.options[std::string(option.key)];
      slot.second = app.add_option(
          "--detector." + name + "." + std::string(option.key), slot.first,
          std::string(option.help) + " Default " + std::string(option.default_value));
    }
  }
  return detector_flags;
}

// Reads --config.file into `config` (over the defaults).
Status ApplyConfigFile(Config& config) {
  const std::string& path = config.config_file;
  // A configuration is a few kB; 1 MiB leaves room for a long hooks section and comments.
  auto file = sys::ReadBoundedFile(path, {.kind = "--config.file", .max_bytes = 1 << 20});
  if (!file) return Status(StatusCode::kInvalidArgument, file.error().message());
  return ApplyYaml(file->text, path, config);
}

// Flags given on the command line win over the file.
Status ApplyGivenFlags(const GlobalFlags& g, const Config& flags,
                       std::map<std::string, CollectorFlags>& collector_flags,
                       std::map<std::string, DetectorFlags>& detector_flags, Config& config) {
  if (g.listen->count() > 0) config.listen_address = flags.listen_address;
  if (g.telemetry->count() > 0) config.telemetry_path = flags.telemetry_path;
  if (g.sysfs->count() > 0) config.roots.sysfs = flags.roots.sysfs;
  if (g.ethtool->count() > 0) config.roots.ethtool = flags.roots.ethtool;
  for (const auto& [source, option] : g.sources) {
    if (option->count() > 0) config.roots.SetReplay(*source, flags.roots.Replay(*source));
  }
  if (g.level->count() > 0) config.log_level = flags.log_level;
  if (g.format->count() > 0) config.log_format = flags.log_format;
  for (auto& [name, f] : collector_flags) {
    CollectorConfig& c = config.collectors[name];
    if (f.enable_flag->count() > 0) c.enabled = f.enabled;
    if (f.interval_flag->count() > 0) {
      auto interval = ParseDuration(f.interval);
      if (!interval) return interval.error().WithContext("--collector." + name + ".interval");
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
  if (g.escalation_count_flag->count() > 0) {
    Status s = ApplyEngineDetectorOption("escalation-count", g.escalation_count,
                                         "--detector.escalation-count", config);
    if (!s.ok()) return s;
  }
  if (g.escalation_window_flag->count() > 0) {
    Status s = ApplyEngineDetectorOption("escalation-window", g.escalation_window,
                                         "--detector.escalation-window", config);
    if (!s.ok()) return s;
  }
  if (g.state_file->count() > 0) config.state_file = flags.state_file;
  // --shape.file is the option of the detector that declares it (shape_file_option,
  // detectors/core/declaration.h: link_degraded's shape-file, which loads and checks it).
  if (g.shape_file->count() > 0) {
    for (const detect::DetectorInfo& info : detect::DetectorRegistry()) {
      const std::string_view option = info.declaration.shape_file_option;
      if (option.empty()) continue;
      config.detectors[std::string(info.name)].options[std::string(option)] = flags.shape_file;
    }
  }
  return Status::Ok();
}

}  // namespace

Result<ParsedCommandLine> ParseCommandLine(int argc, const char* const* argv) {
  ParsedCommandLine parsed;
  Config& config = parsed.config;
  config = RegistryDefaults();

  CLI::App app(
      "fabricwatch samples the RDMA fabric (InfiniBand, RoCE) of this node on its own cadence, "
      "detects faults and exports Prometheus metrics.",
      "fabricwatch");
  app.get_formatter()->column_width(44);
  Config flags = config;  // values flags write into; applied only when given
  bool version = false;
  bool help_metrics = false;
  bool help_registry = false;
  bool detectors_off = false;
  GlobalFlags global = AddGlobalFlags(app, flags, config);
  HttpFlags http_flags;
  AddHttpFlags(app, flags, http_flags);
  ProbeFlags probe_flags;
  AddProbeFlags(app, probe_flags);
  app.add_flag("--version", version, "Print the version and exit");
  app.add_flag("--help-metrics", help_metrics,
               "Print the metric reference of every collector (Markdown) and exit");
  app.add_flag("--help-registry", help_registry,
               "Print the tables of collectors and detectors with their options and defaults "
               "(Markdown) and exit");
  auto collector_flags = AddCollectorFlags(app);
  app.add_flag("--detector.disable-defaults", detectors_off,
               "Disable every detector that the configuration does not enable by name "
               "(--detector.<name> or detectors.<name>.enabled); the agent then only exports");
  auto detector_flags = AddDetectorFlags(app);
  global.escalation_count_flag = app.add_option(
      "--detector.escalation-count", global.escalation_count,
      "Warnings of one entity (detector and entity labels) within --detector.escalation-window "
      "that escalate to a critical finding of that entity, with the raise times as evidence; 0 "
      "disables escalation. Default 3");
  global.escalation_window_flag = app.add_option(
      "--detector.escalation-window", global.escalation_window,
      "Window of --detector.escalation-count; the escalated critical clears once the warning is "
      "clear and a window has passed since its last raise. Default 1h");
  global.shape_file = app.add_option(
      "--shape.file", flags.shape_file,
      "Shape manifest: what this node's fabric ports should be (a port list or counts such as "
      "\"8 InfiniBand ports at >= 400 Gb/s 4X\"), checked by link_degraded; --shape.print "
      "writes one. Empty (default): the expected shape is learned from siblings and history");
  global.state_file = app.add_option(
      "--state.file", flags.state_file,
      "File where detector state (flap history, baselines, the learned fabric shape, active "
      "anomalies) survives restarts; "
      "written atomically; locked against a second agent (FILE.lock holds the owner's pid); "
      "a path that is not a regular file of the agent's user (device, FIFO, symlink, ...) is "
      "refused. Empty (default): not persisted");
  app.footer(
      "Collectors sample on their own cadence into an in-memory snapshot; a scrape renders the "
      "latest snapshot and never touches a device. See README.md for the metric reference.\n"
      "Signals: SIGTERM, SIGINT, SIGQUIT stop (hooks killed, state saved); SIGHUP reloads "
      "--config.file and the web configuration (a new agent replaces the running one on the same "
      "address; an invalid configuration is logged and the running one kept); SIGUSR1, SIGUSR2 "
      "and other terminating signals are logged and ignored.\n"
      "Subcommands: `fabricwatch check [FLAGS] [--check.output=text|json] [--check.agent-url=URL] "
      "[--check.probe]` gives a one-shot node health verdict from one look and the running "
      "agent's findings (exit 0 healthy, 1 warning, 2 unhealthy; docs/check.md, `fabricwatch "
      "check --help`); `fabricwatch probe DEVICE/PORT` runs one active RDMA probe "
      "(docs/probe.md).");

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
  if (help_registry) {
    parsed.action = Action::kHelpRegistry;
    parsed.output = RegistryTablesMarkdown();
    return parsed;
  }
  // Defaults < --detector.disable-defaults < the file < the other flags.
  if (detectors_off) {
    for (auto& [name, d] : config.detectors) d.enabled = false;
  }
  if (!config.config_file.empty()) {
    if (Status s = ApplyConfigFile(config); !s.ok()) return Error(s);
  }
  Status applied = ApplyGivenFlags(global, flags, collector_flags, detector_flags, config);
  if (!applied.ok()) return Error(applied);
  if (Status s = ApplyHttpFlags(http_flags, flags, config); !s.ok()) return Error(s);
  if (Status s = ApplyProbeFlags(probe_flags, config.probe); !s.ok()) return Error(s);
  if (Status s = Validate(config); !s.ok()) return Error(s);
  return parsed;
}

}  // namespace fabricwatch::exporter
