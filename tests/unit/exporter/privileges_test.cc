// Least privilege (exporter/privileges.h): the effective set from /proc/self/status, one log line
// per missing capability, fabricwatch_privilege_missing, and confirmation of a refusal.

#include "exporter/privileges.h"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "collectors/kmsg/kmsg.h"
#include "exporter/http/render.h"
#include "tests/testing/fake_filesystem.h"

namespace fabricwatch::exporter {
namespace {

constexpr uint64_t kNetAdmin = uint64_t{1} << CAP_NET_ADMIN;

const PrivilegeNeed* Need(std::string_view feature) {
  for (const PrivilegeNeed* need : PrivilegeNeeds()) {
    if (need->feature == feature) return need;
  }
  return nullptr;
}

struct Logged {
  std::shared_ptr<std::ostringstream> text = std::make_shared<std::ostringstream>();
  std::shared_ptr<spdlog::logger> logger = std::make_shared<spdlog::logger>(
      "privileges", std::make_shared<spdlog::sinks::ostream_sink_mt>(*text));
  int Lines() const {
    const std::string s = text->str();
    return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
  }
};

std::string Exposition(const PrivilegeLog& log) {
  MetricSink sink;
  log.Export(sink);
  return RenderText(sink.TakeFamilies());
}

TEST(PrivilegeNeedsTest, module_eeprom_needs_cap_net_admin) {
  const PrivilegeNeed* need = Need("module_eeprom");
  ASSERT_NE(need, nullptr);
  EXPECT_EQ(need->capability, "CAP_NET_ADMIN");
  EXPECT_EQ(need->number, CAP_NET_ADMIN);
  EXPECT_EQ(need->collector, "optics");
  for (const PrivilegeNeed* n : PrivilegeNeeds()) {
    EXPECT_TRUE(n->capability.starts_with("CAP_")) << n->capability;
    EXPECT_FALSE(n->loses.empty()) << n->feature;
  }
}

// A replay needs no capability: the collectors' own in_use rules (collectors/optics, kmsg) say a
// feature is used only when the kernel is read.
TEST(PrivilegeNeedsTest, a_feature_is_in_use_only_when_the_kernel_is_read) {
  const PrivilegeNeed* eeprom = Need("module_eeprom");
  const PrivilegeNeed* kernel_log = Need("kernel_log");
  ASSERT_NE(eeprom, nullptr);
  ASSERT_NE(kernel_log, nullptr);
  ASSERT_NE(eeprom->in_use, nullptr);
  ASSERT_NE(kernel_log->in_use, nullptr);
  Roots host{.sysfs = "/sys", .host = true};
  EXPECT_TRUE(eeprom->in_use(host));
  Roots replay_ethtool = host;
  replay_ethtool.ethtool = "/tmp/replay/ethtool";
  EXPECT_FALSE(eeprom->in_use(replay_ethtool));
  const Roots replay_root{.sysfs = "/tmp/replay/sys", .host = false};
  EXPECT_FALSE(eeprom->in_use(replay_root));
  EXPECT_FALSE(kernel_log->in_use(replay_root));  // no kernel log at all
  Roots kmsg_file = host;
  kmsg_file.SetReplay(kmsg::kKernelLog, "/tmp/replay/kmsg");
  EXPECT_FALSE(kernel_log->in_use(kmsg_file));
}

TEST(ParseEffectiveCapabilitiesTest, table) {
  struct Case {
    std::string_view text;
    std::optional<uint64_t> want;  // nullopt: an error
  };
  const Case cases[] = {
      {"Name:\tfabricwatch\nCapInh:\t0000000000000000\nCapPrm:\t0000000000001000\n"
       "CapEff:\t0000000000001000\nCapBnd:\t000001ffffffffff\n",
       kNetAdmin},
      {"CapEff:\t000001ffffffffff\n", 0x1ffffffffffull},
      {"CapEff:\t0000000000000000", 0},  // no final newline
      {"CapEff: 0000000000003000 \r\n", 0x3000},
      {"CapPrm:\t0000000000001000\n", std::nullopt},  // no CapEff line
      {"CapEff:\t\n", std::nullopt},
      {"CapEff:\tzz00000000001000\n", std::nullopt},
      {"CapEff:\t1ffffffffffffffff0\n", std::nullopt},  // more than 64 bits
      {"XCapEff:\t0000000000001000\n", std::nullopt},
      {"", std::nullopt},
  };
  for (const Case& c : cases) {
    auto got = ParseEffectiveCapabilities(c.text);
    if (c.want) {
      ASSERT_TRUE(got.has_value()) << c.text << ": " << got.error().ToString();
      EXPECT_EQ(*got, *c.want) << c.text;
    } else {
      EXPECT_FALSE(got.has_value()) << c.text;
    }
  }
}

TEST(EffectiveCapabilitiesTest, reads_proc_self_status) {
  testing::FakeFileSystem filesystem;
  filesystem.SetContent("/proc/self/status", "Name:\tx\nCapEff:\t0000000000001000\n");
  auto caps = EffectiveCapabilities(filesystem);
  ASSERT_TRUE(caps.has_value()) << caps.error().ToString();
  EXPECT_EQ(*caps, kNetAdmin);
  filesystem.SetContent("/proc/self/status", "Name:\tx\n");
  auto none = EffectiveCapabilities(filesystem);
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message().find("/proc/self/status"), std::string::npos)
      << none.error().ToString();
}

TEST(EffectiveCapabilitiesTest, real_proc_parses) {
  // The kernel's own file: whatever this process holds, CapEff is there and parses.
  sys::RealFileSystem filesystem;
  EXPECT_TRUE(EffectiveCapabilities(filesystem).has_value());
}

TEST(PrivilegeLogTest, held_capability_logs_nothing_and_exports_zero) {
  Logged logged;
  PrivilegeLog log({Need("module_eeprom")}, Result<uint64_t>(kNetAdmin), logged.logger);
  EXPECT_EQ(logged.Lines(), 0) << logged.text->str();
  EXPECT_FALSE(log.Missing("module_eeprom"));
  EXPECT_NE(Exposition(log).find("fabricwatch_privilege_missing{capability=\"CAP_NET_ADMIN\","
                                 "feature=\"module_eeprom\"} 0\n"),
            std::string::npos)
      << Exposition(log);
}

TEST(PrivilegeLogTest, missing_capability_is_one_line_and_one_series) {
  Logged logged;
  PrivilegeLog log({Need("module_eeprom")}, Result<uint64_t>(0), logged.logger);
  EXPECT_EQ(logged.Lines(), 1) << logged.text->str();
  EXPECT_NE(logged.text->str().find("CAP_NET_ADMIN"), std::string::npos);
  EXPECT_NE(logged.text->str().find("AmbientCapabilities=CAP_NET_ADMIN"), std::string::npos);
  EXPECT_TRUE(log.Missing("module_eeprom"));
  // The refusals that follow (one per module read) add no line.
  const Status eperm(StatusCode::kPermissionDenied, "MODULE_EEPROM_GET: Operation not permitted",
                     EPERM);
  for (int i = 0; i < 5; ++i) log.Refused("module_eeprom", eperm);
  EXPECT_EQ(logged.Lines(), 1) << logged.text->str();
  EXPECT_NE(Exposition(log).find("fabricwatch_privilege_missing{capability=\"CAP_NET_ADMIN\","
                                 "feature=\"module_eeprom\"} 1\n"),
            std::string::npos);
}

TEST(PrivilegeLogTest, refusal_despite_the_effective_set_confirms_it_missing) {
  Logged logged;
  PrivilegeLog log({Need("module_eeprom")}, Result<uint64_t>(kNetAdmin), logged.logger);
  const Status eperm(StatusCode::kPermissionDenied, "MODULE_EEPROM_GET: Operation not permitted",
                     EPERM);
  log.Refused("module_eeprom", eperm);
  log.Refused("module_eeprom", eperm);
  log.Refused("no_such_feature", eperm);  // not in use: ignored
  EXPECT_TRUE(log.Missing("module_eeprom"));
  EXPECT_EQ(logged.Lines(), 1) << logged.text->str();
  EXPECT_NE(logged.text->str().find("although the effective set has it"), std::string::npos)
      << logged.text->str();
  EXPECT_NE(Exposition(log).find("feature=\"module_eeprom\"} 1\n"), std::string::npos);
}

TEST(PrivilegeLogTest, unreadable_effective_set_waits_for_a_refusal) {
  Logged logged;
  PrivilegeLog log({Need("module_eeprom")},
                   Result<uint64_t>(Error(StatusCode::kNotFound, "no CapEff line")), logged.logger);
  EXPECT_EQ(logged.Lines(), 1) << logged.text->str();  // says it cannot tell
  EXPECT_FALSE(log.Missing("module_eeprom"));
  log.Refused("module_eeprom", Status(StatusCode::kPermissionDenied, "refused", EPERM));
  EXPECT_TRUE(log.Missing("module_eeprom"));
  EXPECT_EQ(logged.Lines(), 2) << logged.text->str();
  EXPECT_EQ(logged.text->str().find("although"), std::string::npos) << logged.text->str();
}

TEST(PrivilegeLogTest, nothing_in_use_exports_nothing) {
  Logged logged;
  PrivilegeLog log({}, Result<uint64_t>(0), logged.logger);
  EXPECT_EQ(logged.Lines(), 0);
  EXPECT_EQ(Exposition(log), "");
  EXPECT_EQ(PrivilegeLog::Metrics().size(), 1u);
  EXPECT_TRUE(ValidateDesc(PrivilegeLog::Metrics()[0]).ok());
}

// An ethtool source that answers every module read with one status.
class ModuleSource final : public sys::EthtoolSource {
 public:
  explicit ModuleSource(Status answer) : answer_(std::move(answer)) {}
  Status ReadStatistics(const std::string&, std::vector<sys::EthtoolStat>& stats) override {
    stats.assign(1, sys::EthtoolStat{"rx_packets", 7});
    return Status::Ok();
  }
  Result<sys::PauseInfo> Pause(const std::string&) override { return Unsupported(); }
  Result<sys::FecStats> Fec(const std::string&) override { return Unsupported(); }
  Result<sys::LinkState> LinkStateOf(const std::string&) override { return Unsupported(); }
  Result<sys::PfcConfig> Pfc(const std::string&) override { return Unsupported(); }
  Result<uint32_t> PfcStormTimeoutMs(const std::string&) override { return Unsupported(); }
  Status ReadModuleEeprom(const std::string&, std::vector<uint8_t>& image) override {
    image.clear();
    if (answer_.ok()) image.assign(256, 0x03);
    return answer_;
  }

