// The IB MTU of RDMA ports (issue 34): the enum ibv_mtu mapping, the replay file form, the rdma
// collector with a fake source (values, absence, errors, the query interval, hot unplug) and
// with replay files, and the verbs query on a machine without a matching device.

#include "collectors/rdma/rdma_mtu.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <spdlog/sinks/ostream_sink.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "collectors/rdma/rdma.h"
#include "collectors/rdma/rdma_parse.h"
#include "collectors/sys/sysfs.h"
#include "collectors/sys/verbs_ports.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::rdma {
namespace {

namespace fs = std::filesystem;
using testing::FixturePath;
using ::testing::HasSubstr;
using ::testing::Not;

static_assert(IBV_MTU_256 == 1 && IBV_MTU_4096 == 5, "IbMtuBytes follows libibverbs/verbs.h");

TEST(IbMtuTest, EnumToBytes) {
  const std::map<int, int> expected = {{IBV_MTU_256, 256},
                                       {IBV_MTU_512, 512},
                                       {IBV_MTU_1024, 1024},
                                       {IBV_MTU_2048, 2048},
                                       {IBV_MTU_4096, 4096}};
  for (const auto& [e, bytes] : expected) {
    auto got = IbMtuBytes(e);
    ASSERT_TRUE(got) << e;
    EXPECT_EQ(*got, bytes);
  }
  for (int bad : {0, 6, -1, 255}) {
    auto got = IbMtuBytes(bad);
    ASSERT_FALSE(got) << bad;
    EXPECT_EQ(got.error().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(got.error().message(), HasSubstr("enum ibv_mtu " + std::to_string(bad)));
  }
}

TEST(IbMtuTest, ReplayFileForms) {
  for (const auto& [text, bytes] : std::map<std::string, int>{
           {"4096", 4096}, {"4096 (5)\n", 4096}, {" 1024\n", 1024}, {"256 (1)", 256}}) {
    auto got = ParseIbMtu(text, "f");
    ASSERT_TRUE(got) << text << ": " << got.error().ToString();
    EXPECT_EQ(*got, bytes);
  }
  for (const char* text : {"", "1000", "4096 (4)", "4096 (5", "9000", "x", "-256", "4096 5"}) {
    auto got = ParseIbMtu(text, "ports/1/active_mtu");
    ASSERT_FALSE(got) << text;
    EXPECT_THAT(got.error().message(), HasSubstr("ports/1/active_mtu"));
  }
}

TEST(IbMtuTest, PortAttributes) {
  auto ok = MtuFromPortAttr(IBV_PORT_ACTIVE, IBV_MTU_1024, IBV_MTU_4096, "rxe0 port 1");
  ASSERT_TRUE(ok) << ok.error().ToString();
  EXPECT_EQ(ok->active_bytes, 1024);
  EXPECT_EQ(ok->max_bytes, 4096);
  // An ACTIVE port with a value outside enum ibv_mtu: an error naming port and field.
  auto bad = MtuFromPortAttr(IBV_PORT_ACTIVE, 0, IBV_MTU_4096, "mlx5_0 port 1");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(), HasSubstr("mlx5_0 port 1 active_mtu"));
  // A port without a link may report none: left out quietly.
  auto down = MtuFromPortAttr(IBV_PORT_DOWN, 0, IBV_MTU_4096, "mlx5_0 port 1");
  ASSERT_TRUE(down) << down.error().ToString();
  EXPECT_FALSE(down->active_bytes);
  EXPECT_EQ(down->max_bytes, 4096);
  auto none = MtuFromPortAttr(IBV_PORT_DOWN, 0, 7, "mlx5_0 port 1");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), StatusCode::kNoData);
}

// Answers per device: a value, or an error; counts the reads.
class FakeSource final : public PortMtuSource {
 public:
  std::map<std::string, Result<PortMtu>> answers;
  std::map<std::string, int> reads;
  std::vector<std::string> retained;
  Result<PortMtu> Read(const std::string& device, const std::string& port) override {
    ++reads[device + "/" + port];
    auto it = answers.find(device);
    if (it == answers.end()) return Error(StatusCode::kNoData, "no provider for " + device);
    return it->second;
  }
  void Retain(const std::vector<std::string>& devices) override { retained = devices; }
  void Release() override { ++releases; }
  int releases = 0;
};

