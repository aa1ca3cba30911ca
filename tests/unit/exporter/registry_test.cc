// Meta-tests over the explicit collector registry: every collector's metric table obeys the
// naming contract, has goldens, and is documented in the README exactly as the code says.

#include "collectors/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "collectors/collector_set.h"
#include "collectors/core/device_reads.h"
#include "collectors/sys/sysfs.h"
#include "exporter/config/config.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch {
namespace {

namespace fs = std::filesystem;

class EpochClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override { return {}; }
};

TEST(RegistryTest, names_are_unique_snake_case) {
  std::set<std::string_view> names;
  const std::regex snake("^[a-z][a-z0-9_]*$");
  for (const CollectorInfo& info : CollectorRegistry()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_TRUE(std::regex_match(std::string(info.name), snake)) << info.name;
    EXPECT_FALSE(info.description.empty()) << info.name;
    EXPECT_GE(info.default_interval, std::chrono::milliseconds(100)) << info.name;
    EXPECT_EQ(FindCollector(info.name), &info);
  }
  EXPECT_EQ(FindCollector("no_such_collector"), nullptr);
}

TEST(RegistryTest, every_metric_descriptor_is_valid_and_unique) {
  std::set<std::string_view> metric_names;
  for (const CollectorInfo& info : CollectorRegistry()) {
    EXPECT_FALSE(info.metrics.empty()) << info.name;
    for (const MetricDesc& desc : info.metrics) {
      Status status = ValidateDesc(desc);
      EXPECT_TRUE(status.ok()) << info.name << ": " << status.ToString();
      EXPECT_TRUE(desc.name.starts_with("fabric_") || desc.name.starts_with("fabricwatch_"))
          << desc.name;
      EXPECT_TRUE(metric_names.insert(desc.name).second) << "duplicate " << desc.name;
    }
  }
}

// A collector has one wake signal (exporter/agent.cc): port events or raised findings, not both.
TEST(RegistryTest, a_collector_is_woken_by_one_kind_of_event) {
  for (const CollectorInfo& info : CollectorRegistry()) {
    EXPECT_FALSE(info.reads_rdma_port_events && info.wakes_on_raised_finding) << info.name;
  }
}

// A source makes the flag --path.<name>: two collectors declaring one name, or a name of the
// fixed roots, would make the command line fail to build at every start.
TEST(RegistryTest, sources_and_privileges_are_declared_once_by_their_collector) {
  std::set<std::string_view> sources = {"sysfs", "ethtool"};
  std::set<std::string_view> features;
  for (const CollectorInfo& info : CollectorRegistry()) {
    for (const SourceSpec& source : info.sources) {
      EXPECT_TRUE(std::regex_match(std::string(source.name), std::regex("[a-z][a-z0-9]*")))
          << source.name;
      EXPECT_TRUE(sources.insert(source.name).second) << info.name << ": " << source.name;
      EXPECT_FALSE(source.help.empty()) << source.name;
    }
    for (const PrivilegeNeed& need : info.privileges) {
      EXPECT_EQ(need.collector, info.name) << need.feature;
      EXPECT_TRUE(features.insert(need.feature).second) << need.feature;
    }
  }
}

TEST(RegistryTest, options_are_kebab_case) {
  const std::regex kebab("^[a-z][a-z0-9-]*$");
  for (const CollectorInfo& info : CollectorRegistry()) {
    for (const CollectorOptionSpec& option : info.options) {
      EXPECT_TRUE(std::regex_match(std::string(option.key), kebab)) << option.key;
      EXPECT_FALSE(option.help.empty()) << option.key;
    }
  }
}

