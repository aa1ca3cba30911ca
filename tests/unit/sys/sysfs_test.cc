#include "collectors/sys/sysfs.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include "collectors/sys/fd_budget.h"
#include "collectors/sys/filesystem.h"
#include "tests/testing/fake_filesystem.h"
#include "tests/testing/fifo.h"

namespace fabricwatch::sys {
namespace {

namespace fs = std::filesystem;
using ::fabricwatch::testing::FakeFileSystem;

// A fresh directory per test, removed afterwards.
class SysFsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "fabricwatch-sysfs-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << "mkdtemp: " << std::strerror(errno);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // Writes `content` to <root>/<relative>, truncating in place (same inode), creating parents.
  void Write(const std::string& relative, const std::string& content) {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    ASSERT_TRUE(out) << path;
    out << content;
  }

  std::string Abs(const std::string& relative) const { return (root_ / relative).string(); }

  fs::path root_;
  RealFileSystem real_;
};

TEST(SysFsPathTest, joins_relative_paths_under_the_root) {
  RealFileSystem real;
  struct Case {
    std::string root;
    std::string_view relative;
    std::string path;
  };
  const Case cases[] = {
      {"/tmp/root", "class/net", "/tmp/root/class/net"},
      {"/tmp/root/", "class/net", "/tmp/root/class/net"},
      {"/tmp/root///", "class/net", "/tmp/root/class/net"},
      {"/tmp/root", "/class/net", "/tmp/root/class/net"},
      {"/tmp/root/", "//class/net/eth0/mtu", "/tmp/root/class/net/eth0/mtu"},
      {"/tmp/root", "", "/tmp/root"},
      {"/sys", "class/net", "/sys/class/net"},
      {"/", "class/net", "/class/net"},
      {"/", "/class/net", "/class/net"},
      {"/", "", "/"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.root + " + " + std::string(c.relative));
    SysFs sysfs(c.root, real);
    EXPECT_EQ(sysfs.Path(c.relative), c.path);
  }
  EXPECT_EQ(SysFs("/tmp/root/", real).root(), "/tmp/root");
  EXPECT_EQ(SysFs("/", real).root(), "/");
  EXPECT_EQ(&SysFs("/", real).fs(), &real);
}

TEST_F(SysFsTest, read_string_trims_whitespace) {
  Write("class/net/eth0/operstate", "  up\n");
  Write("class/net/eth0/ifalias", "uplink to leaf 3\n");
  SysFs sysfs(root_.string() + "/", real_);
  auto state = sysfs.ReadString("class/net/eth0/operstate");
  ASSERT_TRUE(state.has_value()) << state.error().ToString();
  EXPECT_EQ(*state, "up");
  auto alias = sysfs.ReadString("/class/net/eth0/ifalias");
  ASSERT_TRUE(alias.has_value()) << alias.error().ToString();
  EXPECT_EQ(*alias, "uplink to leaf 3");
}

TEST_F(SysFsTest, read_uint64_and_int64) {
  Write("mtu", "1500\n");
  Write("speed", "-1\n");
  Write("empty", "");
  Write("garbage", "12abc\n");
  SysFs sysfs(root_.string(), real_);

  auto mtu = sysfs.ReadUint64("mtu");
  ASSERT_TRUE(mtu.has_value()) << mtu.error().ToString();
  EXPECT_EQ(*mtu, 1500u);

  auto speed = sysfs.ReadInt64("speed");
  ASSERT_TRUE(speed.has_value()) << speed.error().ToString();
  EXPECT_EQ(*speed, -1);

  auto negative = sysfs.ReadUint64("speed");
  ASSERT_FALSE(negative.has_value());
  EXPECT_EQ(negative.error().code(), StatusCode::kInvalidArgument);

  auto empty = sysfs.ReadUint64("empty");
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(empty.error().message(), Abs("empty") + ": empty value");

  auto garbage = sysfs.ReadUint64("garbage");
  ASSERT_FALSE(garbage.has_value());
  EXPECT_EQ(garbage.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(garbage.error().message().find(Abs("garbage")), std::string::npos)
      << garbage.error().message();
  EXPECT_NE(garbage.error().message().find("\"12abc\""), std::string::npos)
      << garbage.error().message();
}

TEST_F(SysFsTest, missing_file_is_not_found_with_absolute_path) {
  SysFs sysfs(root_.string(), real_);
  struct Case {
    std::string_view what;
    Status status;
  };
  auto s = sysfs.ReadString("class/net/eth9/mtu");
  auto u = sysfs.ReadUint64("class/net/eth9/mtu");
  auto i = sysfs.ReadInt64("class/net/eth9/mtu");
  const Case cases[] = {
      {"ReadString", s ? Status::Ok() : s.error()},
      {"ReadUint64", u ? Status::Ok() : u.error()},
      {"ReadInt64", i ? Status::Ok() : i.error()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.what));
    EXPECT_EQ(c.status.code(), StatusCode::kNotFound);
    EXPECT_EQ(c.status.sys_errno(), ENOENT);
    EXPECT_EQ(c.status.message(),
              "open " + Abs("class/net/eth9/mtu") + ": " + std::strerror(ENOENT));
  }
}

TEST_F(SysFsTest, list_dir_is_sorted) {
  for (const char* name : {"eth1", "bonding_masters", "eth0", "ib0", "lo"}) {
    Write(std::string("class/net/") + name, "x");
  }
  fs::create_directories(root_ / "class/net/mlx5_0");
  SysFs sysfs(root_.string(), real_);
  auto names = sysfs.ListDir("class/net");
  ASSERT_TRUE(names.has_value()) << names.error().ToString();
  EXPECT_EQ(*names, (std::vector<std::string>{"bonding_masters", "eth0", "eth1", "ib0", "lo",
                                              "mlx5_0"}));

  fs::create_directories(root_ / "class/infiniband");
  auto empty = sysfs.ListDir("class/infiniband");
  ASSERT_TRUE(empty.has_value()) << empty.error().ToString();
  EXPECT_TRUE(empty->empty());
}

TEST_F(SysFsTest, list_dir_into_reuses_the_vector_and_follows_changes) {
  // More entries than one getdents64 buffer holds, with names past the small-string size.
  for (int i = 0; i < 300; ++i) {
    Write("class/net/a-netdev-name-of-some-length-" + std::to_string(1000 + i), "x");
  }
  SysFs sysfs(root_.string(), real_);
  std::vector<std::string> names = {"stale", "entries", "from", "before"};
  ASSERT_TRUE(sysfs.ListDirInto("class/net", names).ok());
  ASSERT_EQ(names.size(), 300u);
  EXPECT_EQ(names.front(), "a-netdev-name-of-some-length-1000");
  EXPECT_EQ(names.back(), "a-netdev-name-of-some-length-1299");
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  const std::string* storage = names.data();

  fs::remove(root_ / "class/net/a-netdev-name-of-some-length-1005");
  ASSERT_TRUE(sysfs.ListDirInto("class/net", names).ok());
  EXPECT_EQ(names.size(), 299u);
  EXPECT_EQ(names.data(), storage);  // the same vector, overwritten in place
  EXPECT_EQ(std::find(names.begin(), names.end(), "a-netdev-name-of-some-length-1005"),
            names.end());
  // The same listing as ListDir's.
  auto listed = sysfs.ListDir("class/net");
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(*listed, names);

  Status missing = sysfs.ListDirInto("class/infiniband", names);
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find(Abs("class/infiniband")), std::string::npos)
      << missing.message();
}

