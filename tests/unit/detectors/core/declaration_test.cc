// What the detectors declare for the generic code (detectors/core/declaration.h): the registry
// carries each detector's declaration from its contract header, and the fields name only what
// exists (an option key, a rule owner), so a renamed option or a lost owner fails here.
#include "detectors/core/declaration.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "detectors/core/cross_rules.h"
#include "detectors/core/escalation.h"
#include "detectors/registry.h"

namespace fabricwatch::detect {
namespace {

bool HasOption(const DetectorInfo& info, std::string_view key) {
  for (const DetectorOptionSpec& spec : info.options) {
    if (spec.key == key) return true;
  }
  return false;
}

TEST(DeclarationTest, one_look_holds_and_the_shape_file_option_are_options_of_the_detector) {
  size_t shape_file = 0;
  for (const DetectorInfo& info : DetectorRegistry()) {
    const DetectorDeclaration& d = info.declaration;
    for (std::string_view hold : d.one_look_holds) {
      EXPECT_TRUE(d.one_look) << info.name << ": holds without one_look";
      EXPECT_TRUE(HasOption(info, hold)) << info.name << " has no option " << hold;
    }
    if (!d.shape_file_option.empty()) {
      ++shape_file;
      EXPECT_TRUE(HasOption(info, d.shape_file_option)) << info.name;
    }
    // A log-fed detector decides from the lines one look reads.
    if (d.reads_kernel_log) EXPECT_TRUE(d.one_look) << info.name;
  }
  EXPECT_EQ(shape_file, 1u) << "--shape.file sets exactly one detector's option";
}

TEST(DeclarationTest, every_suppression_rule_has_an_owner_that_establishes_its_fact) {
  std::set<std::string_view> names;
  size_t declared = 0;
  for (const DetectorInfo& info : DetectorRegistry()) {
    for (const SuppressionRule& rule : info.declaration.suppressed_when) {
      ++declared;
      EXPECT_TRUE(names.insert(rule.name).second) << rule.name << " declared twice";
      EXPECT_FALSE(rule.says.empty()) << rule.name;
      EXPECT_FALSE(rule.why.empty()) << rule.name;
    }
  }
  ASSERT_EQ(CrossRuleTable().size(), declared);
  for (const CrossRule& rule : CrossRuleTable()) {
    ASSERT_NE(rule.fact, nullptr) << rule.name << ": no detector establishes its fact";
    EXPECT_EQ(rule.fact->fact, rule.declared->explained_by) << rule.name;
    const DetectorInfo* owner = FindDetector(rule.owner);
    ASSERT_NE(owner, nullptr) << rule.name;
    EXPECT_NE(rule.owner, rule.suppressed) << rule.name << ": a detector explains itself";
    bool declared_by_suppressed = false;
    for (const SuppressionRule& own : FindDetector(rule.suppressed)->declaration.suppressed_when) {
      declared_by_suppressed |= &own == rule.declared;
    }
    EXPECT_TRUE(declared_by_suppressed) << rule.name;
  }
}

// Escalation follows the detector's own criticals: exactly the declaration's criticals_drain.
TEST(DeclarationTest, escalated_criticals_drain_as_the_detector_declares) {
  const EntityLabels port{{"netdev", "eth0"}};
  size_t draining = 0;
  for (const DetectorInfo& info : DetectorRegistry()) {
    EXPECT_EQ(EscalatedDrainEligible(info.name, port), info.declaration.criticals_drain)
        << info.name;
    draining += info.declaration.criticals_drain ? 1 : 0;
  }
  EXPECT_GT(draining, 0u);
  EXPECT_FALSE(EscalatedDrainEligible("no_such_detector", port));
}

}  // namespace
}  // namespace fabricwatch::detect