TEST(RegistryTest, every_collector_builds_with_defaults_and_reports_no_data_on_an_empty_root) {
  sys::RealFileSystem real;
  sys::SysFs sysfs(testing::FixturePath("sysfs/empty/sys"), real);
  EpochClock clock;
  auto logger =
      std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  // Every registered collector, enabled by default or not, built as the agent builds them.
  const CollectorSources sources{.sysfs = sysfs,
                                 .clock = clock,
                                 .link_events = nullptr,
                                 .rdma_events = nullptr,
                                 .new_ethtool = nullptr,
                                 .logger = [&](std::string_view) { return logger; }};
  auto built = BuildCollectors(sources, [](const CollectorInfo& info) {
    return std::optional<CollectorSelection>({DefaultOptions(info), info.default_interval});
  });
  ASSERT_TRUE(built) << built.error().ToString();
  ASSERT_EQ(built->size(), CollectorRegistry().size());
  for (BuiltCollector& b : *built) {
    MetricSink sink;
    Status status = b.collector->Collect(sink);
    EXPECT_EQ(status.code(), StatusCode::kNoData) << b.info->name << ": " << status.ToString();
    EXPECT_EQ(sink.sample_count(), 0u) << b.info->name;
  }
}

// Every family that appears in a golden is in the collector's table (nothing undocumented),
// and every collector has at least one golden scenario.
TEST(RegistryTest, goldens_exist_and_use_only_declared_metrics) {
  for (const CollectorInfo& info : CollectorRegistry()) {
    std::set<std::string> declared;
    for (const MetricDesc& desc : info.metrics) declared.insert(std::string(desc.name));
    // fabricwatch_collector_device_reads: a self-metric each collector writes about itself.
    declared.insert(std::string(kDeviceReads.name));
    const fs::path dir = testing::SourcePath("tests/golden/collectors/" + std::string(info.name));
    ASSERT_TRUE(fs::is_directory(dir)) << "missing goldens for collector " << info.name;
    int goldens = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() != ".prom") continue;
      ++goldens;
      std::istringstream lines(testing::ReadTextFile(entry.path().string()));
      for (std::string line; std::getline(lines, line);) {
        if (!line.starts_with("# TYPE ")) continue;
        std::string name = line.substr(7, line.find(' ', 7) - 7);
        EXPECT_TRUE(declared.contains(name)) << entry.path() << " has undeclared metric " << name;
      }
    }
    EXPECT_GT(goldens, 0) << info.name;
  }
}

// The README's metric reference is generated from the tables (fabricwatch --help-metrics); this
// fails when someone changes a metric without regenerating it.
TEST(RegistryTest, readme_metric_reference_matches_the_code) {
  const std::string readme = testing::ReadTextFile(testing::SourcePath("README.md"));
  const std::string begin = "<!-- metrics:begin (generated by fabricwatch --help-metrics) -->\n";
  const std::string end = "<!-- metrics:end -->";
  const size_t from = readme.find(begin);
  const size_t to = readme.find(end);
  ASSERT_NE(from, std::string::npos) << "README.md lacks the metrics:begin marker";
  ASSERT_NE(to, std::string::npos) << "README.md lacks the metrics:end marker";
  const std::string section = readme.substr(from + begin.size(), to - from - begin.size());
  EXPECT_EQ(section, exporter::MetricReferenceMarkdown())
      << "README.md metric reference is stale: regenerate it with\n"
         "  tools/update-readme-metrics.sh";
  const std::string registry_begin =
      "<!-- registry:begin (generated by fabricwatch --help-registry) -->\n";
  const size_t registry_from = readme.find(registry_begin);
  const size_t registry_to = readme.find("<!-- registry:end -->");
  ASSERT_NE(registry_from, std::string::npos) << "README.md lacks the registry:begin marker";
  ASSERT_NE(registry_to, std::string::npos) << "README.md lacks the registry:end marker";
  EXPECT_EQ(readme.substr(registry_from + registry_begin.size(),
                          registry_to - registry_from - registry_begin.size()),
            exporter::RegistryTablesMarkdown())
      << "README.md collector and detector tables are stale: regenerate them with\n"
         "  tools/update-readme-metrics.sh";
  for (const CollectorInfo& info : CollectorRegistry()) {
    EXPECT_NE(readme.find("`" + std::string(info.name) + "`"), std::string::npos)
        << "README.md does not mention collector " << info.name;
    EXPECT_NE(readme.find("--collector." + std::string(info.name)), std::string::npos);
  }
}

}  // namespace
}  // namespace fabricwatch
