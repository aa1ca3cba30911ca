#pragma once
// The CollectorContext of a collector under test (collectors/core/collector.h), built in one place
// for every collector test: what the context refers to (the sysfs of a replay root, the options, a
// clock, a logger) is owned here with defaults, and a test sets only the few other fields it needs
// (ethtool, roots, interval, ...) on the context it gets. When the context
// changes, this file changes, not each test.

#include <chrono>
#include <memory>
#include <string>

#include "collectors/core/collector.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/sysfs.h"

namespace fabricwatch::testing {

// The wall clock of the collector tests and goldens: Unix 1795000000 s (2026-11-18).
inline constexpr std::chrono::seconds kTestWallClock{1795000000};

// kTestWallClock plus `offset`, which a test moves on by hand.
class TestClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override {
    return std::chrono::system_clock::time_point(kTestWallClock) + offset;
  }
  std::chrono::milliseconds offset{0};
};

// A logger that drops everything, named `name`.
std::shared_ptr<spdlog::logger> NullSinkLogger(const std::string& name = "collector");

// The context over `sysfs`, `clock` and `options` (they must outlive it), with `logger` or a
// NullSinkLogger; every other field has CollectorContext's default (no event logs, no ethtool
// source, no replay paths, interval 1 s, not the host). For a test that owns those objects
// itself; CollectorTestContext owns them.
CollectorContext MakeCollectorContext(const sys::SysFs& sysfs, const Clock& clock,
                                      const CollectorOptions& options,
                                      std::shared_ptr<spdlog::logger> logger = nullptr);

// One collector's inputs over a replay root: the sysfs at `root`, read through the real
// filesystem or through `fs` (a FakeFileSystem that injects errors; it must outlive this), the
// options, a TestClock (or the clock given to UseClock) and a NullSinkLogger (or UseLogger's).
// Neither copyable nor movable: the context refers to the members.
class CollectorTestContext {
 public:
  explicit CollectorTestContext(std::string root, CollectorOptions options = {});
  CollectorTestContext(std::string root, const sys::FileSystem& fs, CollectorOptions options = {});
  CollectorTestContext(const CollectorTestContext&) = delete;
  CollectorTestContext& operator=(const CollectorTestContext&) = delete;

  // The context over the members; valid while this object lives.
  CollectorContext Context() const;

  void UseClock(const Clock& clock) { clock_ = &clock; }  // `clock` must outlive this object
  void UseLogger(std::shared_ptr<spdlog::logger> logger) { logger_ = std::move(logger); }

  const sys::SysFs& sysfs() const { return sysfs_; }
  CollectorOptions& options() { return options_; }
  TestClock& clock() { return clock_owned_; }

 private:
  sys::RealFileSystem real_;
  sys::SysFs sysfs_;
  CollectorOptions options_;
  TestClock clock_owned_;
  const Clock* clock_ = &clock_owned_;
  std::shared_ptr<spdlog::logger> logger_;
};

}  // namespace fabricwatch::testing
