#include "exporter/config/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/kmsg/kmsg.h"
#include "collectors/peer/peer.h"
#include "collectors/registry.h"

namespace fabricwatch::exporter {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

Result<ParsedCommandLine> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "fabricwatch");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return ParseCommandLine(static_cast<int>(argv.size()), argv.data());
}

// A fresh temporary directory per test (for --path.sysfs and YAML files), removed afterwards.
class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "fabricwatch-config-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string WriteFile(const std::string& name, const std::string& content) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << content;
    return path.string();
  }
  fs::path dir_;
};

TEST(ParseCommandLineTest, defaults) {
  auto parsed = Parse({});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  EXPECT_EQ(parsed->action, Action::kRun);
  EXPECT_TRUE(parsed->output.empty());
  const Config& config = parsed->config;
  EXPECT_EQ(config.listen_address, ":9868");
  EXPECT_EQ(config.telemetry_path, "/metrics");
  EXPECT_EQ(config.roots.sysfs, "/sys");
  EXPECT_EQ(config.roots.ethtool, "");
  EXPECT_EQ(config.config_file, "");
  EXPECT_FALSE(config.config_check);
  EXPECT_EQ(config.log_level, "info");
  EXPECT_EQ(config.log_format, "logfmt");
  ASSERT_TRUE(config.collectors.contains("netdev"));
  const CollectorConfig& netdev = config.collectors.at("netdev");
  EXPECT_TRUE(netdev.enabled);
  EXPECT_EQ(netdev.interval, milliseconds(1000));
  ASSERT_TRUE(netdev.options.contains("device-exclude"));
  EXPECT_EQ(netdev.options.at("device-exclude"), "^lo$");
  EXPECT_FALSE(netdev.options.contains("device-include"));  // no default: unset
}

// --web.config.file is read by the agent at Start and by --config.check (web_security_test.cc),
// not by the command-line parser; the exemption of /healthz is off unless asked for.
TEST(ParseCommandLineTest, web_config_flags) {
  auto parsed = Parse({});
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->config.web_config_file, "");
  EXPECT_FALSE(parsed->config.web_healthz_unauthenticated);
  parsed = Parse({"--web.config.file=/etc/fabricwatch/web.yml", "--web.healthz-unauthenticated"});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  EXPECT_EQ(parsed->config.web_config_file, "/etc/fabricwatch/web.yml");
  EXPECT_TRUE(parsed->config.web_healthz_unauthenticated);
  auto help = Parse({"--help"});
  ASSERT_TRUE(help.has_value());
  EXPECT_NE(help->output.find("--web.config.file"), std::string::npos);
  EXPECT_NE(help->output.find("--web.healthz-unauthenticated"), std::string::npos);
}

TEST(ParseCommandLineTest, help) {
  for (const char* flag : {"--help", "-h"}) {
    SCOPED_TRACE(flag);
    auto parsed = Parse({flag});
    ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
    EXPECT_EQ(parsed->action, Action::kHelp);
    for (std::string_view text :
         {"--web.listen-address", "--web.telemetry-path", "--path.sysfs", "--collector.netdev",
          "--collector.netdev.interval", "--collector.netdev.device-exclude", "--config.file",
          "--log.level", "--log.format"}) {
      EXPECT_NE(parsed->output.find(text), std::string::npos) << text;
    }
  }
}

TEST(ParseCommandLineTest, version) {
  auto parsed = Parse({"--version"});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  EXPECT_EQ(parsed->action, Action::kVersion);
  EXPECT_TRUE(parsed->output.starts_with("fabricwatch ")) << parsed->output;
  EXPECT_NE(parsed->output.find("revision"), std::string::npos) << parsed->output;
  EXPECT_TRUE(parsed->output.ends_with("\n"));
}

