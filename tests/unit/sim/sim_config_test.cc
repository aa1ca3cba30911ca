// fabricsim configuration (issue 21): every preset writes a consistent lossless RoCE node (qos,
// pause, tunables, ECN, MTU, nvidia_peermem, PCI config space with real capability lists) that
// the agent's own parsers and collectors read back, and each configuration fault changes exactly
// the files it should and writes the healthy values back when it ends.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collectors/ethtool_source/qos_parse.h"
#include "collectors/topology/pci_config.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_paths.h"
#include "tests/unit/sim/sim_testing.h"
#include "tools/fabricsim/simulator.h"

namespace fabricwatch::sim {
namespace {

namespace fs = std::filesystem;
using fabricwatch::testing::ReadTextFile;
using fabricwatch::testing::TempDir;
using simtest::CollectAll;
using simtest::MakeSim;
using simtest::Quiet;
using simtest::Samples;
using ::testing::HasSubstr;

std::vector<uint8_t> Bytes(const std::string& path) {
  const std::string s = ReadTextFile(path);
  return std::vector<uint8_t>(s.begin(), s.end());
}

// The configuration files of a replay root (relative path -> content): qos, pause, tunables,
// mtu, the ECN switches, module/ and every config space. Links are not followed, so each file
// is listed once, under devices/.
std::map<std::string, std::string> ConfigFiles(const Simulator& sim) {
  const fs::path root = fs::path(sim.sysfs_root()).parent_path();
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file() || e.is_symlink()) continue;
    const std::string rel = fs::relative(e.path(), root).string();
    const std::string name = e.path().filename().string();
    if (name == "qos" || name == "pause" || name == "tunables" || name == "mtu" ||
        name == "config" || rel.find("/ecn/") != std::string::npos ||
        rel.starts_with("sys/module/")) {
      out[rel] = ReadTextFile(e.path().string());
    }
  }
  return out;
}

// Paths whose content differs (or that exist on one side only).
std::set<std::string> Changed(const std::map<std::string, std::string>& a,
                              const std::map<std::string, std::string>& b) {
  std::set<std::string> out;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second != v) out.insert(k);
  }
  for (const auto& [k, v] : b) {
    if (!a.contains(k)) out.insert(k);
  }
  return out;
}

std::string DevicesPath(const Node& node, const std::string& bdf) {
  for (const PciFunction& f : node.functions) {
    if (f.bdf == bdf) return "sys/devices/" + f.path;
  }
  return "?";
}

const PciFunction* Parent(const Node& node, const PciFunction& f) {
  const std::string parent = f.path.substr(0, f.path.rfind('/'));
  for (const PciFunction& p : node.functions) {
    if (p.path == parent) return &p;
  }
  return nullptr;
}

// ---------------------------------------------------------------- healthy presets

class HealthyConfigTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HealthyConfigTest, every_roce_port_is_lossless_and_every_function_has_a_config_space) {
  TempDir dir;
  auto sim = MakeSim(GetParam(), Quiet(), dir.str());
  ASSERT_TRUE(sim->AdvanceTo(2));
  const Node& node = sim->node();
  const std::string sys = sim->sysfs_root();
  const std::string eth = sim->ethtool_root();
  for (const Port& p : node.ports) {
    SCOPED_TRACE(p.netdev);
    const std::string net = sys + "/class/net/" + p.netdev;
    if (p.link_layer != LinkLayer::kEthernet) {
      EXPECT_EQ(ReadTextFile(net + "/mtu"), "4092\n");  // IPoIB keeps its own
      EXPECT_FALSE(fs::exists(eth + "/" + p.netdev + "/qos"));
      EXPECT_FALSE(fs::exists(net + "/ecn"));
      continue;
    }
    EXPECT_EQ(ReadTextFile(net + "/mtu"), "9000\n");
    const std::string qos_text = ReadTextFile(eth + "/" + p.netdev + "/qos");
    auto qos = sys::ParseMlnxQosText(qos_text, "qos");
    ASSERT_TRUE(qos) << qos.error().ToString();
    EXPECT_EQ(qos->unknown_lines, 0u) << qos_text;
    EXPECT_TRUE(qos->problems.empty()) << qos->problems.front().ToString();
    const sys::QosSettings& q = qos->settings;
    EXPECT_EQ(q.dcbx_mode, "os");
    EXPECT_EQ(q.trust, "dscp");
    for (int dscp = 0; dscp < 64; ++dscp) EXPECT_EQ(q.dscp_priority[dscp], dscp / 8) << dscp;
    EXPECT_EQ(q.dscp_priority[26], 3);
    EXPECT_EQ(q.pfc_enabled, 0x08);
    ASSERT_TRUE(q.priority_buffer);
    EXPECT_EQ((*q.priority_buffer)[3], 1);
    EXPECT_EQ(q.priority_tc[3], 3);
    ASSERT_TRUE(q.traffic_classes[3]);
    EXPECT_EQ(q.traffic_classes[3]->tsa, "ets");
    EXPECT_EQ(q.traffic_classes[3]->bandwidth_percent, 50);
    EXPECT_EQ(
        ReadTextFile(eth + "/" + p.netdev + "/pause"),
        "Pause parameters for " + p.netdev + ":\nAutonegotiate:\toff\nRX:\t\toff\nTX:\t\toff\n\n");
    EXPECT_EQ(ReadTextFile(eth + "/" + p.netdev + "/tunables"), "pfc-prevention-tout: 100\n");
    for (const char* role : {"roce_np", "roce_rp"}) {
      for (int prio = 0; prio < 8; ++prio) {
        EXPECT_EQ(ReadTextFile(net + "/ecn/" + role + "/enable/" + std::to_string(prio)), "1\n");
      }
    }
  }
  EXPECT_EQ(fs::exists(sys + "/module/nvidia_peermem"), !node.gpus.empty());
  // Config space: MPS 256 and MRRS 512 everywhere; ACS on root and downstream ports, with only
  // Source Validation on; the link registers agree with the sysfs link attributes.
  for (const PciFunction& f : node.functions) {
    SCOPED_TRACE(f.bdf);
    const std::vector<uint8_t> bytes = Bytes(sys + "/bus/pci/devices/" + f.bdf + "/config");
    ASSERT_EQ(bytes.size(), 4096u);
    auto c = topology::ParsePciConfig(bytes, f.bdf);
    ASSERT_TRUE(c) << c.error().ToString();
    EXPECT_FALSE(c->problem) << c->problem->ToString();
    EXPECT_EQ(bytes[0] | (bytes[1] << 8), f.vendor);
    EXPECT_EQ(bytes[2] | (bytes[3] << 8), f.device);
    EXPECT_EQ(static_cast<uint32_t>(bytes[9] | (bytes[10] << 8) | (bytes[11] << 16)), f.pci_class);
    const bool bridge = f.pci_class == 0x060400;
    EXPECT_EQ(bytes[0x0e] & 0x7f, bridge ? 1 : 0);
    EXPECT_EQ(c->max_payload, 256u);
    EXPECT_EQ(c->max_read_request, 512u);
    EXPECT_EQ(c->max_payload_supported, f.is_gpu ? 256u : 512u);
    ASSERT_TRUE(c->pcie_offset);
    const size_t lnksta = *c->pcie_offset + 0x12;
    const int speed = bytes[lnksta] & 0xf, width = (bytes[lnksta] | (bytes[lnksta + 1] << 8)) >> 4;
    EXPECT_EQ(width & 0x3f, f.link_width);
    EXPECT_EQ(speed, f.link_speed_gts == 32.0 ? 5 : f.link_speed_gts == 16.0 ? 4 : 3);
    if (!bridge) {
      EXPECT_EQ(c->port_type, 0);
      EXPECT_FALSE(c->acs_offset);
      continue;
    }
    const PciFunction* parent = Parent(node, f);
    if (parent == nullptr) {
      EXPECT_EQ(c->port_type, 4);  // root port
    } else {
      EXPECT_THAT(*c->port_type, ::testing::AnyOf(5, 6));
    }
    if (c->port_type == 5) {
      EXPECT_FALSE(c->acs_offset);
    } else {
      ASSERT_TRUE(c->acs_control);
      EXPECT_EQ(*c->acs_control, 0x0001);
      EXPECT_EQ(*c->acs_capability & 0x000c, 0x000c);  // redirect is possible, and off
    }
  }
  // The collectors agree.
  const Samples s = CollectAll(*sim);
  EXPECT_EQ(s.errors, 0u) << s.error_text;
  for (int gpu : node.gpus) {
    const std::string bdf = node.functions[gpu].bdf;
    EXPECT_EQ(s.Get("fabric_pcie_max_payload_bytes", {{"device", bdf}}), 256.0) << bdf;
    EXPECT_EQ(s.Get("fabric_pcie_max_read_request_bytes", {{"device", bdf}}), 512.0) << bdf;
  }
  for (const Port& p : node.ports) {
    EXPECT_EQ(s.Get("fabric_netdev_mtu_bytes", {{"netdev", p.netdev}}),
              p.link_layer == LinkLayer::kEthernet ? 9000.0 : 4092.0);
    if (p.link_layer != LinkLayer::kEthernet) continue;
    EXPECT_EQ(s.Get("fabric_pfc_enabled", {{"netdev", p.netdev}, {"priority", "3"}}), 1.0);
    EXPECT_EQ(s.Get("fabric_pfc_enabled", {{"netdev", p.netdev}, {"priority", "4"}}), 0.0);
    EXPECT_EQ(
        s.Get("fabric_roce_ecn_enabled", {{"netdev", p.netdev}, {"priority", "3"}, {"role", "np"}}),
        1.0);
  }
  if (!node.gpus.empty()) {
    EXPECT_EQ(s.Get("fabric_topology_gpudirect_rdma_module_loaded", {{"module", "nvidia_peermem"}}),
              1.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Presets, HealthyConfigTest,
                         ::testing::Values("roce-small", "hgx-ib", "hgx-ib-hdr", "hgx-roce",
                                           "stress-64"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(SimConfigTest, config_files_are_not_rewritten_while_nothing_changes) {
  TempDir dir;
  auto sim = MakeSim("hgx-roce", Quiet(), dir.str());
  ASSERT_TRUE(sim->AdvanceTo(1));
  const std::string qos = sim->ethtool_root() + "/" + sim->node().ports[0].netdev + "/qos";
  const auto before = fs::last_write_time(qos);
  const auto config = ConfigFiles(*sim);
  ASSERT_TRUE(sim->AdvanceTo(5));
  EXPECT_EQ(fs::last_write_time(qos), before);
  EXPECT_TRUE(Changed(config, ConfigFiles(*sim)).empty());
}

// ---------------------------------------------------------------- faults

struct FaultCase {
  std::string fault;
  std::string target;  // the YAML target line(s)
  std::string preset;
};

// Runs `fault` from t=10 for 20 s; returns the changed files during and after it.
struct FaultRun {
  std::set<std::string> during, after;
  std::map<std::string, std::string> files;  // during
  std::vector<Injection> injections;
};

FaultRun RunFault(const std::string& preset, const std::string& event) {
  TempDir dir;
  auto sim =
      MakeSim(preset, "duration: 2m\nevents:\n  - at: 10s\n    duration: 20s\n" + event, dir.str());
  FaultRun run;
  EXPECT_TRUE(sim->AdvanceTo(5));
  const auto healthy = ConfigFiles(*sim);
  auto in = sim->AdvanceTo(15);
  EXPECT_TRUE(in);
  if (in) run.injections = *in;
  run.files = ConfigFiles(*sim);
  run.during = Changed(healthy, run.files);
  EXPECT_TRUE(sim->AdvanceTo(40));
  run.after = Changed(healthy, ConfigFiles(*sim));
  return run;
}

TEST(SimConfigFaultTest, port_faults_change_only_their_ports_file_and_revert) {
  TempDir probe;
  auto sim = MakeSim("hgx-roce", Quiet(), probe.str());
  const Port& p = sim->node().ports[2];
  const std::string nd = p.netdev;
  const std::string net = "sys/devices/" + sim->node().functions[p.pci].path + "/net/" + nd;
  const std::string eth = "ethtool/" + nd;
  const std::map<std::string, std::set<std::string>> expect = {
      {"pfc_off", {eth + "/qos"}},
      {"trust_pcp", {eth + "/qos"}},
      {"ecn_off", {net + "/ecn/roce_np/enable/3", net + "/ecn/roce_rp/enable/3"}},
      {"mtu_1500", {net + "/mtu"}},
      {"global_pause_on", {eth + "/pause"}},
      {"storm_prevention_off", {eth + "/tunables"}},
  };
  for (const auto& [fault, files] : expect) {
    SCOPED_TRACE(fault);
    FaultRun run =
        RunFault("hgx-roce", "    fault: " + fault + "\n    device: " + p.rdma_device + "\n");
    EXPECT_EQ(run.during, files);
    EXPECT_TRUE(run.after.empty()) << *run.after.begin();
    ASSERT_EQ(run.injections.size(), 1u);
    EXPECT_EQ(run.injections[0].device, p.rdma_device);
    EXPECT_EQ(run.injections[0].netdev, nd);
    if (fault == "pfc_off" || fault == "trust_pcp") {
      auto qos = sys::ParseMlnxQosText(run.files[eth + "/qos"], "qos");
      ASSERT_TRUE(qos);
      EXPECT_EQ(qos->unknown_lines, 0u);
      EXPECT_TRUE(qos->problems.empty());
      if (fault == "pfc_off") {
        EXPECT_EQ(qos->settings.pfc_enabled, 0);
        EXPECT_EQ(qos->settings.trust, "dscp");
      } else {
        EXPECT_EQ(qos->settings.trust, "pcp");
        EXPECT_FALSE(qos->settings.dscp_priority[26]);
        EXPECT_EQ(qos->settings.pfc_enabled, 0x08);
      }
    }
    for (const std::string& f : files) {
      if (f.ends_with("/enable/3")) EXPECT_EQ(run.files[f], "0\n");
    }
    if (fault == "mtu_1500") EXPECT_EQ(run.files[net + "/mtu"], "1500\n");
    if (fault == "global_pause_on") {
      EXPECT_EQ(run.files[eth + "/pause"],
                "Pause parameters for " + nd + ":\nAutonegotiate:\toff\nRX:\t\ton\nTX:\t\ton\n\n");
    }
    if (fault == "storm_prevention_off") {
      EXPECT_EQ(run.files[eth + "/tunables"], "pfc-prevention-tout: 0\n");
    }
  }
}

TEST(SimConfigFaultTest, peermem_unloaded_is_node_wide) {
  FaultRun run = RunFault("hgx-roce", "    fault: peermem_unloaded\n");
  EXPECT_EQ(run.during, (std::set<std::string>{"sys/module/nvidia_peermem/refcnt"}));
  EXPECT_FALSE(run.files.contains("sys/module/nvidia_peermem/refcnt"));
  EXPECT_TRUE(run.files.contains("sys/module/mlx5_core/refcnt"));  // module/ stays readable
  EXPECT_TRUE(run.after.empty());
  ASSERT_EQ(run.injections.size(), 1u);
  EXPECT_EQ(run.injections[0].device, "");
  EXPECT_EQ(run.injections[0].port, 0);
  EXPECT_EQ(InjectionJson(run.injections[0], 0).find("\"port\""), std::string::npos);
}

TEST(SimConfigFaultTest, acs_redirect_sets_rr_and_cr_on_the_switch_port_above_the_gpu) {
  auto node = BuildPreset("hgx-roce");
  ASSERT_TRUE(node);
  const PciFunction& gpu = node->functions[node->gpus[1]];
  const PciFunction* dsp = Parent(*node, gpu);
  ASSERT_NE(dsp, nullptr);
  EXPECT_EQ(gpu.bdf, "0000:19:00.0");
  EXPECT_EQ(dsp->bdf, "0000:18:00.0");
  for (const std::string& target : {std::string("0000:19:00.0"), std::string("1")}) {
    SCOPED_TRACE(target);
    FaultRun run = RunFault("hgx-roce", "    fault: acs_redirect\n    gpu: \"" + target + "\"\n");
    const std::string config = DevicesPath(*node, dsp->bdf) + "/config";
    EXPECT_EQ(run.during, (std::set<std::string>{config}));
    EXPECT_TRUE(run.after.empty());
    const std::string& bytes = run.files[config];
    auto c = topology::ParsePciConfig(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
        "config");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->acs_control, 0x000d);  // SV + RR + CR
    ASSERT_EQ(run.injections.size(), 1u);
    EXPECT_EQ(run.injections[0].device, dsp->bdf);
  }
}

TEST(SimConfigFaultTest, mps_mismatch_changes_one_function_of_the_path) {
  auto node = BuildPreset("hgx-roce");
  ASSERT_TRUE(node);
  const std::string gpu = node->functions[node->gpus[2]].bdf;
  EXPECT_EQ(gpu, "0000:35:00.0");
  struct Case {
    std::string event, bdf;
    uint32_t mps, mrrs;
  };
  const std::string nic = node->functions[node->ports[6].pci].bdf;
  for (const Case& c :
       {Case{"    gpu: 0000:35:00.0\n", gpu, 128, 512},
        Case{"    gpu: 2\n    mps: 128\n    mrrs: 256\n", gpu, 128, 256},
        Case{"    device: mlx5_6\n    mps: 256\n    mrrs: 4096\n", nic, 256, 4096}}) {
    SCOPED_TRACE(c.event);
    FaultRun run = RunFault("hgx-roce", "    fault: mps_mismatch\n" + c.event);
    const std::string config = DevicesPath(*node, c.bdf) + "/config";
    EXPECT_EQ(run.during, (std::set<std::string>{config}));
    EXPECT_TRUE(run.after.empty());
    const std::string& bytes = run.files[config];
    auto parsed = topology::ParsePciConfig(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
        "config");
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->max_payload, c.mps);
    EXPECT_EQ(parsed->max_read_request, c.mrrs);
    ASSERT_EQ(run.injections.size(), 1u);
    EXPECT_EQ(run.injections[0].device, c.bdf);
  }
}

TEST(SimConfigFaultTest, the_collectors_see_each_fault) {
  TempDir dir;
  auto sim = MakeSim("hgx-roce",
                     "duration: 5m\nevents:\n"
                     "  - {at: 10s, fault: pfc_off, device: mlx5_0}\n"
                     "  - {at: 10s, fault: ecn_off, device: mlx5_1}\n"
                     "  - {at: 10s, fault: trust_pcp, device: mlx5_2}\n"
                     "  - {at: 10s, fault: mtu_1500, device: mlx5_3}\n"
                     "  - {at: 10s, fault: peermem_unloaded}\n"
                     "  - {at: 10s, fault: acs_redirect, gpu: 0}\n"
                     "  - {at: 10s, fault: mps_mismatch, gpu: 3}\n",
                     dir.str());
  ASSERT_TRUE(sim->AdvanceTo(12));
  const Samples s = CollectAll(*sim);
  EXPECT_EQ(s.errors, 0u) << s.error_text;
  const Node& node = sim->node();
  auto nd = [&](int i) { return node.ports[i].netdev; };
  EXPECT_EQ(s.Get("fabric_pfc_enabled", {{"netdev", nd(0)}, {"priority", "3"}}), 0.0);
  EXPECT_EQ(s.Get("fabric_pfc_enabled", {{"netdev", nd(1)}, {"priority", "3"}}), 1.0);
  EXPECT_EQ(
      s.Get("fabric_roce_ecn_enabled", {{"netdev", nd(1)}, {"priority", "3"}, {"role", "rp"}}),
      0.0);
  EXPECT_TRUE(s.Get("fabric_qos_trust_info", {{"netdev", nd(2)}, {"trust", "pcp"}}));
  EXPECT_EQ(s.Get("fabric_netdev_mtu_bytes", {{"netdev", nd(3)}}), 1500.0);
  EXPECT_EQ(s.Get("fabric_topology_gpudirect_rdma_module_loaded", {{"module", "nvidia_peermem"}}),
            0.0);
  const PciFunction* dsp = Parent(node, node.functions[node.gpus[0]]);
  ASSERT_NE(dsp, nullptr);
  EXPECT_EQ(
      s.Get("fabric_pcie_acs_control", {{"device", dsp->bdf}, {"control", "request_redirect"}}),
      1.0);
  EXPECT_EQ(
      s.Get("fabric_pcie_acs_control", {{"device", dsp->bdf}, {"control", "completion_redirect"}}),
      1.0);
  EXPECT_EQ(s.Get("fabric_pcie_max_payload_bytes", {{"device", node.functions[node.gpus[3]].bdf}}),
            128.0);
}

TEST(SimConfigFaultTest, targets_are_checked) {
  auto error = [](const std::string& events, const std::string& preset = "hgx-roce") {
    auto scenario = ParseScenario("duration: 1m\nevents:\n" + events, "bad.yaml");
    if (!scenario) return scenario.error().message();
    auto node = BuildPreset(preset);
    TempDir dir;
    auto sim = Simulator::Create(std::move(*node), std::move(*scenario), dir.str());
    return sim ? std::string("ok") : sim.error().message();
  };
  EXPECT_EQ(error("  - {at: 5s, fault: peermem_unloaded}\n"), "ok");
  EXPECT_THAT(error("  - {at: 5s, fault: peermem_unloaded, device: mlx5_0}\n"),
              HasSubstr("is node-wide"));
  EXPECT_THAT(error("  - {at: 5s, fault: pfc_off}\n"), HasSubstr("names no device"));
  EXPECT_THAT(error("  - {at: 5s, fault: acs_redirect}\n"), HasSubstr("names no gpu:"));
  EXPECT_THAT(error("  - {at: 5s, fault: acs_redirect, device: mlx5_0}\n"),
              HasSubstr("names a gpu:, not a device"));
  EXPECT_THAT(error("  - {at: 5s, fault: pfc_off, gpu: 0}\n"), HasSubstr("not a gpu:"));
  EXPECT_THAT(error("  - {at: 5s, fault: acs_redirect, gpu: 0000:01:00.0}\n"),
              HasSubstr("gpu \"0000:01:00.0\" does not exist"));
  EXPECT_THAT(error("  - {at: 5s, fault: acs_redirect, gpu: 0}\n", "roce-small"),
              HasSubstr("has no PCIe switch above it"));
  EXPECT_EQ(error("  - {at: 5s, fault: mps_mismatch, gpu: 0}\n", "roce-small"), "ok");
  EXPECT_THAT(error("  - {at: 5s, fault: mps_mismatch, gpu: 0, mps: 300}\n"),
              HasSubstr("mps: expected 128, 256"));
  EXPECT_THAT(error("  - {at: 5s, fault: pfc_off, device: mlx5_0}\n", "hgx-ib"),
              HasSubstr("needs an Ethernet (RoCE) port"));
  EXPECT_THAT(error("  - {at: 5s, fault: mtu_1500, device: mlx5_0}\n", "hgx-ib"),
              HasSubstr("is InfiniBand"));
}

}  // namespace
}  // namespace fabricwatch::sim

