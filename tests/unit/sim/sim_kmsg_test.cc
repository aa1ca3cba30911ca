// fabricsim's kernel log (issue 23): the replay file <root>/kmsg, read back as the kmsg collector
// reads it (kmsg::KmsgSplitter + kmsg::ParseKmsgRecord). Every run checks the file only grows, the
// sequence counts from 1 by 1, the times never go back and match the simulated clock (plus the
// boot offset), and each line names its PCI function (SUBSYSTEM=pci, DEVICE=+pci:<bdf>). Each
// fault that writes records is checked for its exact texts (docs/reference.md §9), its levels,
// its timing and its effect on the carrier and the counters.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "collectors/kmsg/kmsg_parse.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_paths.h"
#include "tests/unit/sim/sim_testing.h"
#include "tools/fabricsim/simulator.h"

namespace fabricwatch::sim {
namespace {

namespace fs = std::filesystem;
using fabricwatch::testing::TempDir;
using simtest::MakeSim;
using simtest::Quiet;
using simtest::Stat;
using ::testing::HasSubstr;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// What a test reads of the log: the records, the file's size after each step, and how many
// records the splitter dropped.
struct KmsgRun {
  std::vector<kmsg::KmsgRecord> records;
  std::vector<uint64_t> sizes;
  size_t dropped = 0;
};

std::vector<kmsg::KmsgRecord> ParseAll(const std::string& text, size_t* dropped) {
  kmsg::KmsgSplitter splitter;
  splitter.Feed(text);
  splitter.Finish();
  std::vector<kmsg::KmsgRecord> out;
  std::string record;
  while (splitter.Next(record)) {
    auto parsed = kmsg::ParseKmsgRecord(record);
    EXPECT_TRUE(parsed) << record << ": " << parsed.error().ToString();
    if (parsed) out.push_back(std::move(*parsed));
  }
  if (dropped != nullptr) *dropped = splitter.dropped();
  return out;
}

// Steps `sim` one simulated second at a time up to `until`, calling `each(t)` after each step.
KmsgRun StepAndRead(Simulator& sim, int until, const std::function<void(int)>& each = {}) {
  KmsgRun run;
  for (int t = static_cast<int>(sim.now()) + 1; t <= until; ++t) {
    auto injections = sim.AdvanceTo(t);
    EXPECT_TRUE(injections) << injections.error().ToString();
    run.sizes.push_back(fs::file_size(sim.kmsg_path()));
    if (each) each(t);
  }
  run.records = ParseAll(ReadText(sim.kmsg_path()), &run.dropped);
  return run;
}

// The invariants every record file keeps (docs/reference.md §9.1).
void ExpectWellFormed(const KmsgRun& run) {
  for (size_t i = 1; i < run.sizes.size(); ++i) {
    EXPECT_GE(run.sizes[i], run.sizes[i - 1]) << "the file shrank at step " << i;
  }
  EXPECT_EQ(run.dropped, 0u);
  uint64_t last = 0;
  for (size_t i = 0; i < run.records.size(); ++i) {
    const kmsg::KmsgRecord& r = run.records[i];
    EXPECT_EQ(r.sequence, i + 1) << r.message;
    EXPECT_EQ(r.facility, 0u) << r.message;
    EXPECT_LE(r.priority, 7) << r.message;
    EXPECT_FALSE(r.fragment) << r.message;
    EXPECT_GE(r.timestamp_us, last) << r.message;
    EXPECT_GE(r.timestamp_us, kKmsgBootUs) << r.message;
    last = r.timestamp_us;
    if (!r.device.empty()) {
      EXPECT_EQ(r.subsystem, "pci") << r.message;
    }
  }
}

std::vector<kmsg::KmsgRecord> Matching(const KmsgRun& run, const std::string& text) {
  std::vector<kmsg::KmsgRecord> out;
  for (const kmsg::KmsgRecord& r : run.records) {
    if (r.message.find(text) != std::string::npos) out.push_back(r);
  }
  return out;
}

// Simulated seconds of a record.
double SimTime(const kmsg::KmsgRecord& r) {
  return static_cast<double>(r.timestamp_us - kKmsgBootUs) / 1e6;
}

std::string BdfOf(const Simulator& sim, const std::string& device) {
  const Port* p = sim.node().FindRdmaDevice(device);
  EXPECT_NE(p, nullptr) << device;
  return p == nullptr ? "" : sim.node().functions[p->pci].bdf;
}

std::string NetdevOf(const Simulator& sim, const std::string& device) {
  const Port* p = sim.node().FindRdmaDevice(device);
  return p == nullptr ? "" : p->netdev;
}

// One event on `device` of hgx-roce.
std::string OneEvent(const std::string& fault, const std::string& device, const std::string& more,
                     const std::string& duration = "2m") {
  return "duration: " + duration + "\nevents:\n  - at: 30s\n    fault: " + fault +
         "\n    device: " + device + "\n" + more;
}

// ---------------------------------------------------------------- the file

TEST(SimKmsgTest, the_log_is_beside_the_replay_roots_empty_at_start_and_never_rewritten) {
  TempDir dir;
  auto sim = MakeSim("hgx-roce", Quiet(60), dir.str());
  EXPECT_EQ(sim->kmsg_path(), dir.str() + "/kmsg");
  EXPECT_EQ(fs::path(sim->kmsg_path()).parent_path(), fs::path(sim->sysfs_root()).parent_path());
  EXPECT_EQ(fs::path(sim->kmsg_path()).parent_path(), fs::path(sim->ethtool_root()).parent_path());
  ASSERT_TRUE(fs::is_regular_file(sim->kmsg_path()));
  EXPECT_EQ(fs::file_size(sim->kmsg_path()), 0u);
  // A healthy node prints nothing.
  ASSERT_TRUE(sim->AdvanceTo(30));
  EXPECT_EQ(fs::file_size(sim->kmsg_path()), 0u);

  // A record, then WriteInitial again: idempotent, the log keeps its records and inode.
  TempDir dir2;
  auto flap =
      MakeSim("hgx-roce", OneEvent("link_down", "mlx5_0", "    duration: 5s\n"), dir2.str());
  ASSERT_TRUE(flap->AdvanceTo(31));
  const uint64_t size = fs::file_size(flap->kmsg_path());
  EXPECT_GT(size, 0u);
  const auto inode = [&] {
    struct stat st {};
    ::stat(flap->kmsg_path().c_str(), &st);
    return st.st_ino;
  };
  const auto before = inode();
  ASSERT_TRUE(flap->WriteInitial().ok());
  EXPECT_EQ(fs::file_size(flap->kmsg_path()), size);
  EXPECT_EQ(inode(), before);

  // A new run on the same root is a new boot: the old file is emptied in place.
  auto again = MakeSim("hgx-roce", Quiet(60), dir2.str());
  EXPECT_EQ(fs::file_size(again->kmsg_path()), 0u);
  EXPECT_EQ(inode(), before);
}

TEST(SimKmsgTest, a_reader_tailing_the_file_sees_whole_records_in_order) {
  // The agent's way: read what was appended since the last read, split, parse.
  TempDir dir;
  auto sim = MakeSim("hgx-roce",
                     OneEvent("access_reg_flood", "mlx5_6", "    rate: 50\n    duration: 10s\n"),
                     dir.str());
  kmsg::KmsgSplitter splitter;
  uint64_t offset = 0, expected_seq = 1;
  std::string record;
  for (int t = 1; t <= 60; ++t) {
    ASSERT_TRUE(sim->AdvanceTo(t));
    const std::string text = ReadText(sim->kmsg_path());
    ASSERT_GE(text.size(), offset);
    splitter.Feed(std::string_view(text).substr(offset));
    offset = text.size();
    while (splitter.Next(record)) {
      auto r = kmsg::ParseKmsgRecord(record);
      ASSERT_TRUE(r) << record;
      EXPECT_EQ(r->sequence, expected_seq++);
      EXPECT_LE(SimTime(*r), t);
    }
  }
  splitter.Finish();
  while (splitter.Next(record)) ++expected_seq;
  EXPECT_EQ(expected_seq - 1, 500u);
  EXPECT_EQ(splitter.dropped(), 0u);
}

// ---------------------------------------------------------------- the faults

TEST(SimKmsgTest, fw_fatal_prints_the_health_lines_and_takes_the_link_down_until_recovery) {
  TempDir dir;
  auto sim = MakeSim("hgx-roce", OneEvent("fw_fatal", "mlx5_2", "    duration: 20s\n"), dir.str());
  const std::string bdf = BdfOf(*sim, "mlx5_2"), netdev = NetdevOf(*sim, "mlx5_2");
  const std::string carrier = sim->sysfs_root() + "/class/net/" + netdev + "/carrier";
  std::vector<int> down;
  const KmsgRun run = StepAndRead(*sim, 70, [&](int t) {
    EXPECT_EQ(ReadText(carrier), sim->LinkUp(netdev) ? "1\n" : "0\n") << t;
    if (!sim->LinkUp(netdev)) down.push_back(t);
  });
  ExpectWellFormed(run);
  EXPECT_EQ(down.front(), 30);
  EXPECT_EQ(down.back(), 49);
  EXPECT_EQ(down.size(), 20u);

  const std::string dev = "mlx5_core " + bdf + ": ";
  const std::vector<std::pair<std::string, int>> expected = {
      {dev + "poll_health:836:(pid 0): Fatal error 1 detected", 3},
      {dev + "print_health_info:431:(pid 0): Health issue observed, firmware internal error, "
             "severity(3) ERROR:",
       3},
      {dev + "print_health_info:450:(pid 0): synd 0x1: firmware internal error", 3},
      {"mlx5_core " + bdf + " " + netdev + ": Link down", 6},
      {dev + "health recovery succeeded", 6},
      {"mlx5_core " + bdf + " " + netdev + ": Link up", 6},
  };
  ASSERT_EQ(run.records.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const kmsg::KmsgRecord& r = run.records[i];
    EXPECT_EQ(r.message, expected[i].first);
    EXPECT_EQ(r.priority, expected[i].second) << r.message;
    EXPECT_EQ(r.device, "+pci:" + bdf) << r.message;
    EXPECT_EQ(SimTime(r), i < 4 ? 30 : 50) << r.message;
  }
}

TEST(SimKmsgTest, module_unplug_empties_the_cage_drops_the_carrier_and_logs_both_ends) {
  TempDir dir;
  auto sim =
      MakeSim("hgx-roce", OneEvent("module_unplug", "mlx5_3", "    duration: 10s\n"), dir.str());
  const std::string bdf = BdfOf(*sim, "mlx5_3"), netdev = NetdevOf(*sim, "mlx5_3");
  const uint64_t unplugs = Stat(*sim, netdev, "module_unplug");
  const std::string down_count = sim->sysfs_root() + "/class/net/" + netdev + "/carrier_down_count";
  const uint64_t downs = std::stoull(ReadText(down_count));
  const std::string eeprom = sim->ethtool_root() + "/" + netdev + "/module-eeprom";
  const KmsgRun run = StepAndRead(*sim, 60, [&](int t) {
    const bool unplugged = t >= 30 && t < 40;
    EXPECT_EQ(sim->LinkUp(netdev), !unplugged) << t;
    EXPECT_EQ(fs::exists(eeprom), !unplugged) << t;
    if (t == 35) {
      EXPECT_EQ(Stat(*sim, netdev, "module_unplug"), unplugs + 1);
      EXPECT_EQ(std::stoull(ReadText(down_count)), downs + 1);
    }
  });
  ExpectWellFormed(run);
  const std::vector<std::pair<std::string, double>> expected = {
      {"mlx5_core " + bdf + ": Port module event: module 0, Cable unplugged", 30},
      {"mlx5_core " + bdf + " " + netdev + ": Link down", 30},
      {"mlx5_core " + bdf + ": Port module event: module 0, Cable plugged", 40},
      {"mlx5_core " + bdf + " " + netdev + ": Link up", 40},
  };
  ASSERT_EQ(run.records.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(run.records[i].message, expected[i].first);
    EXPECT_EQ(run.records[i].priority, 6);  // mlx5_core_info and netdev_info
    EXPECT_EQ(run.records[i].device, "+pci:" + bdf);
    EXPECT_EQ(SimTime(run.records[i]), expected[i].second);
  }
  // The same module came back (a plug, not a swap).
  EXPECT_EQ(Stat(*sim, netdev, "module_unplug"), unplugs + 1);
}

TEST(SimKmsgTest, module_error_repeats_every_interval_and_counts_in_ethtool) {
  TempDir dir;
  auto sim = MakeSim("hgx-roce",
                     OneEvent("module_error", "mlx5_5",
                              "    error: high_temperature\n    interval: 60s\n"
                              "    duration: 150s\n",
                              "5m"),
                     dir.str());
  const std::string bdf = BdfOf(*sim, "mlx5_5"), netdev = NetdevOf(*sim, "mlx5_5");
  const uint64_t before = Stat(*sim, netdev, "module_high_temp");
  const KmsgRun run = StepAndRead(*sim, 240, [&](int t) { EXPECT_TRUE(sim->LinkUp(netdev)) << t; });
  ExpectWellFormed(run);
  ASSERT_EQ(run.records.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(run.records[i].message,
              "mlx5_core " + bdf +
                  ": port_module:1182:(pid 0): Port module event[error]: module 0, Cable error, "
                  "High Temperature");
    EXPECT_EQ(run.records[i].priority, 3);
    EXPECT_EQ(run.records[i].device, "+pci:" + bdf);
    EXPECT_EQ(SimTime(run.records[i]), 30 + 60 * static_cast<double>(i));
  }
  EXPECT_EQ(Stat(*sim, netdev, "module_high_temp"), before + 3);

  // Each kind's text; bad_cable counts in module_bad_shorted, power_budget in none.
  const std::vector<std::tuple<std::string, std::string, const char*>> kinds = {
      {"bad_cable", "Bad or shorted cable/module", "module_bad_shorted"},
      {"bus_stuck", "Bus stuck (I2C or data shorted)", "module_bus_stuck"},
      {"power_budget", "Power budget exceeded", nullptr},
      {"no_eeprom", "No EEPROM/retry timeout", nullptr},
      {"unsupported", "Enforce part number list", nullptr},
  };
  for (const auto& [kind, text, stat] : kinds) {
    SCOPED_TRACE(kind);
    TempDir d;
    auto s = MakeSim("hgx-roce", OneEvent("module_error", "mlx5_0", "    error: " + kind + "\n"),
                     d.str());
    const std::string n = NetdevOf(*s, "mlx5_0");
    const uint64_t counted = stat != nullptr ? Stat(*s, n, stat) : 0;
    const KmsgRun r = StepAndRead(*s, 100);
    ExpectWellFormed(r);
    ASSERT_EQ(r.records.size(), 1u);  // default: 60 s, one line a minute
    EXPECT_THAT(r.records[0].message, HasSubstr(": Port module event[error]: module 0, Cable "
                                                "error, " +
                                                text));
    if (stat != nullptr) {
      EXPECT_EQ(Stat(*s, n, stat), counted + 1);
    }
  }
}

TEST(SimKmsgTest, cmd_timeout_prints_rate_lines_a_minute) {
  TempDir dir;
  auto sim = MakeSim("hgx-roce",
                     OneEvent("cmd_timeout", "mlx5_1", "    rate: 2\n    duration: 5m\n", "6m"),
                     dir.str());
  const std::string bdf = BdfOf(*sim, "mlx5_1");
  const KmsgRun run = StepAndRead(*sim, 360);
  ExpectWellFormed(run);
  ASSERT_EQ(run.records.size(), 10u);
  for (size_t i = 0; i < run.records.size(); ++i) {
    EXPECT_EQ(run.records[i].message,
              "mlx5_core " + bdf +
                  ": cmd_exec:1088:(pid 1234): QUERY_VPORT_COUNTER(0x770) timeout. Will cause a "
                  "leak of a command resource");
    EXPECT_EQ(run.records[i].priority, 3);
    EXPECT_EQ(run.records[i].device, "+pci:" + bdf);
    EXPECT_EQ(SimTime(run.records[i]), 30 + 30 * static_cast<double>(i));
  }
}

TEST(SimKmsgTest, access_reg_flood_meets_its_rate_with_each_line_at_its_own_microsecond) {
  // 10,000 lines a second (the flood) for 5 s: each step writes the second's lines,
  // spread 100 µs apart, in one append.
  TempDir dir;
  auto sim =
      MakeSim("hgx-roce",
              OneEvent("access_reg_flood", "mlx5_6", "    rate: 10000\n    duration: 5s\n", "1m"),
              dir.str());
  const std::string bdf = BdfOf(*sim, "mlx5_6");
  const KmsgRun run = StepAndRead(*sim, 40);
  ExpectWellFormed(run);
  ASSERT_EQ(run.records.size(), 50000u);
  const std::string text =
      "mlx5_core " + bdf +
      ": mlx5_cmd_out_err:838:(pid 1441871): ACCESS_REG(0x805) op_mod(0x1) failed, status bad "
      "operation(0x2), syndrome (0x9a6171), err(-22)";
  std::map<int64_t, int> per_second;
  for (size_t i = 0; i < run.records.size(); ++i) {
    const kmsg::KmsgRecord& r = run.records[i];
    ASSERT_EQ(r.message, text);
    ASSERT_EQ(r.priority, 3);
    ASSERT_EQ(r.device, "+pci:" + bdf);
    ASSERT_EQ(r.timestamp_us, kKmsgBootUs + 30000000 + 100 * i);
    ++per_second[static_cast<int64_t>(SimTime(r))];
  }
  EXPECT_EQ(per_second, (std::map<int64_t, int>{
                            {30, 10000}, {31, 10000}, {32, 10000}, {33, 10000}, {34, 10000}}));
  // Nothing before the fault; then each step appends the lines of the second before it (the
  // last ones, up to 35 s, at the step that ends the fault); nothing after. sizes[i]: at t = i+1.
  EXPECT_EQ(run.sizes[28], 0u);
  for (int t = 30; t <= 35; ++t) EXPECT_GT(run.sizes[t - 1], run.sizes[t - 2]) << t;
  EXPECT_EQ(run.sizes[35], run.sizes[34]);

  // One long step writes the same records as steps of a second.
  TempDir dir2;
  auto jump =
      MakeSim("hgx-roce",
              OneEvent("access_reg_flood", "mlx5_6", "    rate: 10000\n    duration: 5s\n", "1m"),
              dir2.str());
  ASSERT_TRUE(jump->AdvanceTo(40));
  EXPECT_EQ(ReadText(jump->kmsg_path()), ReadText(sim->kmsg_path()));

  // A rate that does not divide a second: 3 lines a second for 2 s, at 0, 1/3, 2/3 s, ...
  TempDir dir3;
  auto slow =
      MakeSim("hgx-roce", OneEvent("access_reg_flood", "mlx5_6", "    rate: 3\n    duration: 2s\n"),
              dir3.str());
  const KmsgRun r3 = StepAndRead(*slow, 40);
  ExpectWellFormed(r3);
  ASSERT_EQ(r3.records.size(), 6u);
  EXPECT_EQ(r3.records[1].timestamp_us, kKmsgBootUs + 30333333);
  EXPECT_EQ(r3.records[5].timestamp_us, kKmsgBootUs + 31666667);
}

TEST(SimKmsgTest, aer_burst_prints_a_few_groups_and_keeps_its_counts) {
  TempDir dir;
  auto sim = MakeSim("hgx-roce",
                     OneEvent("aer_burst", "mlx5_4", "    count: 50\n    duration: 60s\n", "3m"),
                     dir.str());
  const Port* port = sim->node().FindRdmaDevice("mlx5_4");
  const PciFunction& f = sim->node().functions[port->pci];
  // The root port: the first bridge of the function's devices/ path.
  const std::string root = f.path.substr(f.path.find('/') + 1, 12);
  ASSERT_THAT(f.path, HasSubstr("/" + root + "/"));
  const KmsgRun run = StepAndRead(*sim, 120);
  ExpectWellFormed(run);
  const auto received = Matching(run, "AER: Correctable Error message received from " + f.bdf);
  // A few per burst, not one per error: the first error comes at 31 s, then a group each 10 s
  // while errors arrive (31, 41, ..., 81 s).
  ASSERT_EQ(received.size(), 6u);
  EXPECT_EQ(SimTime(received.front()), 31);
  EXPECT_EQ(SimTime(received.back()), 81);
  ASSERT_EQ(run.records.size(), 4 * received.size());
  for (size_t g = 0; g < received.size(); ++g) {
    const kmsg::KmsgRecord* r = &run.records[4 * g];
    EXPECT_EQ(r[0].message,
              "pcieport " + root + ": AER: Correctable Error message received from " + f.bdf);
    EXPECT_EQ(r[0].device, "+pci:" + root);
    EXPECT_EQ(r[0].priority, 6);
    EXPECT_EQ(r[1].message, "mlx5_core " + f.bdf + ": AER: PCIe Bus Error: severity=Correctable");
    EXPECT_EQ(r[2].message, "mlx5_core " + f.bdf +
                                ": AER:   device [15b3:1021] error status/mask=00000001/0000e000");
    // aer.c "  [%2d] %-17s | %-11s | %-17s%s": the layer column is padded too.
    EXPECT_EQ(
        r[3].message,
        "mlx5_core " + f.bdf + ": AER:   [ 0] RxErr             | Receiver    | Physical Layer   ");
    for (int i = 1; i < 4; ++i) {
      EXPECT_EQ(r[i].device, "+pci:" + f.bdf);
      EXPECT_EQ(r[i].priority, 4);
      EXPECT_EQ(r[i].timestamp_us, r[0].timestamp_us);
    }
    EXPECT_GE(SimTime(r[0]), 30);
    EXPECT_LT(SimTime(r[0]), 90);
  }
  // The counters as before: all 50 in aer_dev_correctable.
  EXPECT_THAT(ReadText(sim->sysfs_root() + "/bus/pci/devices/" + f.bdf + "/aer_dev_correctable"),
              HasSubstr("TOTAL_ERR_COR 50\n"));

  // A GPU's burst with nonfatal errors: the nvidia driver's lines, and the uncorrectable group.
  TempDir dir2;
  auto gpu = MakeSim("hgx-roce",
                     "duration: 3m\nevents:\n  - at: 30s\n    fault: aer_burst\n    gpu: 0\n"
                     "    count: 20\n    nonfatal: 5\n    duration: 30s\n",
                     dir2.str());
  const PciFunction& g = gpu->node().functions[gpu->node().gpus[0]];
  const KmsgRun r2 = StepAndRead(*gpu, 90);
  ExpectWellFormed(r2);
  EXPECT_FALSE(
      Matching(r2, "nvidia " + g.bdf + ": AER: PCIe Bus Error: severity=Correctable").empty());
  EXPECT_FALSE(
      Matching(r2, "nvidia " + g.bdf + ": AER:   device [10de:2330] error status/mask=").empty());
  const auto nonfatal =
      Matching(r2, "nvidia " + g.bdf + ": AER: PCIe Bus Error: severity=Uncorrectable (Non-Fatal)");
  ASSERT_FALSE(nonfatal.empty());
  EXPECT_EQ(nonfatal[0].priority, 3);
  EXPECT_FALSE(
      Matching(r2, "AER: Uncorrectable (Non-Fatal) Error message received from " + g.bdf).empty());
  EXPECT_FALSE(
      Matching(r2, "AER:   [14] CmpltTO           | Requester   | Transaction Layer (First)")
          .empty());
  EXPECT_THAT(ReadText(gpu->sysfs_root() + "/bus/pci/devices/" + g.bdf + "/aer_dev_nonfatal"),
              HasSubstr("TOTAL_ERR_NONFATAL 5\n"));
}

TEST(SimKmsgTest, carrier_changes_print_link_lines_on_ethernet_only) {
  // link_flap on RoCE: one Link down and one Link up per flap, at the flap's seconds.
  TempDir dir;
  auto sim = MakeSim(
      "hgx-roce", OneEvent("link_flap", "mlx5_3", "    count: 3\n    period: 10s\n    down: 2\n"),
      dir.str());
  const std::string netdev = NetdevOf(*sim, "mlx5_3");
  const KmsgRun run = StepAndRead(*sim, 90);
  ExpectWellFormed(run);
  const auto down = Matching(run, " " + netdev + ": Link down");
  const auto up = Matching(run, " " + netdev + ": Link up");
  ASSERT_EQ(down.size(), 3u);
  ASSERT_EQ(up.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(SimTime(down[i]), 30 + 10 * static_cast<double>(i));
    EXPECT_EQ(SimTime(up[i]), 32 + 10 * static_cast<double>(i));
  }
  EXPECT_EQ(run.records.size(), 6u);

  // IPoIB prints no link line (§9.7); the health lines of fw_fatal still come.
  TempDir dir2;
  auto ib = MakeSim("hgx-ib", OneEvent("link_flap", "mlx5_3", "    count: 3\n"), dir2.str());
  const KmsgRun r2 = StepAndRead(*ib, 90);
  EXPECT_TRUE(r2.records.empty());
  TempDir dir3;
  auto ib_fatal =
      MakeSim("hgx-ib", OneEvent("fw_fatal", "mlx5_1", "    duration: 10s\n"), dir3.str());
  const KmsgRun r3 = StepAndRead(*ib_fatal, 60);
  ExpectWellFormed(r3);
  EXPECT_EQ(r3.records.size(), 4u);
  EXPECT_EQ(Matching(r3, "Link ").size(), 0u);

  // A function being removed (hot_unplug) prints no link line.
  TempDir dir4;
  auto gone =
      MakeSim("hgx-roce", OneEvent("hot_unplug", "mlx5_2", "    duration: 10s\n"), dir4.str());
  const KmsgRun r4 = StepAndRead(*gone, 60);
  EXPECT_TRUE(r4.records.empty());
}

TEST(SimKmsgTest, bad_parameters_are_named) {
  auto error = [](const std::string& yaml) {
    auto scenario = ParseScenario(yaml, "bad.yaml");
    if (!scenario) return scenario.error();
    auto node = BuildPreset("hgx-roce");
    auto sim = Simulator::Create(std::move(*node), std::move(*scenario), "/tmp/unused-kmsg");
    return sim ? Status::Ok() : sim.error();
  };
  EXPECT_THAT(error(OneEvent("module_error", "mlx5_0", "    error: melted\n")).message(),
              HasSubstr("unknown module error \"melted\" (known: high_temperature, bad_cable"));
  EXPECT_THAT(error(OneEvent("module_error", "mlx5_0", "    interval: 0\n")).message(),
              HasSubstr("events[0].interval: must be positive"));
  EXPECT_THAT(error(OneEvent("access_reg_flood", "mlx5_0", "    rate: 200000\n")).message(),
              HasSubstr("over 100000 lines a second"));
  EXPECT_THAT(error(OneEvent("cmd_timeout", "mlx5_0", "    rate: 0\n")).message(),
              HasSubstr("events[0].rate: must be positive"));
  EXPECT_TRUE(error(OneEvent("access_reg_flood", "mlx5_0", "    rate: 100000\n")).ok());
}

TEST(SimKmsgTest, shipped_kmsg_scenarios_write_their_lines) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"kmsg_fw_fatal", ": Fatal error 1 detected"},
      {"kmsg_module_unplug", ", Cable unplugged"},
      {"kmsg_module_error", ", Cable error, High Temperature"},
      {"kmsg_cmd_timeout", "QUERY_VPORT_COUNTER(0x770) timeout. Will cause a leak"},
      {"kmsg_access_reg_flood", "ACCESS_REG(0x805) op_mod(0x1) failed"},
  };
  for (const auto& [name, text] : files) {
    SCOPED_TRACE(name);
    auto scenario =
        LoadScenario(testing::SourcePath("tools/fabricsim/scenarios/" + name + ".yaml"));
    ASSERT_TRUE(scenario) << scenario.error().ToString();
    TempDir dir;
    auto sim = MakeSim(scenario->preset, *scenario, dir.str());
    const KmsgRun run = StepAndRead(*sim, static_cast<int>(scenario->duration_s));
    ExpectWellFormed(run);
    EXPECT_FALSE(Matching(run, text).empty());
    EXPECT_TRUE(sim->finished());
  }
}