TEST_F(SysFsTest, list_missing_dir_is_not_found) {
  SysFs sysfs(root_.string(), real_);
  auto names = sysfs.ListDir("class/infiniband");
  ASSERT_FALSE(names.has_value());
  EXPECT_EQ(names.error().code(), StatusCode::kNotFound);
  EXPECT_NE(names.error().message().find(Abs("class/infiniband")), std::string::npos)
      << names.error().message();
}

TEST_F(SysFsTest, read_link_and_basename) {
  fs::create_directories(root_ / "class/net/eth0");
  fs::create_symlink("../../../0000:41:00.0", root_ / "class/net/eth0/device");
  fs::create_symlink("../../bus/pci/drivers/mlx5_core/", root_ / "class/net/eth0/driver");
  fs::create_symlink("mlx5_core", root_ / "class/net/eth0/bare");
  SysFs sysfs(root_.string(), real_);

  auto target = sysfs.ReadLink("class/net/eth0/device");
  ASSERT_TRUE(target.has_value()) << target.error().ToString();
  EXPECT_EQ(*target, "../../../0000:41:00.0");

  struct Case {
    std::string_view link;
    std::string_view basename;
  };
  const Case cases[] = {
      {"class/net/eth0/device", "0000:41:00.0"},
      {"class/net/eth0/driver", "mlx5_core"},  // trailing slash ignored
      {"class/net/eth0/bare", "mlx5_core"},    // no slash at all
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.link));
    auto base = sysfs.ReadLinkBasename(c.link);
    ASSERT_TRUE(base.has_value()) << base.error().ToString();
    EXPECT_EQ(*base, c.basename);
  }
}