// ---------------------------------------------------------------- issue 22: health faults

namespace fabricwatch::sim {
namespace {

// Every regular file of a replay root (relative path -> content); links are not followed.
std::map<std::string, std::string> AllFiles(const Simulator& sim) {
  const fs::path root = fs::path(sim.sysfs_root()).parent_path();
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file() || e.is_symlink()) continue;
    out[fs::relative(e.path(), root).string()] = ReadTextFile(e.path().string());
  }
  return out;
}

// The files in which a run with `event` (at 10 s, for 20 s) differs from the same node without
// it (same seed: the same traffic noise), at `during` and at `after`; the faulty run's files.
struct Diff {
  std::set<std::string> during, after;
  std::map<std::string, std::string> files;  // of the faulty run, at `during`
  std::unique_ptr<TempDir> dir;
  std::unique_ptr<Simulator> sim;  // the faulty run, at `after`
};

Diff DiffAgainstQuiet(const std::string& preset, const std::string& event, double during = 25,
                      double after = 40) {
  TempDir quiet_dir;
  auto quiet = MakeSim(preset, Quiet(120), quiet_dir.str());
  Diff d;
  d.dir = std::make_unique<TempDir>();
  d.sim = MakeSim(preset, "duration: 2m\nevents:\n  - at: 10s\n" + event, d.dir->str());
  EXPECT_TRUE(quiet->AdvanceTo(during));
  EXPECT_TRUE(d.sim->AdvanceTo(during));
  d.files = AllFiles(*d.sim);
  d.during = Changed(AllFiles(*quiet), d.files);
  EXPECT_TRUE(quiet->AdvanceTo(after));
  EXPECT_TRUE(d.sim->AdvanceTo(after));
  d.after = Changed(AllFiles(*quiet), AllFiles(*d.sim));
  return d;
}