TEST(SimKmsgTest, the_kmsg_collector_counts_each_fault_against_its_port) {
  // What the agent reads of each shipped scenario with --path.kmsg: the event names of its
  // pattern table (collectors/kmsg/kmsg_patterns.h), mapped to the fault's RDMA device.
  struct Case {
    std::string scenario, device;
    std::map<std::string, double> events;
  };
  const std::vector<Case> cases = {
      {"kmsg_fw_fatal",
       "mlx5_2",
       {{"fw_fatal", 1},
        {"health_syndrome", 2},
        {"health_recovery_ok", 1},
        {"link_down", 1},
        {"link_up", 1}}},
      {"kmsg_module_unplug",
       "mlx5_3",
       {{"module_unplugged", 1}, {"module_plugged", 1}, {"link_down", 1}, {"link_up", 1}}},
      {"kmsg_module_error", "mlx5_5", {{"module_high_temperature", 3}}},
      {"kmsg_cmd_timeout", "mlx5_1", {{"cmd_timeout", 10}}},
      {"kmsg_access_reg_flood", "mlx5_6", {{"access_reg_failed", 12000}}},
      {"aer_burst", "mlx5_4", {{"pcie_aer_corrected", 6}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.scenario);
    auto scenario =
        LoadScenario(testing::SourcePath("tools/fabricsim/scenarios/" + c.scenario + ".yaml"));
    ASSERT_TRUE(scenario) << scenario.error().ToString();
    TempDir dir;
    auto sim = MakeSim(scenario->preset, *scenario, dir.str());
    ASSERT_TRUE(sim->AdvanceTo(scenario->duration_s));
    const simtest::Samples s = simtest::CollectAll(*sim);
    EXPECT_EQ(s.errors, 0u) << s.error_text;
    for (const auto& [event, count] : c.events) {
      EXPECT_EQ(s.Get("fabric_kernel_events_total", {{"device", c.device}, {"event", event}}),
                count)
          << event;
    }
    EXPECT_EQ(s.Count("fabric_kernel_log_unknown_lines_total"), 0u);
    EXPECT_EQ(s.Get("fabric_kernel_log_skipped_records_total", {{"reason", "unmapped_device"}})
                  .value_or(0),
              0);
  }
}

}  // namespace
}  // namespace fabricwatch::sim
