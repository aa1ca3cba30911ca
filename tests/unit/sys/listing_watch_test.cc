// ListingWatch: a choice made from directory listings is made again when a listing changes or
// the choice gets old, and not otherwise.
#include "collectors/sys/listing_watch.h"

#include <gtest/gtest.h>

namespace fabricwatch::sys {
namespace {

using std::chrono::seconds;

TEST(ListingWatchTest, a_choice_holds_until_a_listing_changes_or_it_gets_old) {
  const std::chrono::system_clock::time_point t0{seconds(1'700'000'000)};
  ListingWatch watch(2, seconds(60));
  watch.listing(0) = {"eth0", "eth1"};
  watch.listing(1) = {"mlx5_0"};
  EXPECT_FALSE(watch.Unchanged(t0)) << "no choice made yet";
  watch.MarkChosen(t0);
  EXPECT_TRUE(watch.Unchanged(t0 + seconds(59)));
  EXPECT_FALSE(watch.Unchanged(t0 + seconds(60))) << "old enough to be made again";

  watch.listing(1) = {"mlx5_0", "mlx5_1"};  // an RDMA device appeared
  EXPECT_FALSE(watch.Unchanged(t0 + seconds(1)));
  watch.MarkChosen(t0 + seconds(1));
  EXPECT_TRUE(watch.Unchanged(t0 + seconds(2)));

  watch.listing(0) = {"eth0"};  // a netdev went away
  EXPECT_FALSE(watch.Unchanged(t0 + seconds(2)));
  watch.listing(0) = {"eth0", "eth1"};  // and came back before anyone asked
  EXPECT_TRUE(watch.Unchanged(t0 + seconds(2)));
}

}  // namespace
}  // namespace fabricwatch::sys