TEST_F(SysFsTest, read_link_errors) {
  fs::create_directories(root_ / "d");
  fs::create_symlink("..", root_ / "d/up");
  fs::create_symlink("a/.", root_ / "d/dot");
  Write("d/regular", "x");
  SysFs sysfs(root_.string(), real_);

  auto missing = sysfs.ReadLinkBasename("d/missing");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.error().message().find(Abs("d/missing")), std::string::npos);

  auto not_link = sysfs.ReadLink("d/regular");
  ASSERT_FALSE(not_link.has_value());
  EXPECT_EQ(not_link.error().code(), StatusCode::kInvalidArgument);  // EINVAL
  EXPECT_EQ(not_link.error().sys_errno(), EINVAL);

  for (const char* link : {"d/up", "d/dot"}) {
    SCOPED_TRACE(link);
    auto base = sysfs.ReadLinkBasename(link);
    ASSERT_FALSE(base.has_value());
    EXPECT_EQ(base.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(base.error().message().find("unusable target"), std::string::npos)
        << base.error().message();
  }
}

TEST_F(SysFsTest, value_sizes) {
  Write("v300", std::string(300, '7') + "\n");
  Write("v4095", std::string(4095, 'a'));
  Write("v5000", std::string(5000, 'a'));
  SysFs sysfs(root_.string(), real_);

  auto v300 = sysfs.ReadString("v300");
  ASSERT_TRUE(v300.has_value()) << v300.error().ToString();
  EXPECT_EQ(*v300, std::string(300, '7'));

  auto v4095 = sysfs.ReadString("v4095");
  ASSERT_TRUE(v4095.has_value()) << v4095.error().ToString();
  EXPECT_EQ(v4095->size(), 4095u);

  auto v5000 = sysfs.ReadString("v5000");
  ASSERT_FALSE(v5000.has_value()) << "read " << v5000->size() << " bytes";
  EXPECT_EQ(v5000.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(v5000.error().message(), "read " + Abs("v5000") + ": value longer than 4096 bytes");
}

// ---------------------------------------------------------------- AttributeFile

TEST_F(SysFsTest, attribute_file_path_is_absolute) {
  SysFs sysfs(root_.string() + "/", real_);
  AttributeFile file(sysfs, "/class/net/eth0/carrier_changes");
  EXPECT_EQ(file.path(), Abs("class/net/eth0/carrier_changes"));
  EXPECT_FALSE(file.is_open());  // nothing opened before the first read
}

TEST_F(SysFsTest, attribute_file_keep_open_sees_in_place_rewrites) {
  Write("carrier_changes", "1000000\n");
  FakeFileSystem fake;
  SysFs sysfs(root_.string(), fake);
  AttributeFile file(sysfs, "carrier_changes", /*keep_open=*/true);

  const std::pair<std::string, uint64_t> steps[] = {
      {"1000000\n", 1000000}, {"1000002\n", 1000002}, {"5\n", 5}, {"0x20\n", 32}, {"77", 77}};
  for (const auto& [content, value] : steps) {
    SCOPED_TRACE(content);
    Write("carrier_changes", content);
    auto read = file.ReadUint64();
    ASSERT_TRUE(read.has_value()) << read.error().ToString();
    EXPECT_EQ(*read, value);
    EXPECT_TRUE(file.is_open());
  }
  EXPECT_EQ(fake.open_calls(), 1);
  EXPECT_EQ(fake.read_calls(), 5);
}

TEST_F(SysFsTest, attribute_file_read_returns_trimmed_text) {
  Write("operstate", "\tdormant \n");
  FakeFileSystem fake;
  SysFs sysfs(root_.string(), fake);
  AttributeFile file(sysfs, "operstate");
  auto text = file.Read();
  ASSERT_TRUE(text.has_value()) << text.error().ToString();
  EXPECT_EQ(*text, "dormant");
}

TEST_F(SysFsTest, attribute_file_reads_values_of_every_length_up_to_a_page) {
  FakeFileSystem fake;
  SysFs sysfs(root_.string(), fake);
  AttributeFile file(sysfs, "node_desc");
  // Short values are read in one pread; the first one that does not fit in the object is read
  // again whole, and every later read goes straight to the page-sized buffer.
  const std::string lengths[] = {
      std::string(10, 'a'),  std::string(46, 'b'),  std::string(47, 'c'),
      std::string(48, 'd'),  std::string(300, 'e'), "short",
      std::string(4094, 'f')};  // with its newline, one byte short of a page
  int expected_reads = 0;
  bool grown = false;
  for (const std::string& value : lengths) {
    SCOPED_TRACE(value.size());
    Write("node_desc", value + "\n");
    auto text = file.Read();
    ASSERT_TRUE(text.has_value()) << text.error().ToString();
    EXPECT_EQ(*text, value);
    const bool fits = value.size() + 1 < 48;
    expected_reads += grown || fits ? 1 : 2;
    grown |= !fits;
    EXPECT_EQ(fake.read_calls(), expected_reads);
  }
  Write("node_desc", std::string(5000, 'g'));
  auto too_long = file.Read();
  ASSERT_FALSE(too_long.has_value());
  EXPECT_NE(too_long.error().message().find("longer than 4096 bytes"), std::string::npos)
      << too_long.error().ToString();
}

TEST_F(SysFsTest, attribute_file_without_keep_open_closes_after_each_read) {
  Write("rx_bytes", "1\n");
  FakeFileSystem fake;
  SysFs sysfs(root_.string(), fake);
  AttributeFile file(sysfs, "rx_bytes", /*keep_open=*/false);
  for (int i = 1; i <= 3; ++i) {
    Write("rx_bytes", std::to_string(i * 10) + "\n");
    auto read = file.ReadUint64();
    ASSERT_TRUE(read.has_value()) << read.error().ToString();
    EXPECT_EQ(*read, static_cast<uint64_t>(i * 10));
    EXPECT_FALSE(file.is_open());
    EXPECT_EQ(fake.open_calls(), i);
  }
}

TEST_F(SysFsTest, attribute_file_vanishing_without_keep_open_is_not_found) {
  Write("rx_bytes", "1\n");
  FakeFileSystem fake;
  SysFs sysfs(root_.string(), fake);
  AttributeFile file(sysfs, "rx_bytes", /*keep_open=*/false);
  ASSERT_TRUE(file.Read().has_value());
  EXPECT_FALSE(file.known_absent());
  ASSERT_EQ(::unlink(Abs("rx_bytes").c_str()), 0);
  auto read = file.ReadUint64();
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code(), StatusCode::kNotFound);
  EXPECT_EQ(read.error().sys_errno(), ENOENT);
  EXPECT_EQ(read.error().message(),
            "open " + Abs("rx_bytes") + ": " + std::strerror(ENOENT));
  EXPECT_FALSE(file.is_open());
  EXPECT_TRUE(file.known_absent());
}