struct Harness {
  explicit Harness(const std::string& root, std::unique_ptr<PortMtuSource> source = nullptr,
                   bool host = false)
      : inputs(root), log(std::make_shared<std::ostringstream>()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*log);
    auto logger = std::make_shared<spdlog::logger>("rdma", sink);
    logger->set_level(spdlog::level::debug);
    inputs.UseLogger(logger);
    CollectorContext context = inputs.Context();
    context.roots.host = host;
    auto made = source ? NewRdmaCollectorWithMtuSource(context, std::move(source))
                       : NewRdmaCollector(context);
    EXPECT_TRUE(made) << made.error().ToString();
    collector = std::move(*made);
  }
  struct Run {
    size_t errors;
    std::string error_text;
    std::string text;
  };
  Run Collect() {
    MetricSink sink;
    (void)collector->Collect(sink);
    Run run{sink.error_count(), "", ""};
    for (const Status& e : sink.errors()) run.error_text += e.ToString() + "\n";
    run.text = testing::Exposition(sink.TakeFamilies());
    return run;
  }
  testing::CollectorTestContext inputs;
  std::shared_ptr<std::ostringstream> log;
  std::unique_ptr<Collector> collector;
};

const std::string kMlx5 = "sysfs/rdma-mlx5/sys";

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

TEST(RdmaMtuCollectorTest, FakeSourceValuesAbsenceAndErrors) {
  auto fake = std::make_unique<FakeSource>();
  FakeSource* source = fake.get();
  source->answers.emplace("mlx5_0", PortMtu{4096, 4096});
  source->answers.emplace("mlx5_1", PortMtu{1024, 4096});
  source->answers.emplace("ibp202s0",
                          Result<PortMtu>(Error(StatusCode::kInvalidArgument, "enum ibv_mtu 7")));
  Harness h(FixturePath(kMlx5), std::move(fake));
  auto run = h.Collect();
  EXPECT_THAT(run.text, HasSubstr("fabric_rdma_port_active_mtu_bytes{device=\"mlx5_0\","
                                  "port=\"1\"} 4096\n"));
  EXPECT_THAT(run.text, HasSubstr("fabric_rdma_port_max_mtu_bytes{device=\"mlx5_0\","
                                  "port=\"1\"} 4096\n"));
  EXPECT_THAT(run.text, HasSubstr("fabric_rdma_port_active_mtu_bytes{device=\"mlx5_1\","
                                  "port=\"1\"} 1024\n"));
  // mlx5_bond_0: no answer (no provider) -> absent, quiet, one debug line however often.
  EXPECT_THAT(run.text, Not(HasSubstr("_mtu_bytes{device=\"mlx5_bond_0\"")));
  // ibp202s0 (two ports): a bad value is an error per port, and no series.
  EXPECT_THAT(run.text, Not(HasSubstr("_mtu_bytes{device=\"ibp202s0\"")));
  EXPECT_EQ(run.errors, 2u) << run.error_text;
  EXPECT_THAT(run.error_text, HasSubstr("enum ibv_mtu 7"));

  // Within mtu-interval (10s) the cached values are exported without a read.
  h.inputs.clock().offset += std::chrono::seconds(5);
  run = h.Collect();
  EXPECT_EQ(source->reads["mlx5_0/1"], 1);
  EXPECT_THAT(run.text, HasSubstr("fabric_rdma_port_active_mtu_bytes{device=\"mlx5_1\","
                                  "port=\"1\"} 1024\n"));
  // One failed query is one error (issue 34 review): the samples until the next query report
  // none, and export no MTU for the port either.
  EXPECT_EQ(run.errors, 0u) << run.error_text;
  EXPECT_THAT(run.text, Not(HasSubstr("_mtu_bytes{device=\"ibp202s0\"")));
  // An operator raises mlx5_1's MTU: seen at the next read.
  source->answers.insert_or_assign("mlx5_1", PortMtu{4096, 4096});
  h.inputs.clock().offset += std::chrono::seconds(5);
  run = h.Collect();
  EXPECT_EQ(source->reads["mlx5_0/1"], 2);
  EXPECT_THAT(run.text, HasSubstr("fabric_rdma_port_active_mtu_bytes{device=\"mlx5_1\","
                                  "port=\"1\"} 4096\n"));
  EXPECT_EQ(run.errors, 2u) << run.error_text;  // the next query fails again: counted again
  EXPECT_EQ(source->reads["ibp202s0/1"], 2);
  // It recovers: its values come back at the next query, and no error.
  source->answers.insert_or_assign("ibp202s0", PortMtu{2048, 4096});
  h.inputs.clock().offset += std::chrono::seconds(10);
  run = h.Collect();
  EXPECT_EQ(run.errors, 0u) << run.error_text;
  EXPECT_THAT(run.text, HasSubstr("fabric_rdma_port_active_mtu_bytes{device=\"ibp202s0\","
                                  "port=\"1\"} 2048\n"));
  EXPECT_EQ(Count(h.log->str(), "no IB MTU for mlx5_bond_0 port 1"), 1u) << h.log->str();
  // What a round of reads opened is let go at the end of every collection (verbs contexts).
  EXPECT_EQ(source->releases, 4);
}

