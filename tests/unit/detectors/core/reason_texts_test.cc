// Finding reasons that contradict themselves or print a value nobody read (issue 38, item 7).
// Every registered detector is fed, over a simulated hour, snapshots of every family it reads
// (DetectorRegistry()'s inputs) whose samples are present, partly present, NaN, infinite,
// negative or zero, and whose labels are set, empty or missing; every reason it renders must
// be free of "nan", "inf", "1 lanes"-style plurals, doubled spaces and empty entity names.
// Then, per detector, a normal fault whose reason must state the observed and expected values,
// and the two known defects: a 25G port at 10G, a port stuck in INIT with no readable sm_lid.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "collectors/ethtool/ethtool_metrics.h"
#include "collectors/kmsg/kmsg_metrics.h"
#include "collectors/netdev/netdev_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/topology/topology_metrics.h"
#include "detectors/registry.h"
#include "tests/unit/detectors/scenario.h"
#include "tests/unit/detectors/detector_feed.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::seconds;
using testing::FindingLog;
using testing::SnapshotBuilder;
using testing::T0;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kGbit = 1e9 / 8;

// What a rendered reason must never contain; returns the first problem, "" when none.
std::string ReasonProblem(const Finding& f) {
  static const std::regex kUnread(R"((^|[^A-Za-z])(nan|-?inf)([^A-Za-z]|$))", std::regex::icase);
  static const std::regex kPlural(
      R"((^|[^0-9.])1 (lanes|ports|events|errors|flaps|micro-flaps|link-down events|times|)"
      R"(modules|devices|samples|priorities|minutes|hours|seconds|records))");
  if (f.reason.empty()) return "empty reason";
  if (std::regex_search(f.reason, kUnread)) return "prints nan or inf";
  if (std::regex_search(f.reason, kPlural)) return "singular count with a plural noun";
  if (f.reason.find("  ") != std::string::npos) return "doubled space";
  if (f.reason.find(" 0 lanes") != std::string::npos) return "0 lanes";
  if (f.reason.find("expected 0 ") != std::string::npos) return "expected 0";
  if (f.reason.front() == ' ' || f.reason.back() == ' ') return "leading or trailing space";
  for (const auto& [name, value] : f.entity) {
    if (value.empty()) return "empty entity label " + name;
  }
  for (const Evidence& e : f.evidence) {
    if (!std::isfinite(e.value)) return "non-finite evidence " + e.name;
  }
  return "";
}

// Label values per label name: plausible, other, empty ("" = the label present but empty).
std::vector<std::string> LabelPool(std::string_view name) {
  if (name == "netdev") return {"eth0", "ib0", ""};
  if (name == "device") return {"mlx5_0", "0000:18:00.0", ""};
  if (name == "port") return {"1", "2", ""};
  if (name == "priority") return {"3", "0", ""};
  if (name == "direction") return {"rx", "tx", ""};
  if (name == "severity") return {"warning", "error", "correctable", "fatal", "nonfatal", ""};
  if (name == "role") return {"nic", "gpu", ""};
  if (name == "threshold") return {"high_warning", "high_alarm", "low_warning", "low_alarm", ""};
  if (name == "lane") return {"1", "2", ""};
  if (name == "event") return {"unplug", "high_temp", ""};
  if (name == "link_layer") return {"InfiniBand", "Ethernet", ""};
  if (name == "gpu" || name == "nic") return {"0000:18:00.0", "0000:19:00.0", ""};
  return {"x", "y", ""};
}

// Values: the unreadable ones (NaN, ±inf), the boundary ones (0, -1) and plausible ones, with a
// climbing counter so counters show deltas.
double SampleValue(std::mt19937& rng, int step) {
  static const double kOdd[] = {kNaN, kInf, -kInf, 0, -1, 1, 4, 5, 16, 25 * kGbit, 16e9};
  std::uniform_int_distribution<int> pick(0, 2 * static_cast<int>(std::size(kOdd)) - 1);
  const int i = pick(rng);
  if (i < static_cast<int>(std::size(kOdd))) return kOdd[i];
  return 1000.0 * step + i;  // counter-like, rising
}