TEST_F(SysFsTest, attribute_file_remembers_absent_file_without_further_syscalls) {
  FakeFileSystem fake;
  SysFs sysfs(root_.string(), fake);
  AttributeFile file(sysfs, "carrier_up_count");
  auto first = file.ReadUint64();
  ASSERT_FALSE(first.has_value());
  EXPECT_EQ(first.error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(file.known_absent());
  EXPECT_EQ(fake.open_calls(), 1);

  // The ENOENT is replayed without touching the filesystem, even once the file exists.
  Write("carrier_up_count", "3\n");
  for (int i = 0; i < 3; ++i) {
    auto again = file.ReadUint64();
    ASSERT_FALSE(again.has_value());
    EXPECT_EQ(again.error(), first.error());
  }
  EXPECT_EQ(fake.open_calls(), 1);
  EXPECT_EQ(fake.read_calls(), 0);

  // Owners notice new files by rebuilding the AttributeFile.
  AttributeFile rebuilt(sysfs, "carrier_up_count");
  auto read = rebuilt.ReadUint64();
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  EXPECT_EQ(*read, 3u);
  EXPECT_FALSE(rebuilt.known_absent());
}

TEST_F(SysFsTest, attribute_file_other_open_errors_are_not_remembered) {
  Write("speed", "1000\n");
  FakeFileSystem fake;
  fake.Inject(FakeFileSystem::Op::kOpen, Abs("speed"), ENODEV);
  SysFs sysfs(root_.string(), fake);
  AttributeFile file(sysfs, "speed");
  auto failed = file.ReadUint64();
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code(), StatusCode::kNotFound);
  EXPECT_FALSE(file.known_absent());
  fake.Clear();
  auto read = file.ReadUint64();
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  EXPECT_EQ(*read, 1000u);
  EXPECT_EQ(fake.open_calls(), 2);
}