TEST(ParseCommandLineTest, help_metrics) {
  auto parsed = Parse({"--help-metrics"});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  EXPECT_EQ(parsed->action, Action::kHelpMetrics);
  EXPECT_NE(parsed->output.find("fabric_netdev_carrier_changes_total"), std::string::npos);
  EXPECT_NE(parsed->output.find("| metric | type | labels | description |"), std::string::npos);
  EXPECT_EQ(parsed->output, MetricReferenceMarkdown());
}

TEST(ParseCommandLineTest, metric_reference_lists_every_netdev_metric_row) {
  const std::string markdown = MetricReferenceMarkdown();
  EXPECT_NE(markdown.find("### Collector `netdev`"), std::string::npos);
  EXPECT_NE(markdown.find("| `fabric_netdev_carrier_changes_total` | counter | `netdev` |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| `fabric_netdev_info` | info |"), std::string::npos);
}

// --no-collector.<name> for every registered collector.
std::vector<std::string> DisableAllFlags() {
  std::vector<std::string> flags;
  for (const CollectorInfo& info : CollectorRegistry()) {
    flags.push_back("--no-collector." + std::string(info.name));
  }
  return flags;
}

TEST(ParseCommandLineTest, every_collector_disabled_is_an_error) {
  auto parsed = Parse(DisableAllFlags());
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.error().message().find("every collector is disabled"), std::string::npos)
      << parsed.error().message();
  EXPECT_NE(parsed.error().message().find("netdev"), std::string::npos);
}

TEST(ParseCommandLineTest, collector_flags) {
  struct Case {
    std::vector<std::string> args;
    bool enabled;
    milliseconds interval;
  };
  const Case cases[] = {
      {{"--collector.netdev.interval=100ms"}, true, milliseconds(100)},
      {{"--collector.netdev.interval", "2m"}, true, milliseconds(120'000)},
      {{"--collector.netdev.interval=1m30s"}, true, milliseconds(90'000)},
      {{"--collector.netdev.interval=10ms"}, true, milliseconds(10)},
      {{"--collector.netdev"}, true, milliseconds(1000)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0]);
    auto parsed = Parse(c.args);
    ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
    const CollectorConfig& netdev = parsed->config.collectors.at("netdev");
    EXPECT_EQ(netdev.enabled, c.enabled);
    EXPECT_EQ(netdev.interval, c.interval);
  }
}

TEST(ParseCommandLineTest, collector_option_flags) {
  auto parsed = Parse({"--collector.netdev.device-exclude=^(lo|docker.*)$",
                       "--collector.netdev.device-include=eth.*"});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  const CollectorOptions& options = parsed->config.collectors.at("netdev").options;
  EXPECT_EQ(options.at("device-exclude"), "^(lo|docker.*)$");
  EXPECT_EQ(options.at("device-include"), "eth.*");
}

TEST(ParseCommandLineTest, bad_interval_names_the_flag) {
  for (const char* value : {"fast", "5", "-1s", ""}) {
    SCOPED_TRACE(value);
    auto parsed = Parse({std::string("--collector.netdev.interval=") + value});
    ASSERT_FALSE(parsed.has_value());
    EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message().find("--collector.netdev.interval"), std::string::npos)
        << parsed.error().message();
  }
}

TEST(ParseCommandLineTest, interval_below_minimum_is_an_error) {
  auto parsed = Parse({"--collector.netdev.interval=5ms"});
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.error().message().find("below the minimum of 10ms"), std::string::npos)
      << parsed.error().message();
  EXPECT_NE(parsed.error().message().find("netdev"), std::string::npos);
}

TEST(ParseCommandLineTest, unknown_flag_is_an_error_naming_it) {
  auto parsed = Parse({"--collector.netdevv"});
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.error().message().find("--collector.netdevv"), std::string::npos)
      << parsed.error().message();
  EXPECT_NE(parsed.error().message().find("--help"), std::string::npos);

  auto other = Parse({"--bogus=1"});
  ASSERT_FALSE(other.has_value());
  EXPECT_NE(other.error().message().find("--bogus"), std::string::npos) << other.error().message();
}

