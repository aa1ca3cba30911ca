// Collector `topology` against fixture PCI trees: the nvidia-smi topo -m level of every GPU-NIC
// pair, link health, absent sources, injected failures (FakeFileSystem), and a cross-check of
// the tree walk against real sysfs captures (../shared/fixtures/external). The goldens are data:
// tests/golden/collectors/topology/ (golden_test.cc).

#include "collectors/topology/topology.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/value_parse.h"
#include "collectors/sys/sysfs.h"
#include "collectors/topology/topology_parse.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/fake_filesystem.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::topology {
namespace {

namespace fs = std::filesystem;
using testing::FakeFileSystem;
using testing::FixturePath;
using ::testing::HasSubstr;
using ::testing::Not;

MATCHER_P(HasLine, line, "has the line \"" + std::string(line) + "\"") {
  return ("\n" + std::string(arg)).find("\n" + std::string(line) + "\n") != std::string::npos;
}

std::vector<std::string> LinesWith(const std::string& text, std::string_view needle) {
  std::istringstream lines(text);
  std::vector<std::string> out;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(needle) != std::string::npos) out.push_back(line);
  }
  return out;
}

class Harness {
 public:
  Harness(const std::string& root, const sys::FileSystem& fs) : inputs_(root, fs) {
    auto collector = NewTopologyCollector(inputs_.Context());
    EXPECT_TRUE(collector) << collector.error().ToString();
    if (collector) collector_ = std::move(*collector);
  }
  struct Run {
    Status status;
    size_t errors;
    std::vector<Status> error_list;
    std::string text;
  };
  Run Collect() {
    MetricSink sink;
    Status status = collector_->Collect(sink);
    Run run{status, sink.error_count(), sink.errors(), ""};
    run.text = testing::Exposition(sink.TakeFamilies());
    return run;
  }

 private:
  testing::CollectorTestContext inputs_;
  std::unique_ptr<Collector> collector_;
};

std::string Root(std::string_view scenario) {
  return FixturePath("sysfs/" + std::string(scenario) + "/sys");
}

Harness::Run CollectScenario(std::string_view scenario) {
  sys::RealFileSystem real;
  Harness harness(Root(scenario), real);
  return harness.Collect();
}

std::string PairLine(const std::string& gpu, const std::string& nic, const std::string& rdma,
                     std::string_view level) {
  return "fabric_topology_gpu_nic_link_info{gpu=\"" + gpu + "\",nic=\"" + nic +
         "\",rdma_device=\"" + rdma + "\",level=\"" + std::string(level) + "\"} 1";
}

// ---------------------------------------------------------------- levels

// The HGX tree of make_fixtures.sh: host bridges 10, 30 (node 0), 90, b0 (node 1); below each
// root port a switch whose two DSPs lead to second-level switches with one GPU + one NIC each.
struct HgxPair {
  std::string gpu, nic;
};
std::vector<HgxPair> HgxPairs() {
  std::vector<HgxPair> out;
  for (int hb : {0x10, 0x30, 0x90, 0xb0}) {
    for (int half : {0, 1}) {
      const int base = hb + 3 + half * 4;
      char gpu[16], nic[16];
      std::snprintf(gpu, sizeof gpu, "0000:%02x:00.0", base + 2);
      std::snprintf(nic, sizeof nic, "0000:%02x:00.0", base + 3);
      out.push_back({gpu, nic});
    }
  }
  return out;
}