 private:
  static tl::unexpected<Status> Unsupported() {
    return tl::unexpected<Status>(Status(StatusCode::kUnimplemented, "not here"));
  }
  Status answer_;
};

TEST(WatchPermissionsTest, reports_refused_module_reads_and_forwards_everything) {
  Logged logged;
  PrivilegeLog log({Need("module_eeprom")}, Result<uint64_t>(kNetAdmin), logged.logger);
  auto source = WatchPermissions(
      std::make_unique<ModuleSource>(Status(StatusCode::kPermissionDenied, "EPERM", EPERM)), log);
  ASSERT_NE(source, nullptr);
  auto stats = source->Statistics("eth0");
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->size(), 1u);
  EXPECT_FALSE(log.Missing("module_eeprom"));
  auto image = source->ModuleEeprom("eth0");
  ASSERT_FALSE(image.has_value());
  EXPECT_EQ(image.error().code(), StatusCode::kPermissionDenied);  // passed on unchanged
  EXPECT_TRUE(log.Missing("module_eeprom"));
}

TEST(WatchPermissionsTest, other_answers_are_not_refusals) {
  Logged logged;
  PrivilegeLog log({Need("module_eeprom")}, Result<uint64_t>(kNetAdmin), logged.logger);
  for (Status answer : {Status::Ok(), Status(StatusCode::kUnimplemented, "veth", EOPNOTSUPP),
                        Status(StatusCode::kNoData, "empty cage")}) {
    auto source = WatchPermissions(std::make_unique<ModuleSource>(answer), log);
    (void)source->ModuleEeprom("eth0");
  }
  EXPECT_FALSE(log.Missing("module_eeprom"));
  EXPECT_EQ(logged.Lines(), 0) << logged.text->str();
  EXPECT_EQ(WatchPermissions(nullptr, log), nullptr);
}

}  // namespace
}  // namespace fabricwatch::exporter