TEST(ParseCommandLineTest, invalid_flag_values) {
  struct Case {
    std::vector<std::string> args;
    std::string_view message_part;
  };
  const Case cases[] = {
      {{"--log.level=verbose"}, "--log.level=\"verbose\""},
      {{"--log.level=WARN"}, "--log.level"},
      {{"--log.format=xml"}, "--log.format=\"xml\""},
      {{"--path.sysfs=/nonexistent/fabricwatch"}, "--path.sysfs=\"/nonexistent/fabricwatch\""},
      {{"--path.sysfs=/proc/self/stat"}, "not a directory"},
      {{"--path.ethtool=/nonexistent/fabricwatch"}, "--path.ethtool"},
      {{"--web.telemetry-path=metrics"}, "--web.telemetry-path=\"metrics\""},
      {{"--web.telemetry-path=/"}, "--web.telemetry-path"},
      {{"--web.telemetry-path=/healthz"}, "--web.telemetry-path"},
      {{"--web.telemetry-path=/me trics"}, "--web.telemetry-path"},
      {{"--web.telemetry-path=/metrics?x=1"}, "--web.telemetry-path"},
      {{"--web.listen-address=:99999"}, "--web.listen-address=\":99999\""},
      {{"--web.listen-address=nonsense"}, "--web.listen-address=\"nonsense\""},
      {{"--web.listen-address=host.example:80"}, "--web.listen-address"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0]);
    auto parsed = Parse(c.args);
    ASSERT_FALSE(parsed.has_value());
    EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message().find(c.message_part), std::string::npos)
        << parsed.error().message();
  }
}

TEST_F(ConfigTest, valid_flag_values) {
  auto parsed = Parse({"--log.level=debug", "--log.format=json", "--path.sysfs=" + dir_.string(),
                       "--path.ethtool=" + dir_.string(), "--web.telemetry-path=/custom",
                       "--web.listen-address=127.0.0.1:0", "--config.check"});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  const Config& config = parsed->config;
  EXPECT_EQ(config.log_level, "debug");
  EXPECT_EQ(config.log_format, "json");
  EXPECT_EQ(config.roots.sysfs, dir_.string());
  EXPECT_EQ(config.roots.ethtool, dir_.string());
  EXPECT_EQ(config.telemetry_path, "/custom");
  EXPECT_EQ(config.listen_address, "127.0.0.1:0");
  EXPECT_TRUE(config.config_check);
}

// --path.<source> flags come from the collectors' declarations (collectors/core/roots.h): a
// directory source must be a directory, a file source may not exist yet but is not a directory.
TEST_F(ConfigTest, source_flags_are_checked_as_their_collector_declares) {
  const std::string missing = (dir_ / "missing").string();
  const std::string file = WriteFile("a-file", "x");
  auto smp = Parse({"--path.smp=" + dir_.string(), "--path.kmsg=" + missing});
  ASSERT_TRUE(smp.has_value()) << smp.error().ToString();
  EXPECT_EQ(smp->config.roots.Replay(peer::kSmpReplay), dir_.string());
  EXPECT_EQ(smp->config.roots.Replay(kmsg::kKernelLog), missing);
  EXPECT_EQ(smp->config.roots.Replay(peer::kLldpReplay), "");

  auto not_dir = Parse({"--path.smp=" + missing});
  ASSERT_FALSE(not_dir.has_value());
  EXPECT_EQ(not_dir.error().message(), "--path.smp=\"" + missing + "\": not a directory");
  auto file_as_dir = Parse({"--path.procfs=" + file});
  ASSERT_FALSE(file_as_dir.has_value());
  EXPECT_EQ(file_as_dir.error().message(), "--path.procfs=\"" + file + "\": not a directory");
  auto dir_as_file = Parse({"--path.kmsg=" + dir_.string()});
  ASSERT_FALSE(dir_as_file.has_value());
  EXPECT_EQ(dir_as_file.error().message(),
            "--path.kmsg=\"" + dir_.string() + "\": a directory, not a file");
}

