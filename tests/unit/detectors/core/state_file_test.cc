#include "detectors/core/state_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstring>
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

// --state.file naming something that is not a regular file of ours (issue 39 item 2): refused
// at start, never read, locked or replaced, and nothing of it reaches a message.
TEST_F(StateFileTest, fifo_is_refused_and_never_blocks) {
  ASSERT_EQ(::mkfifo(Path().c_str(), 0600), 0);
  EXPECT_FALSE(CheckStatePath(Path()).ok());
  auto loaded = StateFile(Path(), "b").Load();  // without O_NONBLOCK: blocked forever
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message().find("is a FIFO"), std::string::npos);
  Status saved = StateFile(Path(), "b").Save({}, nlohmann::json::array(), TimePoint());
  ASSERT_FALSE(saved.ok());
  EXPECT_TRUE(std::filesystem::is_fifo(Path())) << "the FIFO was replaced";
}

TEST_F(StateFileTest, device_node_is_never_replaced) {
  if (::geteuid() != 0) GTEST_SKIP() << "mknod of a character device needs root";
  // A copy of /dev/null's numbers (1:3) in the test's own directory, never the host's /dev.
  if (::mknod(Path().c_str(), S_IFCHR | 0600, ::makedev(1, 3)) != 0) {
    GTEST_SKIP() << "mknod failed (" << std::strerror(errno) << "): root in a user namespace?";
  }
  Status path = CheckStatePath(Path());
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.message(), "state file " + Path() + ": is a character device, not a regular file");
  Status saved = StateFile(Path(), "b").Save({}, nlohmann::json::array(), TimePoint());
  ASSERT_FALSE(saved.ok());
  struct stat st {};
  ASSERT_EQ(::lstat(Path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device node was replaced";
  EXPECT_FALSE(std::filesystem::exists(Path() + ".lock"));
}

TEST_F(StateFileTest, symlink_is_neither_followed_nor_replaced) {
  const std::string secret = (dir_ / "shadow").string();
  std::ofstream(secret) << "root:$6$secret-hash:19000:0:99999:7:::\n";
  std::filesystem::create_symlink(secret, Path());
  EXPECT_FALSE(CheckStatePath(Path()).ok());
  auto loaded = StateFile(Path(), "b").Load();
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().message().find("secret-hash"), std::string::npos);
  EXPECT_EQ(loaded.error().message().find("root:"), std::string::npos);
  ASSERT_FALSE(StateFile(Path(), "b").Save({}, nlohmann::json::array(), TimePoint()).ok());
  EXPECT_TRUE(std::filesystem::is_symlink(Path()));
  std::ifstream in(secret);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "root:$6$secret-hash:19000:0:99999:7:::") << "the link's target was changed";
  // A link as the lock file is refused too.
  std::filesystem::remove(Path());
  std::filesystem::create_symlink(secret, Path() + ".lock");
  EXPECT_FALSE(CheckStatePath(Path()).ok());
  EXPECT_FALSE(StateFileLock::Acquire(Path()).has_value());
}

TEST_F(StateFileTest, corrupt_file_message_quotes_none_of_its_bytes) {
  Write("SECRET-BYTES that are not JSON");
  auto loaded = StateFile(Path(), "b").Load();
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().message(), "state file " + Path() + ": not valid JSON (30 bytes)");
}

TEST_F(StateFileTest, another_users_file_is_not_trusted) {
  if (::geteuid() != 0) GTEST_SKIP() << "chown to another user needs root";
  StateFile file(Path(), "b");
  ASSERT_TRUE(file.Save({}, nlohmann::json::array(), TimePoint()).ok());
  if (::chown(Path().c_str(), 65534, 65534) != 0) {
    GTEST_SKIP() << "chown to 65534 failed (" << std::strerror(errno) << "): not mapped here?";
  }
  auto loaded = file.Load();
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(loaded.error().message().find("owned by uid 65534"), std::string::npos);
  EXPECT_FALSE(CheckStatePath(Path()).ok());
  EXPECT_FALSE(file.Save({}, nlohmann::json::array(), TimePoint()).ok());
}

TEST_F(StateFileTest, oversized_file_is_refused_before_parsing) {
  std::ofstream(Path()) << std::string(kMaxStateBytes + 1, ' ');
  auto loaded = StateFile(Path(), "b").Load();
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message().find("larger than"), std::string::npos);
}

// A save killed between mkostemp and rename leaves ".state.json.XXXXXX"; the next lock holder
// removes it, and nothing else.
TEST_F(StateFileTest, stale_temporaries_are_removed_when_the_lock_is_taken) {
  std::ofstream(dir_ / ".state.json.a1B2c3") << "{";
  std::ofstream(dir_ / ".state.json.zzzzzz") << "{";
  std::ofstream(dir_ / ".state.json.keep") << "not ours: wrong length";
  std::ofstream(dir_ / ".other.json.a1B2c3") << "another file's";
  auto lock = StateFileLock::Acquire(Path());
  ASSERT_TRUE(lock.has_value()) << lock.error().ToString();
  EXPECT_EQ(lock->stale_temporaries_removed(), 2u);
  EXPECT_FALSE(std::filesystem::exists(dir_ / ".state.json.a1B2c3"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / ".state.json.keep"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / ".other.json.a1B2c3"));
}

TEST_F(StateFileTest, missing_directory_is_refused_at_start) {
  Status s = CheckStatePath((dir_ / "nope" / "state.json").string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("nope"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace fabricwatch::detect