TEST(TopologyCollectorTest, hgx_levels_match_nvidia_smi_semantics) {
  Harness::Run run = CollectScenario("topo-hgx");
  ASSERT_TRUE(run.status.ok());
  const auto pairs = HgxPairs();
  for (size_t g = 0; g < pairs.size(); ++g) {
    for (size_t n = 0; n < pairs.size(); ++n) {
      std::string_view want = g == n               ? "PIX"    // one second-level switch
                              : g / 2 == n / 2     ? "PXB"    // one root port, two switch levels
                              : g / 4 == n / 4     ? "NODE"   // other host bridge, same socket
                                                   : "SYS";   // other socket
      EXPECT_THAT(run.text, HasLine(PairLine(pairs[g].gpu, pairs[n].nic,
                                             "mlx5_" + std::to_string(n), want)))
          << "GPU" << g << " NIC" << n;
    }
    // The igb management port (no RDMA device, on pci0000:00 of socket 0) is paired but is
    // never a nearest-NIC candidate.
    EXPECT_THAT(run.text, HasLine(PairLine(pairs[g].gpu, "0000:00:1f.6", "",
                                           g < 4 ? "NODE" : "SYS")));
    EXPECT_THAT(run.text, HasLine("fabric_topology_gpu_nearest_nic_info{gpu=\"" + pairs[g].gpu +
                                  "\",nic=\"" + pairs[g].nic + "\",rdma_device=\"mlx5_" +
                                  std::to_string(g) + "\",level=\"PIX\"} 1"));
    EXPECT_THAT(run.text,
                HasLine("fabric_topology_gpu_nic_remote{gpu=\"" + pairs[g].gpu + "\"} 0"));
  }
  EXPECT_EQ(LinesWith(run.text, "fabric_topology_gpu_info{").size(), 8u);
  EXPECT_EQ(LinesWith(run.text, "fabric_topology_nic_info{").size(), 9u);
  EXPECT_EQ(LinesWith(run.text, "fabric_topology_gpu_nic_link_info{").size(), 72u);
  EXPECT_EQ(LinesWith(run.text, "fabric_topology_gpu_nearest_nic_info{").size(), 8u);
  // Distances follow NVML's levels.
  EXPECT_THAT(run.text, HasLine("fabric_topology_gpu_nic_distance{gpu=\"0000:15:00.0\",nic=\""
                                "0000:16:00.0\",rdma_device=\"mlx5_0\"} 10"));
  EXPECT_THAT(run.text, HasLine("fabric_topology_gpu_nic_distance{gpu=\"0000:15:00.0\",nic=\""
                                "0000:1a:00.0\",rdma_device=\"mlx5_1\"} 20"));
  EXPECT_THAT(run.text, HasLine("fabric_topology_gpu_nic_distance{gpu=\"0000:15:00.0\",nic=\""
                                "0000:36:00.0\",rdma_device=\"mlx5_2\"} 40"));
  EXPECT_THAT(run.text, HasLine("fabric_topology_gpu_nic_distance{gpu=\"0000:15:00.0\",nic=\""
                                "0000:96:00.0\",rdma_device=\"mlx5_4\"} 50"));
  // Not GPUs: the ASPEED BMC VGA and the NVSwitch.
  EXPECT_THAT(run.text, Not(HasSubstr("gpu=\"0000:03:00.0\"")));
  EXPECT_THAT(run.text, Not(HasSubstr("gpu=\"0000:90:05.0\"")));
  EXPECT_THAT(run.text, HasLine("fabric_topology_gpu_info{gpu=\"0000:15:00.0\",vendor_id=\"0x10de\","
                                "device_id=\"0x2330\",host_bridge=\"pci0000:10\",numa_node=\"0\","
                                "local_cpulist=\"0-55,112-167\"} 1"));
  EXPECT_THAT(run.text, HasLine("fabric_topology_nic_info{nic=\"0000:96:00.0\",vendor_id=\"0x15b3\","
                                "device_id=\"0x1021\",rdma_device=\"mlx5_4\",netdev=\"ibp150s0\","
                                "host_bridge=\"pci0000:90\",numa_node=\"1\","
                                "local_cpulist=\"56-111,168-223\"} 1"));
}