// One snapshot of `collector` with every family the detector reads from it.
SnapshotBuilder Snapshot(const DetectorInfo& info, std::string_view collector, std::mt19937& rng,
                         int step) {
  SnapshotBuilder b;
  std::bernoulli_distribution coin(0.5), rare(0.15);
  for (const MetricInput& input : info.inputs) {
    if (input.collector != collector || rare(rng)) continue;  // sometimes absent altogether
    const int samples = 1 + static_cast<int>(rng() % 3);
    for (int s = 0; s < samples; ++s) {
      testing::Labels labels;
      for (std::string_view name : input.labels) {
        if (rare(rng)) continue;  // the label missing
        const std::vector<std::string> pool = LabelPool(name);
        // Mostly the first (plausible) value, so entities recur and hold-downs can raise.
        const std::string& value = coin(rng) ? pool[0] : pool[rng() % pool.size()];
        labels.emplace_back(std::string(name), value);
      }
      const double value = SampleValue(rng, step);
      if (input.desc->kind == MetricKind::kCounter) {
        b.Counter(*input.desc, labels, value);
      } else {
        b.Gauge(*input.desc, labels, value);
      }
    }
  }
  return b;
}

// Kernel-log events with and without their device and netdev.
std::vector<LogEvent> LogEvents(std::mt19937& rng, TimePoint time) {
  static const char* kEvents[] = {
      "fw_fatal",  "module_unplugged",       "health_poll_failed", "cmd_timeout",
      "aer_fatal", "pci_power_insufficient", "link_down",          "module_high_temperature"};
  std::vector<LogEvent> events;
  for (int i = 0; i < 2; ++i) {
    LogEvent e;
    e.event = kEvents[rng() % std::size(kEvents)];
    e.device = rng() % 3 == 0 ? "" : "mlx5_0";
    e.netdev = rng() % 3 == 0 ? "" : "eth0";
    e.count = rng() % 3;
    e.last_time = time;
    events.push_back(std::move(e));
  }
  return events;
}

TEST(ReasonTextsTest, every_detector_renders_clean_reasons_from_absent_and_unreadable_inputs) {
  ASSERT_FALSE(DetectorRegistry().empty());
  for (const DetectorInfo& info : DetectorRegistry()) {
    for (unsigned seed : {1u, 2u, 3u, 4u}) {
      auto built = info.factory({});
      ASSERT_TRUE(built) << info.name << ": " << built.error().message();
      Detector& detector = **built;
      std::mt19937 rng(seed);
      fabricwatch::testing::DetectorFeed feed;
      static const std::vector<prometheus::MetricFamily> kNone;
      int rendered = 0;
      for (int step = 0; step < 360; ++step) {
        const TimePoint t = T0() + seconds(10 * step);
        for (const std::string& collector : detector.inputs()) {
          const SnapshotBuilder b = Snapshot(info, collector, rng, step);
          if (collector == kmsg::kCollector) {
            const std::vector<LogEvent> events = LogEvents(rng, t);
            feed(detector, collector, t, b.families(), events);
          } else {
            feed(detector, collector, t, b.families());
          }
        }
        for (const Finding& f : detector.Evaluate(t)) {
          ++rendered;
          EXPECT_EQ(ReasonProblem(f), "")
              << info.name << " (seed " << seed << ", step " << step << "): " << f.reason;
        }
      }
      // Not a requirement that each seed raises, only a record of how much was rendered.
      RecordProperty(std::string(info.name) + "_seed" + std::to_string(seed), rendered);
    }
  }
}