TEST_F(SysFsTest, attribute_file_drops_fd_on_read_error_and_reopens) {
  Write("carrier", "1\n");
  FakeFileSystem fake;
  SysFs sysfs(root_.string(), fake);
  AttributeFile file(sysfs, "carrier");
  ASSERT_TRUE(file.ReadUint64().has_value());
  ASSERT_TRUE(file.is_open());
  ASSERT_EQ(fake.open_calls(), 1);

  fake.InjectReads(Abs("carrier"), ENODEV, 1);
  auto failed = file.ReadUint64();
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code(), StatusCode::kNotFound);
  EXPECT_EQ(failed.error().sys_errno(), ENODEV);
  EXPECT_FALSE(file.is_open());
  EXPECT_EQ(fake.open_calls(), 1);

  Write("carrier", "0\n");
  auto recovered = file.ReadUint64();
  ASSERT_TRUE(recovered.has_value()) << recovered.error().ToString();
  EXPECT_EQ(*recovered, 0u);
  EXPECT_TRUE(file.is_open());
  EXPECT_EQ(fake.open_calls(), 2);
}

TEST_F(SysFsTest, attribute_file_injected_errors_map_to_codes) {
  Write("speed", "100000\n");
  struct Case {
    std::string_view what;
    FakeFileSystem::Op op;
    int err;
    StatusCode code;
  };
  const Case cases[] = {
      {"EACCES on open", FakeFileSystem::Op::kOpen, EACCES, StatusCode::kPermissionDenied},
      {"ENOENT on open", FakeFileSystem::Op::kOpen, ENOENT, StatusCode::kNotFound},
      {"EINVAL on read", FakeFileSystem::Op::kRead, EINVAL, StatusCode::kInvalidArgument},
      {"EAGAIN on read", FakeFileSystem::Op::kRead, EAGAIN, StatusCode::kUnavailable},
      {"EOPNOTSUPP on read", FakeFileSystem::Op::kRead, EOPNOTSUPP, StatusCode::kUnimplemented},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.what));
    FakeFileSystem fake;
    fake.Inject(c.op, Abs("speed"), c.err);
    SysFs sysfs(root_.string(), fake);
    AttributeFile file(sysfs, "speed");
    auto read = file.ReadInt64();
    ASSERT_FALSE(read.has_value());
    EXPECT_EQ(read.error().code(), c.code);
    EXPECT_EQ(read.error().sys_errno(), c.err);
    EXPECT_NE(read.error().message().find(Abs("speed")), std::string::npos)
        << read.error().message();
    EXPECT_FALSE(file.is_open());

    // SysFs::ReadString goes through the same FileSystem.
    auto direct = sysfs.ReadString("speed");
    ASSERT_FALSE(direct.has_value());
    EXPECT_EQ(direct.error().code(), c.code);

    fake.Clear();
    if (c.err == ENOENT && c.op == FakeFileSystem::Op::kOpen) {
      // An absent file is remembered (see attribute_file_remembers_absent_file...).
      EXPECT_TRUE(file.known_absent());
      EXPECT_FALSE(file.ReadInt64().has_value());
      continue;
    }
    EXPECT_FALSE(file.known_absent());
    auto ok = file.ReadInt64();
    ASSERT_TRUE(ok.has_value()) << ok.error().ToString();
    EXPECT_EQ(*ok, 100000);
  }
}

TEST_F(SysFsTest, attribute_file_einval_read_message) {
  Write("carrier", "1\n");
  FakeFileSystem fake;
  fake.Inject(FakeFileSystem::Op::kRead, Abs("carrier"), EINVAL);
  SysFs sysfs(root_.string(), fake);
  AttributeFile file(sysfs, "carrier");
  auto read = file.Read();
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(read.error().sys_errno(), EINVAL);
  EXPECT_EQ(read.error().message(), "read " + Abs("carrier") + ": " + std::strerror(EINVAL));
}