// Link Status (PCI Express capability + 0x12) of a config image: {speed code, width}.
std::pair<int, int> LinkStatus(const std::string& bytes) {
  auto parsed = topology::ParsePciConfig(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
      "config");
  EXPECT_TRUE(parsed && parsed->pcie_offset);
  if (!parsed || !parsed->pcie_offset) return {0, 0};
  const size_t at = *parsed->pcie_offset + 0x12u;
  const int status = static_cast<uint8_t>(bytes[at]) | (static_cast<uint8_t>(bytes[at + 1]) << 8);
  return {status & 0xf, (status >> 4) & 0x3f};
}

TEST(SimHealthFaultTest, ib_micro_flap_moves_only_link_error_recovery) {
  Diff d = DiffAgainstQuiet("hgx-ib",
                            "    fault: ib_micro_flap\n    device: mlx5_2\n    count: 3\n"
                            "    period: 5s\n");
  auto node = BuildPreset("hgx-ib");
  ASSERT_TRUE(node);
  const Port* port = node->FindRdmaDevice("mlx5_2");
  ASSERT_NE(port, nullptr);
  const std::string counters = "sys/devices/" + node->functions[port->pci].path +
                               "/infiniband/mlx5_2/ports/1/counters/link_error_recovery";
  EXPECT_EQ(d.during, (std::set<std::string>{counters}));
  EXPECT_EQ(d.files[counters], "3\n");
  // Retrains stay counted (the counter only grows); nothing else ever differed.
  EXPECT_EQ(d.after, (std::set<std::string>{counters}));
  EXPECT_EQ(d.sim->PmaValue("mlx5_2", kLinkErrorRecovery), 3u);
  EXPECT_EQ(d.sim->PmaValue("mlx5_2", kLinkDowned), 1u);
  EXPECT_TRUE(d.sim->LinkUp("mlx5_2"));
  const Samples s = CollectAll(*d.sim);
  EXPECT_EQ(
      s.Get("fabric_rdma_port_link_error_recoveries_total", {{"device", "mlx5_2"}, {"port", "1"}}),
      3);
  EXPECT_EQ(s.Get("fabric_rdma_port_state", {{"device", "mlx5_2"}, {"port", "1"}}), 4);
}

