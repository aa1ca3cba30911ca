#pragma once
// ListingWatch: tells a collector when to make again a choice it made from directory listings
// (which netdevs to read, which hwmon channels belong to mlx5 modules): when a listing differs
// from the one the choice was made from, or the choice is older than `max_age` (for what no
// listing shows, such as a driver that binds later). The caller lists into the kept vectors
// (SysFs::ListDirInto, EthtoolSource::ListNetdevEntries), so a collection that finds nothing
// changed allocates nothing (docs/design.md §8).
//
// Thread-safety: none; owned by one collector.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace fabricwatch::sys {

class ListingWatch {
 public:
  ListingWatch(size_t listings, std::chrono::seconds max_age)
      : current_(listings), chosen_(listings), max_age_(max_age) {}

  // Listing `i`, for the caller to list into before asking Unchanged().
  std::vector<std::string>& listing(size_t i) { return current_[i]; }
  const std::vector<std::string>& listing(size_t i) const { return current_[i]; }

  // True when a choice was made, from listings equal to the current ones, less than max_age
  // before `now`.
  bool Unchanged(std::chrono::system_clock::time_point now) const {
    return chosen_at_ && current_ == chosen_ && now - *chosen_at_ < max_age_;
  }
  // The choice was just made from the current listings.
  void MarkChosen(std::chrono::system_clock::time_point now) {
    chosen_ = current_;
    chosen_at_ = now;
  }

 private:
  std::vector<std::vector<std::string>> current_, chosen_;
  std::chrono::seconds max_age_;
  std::optional<std::chrono::system_clock::time_point> chosen_at_;  // none before the first
};

}  // namespace fabricwatch::sys