TEST(ValidateTest, checks_a_config_directly) {
  auto parsed = Parse({});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
  Config config = parsed->config;
  EXPECT_TRUE(Validate(config).ok());
  config.collectors.at("netdev").interval = milliseconds(9);
  EXPECT_EQ(Validate(config).code(), StatusCode::kInvalidArgument);
  config.collectors.at("netdev").interval = milliseconds(1000);
  for (auto& [name, collector] : config.collectors) collector.enabled = false;
  const Status none = Validate(config);
  EXPECT_NE(none.message().find("every collector is disabled"), std::string::npos);
}

// ---------------------------------------------------------------- ApplyYaml

Config DefaultConfig() {
  auto parsed = Parse({});
  EXPECT_TRUE(parsed.has_value());
  return parsed ? parsed->config : Config{};
}

TEST(ApplyYamlTest, empty_document_is_valid) {
  for (const char* text : {"", "\n", "# only a comment\n", "---\n"}) {
    SCOPED_TRACE(text);
    Config config = DefaultConfig();
    const Status status = ApplyYaml(text, "file.yml", config);
    EXPECT_TRUE(status.ok()) << status.ToString();
    EXPECT_EQ(config.collectors.at("netdev").interval, milliseconds(1000));
    EXPECT_TRUE(config.collectors.at("netdev").enabled);
  }
}

TEST(ApplyYamlTest, collector_settings) {
  Config config = DefaultConfig();
  const Status status = ApplyYaml(
      "collectors:\n"
      "  netdev:\n"
      "    interval: 250ms\n"
      "    enabled: false\n"
      "    device-exclude: \"^(lo|docker.*)$\"\n"
      "    device-include: eth.*\n",
      "file.yml", config);
  ASSERT_TRUE(status.ok()) << status.ToString();
  const CollectorConfig& netdev = config.collectors.at("netdev");
  EXPECT_EQ(netdev.interval, milliseconds(250));
  EXPECT_FALSE(netdev.enabled);
  EXPECT_EQ(netdev.options.at("device-exclude"), "^(lo|docker.*)$");
  EXPECT_EQ(netdev.options.at("device-include"), "eth.*");
}

TEST(ApplyYamlTest, hooks_section) {
  Config defaults;
  EXPECT_TRUE(defaults.hooks.dry_run);  // nothing drains until the operator opts in
  EXPECT_TRUE(defaults.hooks.hooks.empty());
  Config config;
  const Status status = ApplyYaml(
      "hooks:\n  dry_run: false\n  run:\n    - name: slurm\n      command: "
      "[/usr/lib/fabricwatch/hooks/slurm-drain]\n",
      "file.yml", config);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_FALSE(config.hooks.dry_run);
  ASSERT_EQ(config.hooks.hooks.size(), 1u);
  EXPECT_EQ(config.hooks.hooks[0].name, "slurm");
  const Status bad =
      ApplyYaml("hooks:\n  run:\n    - name: s\n      command: \"rm -rf /\"\n", "file.yml", config);
  EXPECT_EQ(bad.message(), "file.yml:4:16: hooks.run[0].command: must be a list");
}

