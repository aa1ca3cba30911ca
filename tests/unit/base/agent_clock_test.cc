// AgentClock (base/agent_clock.h): detection time follows the monotonic clock from a
// wall-clock anchor, and a step of the wall clock is measured, adopted once and counted, never
// passed on to Now() (issue 39 item 7).
#include "base/agent_clock.h"

#include <gtest/gtest.h>

namespace fabricwatch {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Both sources of the clock, set by the test.
struct Sources {
  std::chrono::system_clock::time_point wall{seconds(1'700'000'000)};
  std::chrono::steady_clock::time_point monotonic{seconds(5000)};
  void Advance(std::chrono::nanoseconds d) {
    wall += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
    monotonic += d;
  }
  AgentClock Make() {
    return AgentClock([this] { return wall; }, [this] { return monotonic; });
  }
};

TEST(AgentClock, starts_at_the_wall_clock_and_advances_with_the_monotonic_clock) {
  Sources s;
  const AgentClock clock = s.Make();
  EXPECT_EQ(clock.Now(), s.wall);
  s.Advance(seconds(30));
  EXPECT_EQ(clock.Now(), s.wall);
  EXPECT_EQ(clock.WallOffset().count(), 0);
  EXPECT_EQ(clock.steps(), 0u);
}

TEST(AgentClock, a_step_back_moves_only_the_offset) {
  Sources s;
  const AgentClock clock = s.Make();
  const auto start = clock.Now();
  s.Advance(seconds(10));
  s.wall -= hours(1);  // NTP steps a clock that was an hour in the future back
  EXPECT_EQ(clock.Now(), start + seconds(10)) << "detection time does not jump";
  EXPECT_EQ(clock.WallOffset(), -hours(1));
  EXPECT_EQ(clock.ToWall(start), start - hours(1)) << "the start shown in true wall time";
  EXPECT_EQ(clock.steps(), 1u);
  s.Advance(seconds(5));
  EXPECT_EQ(clock.Now(), start + seconds(15));
  EXPECT_EQ(clock.steps(), 1u) << "one step, adopted and counted once";
}

TEST(AgentClock, a_step_forward_expires_nothing_at_once) {
  Sources s;
  const AgentClock clock = s.Make();
  const auto start = clock.Now();
  s.wall += hours(2);
  s.Advance(seconds(1));
  EXPECT_EQ(clock.Now(), start + seconds(1));
  EXPECT_EQ(clock.WallOffset(), hours(2));
  s.wall -= hours(2);  // and back again: two steps, offset zero
  EXPECT_EQ(clock.WallOffset().count(), 0);
  EXPECT_EQ(clock.steps(), 2u);
}

TEST(AgentClock, jitter_below_the_threshold_is_no_step) {
  Sources s;
  const AgentClock clock = s.Make();
  s.wall += milliseconds(900);  // slewing and reading jitter: displayed times must not wobble
  EXPECT_EQ(clock.WallOffset().count(), 0);
  EXPECT_EQ(clock.steps(), 0u);
  s.wall += milliseconds(200);  // 1.1 s in all: a step
  EXPECT_EQ(clock.WallOffset(), milliseconds(1100));
  EXPECT_EQ(clock.steps(), 1u);
}

TEST(AgentClock, the_real_clocks_by_default) {
  const AgentClock clock;
  const auto wall = std::chrono::system_clock::now();
  EXPECT_LT(std::chrono::abs(clock.Now() - wall), seconds(1));
  EXPECT_EQ(clock.steps(), 0u);
}

}  // namespace
}  // namespace fabricwatch