TEST_F(SysFsTest, attribute_file_value_growing_beyond_initial_buffer_is_read_whole) {
  Write("ifalias", "short\n");
  FakeFileSystem fake;
  SysFs sysfs(root_.string(), fake);
  AttributeFile file(sysfs, "ifalias");
  auto first = file.Read();
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  EXPECT_EQ(*first, "short");

  const std::string long_value = std::string(150, 'x') + std::string(150, 'y');
  Write("ifalias", long_value + "\n");
  auto second = file.Read();
  ASSERT_TRUE(second.has_value()) << second.error().ToString();
  EXPECT_EQ(*second, long_value);
  EXPECT_TRUE(file.is_open());

  // And it shrinks back.
  Write("ifalias", "tiny\n");
  auto third = file.Read();
  ASSERT_TRUE(third.has_value()) << third.error().ToString();
  EXPECT_EQ(*third, "tiny");
  EXPECT_EQ(fake.open_calls(), 1);
}

TEST_F(SysFsTest, attribute_file_value_longer_than_a_page_is_invalid) {
  Write("huge", std::string(5000, '1'));
  FakeFileSystem fake;
  SysFs sysfs(root_.string(), fake);
  AttributeFile file(sysfs, "huge");
  auto read = file.Read();
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(read.error().message().find("longer than 4096 bytes"), std::string::npos);
  EXPECT_FALSE(file.is_open());
}

TEST_F(SysFsTest, attribute_file_set_content_from_fake) {
  // The fake can serve content for a path that does not exist on disk.
  FakeFileSystem fake;
  fake.SetContent(Abs("class/net/eth0/carrier_changes"), "42\n");
  SysFs sysfs(root_.string(), fake);
  AttributeFile file(sysfs, "class/net/eth0/carrier_changes");
  auto read = file.ReadUint64();
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  EXPECT_EQ(*read, 42u);
}

TEST_F(SysFsTest, attribute_file_is_movable) {
  Write("mtu", "9000\n");
  FakeFileSystem fake;
  SysFs sysfs(root_.string(), fake);
  AttributeFile file(sysfs, "mtu");
  ASSERT_TRUE(file.Read().has_value());
  AttributeFile moved = std::move(file);
  EXPECT_TRUE(moved.is_open());
  auto read = moved.ReadUint64();
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  EXPECT_EQ(*read, 9000u);
  EXPECT_EQ(fake.open_calls(), 1);
}

// ---------------------------------------------------------------- files that are not files

TEST_F(SysFsTest, a_fifo_in_place_of_a_counter_is_an_error_naming_it_not_a_hang) {
  // Issue 19: open(O_RDONLY) of a FIFO waits for a writer; the collector hung there forever.
  const std::string fifo = Abs("class/net/eth0/statistics/rx_bytes");
  ASSERT_TRUE(::fabricwatch::testing::MakeFifo(fifo)) << std::strerror(errno);
  ::fabricwatch::testing::BlockedOpenGuard guard({fifo});

  auto opened = real_.Open(fifo);
  ASSERT_FALSE(opened.has_value());
  EXPECT_EQ(opened.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(opened.error().message(), "open " + fifo + ": not a regular file (a FIFO)");

  SysFs sysfs(root_.string(), real_);
  auto text = sysfs.ReadString("class/net/eth0/statistics/rx_bytes");
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().code(), StatusCode::kInvalidArgument);

  AttributeFile file(sysfs, "class/net/eth0/statistics/rx_bytes");
  for (int read = 0; read < 3; ++read) {
    auto value = file.ReadUint64();
    ASSERT_FALSE(value.has_value());
    EXPECT_NE(value.error().message().find(fifo), std::string::npos) << value.error().message();
    EXPECT_FALSE(file.is_open());
    EXPECT_FALSE(file.known_absent());  // checked again: a FIFO may be replaced by the file
  }
  EXPECT_FALSE(guard.fired()) << "an open blocked on the FIFO";
}