// Booleans are the YAML 1.2 core schema's plain true and false only (collectors/core/
// yaml_reader.h): yaml-cpp's convert<bool> also takes yes/no/on/off and quoted strings, and a
// quoted "no" used to turn hooks.dry_run off (issue 19).
TEST(ApplyYamlTest, boolean_spellings) {
  for (const auto& [value, enabled] :
       {std::pair{"true", true}, std::pair{"false", false}, std::pair{"!!bool true", true}}) {
    SCOPED_TRACE(value);
    Config config = DefaultConfig();
    config.collectors.at("netdev").enabled = !enabled;
    const Status status = ApplyYaml(
        "collectors:\n  netdev:\n    enabled: " + std::string(value) + "\n", "f.yml", config);
    ASSERT_TRUE(status.ok()) << status.ToString();
    EXPECT_EQ(config.collectors.at("netdev").enabled, enabled);
  }
  for (const char* value : {"yes", "no", "on", "off", "True", "FALSE", "1", "\"true\"", "'false'",
                            "\"no\"", "\"off\""}) {
    SCOPED_TRACE(value);
    for (const std::string& yaml :
         {"collectors:\n  netdev:\n    enabled: " + std::string(value) + "\n",
          "detectors:\n  link_flap:\n    enabled: " + std::string(value) + "\n",
          "hooks:\n  dry_run: " + std::string(value) + "\n"}) {
      Config config = DefaultConfig();
      const Status status = ApplyYaml(yaml, "f.yml", config);
      ASSERT_FALSE(status.ok()) << yaml;
      EXPECT_NE(status.message().find("expected true or false (unquoted)"), std::string::npos)
          << status.message();
      EXPECT_TRUE(config.hooks.dry_run) << "a rejected value must never arm a drain";
    }
  }
  Config config = DefaultConfig();
  EXPECT_EQ(ApplyYaml("hooks:\n  dry_run: \"no\"\n", "f.yml", config).message(),
            "f.yml:2:12: hooks.dry_run: expected true or false (unquoted), got the quoted string "
            "\"no\"");
}