// The checker itself: each defect the issue names is caught.
TEST(ReasonTextsTest, the_checker_catches_each_defect) {
  auto problem = [](std::string reason, EntityLabels entity = {{"netdev", "eth0"}}) {
    Finding f;
    f.reason = std::move(reason);
    f.entity = std::move(entity);
    return ReasonProblem(f);
  };
  EXPECT_NE(problem("eth0 runs slower: expected 1 lanes of 10 Gb/s"), "");
  EXPECT_NE(problem("eth0 at nan °C"), "");
  EXPECT_NE(problem("eth0 at -inf dBm"), "");
  EXPECT_NE(problem("eth0 has  two spaces"), "");
  EXPECT_NE(problem("eth0 trained at 0 lanes"), "");
  EXPECT_NE(problem("eth0 MTU 1500, expected 0 from siblings"), "");
  EXPECT_NE(problem("port is missing", {{"device", ""}}), "");
  EXPECT_EQ(problem("eth0 link down; maintenance window, 1 lane of 25 Gb/s (25 Gb/s)"), "");
}

// --- Normal faults: the reason names the observed and the expected value. -------------------

struct RdmaPort {
  std::string device = "mlx5_0", pci = "0000:18:00.0", netdev = "eth0";
  std::string link_layer = "Ethernet";
  std::optional<int> state = 4, phys_state = 5, sm_lid;
  double eth_gbps = 25;
  int eth_lanes = 1;
  double supported_gbps = 25;
};

void FeedPort(FindingLog& log, TimePoint t, const RdmaPort& p) {
  SnapshotBuilder ethtool;
  const testing::Labels nd{{"netdev", p.netdev}};
  ethtool.Gauge(ethtool::kLinkSpeed, nd, p.eth_gbps * kGbit);
  ethtool.Gauge(ethtool::kLinkLanes, nd, p.eth_lanes);
  ethtool.Gauge(ethtool::kLinkSupportedMaxSpeed, nd, p.supported_gbps * kGbit);
  log.Feed("ethtool", t, ethtool);
  SnapshotBuilder rdma;
  rdma.Gauge(rdma::kDeviceInfo,
             {{"device", p.device},
              {"node_type", "1: CA"},
              {"fw_ver", "28.39.1002"},
              {"node_guid", ""},
              {"sys_image_guid", ""},
              {"hca_type", "MT4125"},
              {"board_id", "MT_0000000838"},
              {"node_desc", ""},
              {"pci_address", p.pci},
              {"netdevs", p.netdev}},
             1);
  rdma.Gauge(rdma::kPortInfo,
             {{"device", p.device},
              {"port", "1"},
              {"link_layer", p.link_layer},
              {"netdev", p.netdev},
              {"speed", ""}},
             1);
  const testing::Labels port{{"device", p.device}, {"port", "1"}};
  if (p.state) rdma.Gauge(rdma::kPortState, port, *p.state);
  if (p.phys_state) rdma.Gauge(rdma::kPortPhysState, port, *p.phys_state);
  if (p.sm_lid) rdma.Gauge(rdma::kPortSmLid, port, *p.sm_lid);
  log.Feed("rdma", t, rdma);
}

std::unique_ptr<Detector> Make(std::string_view name) {
  const DetectorInfo* info = FindDetector(name);
  EXPECT_NE(info, nullptr) << name;
  auto built = info->factory({});
  EXPECT_TRUE(built) << name;
  return std::move(*built);
}

// Issue 38: a 25G port seen at 10G said "expected 1 lanes of 10 Gb/s per lane, 25 Gb/s" (width
// and lane rate from its history, the rate from its fastest supported mode).
TEST(ReasonTextsTest, a_25g_port_at_10g_states_one_consistent_expected_link) {
  auto detector = Make("link_degraded");
  FindingLog log(*detector);
  RdmaPort p;
  p.eth_gbps = 10;
  for (int i = 0; i < 120; ++i) FeedPort(log, T0() + seconds(10 * i), p);
  const Finding* f = log.LastRaised("warning{netdev=eth0}");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(ReasonProblem(*f), "") << f->reason;
  EXPECT_NE(f->reason.find("1 lane of 10 Gb/s (10 Gb/s), expected 1 lane of 25 Gb/s (25 Gb/s)"),
            std::string::npos)
      << f->reason;
  for (const Evidence& e : f->evidence) {
    if (e.name == "expected_lane_speed_bytes_per_second") {
      EXPECT_EQ(e.value, 25 * kGbit);
    }
  }
}