TEST(TopologyCollectorTest, hgx_link_health_aer_iommu_and_peermem) {
  Harness::Run run = CollectScenario("topo-hgx");
  // Idle GPU6: speed below max, full width.
  EXPECT_THAT(run.text, HasLine("fabric_pcie_link_speed_transfers_per_second{device=\"0000:b5:00.0\","
                                "role=\"gpu\"} 2500000000"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_link_downtrained{device=\"0000:b5:00.0\",role=\"gpu\"} 1"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_link_downtrained{device=\"0000:15:00.0\",role=\"gpu\"} 0"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_link_width_lanes{device=\"0000:b5:00.0\",role=\"gpu\"} 16"));
  // Every bridge on a GPU or NIC path once: per host bridge 1 root port + 1 USP + 2 DSPs +
  // 2 × (USP + 2 DSPs) = 10, × 4.
  EXPECT_EQ(LinesWith(run.text, "fabric_pcie_link_max_width_lanes{").size(), 40u + 16u);
  EXPECT_EQ(LinesWith(run.text, "role=\"bridge\"").size() > 0, true);
  EXPECT_THAT(run.text, HasLine("fabric_pcie_aer_errors_total{device=\"0000:16:00.0\",role=\"nic\","
                                "severity=\"correctable\"} 12"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_aer_errors_total{device=\"0000:16:00.0\",role=\"nic\","
                                "severity=\"nonfatal\"} 1"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_aer_errors_total{device=\"0000:15:00.0\",role=\"gpu\","
                                "severity=\"correctable\"} 3"));
  EXPECT_THAT(run.text, HasLine("fabric_topology_gpu_nic_same_iommu_group{gpu=\"0000:15:00.0\","
                                "nic=\"0000:16:00.0\",rdma_device=\"mlx5_0\"} 1"));
  EXPECT_THAT(run.text, HasLine("fabric_topology_gpu_nic_same_iommu_group{gpu=\"0000:19:00.0\","
                                "nic=\"0000:1a:00.0\",rdma_device=\"mlx5_1\"} 0"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_iommu_group_info{device=\"0000:15:00.0\",role=\"gpu\","
                                "iommu_group=\"20\",iommu_type=\"DMA-FQ\"} 1"));
  EXPECT_THAT(run.text, HasLine("fabric_topology_gpudirect_rdma_module_loaded{module=\"nvidia_peermem\"} 1"));
  EXPECT_THAT(run.text, HasLine("fabric_topology_gpudirect_rdma_module_loaded{module=\"nv_peer_mem\"} 0"));
  // The tree of a bridge: upstream and host bridge.
  EXPECT_THAT(run.text, HasLine("fabric_pcie_device_info{device=\"0000:14:00.0\",role=\"bridge\","
                                "vendor_id=\"0x1000\",device_id=\"0xc030\",pci_class=\"0x060400\","
                                "upstream=\"0000:13:00.0\",host_bridge=\"pci0000:10\"} 1"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_device_info{device=\"0000:10:01.0\",role=\"bridge\","
                                "vendor_id=\"0x8086\",device_id=\"0x352a\",pci_class=\"0x060400\","
                                "upstream=\"pci0000:10\",host_bridge=\"pci0000:10\"} 1"));
}

TEST(TopologyCollectorTest, phb_pairs_ties_unknown_numa_and_missing_speed) {
  Harness::Run run = CollectScenario("topo-phb");
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(run.errors, 0u);
  for (const char* gpu : {"0000:01:00.0", "0000:03:00.0"}) {
    for (int f : {0, 1}) {
      const std::string nic = "0000:02:00." + std::to_string(f);
      const std::string rdma = "mlx5_" + std::to_string(f);
      EXPECT_THAT(run.text, HasLine(PairLine(gpu, nic, rdma, "PHB")));
      // A tie: both functions of the card are nearest.
      EXPECT_THAT(run.text, HasLine("fabric_topology_gpu_nearest_nic_info{gpu=\"" +
                                    std::string(gpu) + "\",nic=\"" + nic + "\",rdma_device=\"" +
                                    rdma + "\",level=\"PHB\"} 1"));
    }
    EXPECT_THAT(run.text, HasLine("fabric_topology_gpu_nic_remote{gpu=\"" + std::string(gpu) +
                                  "\"} 0"));
  }
  // numa_node -1 → empty label.
  EXPECT_THAT(run.text, HasSubstr("fabric_topology_gpu_info{gpu=\"0000:01:00.0\",vendor_id=\"0x10de\","
                                  "device_id=\"0x26b9\",host_bridge=\"pci0000:00\",numa_node=\"\","));
  // No current_link_speed: no speed series, no error; downtrained still from width.
  EXPECT_THAT(run.text, Not(HasSubstr("fabric_pcie_link_speed_transfers_per_second{device=\"0000:02:00.1\"")));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_link_max_speed_transfers_per_second{device=\"0000:02:00.1\","
                                "role=\"nic\"} 16000000000"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_link_downtrained{device=\"0000:02:00.1\",role=\"nic\"} 0"));
  // The pre-5.7 speed format of the root ports.
  EXPECT_THAT(run.text, HasLine("fabric_pcie_link_speed_transfers_per_second{device=\"0000:00:02.0\","
                                "role=\"bridge\"} 16000000000"));
  // No module/ directory in this tree: GPUDirect state unknown, not 0.
  EXPECT_THAT(run.text, Not(HasSubstr("fabric_topology_gpudirect_rdma_module_loaded")));
}

TEST(TopologyCollectorTest, sys_remote_flag_and_downtrained_nic) {
  Harness::Run run = CollectScenario("topo-sys");
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(run.errors, 0u);
  for (const char* gpu : {"0000:3b:00.0", "0000:3c:00.0", "0000:5e:00.0"}) {
    EXPECT_THAT(run.text, HasLine(PairLine(gpu, "0000:d8:00.0", "mlx5_0", "SYS")));
    EXPECT_THAT(run.text, HasLine("fabric_topology_gpu_nic_remote{gpu=\"" + std::string(gpu) +
                                  "\"} 1"));
  }
  EXPECT_THAT(run.text, HasSubstr("fabric_topology_gpu_info{gpu=\"0000:5e:00.0\",vendor_id=\"0x1002\""));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_link_width_lanes{device=\"0000:d8:00.0\",role=\"nic\"} 8"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_link_max_width_lanes{device=\"0000:d8:00.0\",role=\"nic\"} 16"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_link_speed_transfers_per_second{device=\"0000:d8:00.0\","
                                "role=\"nic\"} 16000000000"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_link_max_speed_transfers_per_second{device=\"0000:d8:00.0\","
                                "role=\"nic\"} 32000000000"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_link_downtrained{device=\"0000:d8:00.0\",role=\"nic\"} 1"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_link_downtrained{device=\"0000:d7:01.0\",role=\"bridge\"} 1"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_aer_errors_total{device=\"0000:d8:00.0\",role=\"nic\","
                                "severity=\"correctable\"} 7"));
  EXPECT_THAT(run.text, Not(HasSubstr("fabric_pcie_link_speed_transfers_per_second{device=\"0000:3c:00.0\"")));
}

TEST(TopologyCollectorTest, node_level_and_unknown_numa_across_host_bridges) {
  Harness::Run run = CollectScenario("topo-node");
  ASSERT_TRUE(run.status.ok());
  EXPECT_THAT(run.text, HasLine(PairLine("0000:17:00.0", "0000:31:00.0", "mlx5_0", "NODE")));
  EXPECT_THAT(run.text, HasLine(PairLine("0000:17:00.0", "0000:65:00.0", "mlx5_1", "SYS")));
  EXPECT_THAT(run.text, HasLine("fabric_topology_gpu_nearest_nic_info{gpu=\"0000:17:00.0\",nic=\""
                                "0000:31:00.0\",rdma_device=\"mlx5_0\",level=\"NODE\"} 1"));
  EXPECT_THAT(run.text, HasLine("fabric_topology_gpu_nic_remote{gpu=\"0000:17:00.0\"} 1"));
}

// ---------------------------------------------------------------- absent sources

TEST(TopologyCollectorTest, empty_root_is_no_data) {
  Harness::Run run = CollectScenario("empty");
  EXPECT_EQ(run.status.code(), StatusCode::kNoData) << run.status.ToString();
  EXPECT_EQ(run.text, "");
}

TEST(TopologyCollectorTest, pci_tree_without_gpu_or_nic_is_no_data) {
  const fs::path root = fs::temp_directory_path() /
                        ("fabricwatch-topo-" + std::to_string(::getpid()) + "-nogpu");
  fs::remove_all(root);
  fs::create_directories(root / "sys/bus/pci/devices");
  fs::create_directories(root / "sys/devices/pci0000:00/0000:00:1c.5");
  std::ofstream(root / "sys/devices/pci0000:00/0000:00:1c.5/class") << "0x060400\n";
  std::ofstream(root / "sys/devices/pci0000:00/0000:00:1c.5/vendor") << "0x8086\n";
  fs::create_symlink("../../../devices/pci0000:00/0000:00:1c.5",
                     root / "sys/bus/pci/devices/0000:00:1c.5");
  sys::RealFileSystem real;
  Harness harness((root / "sys").string(), real);
  Harness::Run run = harness.Collect();
  EXPECT_EQ(run.status.code(), StatusCode::kNoData) << run.status.ToString();
  EXPECT_EQ(run.errors, 0u);
  fs::remove_all(root);
}

// ---------------------------------------------------------------- failures

TEST(TopologyCollectorTest, one_bad_device_never_aborts_the_walk) {
  const std::string root = Root("topo-hgx");
  const std::string gpu0 = root +
      "/devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:00.0/0000:13:00.0/0000:14:00.0/"
      "0000:15:00.0";
  const std::string nic0 = root +
      "/devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:00.0/0000:13:00.0/0000:14:01.0/"
      "0000:16:00.0";
  const std::string gpu1 = root +
      "/devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:01.0/0000:17:00.0/0000:18:00.0/"
      "0000:19:00.0";
  FakeFileSystem fake;
  fake.Inject(FakeFileSystem::Op::kOpen, gpu0 + "/numa_node", EACCES);          // counted
  fake.Inject(FakeFileSystem::Op::kRead, nic0 + "/current_link_speed", EIO);    // counted
  fake.SetContent(gpu1 + "/max_link_width", "sixteen\n");                      // counted
  fake.SetContent(gpu1 + "/aer_dev_fatal", "garbage\n");                        // counted
  // GPU2 vanishes between the listing and the read of its class: quietly skipped.
  fake.Inject(FakeFileSystem::Op::kOpen,
              root + "/devices/pci0000:30/0000:30:01.0/0000:31:00.0/0000:32:00.0/0000:33:00.0/"
                     "0000:34:00.0/0000:35:00.0/class",
              ENOENT);
  // An unreadable bus/pci/devices link: that function is skipped and counted.
  fake.Inject(FakeFileSystem::Op::kReadLink, root + "/bus/pci/devices/0000:b9:00.0", EACCES);
  Harness harness(root, fake);
  Harness::Run run = harness.Collect();
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  EXPECT_EQ(run.errors, 5u);
  for (const Status& e : run.error_list) EXPECT_THAT(e.ToString(), HasSubstr(root));
  // GPU0 is still there, with an unknown NUMA node; its pairs still classify (by host bridge).
  EXPECT_THAT(run.text, HasSubstr("fabric_topology_gpu_info{gpu=\"0000:15:00.0\",vendor_id=\"0x10de\","
                                  "device_id=\"0x2330\",host_bridge=\"pci0000:10\",numa_node=\"\","));
  EXPECT_THAT(run.text, HasLine(PairLine("0000:15:00.0", "0000:16:00.0", "mlx5_0", "PIX")));
  EXPECT_THAT(run.text, Not(HasSubstr("fabric_pcie_link_speed_transfers_per_second{device=\"0000:16:00.0\"")));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_link_max_speed_transfers_per_second{device=\"0000:16:00.0\","
                                "role=\"nic\"} 32000000000"));
  EXPECT_THAT(run.text, Not(HasSubstr("fabric_pcie_link_max_width_lanes{device=\"0000:19:00.0\"")));
  EXPECT_THAT(run.text, Not(HasSubstr("device=\"0000:19:00.0\",role=\"gpu\",severity=\"fatal\"")));
  EXPECT_THAT(run.text, HasSubstr("device=\"0000:19:00.0\",role=\"gpu\",severity=\"correctable\""));
  EXPECT_THAT(run.text, Not(HasSubstr("gpu=\"0000:35:00.0\"")));
  EXPECT_THAT(run.text, Not(HasSubstr("gpu=\"0000:b9:00.0\"")));
  EXPECT_EQ(LinesWith(run.text, "fabric_topology_gpu_info{").size(), 6u);
}

TEST(TopologyCollectorTest, unreadable_pci_listing_fails_the_collection) {
  FakeFileSystem fake;
  const std::string root = Root("topo-hgx");
  fake.Inject(FakeFileSystem::Op::kListDir, root + "/bus/pci/devices", EACCES);
  Harness harness(root, fake);
  Harness::Run run = harness.Collect();
  EXPECT_FALSE(run.status.ok());
  EXPECT_NE(run.status.code(), StatusCode::kNoData);
}

// ---------------------------------------------------------------- PCI config space

// make_fixtures.sh: 4096-byte config files along GPU0's and GPU1's paths (MPS 256, GPU1 128;
// ACS off below GPU0's switch, SV|RR|CR|UF below GPU1's); 64 bytes on NIC 0000:36:00.0.
constexpr char kHgxGpu0Dir[] =
    "/devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:00.0/0000:13:00.0/0000:14:00.0/"
    "0000:15:00.0";
constexpr char kHgxGpu1Dir[] =
    "/devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:01.0/0000:17:00.0/0000:18:00.0/"
    "0000:19:00.0";

TEST(TopologyCollectorTest, config_space_gives_mps_mrrs_and_acs) {
  Harness::Run run = CollectScenario("topo-hgx");
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  EXPECT_EQ(run.errors, 0u);
  EXPECT_THAT(run.text,
              HasLine("fabric_pcie_max_payload_bytes{device=\"0000:15:00.0\",role=\"gpu\"} 256"));
  EXPECT_THAT(run.text,
              HasLine("fabric_pcie_max_payload_bytes{device=\"0000:19:00.0\",role=\"gpu\"} 128"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_max_payload_supported_bytes{device=\"0000:19:00.0\","
                                "role=\"gpu\"} 512"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_max_read_request_bytes{device=\"0000:16:00.0\","
                                "role=\"nic\"} 4096"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_max_read_request_bytes{device=\"0000:10:01.0\","
                                "role=\"bridge\"} 512"));
  // ACS: off below GPU0's switch, redirecting below GPU1's; capable of all seven on the DSPs.
  EXPECT_THAT(run.text, HasLine("fabric_pcie_acs_control{device=\"0000:14:00.0\",role=\"bridge\","
                                "control=\"request_redirect\"} 0"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_acs_control{device=\"0000:18:00.0\",role=\"bridge\","
                                "control=\"request_redirect\"} 1"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_acs_control{device=\"0000:18:00.0\",role=\"bridge\","
                                "control=\"completion_redirect\"} 1"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_acs_control{device=\"0000:18:00.0\",role=\"bridge\","
                                "control=\"egress_control\"} 0"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_acs_capable{device=\"0000:18:00.0\",role=\"bridge\","
                                "control=\"direct_translated\"} 1"));
  EXPECT_EQ(LinesWith(run.text, "fabric_pcie_acs_control{device=\"0000:18:00.0\"").size(), 7u);
  // No ACS capability on endpoints and upstream ports: no ACS series at all.
  EXPECT_THAT(run.text, Not(HasSubstr("fabric_pcie_acs_control{device=\"0000:15:00.0\"")));
  EXPECT_THAT(run.text, Not(HasSubstr("fabric_pcie_acs_control{device=\"0000:13:00.0\"")));
  // 64 bytes (unprivileged) and no config file: absent, never 0.
  for (const char* bdf : {"0000:36:00.0", "0000:35:00.0"}) {
    EXPECT_THAT(run.text, Not(HasSubstr("max_payload_bytes{device=\"" + std::string(bdf))));
    EXPECT_THAT(run.text, Not(HasSubstr("max_read_request_bytes{device=\"" + std::string(bdf))));
    EXPECT_THAT(run.text, HasSubstr("fabric_pcie_link_width_lanes{device=\"" + std::string(bdf)));
  }
}

TEST(TopologyCollectorTest, broken_config_space_is_counted_and_the_rest_is_read) {
  const std::string root = Root("topo-hgx");
  FakeFileSystem fake;
  // GPU0 is gone: its config space reads all ones.
  fake.SetContent(root + kHgxGpu0Dir + "/config", std::string(4096, '\xff'));
  // GPU1's extended list loops after the PCIe capability: MPS/MRRS kept, counted once.
  std::string looped(4096, '\0');
  looped[0] = '\xde', looped[1] = '\x10', looped[6] = 0x10, looped[0x34] = 0x40;
  looped[0x40] = 0x10;                       // PCIe capability, last
  looped[0x44] = 0x02, looped[0x48] = 0x20;  // DevCap 512, DevCtl MPS 256, MRRS 128
  looped[0x100] = 0x01, looped[0x102] = 0x01, looped[0x103] = 0x10;  // AER, next -> 0x100
  fake.SetContent(root + kHgxGpu1Dir + "/config", looped);
  // An unreadable config file on the first root port.
  fake.Inject(FakeFileSystem::Op::kRead, root + "/devices/pci0000:10/0000:10:01.0/config", EIO);
  Harness harness(root, fake);
  Harness::Run run = harness.Collect();
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  EXPECT_EQ(run.errors, 3u);
  std::string errors;
  for (const Status& e : run.error_list) errors += e.ToString() + "\n";
  EXPECT_THAT(errors, HasSubstr(root + kHgxGpu0Dir + "/config: vendor ID reads 0xffff"));
  EXPECT_THAT(errors, HasSubstr(root + kHgxGpu1Dir +
                                "/config: extended capability list loops back to 0x100"));
  EXPECT_THAT(errors, HasSubstr("0000:10:01.0/config: Input/output error"));
  EXPECT_THAT(run.text, Not(HasSubstr("max_payload_bytes{device=\"0000:15:00.0\"")));
  EXPECT_THAT(run.text, HasSubstr("fabric_pcie_link_width_lanes{device=\"0000:15:00.0\""));
  EXPECT_THAT(run.text,
              HasLine("fabric_pcie_max_payload_bytes{device=\"0000:19:00.0\",role=\"gpu\"} 256"));
  EXPECT_THAT(run.text, HasLine("fabric_pcie_max_read_request_bytes{device=\"0000:19:00.0\","
                                "role=\"gpu\"} 128"));
  EXPECT_THAT(run.text, Not(HasSubstr("max_payload_bytes{device=\"0000:10:01.0\"")));
  EXPECT_THAT(run.text,
              HasLine("fabric_pcie_max_payload_bytes{device=\"0000:16:00.0\",role=\"nic\"} 256"));
}

// ---------------------------------------------------------------- external captures

// Copies a capture into a temp dir and turns the symlinks this copy of the corpus flattened
// into small text files (content = the link target) back into symlinks, as
// tests/e2e/rdma_external_test.sh does.
class Materialised {
 public:
  explicit Materialised(const fs::path& capture) {
    root_ = fs::temp_directory_path() /
            ("fabricwatch-topo-ext-" + std::to_string(::getpid()) + "-" + capture.filename().string());
    fs::remove_all(root_);
    fs::copy(capture, root_, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    for (auto it = fs::recursive_directory_iterator(root_); it != fs::recursive_directory_iterator();
         ++it) {
      const fs::path path = it->path();
      if (it->is_symlink() || !it->is_regular_file() || it->file_size() > 4096) continue;
      if (path.string().find("/gid_attrs/ndevs/") != std::string::npos) continue;
      std::string text = testing::ReadTextFile(path.string());
      if (text.find('\0') != std::string::npos) continue;
      if (!text.empty() && text.back() == '\n') text.pop_back();
      if (text.empty() || text.find('\n') != std::string::npos) continue;
      if (text.starts_with("/sys/")) {
        const std::string p = path.string();
        const fs::path sys_root = p.substr(0, p.find("/sys/") + 4);
        text = fs::relative(sys_root / text.substr(5), path.parent_path()).string();
      } else if (!text.starts_with("../")) {
        continue;
      }
      fs::remove(path);
      fs::create_symlink(text, path);
    }
  }
  ~Materialised() { fs::remove_all(root_); }
  std::string sys() const { return (root_ / "sys").string(); }

 private:
  fs::path root_;
};

std::string Trim(std::string text) { return std::string(TrimSpace(text)); }

TEST(TopologyExternalTest, hwloc_captures_walk_matches_the_files) {
  const fs::path corpus = testing::SourcePath("../shared/fixtures/external/sysfs");
  if (!fs::is_directory(corpus)) GTEST_SKIP() << "external corpus not found: " << corpus;
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    if (!entry.path().filename().string().starts_with("hwloc-")) continue;
    if (!fs::is_directory(entry.path() / "sys/bus/pci/devices")) continue;
    SCOPED_TRACE(entry.path().filename().string());
    Materialised tree(entry.path());
    sys::RealFileSystem real;
    Harness harness(tree.sys(), real);
    Harness::Run run = harness.Collect();
    ASSERT_TRUE(run.status.ok() || run.status.code() == StatusCode::kNoData)
        << run.status.ToString();
    EXPECT_EQ(run.errors, 0u) << (run.error_list.empty() ? "" : run.error_list[0].ToString());

    // Every non-VF function of base class 0x02 is a NIC with its files' NUMA node and link
    // attributes; no GPU is invented (these hosts have none).
    const fs::path sys_root = tree.sys();
    int nics = 0;
    for (const auto& link : fs::directory_iterator(sys_root / "bus/pci/devices")) {
      if (!fs::exists(link.path())) continue;  // dangling in the capture: skipped by the walk
      const fs::path dir = fs::canonical(link.path());
      const std::string bdf = link.path().filename().string();
      if (!fs::exists(dir / "class")) continue;  // capture without the attribute: skipped quietly
      auto cls = ParsePciHex(testing::ReadTextFile((dir / "class").string()), "class");
      ASSERT_TRUE(cls) << bdf;
      if ((*cls >> 16) != 0x02 || fs::exists(dir / "physfn")) continue;
      ++nics;
      std::string numa = Trim(testing::ReadTextFile((dir / "numa_node").string()));
      if (numa == "-1") numa.clear();
      const auto lines = LinesWith(run.text, "fabric_topology_nic_info{nic=\"" + bdf + "\"");
      ASSERT_EQ(lines.size(), 1u) << bdf;
      EXPECT_THAT(lines[0], HasSubstr("numa_node=\"" + numa + "\""));
      EXPECT_THAT(lines[0], HasSubstr("local_cpulist=\"" +
                                      Trim(testing::ReadTextFile((dir / "local_cpulist").string())) +
                                      "\""));
      for (auto [file, metric] :
           {std::pair{"current_link_width", "fabric_pcie_link_width_lanes"},
            {"max_link_width", "fabric_pcie_link_max_width_lanes"}}) {
        const std::string series = std::string(metric) + "{device=\"" + bdf + "\",role=\"nic\"} ";
        if (fs::exists(dir / file)) {
          EXPECT_THAT(run.text,
                      HasLine(series + Trim(testing::ReadTextFile((dir / file).string()))));
        } else {
          EXPECT_THAT(run.text, Not(HasSubstr(series)));
        }
      }
      if (!fs::exists(dir / "current_link_speed")) {
        EXPECT_THAT(run.text, Not(HasSubstr("fabric_pcie_link_speed_transfers_per_second{device=\"" +
                                            bdf + "\"")));
      }
    }
    EXPECT_EQ(static_cast<int>(LinesWith(run.text, "fabric_topology_nic_info{").size()) >= nics,
              true);
    EXPECT_EQ(LinesWith(run.text, "fabric_topology_gpu_info{").size(), 0u);

    if (entry.path().filename() == "hwloc-32em64t-mlx4-mic") {
      // The ConnectX-3 (class 0x028000) on socket 1, found as class/infiniband/mlx4_0.
      EXPECT_THAT(run.text, HasLine("fabric_topology_nic_info{nic=\"0000:82:00.0\",vendor_id=\""
                                    "0x15b3\",device_id=\"0x1003\",rdma_device=\"mlx4_0\","
                                    "netdev=\"ib0\",host_bridge=\"pci0000:80\",numa_node=\"1\","
                                    "local_cpulist=\"8-15\"} 1"))
          << ::testing::PrintToString(LinesWith(run.text, "nic=\"0000:82:00.0\""));
      EXPECT_THAT(run.text, HasSubstr("fabric_pcie_device_info{device=\"0000:80:02.2\",role=\"bridge\""));
      ++checked;
    }
  }
  EXPECT_GE(checked, 1) << "hwloc-32em64t-mlx4-mic not found in " << corpus;
}

}  // namespace
}  // namespace fabricwatch::topology