TEST(SimHealthFaultTest, pcie_downtrain_lowers_current_link_and_link_status_then_reverts) {
  auto node = BuildPreset("hgx-roce");
  ASSERT_TRUE(node);
  const PciFunction& nic = node->functions[node->FindRdmaDevice("mlx5_2")->pci];
  const PciFunction& gpu = node->functions[node->gpus[2]];
  ASSERT_EQ(nic.link_width, 16);
  struct Case {
    std::string event;
    const PciFunction* f;
    std::string width, speed;
    int speed_code, width_lanes;
    std::set<std::string> files;
  };
  const std::string n = "sys/devices/" + nic.path, g = "sys/devices/" + gpu.path;
  for (const Case& c : {
           Case{"    device: mlx5_2\n",
                &nic,
                "8\n",
                "32.0 GT/s PCIe\n",
                5,
                8,
                {n + "/config", n + "/current_link_width"}},
           Case{"    gpu: 2\n    link_width: 16\n    link_gts: 16\n",
                &gpu,
                "16\n",
                "16.0 GT/s PCIe\n",
                4,
                16,
                {g + "/config", g + "/current_link_speed"}},
       }) {
    SCOPED_TRACE(c.event);
    Diff d =
        DiffAgainstQuiet("hgx-roce", "    fault: pcie_downtrain\n    duration: 20s\n" + c.event);
    EXPECT_EQ(d.during, c.files);
    EXPECT_TRUE(d.after.empty()) << *d.after.begin();
    const std::string dir = "sys/devices/" + c.f->path;
    EXPECT_EQ(d.files[dir + "/current_link_width"], c.width);
    EXPECT_EQ(d.files[dir + "/current_link_speed"], c.speed);
    EXPECT_EQ(d.files[dir + "/max_link_width"], "16\n");
    EXPECT_EQ(d.files[dir + "/max_link_speed"], "32.0 GT/s PCIe\n");
    EXPECT_EQ(LinkStatus(d.files[dir + "/config"]), std::make_pair(c.speed_code, c.width_lanes));
  }
  // The collector and the errors the parser and the node check.
  TempDir dir;
  auto sim = MakeSim("hgx-roce",
                     "duration: 2m\nevents:\n  - {at: 5s, fault: pcie_downtrain, device: mlx5_2, "
                     "link_width: 4}\n",
                     dir.str());
  ASSERT_TRUE(sim->AdvanceTo(10));
  const Samples s = CollectAll(*sim);
  EXPECT_EQ(s.Get("fabric_pcie_link_width_lanes", {{"device", nic.bdf}}), 4);
  EXPECT_EQ(s.Get("fabric_pcie_link_max_width_lanes", {{"device", nic.bdf}}), 16);
  EXPECT_FALSE(
      ParseScenario("events:\n  - {at: 1s, fault: pcie_downtrain, device: mlx5_0, "
                    "link_gts: 3}\n",
                    "t.yaml"));
  for (const char* bad : {"link_width: 32", "link_width: 16"}) {
    auto scenario = ParseScenario(
        std::string("events:\n  - {at: 1s, fault: pcie_downtrain, device: mlx5_0, ") + bad + "}\n",
        "t.yaml");
    ASSERT_TRUE(scenario) << bad;
    auto preset = BuildPreset("hgx-roce");
    ASSERT_TRUE(preset);
    TempDir d2;
    EXPECT_FALSE(Simulator::Create(std::move(*preset), *scenario, d2.str())) << bad;
  }
}

