// The evidence helper (detectors/core/rate_evidence.h): Poisson bounds against the exact Garwood
// values (chi-square tables), continuity where the approximation takes over, and the scan's
// shortest proving window, its minimum events and samples, and its longest window.

#include "detectors/core/rate_evidence.h"

#include <gtest/gtest.h>

namespace fabricwatch::detect {
namespace {

TEST(PoissonBoundsTest, MatchTheGarwoodInterval) {
  const PoissonBounds b(0.99);
  EXPECT_EQ(b.Lower(0), 0);
  EXPECT_NEAR(b.Upper(0), 4.60517, 1e-4);   // -ln(0.01)
  EXPECT_NEAR(b.Lower(1), 0.010050, 1e-5);  // chi2(0.01; 2) / 2
  EXPECT_NEAR(b.Lower(10), 4.1302, 1e-3);   // chi2(0.01; 20) / 2 = 8.2604 / 2
  EXPECT_NEAR(b.Upper(10), 20.1447, 1e-3);  // chi2(0.99; 22) / 2 = 40.289 / 2
  // Above the exact table, Wilson–Hilferty: within 0.1 % of the exact 99 % bound of 1000 events.
  EXPECT_NEAR(b.Lower(1000), 927.56, 0.001 * 927.56);
  // Where the approximation takes over it errs on the conservative side (a lower bound a little
  // lower, an upper bound a little higher), by under 0.5 % of the bound.
  const double k = PoissonBounds::kExactEvents;
  EXPECT_GT(b.Lower(k + 1) - b.Lower(k), 1.0 - 0.005 * b.Lower(k));
  EXPECT_LT(b.Lower(k + 1) - b.Lower(k), 1.0);
  EXPECT_GT(b.Upper(k + 1) - b.Upper(k), 1.0);
  EXPECT_LT(b.Upper(k + 1) - b.Upper(k), 1.0 + 0.005 * b.Upper(k));
  // A fractional count is rounded to the conservative side.
  EXPECT_EQ(b.Lower(3.9), b.Lower(3));
  EXPECT_EQ(b.Upper(3.1), b.Upper(4));
  const PoissonBounds b95(0.95);
  EXPECT_NEAR(b95.Upper(0), 2.99573, 1e-4);  // the rule of three
  EXPECT_GT(b95.Lower(10), b.Lower(10));
}

TEST(RateScanTest, StopsAtTheShortestProvingWindow) {
  const PoissonBounds b(0.99);
  const RateRule rule{1e-12, 10, 0, 300, 5};
  // Newest first: 400 errors per 4e11 bits each second, one error-second per bucket.
  RateScan scan(b, rule, RateScan::Claim::kAbove, rule.threshold);
  int buckets = 0;
  while (!scan.Add(400, 4e11, 1, 1)) ++buckets;
  EXPECT_EQ(buckets + 1, 5) << "five samples with errors are the minimum spread";
  EXPECT_TRUE(scan.window().proven);
  EXPECT_GT(scan.window().bound, 1e-12);

  // A burst in one sample, however large, proves nothing.
  RateScan burst(b, rule, RateScan::Claim::kAbove, rule.threshold);
  burst.Add(100000, 4e11, 1, 1);
  for (int i = 0; i < 299; ++i) burst.Add(0, 4e11, 1, 0);
  EXPECT_FALSE(burst.window().proven);

  // Past max_seconds the scan ends unproven.
  RateScan slow(b, rule, RateScan::Claim::kAbove, rule.threshold);
  int added = 0;
  while (!slow.Add(1, 4e11 * 10, 10, 1) && added < 1000) ++added;
  EXPECT_FALSE(slow.window().proven);
  EXPECT_LE(slow.window().seconds, 300);

  // The mirror claim: no errors prove the rate below half the threshold once the exposure
  // holds -ln(0.01) / (0.5e-12) bits.
  RateScan below(b, rule, RateScan::Claim::kBelow, 0.5e-12);
  int seconds = 0;
  while (!below.Add(0, 4e11, 1, 0)) ++seconds;
  EXPECT_EQ(seconds + 1, 24);  // 4.605 / 0.5e-12 = 9.2e12 bits = 23.03 s
}

}  // namespace
}  // namespace fabricwatch::detect
