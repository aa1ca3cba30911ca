// ber_growth second-pass scenarios (issue 22 items 1 and 5) through the simulator, the real
// collectors and every default detector on simulated time: a gross BER right after a driver
// reload pages within seconds; one lane carrying a port's corrected bits is named; a port 30x
// its siblings is an outlier. Each raises its finding and nothing else.

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/testing/sim_pipeline.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::testing {
namespace {

using detect::Severity;

struct BerCase {
  std::string scenario;
  double onset_s;  // the fault's start in the scenario
  Severity severity;
  detect::EntityLabels entity;
  double bound_s;
  std::string bound_reason;
  double run_s;
};

void PrintTo(const BerCase& c, std::ostream* os) { *os << c.scenario; }

class BerScenarioTest : public ::testing::TestWithParam<BerCase> {};

TEST_P(BerScenarioTest, raises_its_finding_within_the_bound_and_nothing_else) {
  const BerCase& c = GetParam();
  auto scenario =
      sim::LoadScenario(SourcePath("tools/fabricsim/scenarios/" + c.scenario + ".yaml"));
  ASSERT_TRUE(scenario) << scenario.error().ToString();
  TempDir dir;
  auto p = SimPipeline::Create(std::move(*scenario), dir.Path("root"), {});
  ASSERT_TRUE(p) << p.error().ToString();
  ASSERT_TRUE((*p)->RunUntil(c.run_s).ok());
  std::optional<double> raised;
  std::string all;
  for (const auto& t : (*p)->transitions()) {
    all += std::string(t.raised ? "  raise " : "  clear ") + t.detector + " {" +
           detect::EntityText(t.finding.entity) + "} at " +
           std::to_string((*p)->SimSeconds(t.time)) + ": " + t.finding.reason + "\n";
    if (!t.raised) continue;
    EXPECT_EQ(t.detector, "ber_growth") << all;
    EXPECT_EQ(t.finding.entity, c.entity) << "a second finding for one fault:\n" << all;
    if (t.finding.severity == c.severity && t.finding.entity == c.entity && !raised) {
      raised = (*p)->SimSeconds(t.time) - c.onset_s;
    }
  }
  ASSERT_TRUE(raised) << "no " << detect::SeverityName(c.severity) << " {"
                      << detect::EntityText(c.entity) << "}; transitions:\n"
                      << (all.empty() ? "  (none)\n" : all);
  std::printf("[ detection ] %-24s ber_growth %s {%s} %6.1f s after the onset\n",
              c.scenario.c_str(), std::string(detect::SeverityName(c.severity)).c_str(),
              detect::EntityText(c.entity).c_str(), *raised);
  EXPECT_GE(*raised, 0);
  EXPECT_LE(*raised, c.bound_s) << c.bound_reason << "\n" << all;
  EXPECT_EQ((*p)->collector_errors(), 0u) << (*p)->collector_error_text();
}

const BerCase kCases[] = {
    // Effective BER 2.5e-7 from the first sample after the reload: the evidence window proves it
    // with 5 samples with errors (§0.4), not after the 5 min critical window.
    {"gross_ber_after_reload",
     61,
     Severity::kCritical,
     {{"netdev", "enp26s0f0np0"}},
     5 + 2,
     "evidence-min-samples 5 + one sample interval + 1 s",
     240},
    // Lane 2 carries 97% of the corrected bits at 1e-6: outlier-for 5 min from the first lane
    // delta (two samples after the onset), + 1 s. The port is also 460x its siblings, but the
    // lane explains it: one finding, on the lane.
    {"ber_lane_imbalance",
     30,
     Severity::kWarning,
     {{"netdev", "enp154s0f0np0"}, {"lane", "2"}},
     300 + 3,
     "outlier-for 300 s + two samples to the first lane delta + 1 s",
     420},
    // 30x the siblings' median: the 10 min window ratio passes 10x the median once about a third
    // of the window holds the fault (~200 s), then outlier-for 5 min.
    {"ber_outlier_port",
     60,
     Severity::kWarning,
     {{"netdev", "enp58s0f0np0"}},
     200 + 300 + 30,
     "a third of the 10 min window (~200 s) + outlier-for 300 s + margin",
     720},
};

INSTANTIATE_TEST_SUITE_P(Shipped, BerScenarioTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return info.param.scenario; });

}  // namespace
}  // namespace fabricwatch::testing
