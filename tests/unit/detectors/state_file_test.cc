#include "detectors/core/state_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/testing/fake_filesystem.h"

namespace fabricwatch::detect {
namespace {

class StateFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("fw-state-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path() const { return (dir_ / "state.json").string(); }
  void Write(const std::string& text) { std::ofstream(Path()) << text; }
  std::filesystem::path dir_;
};

TEST_F(StateFileTest, round_trip_is_atomic_and_keeps_boot_id) {
  StateFile file(Path(), "boot-1");
  const TimePoint saved = TimePoint(std::chrono::seconds(1'700'000'123));
  nlohmann::json detectors = {{"link_flap", {{"ports", nlohmann::json::object()}}}};
  nlohmann::json anomalies = nlohmann::json::array({{{"detector", "link_flap"}}});
  ASSERT_TRUE(file.Save(detectors, anomalies, saved).ok());
  ASSERT_TRUE(file.Save(detectors, anomalies, saved).ok()) << "replacing works too";
  size_t entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    (void)entry;
    ++entries;
  }
  EXPECT_EQ(entries, 1u) << "no temporary file left behind";
  auto loaded = file.Load();
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_EQ(loaded->boot_id, "boot-1");
  EXPECT_EQ(loaded->saved, saved);
  EXPECT_EQ(loaded->detectors, detectors);
  EXPECT_EQ(loaded->anomalies, anomalies);
  EXPECT_EQ(std::filesystem::status(Path()).permissions() & std::filesystem::perms::others_read,
            std::filesystem::perms::none);
}

TEST_F(StateFileTest, missing_is_not_found) {
  auto loaded = StateFile(Path(), "b").Load();
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code(), StatusCode::kNotFound);
}

TEST_F(StateFileTest, corrupt_files_are_invalid_argument_naming_the_file) {
  for (const char* text : {"{\"format\": \"fabricwatch-state\", \"vers", "", "[1,2]",
                           R"({"format":"fabricwatch-state","version":99})",
                           R"({"format":"fabricwatch-state","version":1,"boot_id":"b",
                               "saved":1,"detectors":[],"anomalies":[]})",
                           "\x89PNG\r\n"}) {
    Write(text);
    auto loaded = StateFile(Path(), "b").Load();
    ASSERT_FALSE(loaded) << text;
    EXPECT_EQ(loaded.error().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(loaded.error().message().find(Path()), std::string::npos);
  }
}

TEST_F(StateFileTest, save_into_a_missing_directory_fails_cleanly) {
  StateFile file((dir_ / "nope" / "state.json").string(), "b");
  Status status = file.Save({}, nlohmann::json::array(), TimePoint());
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("nope"), std::string::npos) << status.message();
}

TEST(BootIdTest, read_through_the_filesystem_seam) {
  testing::FakeFileSystem filesystem;
  filesystem.SetContent("/proc/sys/kernel/random/boot_id", "0f0e-11\n");
  auto id = ReadBootId(filesystem);
  ASSERT_TRUE(id) << id.error().ToString();
  EXPECT_EQ(*id, "0f0e-11");
  filesystem.Inject(testing::FakeFileSystem::Op::kOpen, "/proc/sys/kernel/random/boot_id", EACCES);
  EXPECT_FALSE(ReadBootId(filesystem));
}

// Two agents on one state file (issue 19): the second lock fails and names the holder's pid.
// flock locks belong to the open file description, so a second open in this process conflicts
// exactly as a second agent would.
TEST_F(StateFileTest, lock_is_exclusive_and_names_the_holder) {
  auto first = StateFileLock::Acquire(Path());
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  EXPECT_EQ(first->path(), Path() + ".lock");
  auto second = StateFileLock::Acquire(Path());
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code(), StatusCode::kUnavailable);
  EXPECT_EQ(second.error().message(),
            "state file " + Path() + " is in use by another fabricwatch (pid " +
                std::to_string(::getpid()) + " holds the lock " + Path() + ".lock)");
  {
    auto moved = std::move(*first);  // the lock goes with the object
  }
  EXPECT_TRUE(StateFileLock::Acquire(Path()).has_value()) << "released with its owner";
}

}  // namespace
}  // namespace fabricwatch::detect