// YAML 1.2 requires unique keys; yaml-cpp 0.7 keeps both and the second used to win.
TEST(ApplyYamlTest, duplicate_keys_are_errors_anywhere) {
  struct Case {
    std::string yaml;
    std::string message;
  };
  const Case cases[] = {
      {"hooks:\n  dry_run: true\n  dry_run: false\n",
       "f.yml:3:3: hooks.dry_run: duplicate key (each key may appear once in a mapping)"},
      {"collectors: {}\ncollectors: {}\n",
       "f.yml:2:1: collectors: duplicate key (each key may appear once in a mapping)"},
      {"detectors:\n  link_flap:\n    hard-count: 5\n    hard-count: 2\n",
       "f.yml:4:5: detectors.link_flap.hard-count: duplicate key (each key may appear once in a "
       "mapping)"},
      {"hooks:\n  run:\n    - name: a\n      command: [/bin/true]\n      name: b\n",
       "f.yml:5:7: hooks.run[0].name: duplicate key (each key may appear once in a mapping)"},
      {"hooks:\n  run:\n    - {name: a, command: [/bin/true], env: {A: 1, A: 2}}\n",
       "f.yml:3:51: hooks.run[0].env.A: duplicate key (each key may appear once in a mapping)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    Config config = DefaultConfig();
    EXPECT_EQ(ApplyYaml(c.yaml, "f.yml", config).message(), c.message);
    EXPECT_TRUE(config.hooks.dry_run);
  }
}

TEST(ApplyYamlTest, null_sections_change_nothing) {
  Config config = DefaultConfig();
  const Status status = ApplyYaml("collectors:\n  netdev:\n", "file.yml", config);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_TRUE(config.collectors.at("netdev").enabled);
  EXPECT_EQ(config.collectors.at("netdev").interval, milliseconds(1000));
}

TEST(ApplyYamlTest, errors_name_the_key_and_line) {
  struct Case {
    std::string_view what;
    std::string yaml;
    std::string prefix;                   // "file.yml:<line>:"
    std::vector<std::string_view> parts;  // further substrings of the message
  };
  const Case cases[] = {
      {"unknown top-level key",
       "collectors:\nsettings:\n  a: 1\n",
       "file.yml:2:",
       {"settings: unknown top-level key", "known: collectors, detectors"}},
      {"unknown collector",
       "collectors:\n  nosuch:\n    enabled: true\n",
       "file.yml:2:",
       {"collectors.nosuch", "unknown collector", "known: netdev"}},
      {"unknown option",
       "collectors:\n  netdev:\n    colour: red\n",
       "file.yml:3:",
       {"collectors.netdev.colour", "unknown option", "device-exclude"}},
      {"non-bool enabled",
       "collectors:\n  netdev:\n    enabled: maybe\n",
       "file.yml:3:",
       {"collectors.netdev.enabled", "expected true or false", "\"maybe\""}},
      {"bad interval",
       "collectors:\n  netdev:\n    interval: fast\n",
       "file.yml:3:",
       {"collectors.netdev.interval", "invalid duration \"fast\""}},
      {"non-scalar option",
       "collectors:\n  netdev:\n    interval: [1s]\n",
       "file.yml:3:",
       {"collectors.netdev.interval", "must be a scalar"}},
      {"collector not a mapping",
       "collectors:\n  netdev: 5\n",
       "file.yml:2:",
       {"collectors.netdev: must be a mapping"}},
      {"collectors not a mapping",
       "collectors: [netdev]\n",
       "file.yml:1:",
       {"collectors: must be a mapping"}},
      {"the removed store section",
       "store:\n  history_samples: 120\n",
       "file.yml:1:",
       {"store: unknown top-level key", "known: collectors, detectors, hooks"}},
      {"top level not a mapping", "- a\n- b\n", "file.yml:1:", {"the top level must be a mapping"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.what));
    Config config = DefaultConfig();
    const Status status = ApplyYaml(c.yaml, "file.yml", config);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(status.message().starts_with(c.prefix)) << status.message();
    for (std::string_view part : c.parts) {
      EXPECT_NE(status.message().find(part), std::string::npos)
          << "missing \"" << part << "\" in: " << status.message();
    }
  }
}

TEST(ApplyYamlTest, syntax_error_names_the_file_and_line) {
  struct Case {
    std::string yaml;
    std::string_view line;
  };
  const Case cases[] = {
      {"collectors:\n  netdev: [1, 2}\n", "file.yml:2:"},
      {"collectors:\n  netdev: a: b\n", "file.yml:2:"},
      {"hooks: 1\n  dry_run: 2\n", "file.yml:2:"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    Config config = DefaultConfig();
    const Status status = ApplyYaml(c.yaml, "file.yml", config);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(status.message().starts_with(c.line)) << status.message();
    EXPECT_NE(status.message().find(": not valid YAML: "), std::string::npos) << status.message();
  }
}

TEST(ApplyYamlTest, failed_document_is_reported_before_later_keys) {
  // An error stops at the first bad key; earlier keys of the document may have been applied,
  // but the caller treats the whole configuration as invalid.
  Config config = DefaultConfig();
  const Status status =
      ApplyYaml("collectors:\n  netdev:\n    interval: 2s\nbogus: 1\n", "file.yml", config);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(status.message().starts_with("file.yml:4:")) << status.message();
}

// ---------------------------------------------------------------- precedence

// One flag turns every detector off; a detector named on the command line or in the file is
// enabled again (defaults < --detector.disable-defaults < file < flags).
TEST_F(ConfigTest, detector_disable_defaults_turns_every_detector_off) {
  auto off = Parse({"--detector.disable-defaults"});
  ASSERT_TRUE(off.has_value()) << off.error().ToString();
  for (const auto& [name, d] : off->config.detectors) EXPECT_FALSE(d.enabled) << name;
  EXPECT_FALSE(off->config.detectors.empty());

  auto one = Parse({"--detector.disable-defaults", "--detector.link_flap"});
  ASSERT_TRUE(one.has_value()) << one.error().ToString();
  for (const auto& [name, d] : one->config.detectors) {
    EXPECT_EQ(d.enabled, name == "link_flap") << name;
  }

  const std::string path = WriteFile("detectors.yml",
                                     "detectors:\n"
                                     "  pfc_storm:\n"
                                     "    enabled: true\n");
  auto file = Parse({"--detector.disable-defaults", "--config.file=" + path});
  ASSERT_TRUE(file.has_value()) << file.error().ToString();
  for (const auto& [name, d] : file->config.detectors) {
    EXPECT_EQ(d.enabled, name == "pfc_storm") << name;
  }
}

TEST_F(ConfigTest, flags_override_the_config_file) {
  const std::string path = WriteFile("fabricwatch.yml",
                                     "collectors:\n"
                                     "  netdev:\n"
                                     "    interval: 5s\n"
                                     "    device-exclude: \"^docker.*$\"\n");
  auto yaml_only = Parse({"--config.file=" + path});
  ASSERT_TRUE(yaml_only.has_value()) << yaml_only.error().ToString();
  EXPECT_EQ(yaml_only->config.config_file, path);
  EXPECT_EQ(yaml_only->config.collectors.at("netdev").interval, milliseconds(5000));
  EXPECT_EQ(yaml_only->config.collectors.at("netdev").options.at("device-exclude"), "^docker.*$");

  auto both = Parse({"--config.file=" + path, "--collector.netdev.interval=2s",
                     "--collector.netdev.device-exclude=^lo$"});
  ASSERT_TRUE(both.has_value()) << both.error().ToString();
  EXPECT_EQ(both->config.collectors.at("netdev").interval, milliseconds(2000));
  EXPECT_EQ(both->config.collectors.at("netdev").options.at("device-exclude"), "^lo$");

  // Order on the command line does not matter.
  auto reversed = Parse({"--collector.netdev.interval=2s", "--config.file", path});
  ASSERT_TRUE(reversed.has_value()) << reversed.error().ToString();
  EXPECT_EQ(reversed->config.collectors.at("netdev").interval, milliseconds(2000));
}

TEST_F(ConfigTest, enable_flag_overrides_disabled_in_file) {
  std::string yaml = "collectors:\n";
  for (const CollectorInfo& info : CollectorRegistry()) {
    yaml += "  " + std::string(info.name) + ":\n    enabled: false\n";
  }
  const std::string path = WriteFile("off.yml", yaml);
  auto off = Parse({"--config.file=" + path});
  ASSERT_FALSE(off.has_value());
  EXPECT_NE(off.error().message().find("every collector is disabled"), std::string::npos);

  auto on = Parse({"--config.file=" + path, "--collector.netdev"});
  ASSERT_TRUE(on.has_value()) << on.error().ToString();
  EXPECT_TRUE(on->config.collectors.at("netdev").enabled);
}

TEST_F(ConfigTest, unreadable_config_file_is_an_error) {
  const std::string missing = (dir_ / "missing.yml").string();
  auto parsed = Parse({"--config.file=" + missing});
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.error().message(), "--config.file " + missing + ": does not exist");
}

// Regression: ParseCommandLine once accepted a directory as --config.file: std::ifstream opened it,
// the read fails silently, and the empty text is applied as an empty (valid) configuration.
TEST_F(ConfigTest, directory_as_config_file_is_an_error) {
  auto parsed = Parse({"--config.file=" + dir_.string()});
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.error().message().find("--config.file"), std::string::npos)
      << parsed.error().message();
}