// Issue 38: a port stuck in INIT said "(sm_lid 0)" when sm_lid could not be read.
TEST(ReasonTextsTest, a_port_stuck_in_init_never_invents_sm_lid_0) {
  for (std::optional<int> sm_lid :
       {std::optional<int>(), std::optional<int>(0), std::optional(7)}) {
    auto detector = Make("link_degraded");
    FindingLog log(*detector);
    RdmaPort p;
    p.link_layer = "InfiniBand";
    p.netdev = "ib0";
    p.state = 2;  // INIT
    p.sm_lid = sm_lid;
    for (int i = 0; i < 120; ++i) FeedPort(log, T0() + seconds(10 * i), p);
    const Finding* f = log.LastRaised("critical{device=mlx5_0,port=1}");
    ASSERT_NE(f, nullptr) << sm_lid.value_or(-1);
    EXPECT_EQ(ReasonProblem(*f), "") << f->reason;
    EXPECT_NE(f->reason.find("stuck in INIT"), std::string::npos) << f->reason;
    if (!sm_lid) {
      EXPECT_EQ(f->reason.find("sm_lid 0"), std::string::npos) << f->reason;
      EXPECT_NE(f->reason.find("sm_lid unreadable"), std::string::npos) << f->reason;
    } else if (*sm_lid == 0) {
      EXPECT_NE(f->reason.find("no subnet manager (sm_lid 0)"), std::string::npos) << f->reason;
    } else {
      EXPECT_NE(f->reason.find("subnet manager at LID 7"), std::string::npos) << f->reason;
    }
  }
}

TEST(ReasonTextsTest, pcie_degraded_states_trained_and_maximum_and_the_aer_count) {
  auto detector = Make("pcie_degraded");
  FindingLog log(*detector);
  for (int i = 0; i < 60; ++i) {
    SnapshotBuilder b;
    const testing::Labels nic{{"device", "0000:18:00.0"}, {"role", "nic"}};
    b.Gauge(topology::kWidth, nic, 8);
    b.Gauge(topology::kMaxWidth, nic, 16);
    b.Gauge(topology::kSpeed, nic, 16e9);
    b.Gauge(topology::kMaxSpeed, nic, 32e9);
    testing::Labels fatal = nic;
    fatal.emplace_back("severity", "fatal");
    b.Counter(topology::kAer, fatal, i < 30 ? 0 : 1);
    log.Feed("topology", T0() + seconds(10 * i), b);
  }
  std::set<std::string> reasons;
  for (const auto& [key, f] : log.raises()) {
    const Finding* last = log.LastRaised(key);
    EXPECT_EQ(ReasonProblem(*last), "") << last->reason;
    reasons.insert(last->reason);
  }
  std::string all;
  for (const std::string& r : reasons) all += r + "\n";
  EXPECT_NE(all.find("x8 of x16"), std::string::npos) << all;
  EXPECT_NE(all.find("16 GT/s of 32 GT/s"), std::string::npos) << all;
  EXPECT_NE(all.find("1 uncorrectable (nonfatal/fatal) AER error, expected none"),
            std::string::npos)
      << all;
}

TEST(ReasonTextsTest, thermal_drift_states_temperature_and_threshold) {
  auto detector = Make("thermal_drift");
  FindingLog log(*detector);
  for (int i = 0; i < 60; ++i) {
    SnapshotBuilder b;
    testing::OpticsModule m;
    m.temperature = 72;
    const TimePoint t = T0() + seconds(10 * i);
    testing::AddOptics(b, m, t);
    log.Feed("optics", t, b);
  }
  const Finding* f = log.LastRaised("warning{netdev=eth0}");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(ReasonProblem(*f), "") << f->reason;
  EXPECT_NE(f->reason.find("72.0 °C"), std::string::npos) << f->reason;
  EXPECT_NE(f->reason.find("high warning 70.0 °C"), std::string::npos) << f->reason;
}

}  // namespace
}  // namespace fabricwatch::detect
