// The `probe:` section, the --probe.* flags and their validation (issue 37), and
// hooks.confirm_with_probe needing probe.enabled.
#include "exporter/config/probe_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "exporter/config/config.h"

namespace fabricwatch::exporter {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

Result<ParsedCommandLine> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "fabricwatch");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return ParseCommandLine(static_cast<int>(argv.size()), argv.data());
}

Config FromYaml(const std::string& yaml) {
  Config config = RegistryDefaults();
  const Status s = ApplyYaml(yaml, "fw.yml", config);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return config;
}

std::string YamlError(const std::string& yaml) {
  Config config = RegistryDefaults();
  Status s = ApplyYaml(yaml, "fw.yml", config);
  if (s.ok()) s = ValidateProbeConfig(config.probe);
  return s.ok() ? "ok" : s.message();
}

TEST(ProbeOptionsTest, DefaultsAreOffAndValid) {
  const Config config = RegistryDefaults();
  EXPECT_FALSE(config.probe.enabled);
  EXPECT_FALSE(config.hooks.confirm_with_probe);
  EXPECT_TRUE(ValidateProbeConfig(config.probe).ok());
}

TEST(ProbeOptionsTest, EveryKeyOfTheSection) {
  const Config config = FromYaml(R"(probe:
  enabled: true
  duration: 2s
  timeout: 10s
  message-size: 1MiB
  window: 32
  degraded-fraction: 0.7
  min-interval: 15m
  allow-with-jobs: true
  partners: {"mlx5_0/1": "mlx5_1/1", "mlx5_2/1": "mlx5_3/1"}
)");
  const probe::ProbeConfig& p = config.probe;
  EXPECT_TRUE(p.enabled);
  EXPECT_EQ(p.options.duration, seconds(2));
  EXPECT_EQ(p.options.timeout, seconds(10));
  EXPECT_EQ(p.options.message_bytes, 1u << 20);
  EXPECT_EQ(p.options.window, 32u);
  EXPECT_DOUBLE_EQ(p.degraded_fraction, 0.7);
  EXPECT_EQ(p.min_interval, std::chrono::minutes(15));
  EXPECT_TRUE(p.allow_with_jobs);
  ASSERT_EQ(p.partners.size(), 2u);
  EXPECT_EQ(p.partners.at({"mlx5_0", 1}), (probe::PortRef{"mlx5_1", 1}));
  EXPECT_TRUE(ValidateProbeConfig(p).ok());
}

TEST(ProbeOptionsTest, ValuesOutOfRangeNameTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"probe:\n  degraded-fraction: 0\n", "probe.degraded-fraction"},
      {"probe:\n  degraded-fraction: 1.5\n", "probe.degraded-fraction"},
      {"probe:\n  degraded-fraction: half\n", "fw.yml:2:22: probe.degraded-fraction"},
      {"probe:\n  duration: 0s\n", "probe.duration"},
      {"probe:\n  duration: 5s\n", "probe.timeout"},  // the default timeout is 5s
      // The latency phase and set-up need duration × 1.1 + 1s: 4s needs 5.4s.
      {"probe:\n  duration: 4s\n",
       "probe.timeout: 5s is too short for probe.duration 4s: at "
       "least 5400ms"},
      {"probe:\n  duration: 1s\n  timeout: 2s\n", "at least 2100ms (duration × 1.1 + 1s"},
      {"probe:\n  min-interval: 0s\n", "probe.min-interval"},
      {"probe:\n  window: 0\n", "fw.yml:2:11: probe.window"},
      {"probe:\n  window: 129\n", "probe.window"},
      {"probe:\n  message-size: 32\n", "probe.message-size"},
      {"probe:\n  message-size: 5MiB\n", "probe.message-size"},
      {"probe:\n  partners: {\"mlx5_0\": \"mlx5_1/1\"}\n", "probe.partners"},
      {"probe:\n  partners: {\"mlx5_0/1\": \"mlx5_0/1\"}\n", "its own partner"},
      {"probe:\n  enabled: yes\n", "probe.enabled"},
      {"probe:\n  speed: 1\n", "probe.speed: unknown key"},
  };
  for (const auto& [yaml, expected] : cases) {
    SCOPED_TRACE(yaml);
    const std::string error = YamlError(yaml);
    EXPECT_NE(error.find(expected), std::string::npos) << error;
  }
  EXPECT_EQ(YamlError("probe:\n  message-size: 64\n  window: 128\n"), "ok");  // the bounds
  EXPECT_EQ(YamlError("probe:\n  duration: 1s\n  timeout: 2100ms\n"), "ok");
  EXPECT_EQ(MinProbeTimeout(seconds(1)), milliseconds(2100));
  EXPECT_EQ(MinProbeTimeout(milliseconds(1)), milliseconds(1002));  // the tenth rounds up
  EXPECT_EQ(YamlError("probe:\n  message-size: 4MiB\n  degraded-fraction: 1\n"), "ok");
}

TEST(ProbeOptionsTest, FlagsWinOverTheFile) {
  auto parsed = Parse({"--probe.enabled", "--probe.duration=500ms", "--probe.degraded-fraction=0.8",
                       "--probe.min-interval=1h", "--probe.allow-with-jobs"});
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  const probe::ProbeConfig& p = parsed->config.probe;
  EXPECT_TRUE(p.enabled);
  EXPECT_EQ(p.options.duration, milliseconds(500));
  EXPECT_DOUBLE_EQ(p.degraded_fraction, 0.8);
  EXPECT_EQ(p.min_interval, std::chrono::hours(1));
  EXPECT_TRUE(p.allow_with_jobs);

  auto bad = Parse({"--probe.degraded-fraction=2"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("probe.degraded-fraction"), std::string::npos);
  bad = Parse({"--probe.min-interval=soon"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("--probe.min-interval"), std::string::npos)
      << bad.error().ToString();
}

// --probe.timeout: the flag the --probe.duration error points at.
TEST(ProbeOptionsTest, TimeoutFlag) {
  auto parsed = Parse({"--probe.duration=10s", "--probe.timeout=12s"});
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(parsed->config.probe.options.timeout, seconds(12));
  auto bad = Parse({"--probe.duration=10s"});  // the default 5s timeout
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("probe.timeout: 5s is too short for probe.duration 10s"),
            std::string::npos)
      << bad.error().ToString();
  bad = Parse({"--probe.timeout=later"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("--probe.timeout"), std::string::npos)
      << bad.error().ToString();
}

TEST(ProbeOptionsTest, ConfirmWithProbeNeedsTheProbe) {
  Config config = FromYaml("hooks:\n  confirm_with_probe: true\n");
  EXPECT_TRUE(config.hooks.confirm_with_probe);
  Status s = Validate(config);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("hooks.confirm_with_probe needs probe.enabled"), std::string::npos)
      << s.ToString();
  config.probe.enabled = true;
  EXPECT_TRUE(Validate(config).ok()) << Validate(config).ToString();
}

}  // namespace
}  // namespace fabricwatch::exporter