TEST_F(ConfigTest, invalid_config_file_names_the_file_and_line) {
  const std::string path = WriteFile("bad.yml", "collectors:\n  netdev:\n    enabled: maybe\n");
  auto parsed = Parse({"--config.file=" + path});
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(parsed.error().message().starts_with(path + ":3:")) << parsed.error().message();
}

}  // namespace
}  // namespace fabricwatch::exporter

namespace fabricwatch::exporter {
namespace {

TEST(DetectorConfigTest, defaults_flags_and_yaml) {
  auto parsed = Parse({});
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_TRUE(parsed->config.detectors.at("link_flap").enabled);
  EXPECT_TRUE(parsed->config.detectors.at("pfc_storm").enabled);
  EXPECT_TRUE(parsed->config.state_file.empty());

  parsed = Parse({"--no-detector.pfc_storm", "--detector.link_flap.hard-window=2s",
                  "--state.file=/tmp/x.json"});
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_FALSE(parsed->config.detectors.at("pfc_storm").enabled);
  EXPECT_EQ(parsed->config.detectors.at("link_flap").options.at("hard-window"), "2s");
  EXPECT_EQ(parsed->config.state_file, "/tmp/x.json");

  // The detector's factory validates option values at parse time, naming the option.
  auto bad = Parse({"--detector.pfc_storm.storm-ratio=7"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("storm-ratio"), std::string::npos);

  Config config = Parse({})->config;
  ASSERT_TRUE(ApplyYaml("detectors:\n  link_flap:\n    enabled: false\n  pfc_storm:\n"
                        "    detection-time: 5s\n",
                        "test.yaml", config)
                  .ok());
  EXPECT_FALSE(config.detectors.at("link_flap").enabled);
  EXPECT_EQ(config.detectors.at("pfc_storm").options.at("detection-time"), "5s");
  Status unknown = ApplyYaml("detectors:\n  pfc_storm:\n    detection-tim: 5s\n", "t.yaml", config);
  EXPECT_NE(unknown.message().find("detectors.pfc_storm.detection-tim: unknown option"),
            std::string::npos)
      << unknown.message();
  Status no_such = ApplyYaml("detectors:\n  nope: {}\n", "t.yaml", config);
  EXPECT_NE(no_such.message().find("unknown detector"), std::string::npos) << no_such.message();
}

TEST(DetectorConfigTest, metric_reference_lists_detector_metrics) {
  const std::string reference = MetricReferenceMarkdown();
  for (const char* name :
       {"fabric_anomaly_active", "fabric_anomaly_transitions_total", "fabric_link_flap_penalty",
        "fabric_pfc_pause_ratio", "fabricwatch_detector_evaluation_duration_seconds"}) {
    EXPECT_NE(reference.find(name), std::string::npos) << name;
  }
}

// Escalation of repeated warnings (issue 22 item 3): engine-wide, under `detectors:` beside the
// detectors, and as --detector.escalation-count / -window.
TEST(ParseCommandLineTest, escalation_defaults_flags_and_errors) {
  auto defaults = Parse({});
  ASSERT_TRUE(defaults.has_value()) << defaults.error().ToString();
  EXPECT_EQ(defaults->config.escalation_count, 3u);
  EXPECT_EQ(defaults->config.escalation_window, std::chrono::hours(1));
  auto set = Parse({"--detector.escalation-count=0", "--detector.escalation-window=30m"});
  ASSERT_TRUE(set.has_value()) << set.error().ToString();
  EXPECT_EQ(set->config.escalation_count, 0u);
  EXPECT_EQ(set->config.escalation_window, std::chrono::minutes(30));
  auto bad = Parse({"--detector.escalation-count=many"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("--detector.escalation-count"), std::string::npos);
  EXPECT_FALSE(Parse({"--detector.escalation-window=0s"}).has_value());
}

TEST(ApplyYamlTest, escalation_settings_under_detectors) {
  Config config = RegistryDefaults();
  ASSERT_TRUE(ApplyYaml("detectors:\n  escalation-count: 5\n  escalation-window: 2h\n"
                        "  link_flap:\n    enabled: true\n",
                        "file.yml", config)
                  .ok());
  EXPECT_EQ(config.escalation_count, 5u);
  EXPECT_EQ(config.escalation_window, std::chrono::hours(2));
  const Status bad = ApplyYaml("detectors:\n  escalation-count: -1\n", "file.yml", config);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("detectors.escalation-count"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace fabricwatch::exporter