TEST(RdmaMtuCollectorTest, ADeviceThatGoesAwayIsForgotten) {
  const fs::path root =
      fs::temp_directory_path() / ("fabricwatch-rdma-mtu-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::copy(FixturePath("sysfs/rdma-mlx5"), root,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  auto fake = std::make_unique<FakeSource>();
  FakeSource* source = fake.get();
  Harness h((root / "sys").string(), std::move(fake));
  h.Collect();
  EXPECT_EQ(source->retained.size(), 4u);
  fs::remove_all(root / "sys/class/infiniband/mlx5_1");  // the class link: hot unplug
  h.Collect();
  EXPECT_EQ(source->retained, (std::vector<std::string>{"ibp202s0", "mlx5_0", "mlx5_bond_0"}));
  fs::remove_all(root);
}

TEST(RdmaMtuCollectorTest, ReplayFiles) {
  const fs::path root =
      fs::temp_directory_path() / ("fabricwatch-rdma-mtu-replay-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::copy(FixturePath("sysfs/rdma-mlx5"), root,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  const fs::path port = root / "sys/class/infiniband/mlx5_1/ports/1";
  std::ofstream(port / "active_mtu") << "1024\n";
  std::ofstream(port / "max_mtu") << "4096 (5)\n";
  std::ofstream(root / "sys/class/infiniband/mlx5_bond_0/ports/1/active_mtu") << "9000\n";
  Harness h((root / "sys").string());
  auto run = h.Collect();
  EXPECT_THAT(run.text, HasSubstr("fabric_rdma_port_active_mtu_bytes{device=\"mlx5_1\","
                                  "port=\"1\"} 1024\n"));
  EXPECT_THAT(run.text, HasSubstr("fabric_rdma_port_max_mtu_bytes{device=\"mlx5_1\","
                                  "port=\"1\"} 4096\n"));
  // The fixture's own files (ibv_devinfo's form on mlx5_0).
  EXPECT_THAT(run.text, HasSubstr("fabric_rdma_port_active_mtu_bytes{device=\"mlx5_0\","
                                  "port=\"1\"} 4096\n"));
  // No replay file: absent, not an error. A bad one: an error naming the file.
  EXPECT_THAT(run.text, Not(HasSubstr("_mtu_bytes{device=\"ibp202s0\"")));
  EXPECT_THAT(run.text, Not(HasSubstr("_mtu_bytes{device=\"mlx5_bond_0\"")));
  EXPECT_EQ(run.errors, 1u) << run.error_text;
  EXPECT_THAT(run.error_text, HasSubstr("mlx5_bond_0/ports/1/active_mtu"));
  fs::remove_all(root);
}

TEST(VerbsPortQueryTest, NoSuchDeviceIsNoDataAndLookedUpAgainOnlyLater) {
  sys::VerbsPortQuery query;
  auto got = query.Query("fabricwatch_no_such_device", 1);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), StatusCode::kNoData);
  got = query.Query("fabricwatch_no_such_device", 1);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), StatusCode::kNoData);
  EXPECT_THAT(got.error().message(), HasSubstr("fabricwatch_no_such_device"));
  EXPECT_EQ(query.open_devices(), 0u);
  query.Release();
  got = query.Query("fabricwatch_no_such_device", 0);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), StatusCode::kInvalidArgument);
  query.Retain({});
}

}  // namespace
}  // namespace fabricwatch::rdma
