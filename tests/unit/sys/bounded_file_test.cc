// ReadBoundedFile and CheckRegularOrAbsent (issue 39): a FIFO, a device, a directory, a link
// where none is allowed or an oversized file gives a clear error at once, and never blocks.

#include "collectors/sys/bounded_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fabricwatch::sys {
namespace {

class BoundedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("fw-bounded-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

constexpr BoundedFileOptions kConfig{.kind = "config file", .max_bytes = 64};
constexpr BoundedFileOptions kNoLinks{
    .kind = "state file", .max_bytes = 64, .follow_symlinks = false};

TEST_F(BoundedFileTest, regular_file_is_read_with_its_owner) {
  std::ofstream(Path("a.yml")) << "key: value\n";
  auto file = ReadBoundedFile(Path("a.yml"), kConfig);
  ASSERT_TRUE(file.has_value()) << file.error().message();
  EXPECT_EQ(file->text, "key: value\n");
  EXPECT_EQ(file->owner, ::geteuid());
  EXPECT_TRUE(CheckRegularOrAbsent(Path("a.yml"), kNoLinks).ok());
  EXPECT_TRUE(CheckRegularOrAbsent(Path("absent"), kNoLinks).ok());
}

TEST_F(BoundedFileTest, fifo_is_refused_without_blocking) {
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0600), 0);
  // Without O_NONBLOCK this open() would wait for a writer forever.
  auto file = ReadBoundedFile(Path("fifo"), kConfig);
  ASSERT_FALSE(file.has_value());
  EXPECT_EQ(file.error().message(),
            "config file " + Path("fifo") + ": is a FIFO, not a regular file");
  EXPECT_FALSE(CheckRegularOrAbsent(Path("fifo"), kNoLinks).ok());
}

TEST_F(BoundedFileTest, devices_and_directories_are_refused) {
  auto zero = ReadBoundedFile("/dev/zero", kConfig);  // read-only: never written here
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.error().message(),
            "config file /dev/zero: is a character device, not a regular file");
  auto dir = ReadBoundedFile(dir_.string(), kConfig);
  ASSERT_FALSE(dir.has_value());
  EXPECT_NE(dir.error().message().find("is a directory"), std::string::npos);
  EXPECT_FALSE(CheckRegularOrAbsent("/dev/null", kNoLinks).ok());
}

TEST_F(BoundedFileTest, links_are_followed_only_where_allowed) {
  std::ofstream(Path("target")) << "secret\n";
  std::filesystem::create_symlink(Path("target"), Path("link"));
  EXPECT_TRUE(ReadBoundedFile(Path("link"), kConfig).has_value());
  auto refused = ReadBoundedFile(Path("link"), kNoLinks);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message(),
            "state file " + Path("link") + ": is a symbolic link, which is not followed");
  EXPECT_EQ(refused.error().message().find("secret"), std::string::npos);
  EXPECT_FALSE(CheckRegularOrAbsent(Path("link"), kNoLinks).ok());
  EXPECT_TRUE(CheckRegularOrAbsent(Path("link"), kConfig).ok());
}

TEST_F(BoundedFileTest, larger_than_the_cap_is_refused) {
  std::ofstream(Path("big")) << std::string(65, 'x');
  auto file = ReadBoundedFile(Path("big"), kConfig);
  ASSERT_FALSE(file.has_value());
  EXPECT_NE(file.error().message().find("larger than 64 bytes"), std::string::npos);
  std::ofstream(Path("fits")) << std::string(64, 'x');
  EXPECT_TRUE(ReadBoundedFile(Path("fits"), kConfig).has_value());
}

TEST_F(BoundedFileTest, missing_is_not_found) {
  auto file = ReadBoundedFile(Path("missing"), kConfig);
  ASSERT_FALSE(file.has_value());
  EXPECT_EQ(file.error().code(), StatusCode::kNotFound);
  EXPECT_EQ(file.error().message(), "config file " + Path("missing") + ": does not exist");
}

}  // namespace
}  // namespace fabricwatch::sys