TEST_F(SysFsTest, a_directory_or_device_in_place_of_a_file_is_an_error_naming_it) {
  fs::create_directories(root_ / "class/net/eth0/mtu");
  auto dir = real_.Open(Abs("class/net/eth0/mtu"));
  ASSERT_FALSE(dir.has_value());
  EXPECT_EQ(dir.error().message(),
            "open " + Abs("class/net/eth0/mtu") + ": not a regular file (a directory)");
  auto device = real_.Open("/dev/null");
  ASSERT_FALSE(device.has_value());
  EXPECT_EQ(device.error().message(), "open /dev/null: not a regular file (a character device)");
  // Regular files of procfs and sysfs are what the agent reads: they still open.
  EXPECT_TRUE(real_.Open("/proc/self/stat").has_value());
}

// ---------------------------------------------------------------- the kept-open budget

TEST(FdBudgetTest, slots_are_taken_up_to_the_limit_and_given_back) {
  std::ostringstream log_text;
  auto logger = std::make_shared<spdlog::logger>(
      "main", std::make_shared<spdlog::sinks::ostream_sink_st>(log_text));
  FdBudget budget(2, logger);
  FdBudget::Slot a = budget.Take();
  FdBudget::Slot b = budget.Take();
  EXPECT_TRUE(a);
  EXPECT_TRUE(b);
  EXPECT_EQ(budget.taken(), 2u);
  EXPECT_FALSE(budget.ever_exhausted());
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(budget.Take());
  EXPECT_TRUE(budget.ever_exhausted());
  // Said once, however often the budget is found spent.
  const std::string logged = log_text.str();
  EXPECT_EQ(std::count(logged.begin(), logged.end(), '\n'), 1) << logged;
  EXPECT_NE(logged.find("the 2 counter files"), std::string::npos) << logged;

  FdBudget::Slot moved = std::move(a);
  EXPECT_EQ(budget.taken(), 2u);
  moved.Reset();
  EXPECT_EQ(budget.taken(), 1u);
  EXPECT_TRUE(budget.Take());  // a temporary: taken and given back at once
  EXPECT_EQ(budget.taken(), 1u);
}

TEST_F(SysFsTest, attribute_files_keep_their_fd_only_within_the_budget) {
  for (const char* name : {"a", "b", "c"}) Write(name, "1\n");
  FakeFileSystem fake;
  FdBudget budget(2);
  SysFs sysfs(root_.string(), fake, &budget);
  std::vector<AttributeFile> files;
  for (const char* name : {"a", "b", "c"}) files.emplace_back(sysfs, name);
  for (int sample = 0; sample < 3; ++sample) {
    for (AttributeFile& file : files) ASSERT_TRUE(file.ReadUint64().has_value());
  }
  // Two kept open, the third read open/read/close every time: 2 + 3 opens.
  EXPECT_TRUE(files[0].is_open());
  EXPECT_TRUE(files[1].is_open());
  EXPECT_FALSE(files[2].is_open());
  EXPECT_EQ(fake.open_calls(), 2 + 3);
  EXPECT_EQ(budget.taken(), 2u);

  // A kept file goes away (its device did): the third takes the free slot at its next read.
  files.erase(files.begin());
  EXPECT_EQ(budget.taken(), 1u);
  ASSERT_TRUE(files[1].ReadUint64().has_value());
  EXPECT_TRUE(files[1].is_open());
  EXPECT_EQ(budget.taken(), 2u);

  // A read error drops the fd and its slot.
  fake.InjectReads(files[0].path(), ENODEV, 1);
  EXPECT_FALSE(files[0].ReadUint64().has_value());
  EXPECT_FALSE(files[0].is_open());
  EXPECT_EQ(budget.taken(), 1u);
  files.clear();
  EXPECT_EQ(budget.taken(), 0u);
}

TEST_F(SysFsTest, a_zero_budget_reads_every_file_open_read_close) {
  Write("a", "1\n");
  FakeFileSystem fake;
  FdBudget budget(0);
  SysFs sysfs(root_.string(), fake, &budget);
  AttributeFile file(sysfs, "a");
  for (int sample = 0; sample < 3; ++sample) {
    auto value = file.ReadUint64();
    ASSERT_TRUE(value.has_value()) << value.error().ToString();
    EXPECT_EQ(*value, 1u);
    EXPECT_FALSE(file.is_open());
  }
  EXPECT_EQ(fake.open_calls(), 3);
}

}  // namespace
}  // namespace fabricwatch::sys