TEST(SimHealthFaultTest, aer_burst_grows_the_aer_files_over_its_duration) {
  auto node = BuildPreset("hgx-roce");
  ASSERT_TRUE(node);
  const PciFunction& nic = node->functions[node->FindRdmaDevice("mlx5_4")->pci];
  const std::string dir = "sys/devices/" + nic.path;
  Diff d = DiffAgainstQuiet(
      "hgx-roce", "    fault: aer_burst\n    device: mlx5_4\n    count: 20\n    duration: 20s\n",
      19, 40);
  // The AER file, and the kernel log's AER lines (sim_kmsg_test.cc checks them).
  EXPECT_EQ(d.during, (std::set<std::string>{dir + "/aer_dev_correctable", "kmsg"}));
  // 10 of its 20 seconds: 10 errors.
  EXPECT_THAT(d.files[dir + "/aer_dev_correctable"], HasSubstr("RxErr 10\n"));
  EXPECT_THAT(d.files[dir + "/aer_dev_correctable"], HasSubstr("TOTAL_ERR_COR 10\n"));
  EXPECT_EQ(d.after, (std::set<std::string>{dir + "/aer_dev_correctable", "kmsg"}));
  Samples s = CollectAll(*d.sim);
  EXPECT_EQ(
      s.Get("fabric_pcie_aer_errors_total", {{"device", nic.bdf}, {"severity", "correctable"}}),
      20);
  EXPECT_EQ(s.Get("fabric_pcie_aer_errors_total", {{"device", nic.bdf}, {"severity", "nonfatal"}}),
            0);
  // Nonfatal too, on a GPU; a second burst counts on from the first.
  TempDir tmp;
  auto sim = MakeSim("hgx-roce",
                     "duration: 2m\nevents:\n"
                     "  - {at: 5s, fault: aer_burst, gpu: 0, count: 4, nonfatal: 2, duration: 4s}\n"
                     "  - {at: 20s, fault: aer_burst, gpu: 0, count: 6, duration: 2s}\n",
                     tmp.str());
  ASSERT_TRUE(sim->AdvanceTo(30));
  const std::string gpu = node->functions[node->gpus[0]].bdf;
  s = CollectAll(*sim);
  EXPECT_EQ(s.Get("fabric_pcie_aer_errors_total", {{"device", gpu}, {"severity", "correctable"}}),
            10);
  EXPECT_EQ(s.Get("fabric_pcie_aer_errors_total", {{"device", gpu}, {"severity", "nonfatal"}}), 2);
  EXPECT_EQ(s.errors, 0u) << s.error_text;
}

// ber_growth's per-lane and baseline shapes that the BER scenario files rely on
// (ber_lane_imbalance, ber_outlier_port, gross_ber_after_reload).
TEST(SimHealthFaultTest, ber_scenarios_shape_lanes_outliers_and_gross_errors) {
  TempDir dir;
  auto sim = MakeSim("hgx-roce",
                     "duration: 5m\nevents:\n"
                     "  - {at: 10s, fault: ber_growth, device: mlx5_5, lane: 3, ber: 1e-6, "
                     "ramp: 0, duration: 2m}\n"
                     "  - {at: 10s, fault: ber_growth, device: mlx5_3, ber: 6e-8, ramp: 0, "
                     "duration: 2m}\n"
                     "  - {at: 10s, fault: counter_reset, device: mlx5_1}\n"
                     "  - {at: 11s, fault: ber_growth, device: mlx5_1, ber: 5e-5, ramp: 0, "
                     "duration: 2m}\n",
                     dir.str());
  ASSERT_TRUE(sim->AdvanceTo(20));
  auto at = [&](const std::string& dev, const std::string& stat) {
    return static_cast<double>(simtest::Stat(*sim, sim->node().FindRdmaDevice(dev)->netdev, stat));
  };
  std::map<std::string, std::map<std::string, double>> before;
  const std::vector<std::string> stats = {
      "rx_corrected_bits_phy", "rx_pcs_symbol_err_phy", "rx_bits_phy",      "rx_err_lane_0_phy",
      "rx_err_lane_1_phy",     "rx_err_lane_2_phy",     "rx_err_lane_3_phy"};
  const std::vector<std::string> devs = {"mlx5_0", "mlx5_1", "mlx5_3", "mlx5_5"};
  for (const auto& dev : devs)
    for (const auto& stat : stats) before[dev][stat] = at(dev, stat);
  ASSERT_TRUE(sim->AdvanceTo(80));
  auto rate = [&](const std::string& dev, const std::string& stat) {
    return (at(dev, stat) - before[dev][stat]) / 60;
  };
  // Lane imbalance: lane 3 (rx_err_lane_2_phy) carries 97% of the corrected bits.
  const double corrected = rate("mlx5_5", "rx_corrected_bits_phy");
  EXPECT_NEAR(corrected / rate("mlx5_5", "rx_bits_phy"), 1e-6, 1e-8);
  EXPECT_NEAR(rate("mlx5_5", "rx_err_lane_2_phy") / corrected, 0.97, 0.005);
  for (const char* lane : {"rx_err_lane_0_phy", "rx_err_lane_1_phy", "rx_err_lane_3_phy"}) {
    EXPECT_NEAR(rate("mlx5_5", lane) / corrected, 0.01, 0.005) << lane;
  }
  EXPECT_EQ(rate("mlx5_5", "rx_pcs_symbol_err_phy"), 0) << "1e-6: no uncorrected errors yet";
  // Outlier: 6e-8 against the 2e-9 baseline of its siblings, 30x.
  const double sibling = rate("mlx5_0", "rx_corrected_bits_phy") / rate("mlx5_0", "rx_bits_phy");
  const double outlier = rate("mlx5_3", "rx_corrected_bits_phy") / rate("mlx5_3", "rx_bits_phy");
  EXPECT_NEAR(sibling, 2e-9, 2e-10);
  EXPECT_NEAR(outlier / sibling, 30, 3);
  EXPECT_EQ(rate("mlx5_3", "rx_pcs_symbol_err_phy"), 0);
  // Gross after a reload: counted from 0 at the reset, ~1e5 uncorrected symbols/s against
  // 4e11 bits/s (effective BER 2.5e-7) from the first second.
  EXPECT_NEAR(rate("mlx5_1", "rx_pcs_symbol_err_phy") / rate("mlx5_1", "rx_bits_phy"), 2.5e-7,
              1e-8);
  EXPECT_NEAR(before["mlx5_1"]["rx_bits_phy"] / rate("mlx5_1", "rx_bits_phy"), 11, 0.5)
      << "restarted from 0 at +10 s";
  EXPECT_NEAR(before["mlx5_1"]["rx_pcs_symbol_err_phy"] / rate("mlx5_1", "rx_pcs_symbol_err_phy"),
              10, 0.5)
      << "gross from its first second, +11 s";
}

}  // namespace
}  // namespace fabricwatch::sim
