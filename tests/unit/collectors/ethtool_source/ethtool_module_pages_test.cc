// Tests of module EEPROM page planning (ethtool_module_pages.h): which pages make up the flat
// image of each module type, how the image is assembled from short and refused reads, and which
// failures mean an empty cage.

#include "collectors/ethtool_source/ethtool_module_pages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace fabricwatch::sys {
namespace {

ModulePageRead Lower() { return ModulePageRead{0x50, 0, 0, 0, 128, 0}; }
ModulePageRead Upper(uint8_t page, uint16_t at, uint8_t i2c = 0x50) {
  return ModulePageRead{i2c, page, 0, 128, 128, at};
}

// `known` bytes with the given (address, value) pairs set and zeros elsewhere.
std::vector<uint8_t> Known(size_t size, std::initializer_list<std::pair<size_t, uint8_t>> set) {
  std::vector<uint8_t> bytes(size);
  for (auto [address, value] : set) bytes.at(address) = value;
  return bytes;
}

struct PlanCase {
  const char* name;
  std::vector<uint8_t> known;
  std::vector<ModulePageRead> want;
};

// gtest would print the raw bytes, padding included (uninitialised under valgrind).
void PrintTo(const PlanCase& c, std::ostream* os) { *os << c.name; }

class ModulePagesToReadTest : public testing::TestWithParam<PlanCase> {};

TEST_P(ModulePagesToReadTest, Plan) {
  const PlanCase& c = GetParam();
  const std::vector<ModulePageRead> plan = ModulePagesToRead(c.known);
  ASSERT_EQ(plan.size(), c.want.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    EXPECT_EQ(plan[i], c.want[i]) << "entry " << i << ": i2c " << int{plan[i].i2c_address}
                                  << " page " << int{plan[i].page} << " offset "
                                  << int{plan[i].offset} << " at " << plan[i].image_offset;
  }
  // The kernel's rules (K net/ethtool/eeprom.c eeprom_parse_request) and the image's bounds.
  size_t end = 0;
  for (const ModulePageRead& read : plan) {
    EXPECT_GE(read.length, 1);
    EXPECT_LE(read.length, 128);
    EXPECT_TRUE(read.offset == 0 || read.offset == 128);
    EXPECT_LE(read.offset % 128 + read.length, 128) << "crosses the half-page boundary";
    if (read.page != 0) {
      EXPECT_EQ(read.offset, 128) << "page > 0 read from the lower half";
    }
    EXPECT_GE(read.image_offset, end) << "out of image order";
    end = read.image_offset + read.length;
  }
  EXPECT_LE(end, 768u);
}

INSTANTIATE_TEST_SUITE_P(
    Modules, ModulePagesToReadTest,
    testing::Values(
        PlanCase{"NothingKnownReadsTheLowerPage", {}, {Lower()}},
        PlanCase{
            "Sff8472WithoutDdm", Known(128, {{0, 0x03}, {92, 0x20}}), {Lower(), Upper(0, 128)}},
        PlanCase{
            "Sff8472WithDdm",
            Known(128, {{0, 0x03}, {92, 0x40}}),
            {Lower(), Upper(0, 128), ModulePageRead{0x51, 0, 0, 0, 128, 256}, Upper(0, 384, 0x51)}},
        PlanCase{"Sff8472DdmByteNotRead", Known(80, {{0, 0x03}}), {Lower(), Upper(0, 128)}},
        PlanCase{"Sff8636Flat", Known(128, {{0, 0x11}, {2, 0x04}}), {Lower(), Upper(0, 128)}},
        PlanCase{"Sff8636PagedPage00Unknown",
                 Known(128, {{0, 0x11}}),
                 {Lower(), Upper(0, 128), Upper(3, 512)}},
        PlanCase{"Sff8636PagedNoOptionalPages",
                 Known(256, {{0, 0x0D}, {195, 0x3f}}),
                 {Lower(), Upper(0, 128), Upper(3, 512)}},
        PlanCase{"Sff8636PagedPage01Only",
                 Known(256, {{0, 0x0C}, {195, 0x40}}),
                 {Lower(), Upper(0, 128), Upper(1, 256), Upper(3, 512)}},
        PlanCase{"Sff8636PagedPage02Only",
                 Known(256, {{0, 0x11}, {195, 0x80}}),
                 {Lower(), Upper(0, 128), Upper(2, 384), Upper(3, 512)}},
        PlanCase{"Sff8636PagedAllPages",
                 Known(256, {{0, 0x11}, {195, 0xc0}}),
                 {Lower(), Upper(0, 128), Upper(1, 256), Upper(2, 384), Upper(3, 512)}},
        PlanCase{"Sff8636FlatIgnoresOptions",
                 Known(256, {{0, 0x11}, {2, 0x04}, {195, 0xc0}}),
                 {Lower(), Upper(0, 128)}},
        PlanCase{"CmisFlat", Known(128, {{0, 0x18}, {2, 0x80}}), {Lower(), Upper(0, 128)}},
        PlanCase{"CmisPaged",
                 Known(128, {{0, 0x18}}),
                 {Lower(), Upper(0, 128), Upper(0x01, 256), Upper(0x02, 384), Upper(0x10, 512),
                  Upper(0x11, 640)}},
        PlanCase{"OsfpPaged",
                 Known(128, {{0, 0x19}, {2, 0x7f}}),
                 {Lower(), Upper(0, 128), Upper(0x01, 256), Upper(0x02, 384), Upper(0x10, 512),
                  Upper(0x11, 640)}},
        PlanCase{"UnknownIdentifier", Known(128, {{0, 0x00}}), {Lower(), Upper(0, 128)}},
        PlanCase{
            "AllOnesIdentifier", Known(128, {{0, 0xff}, {2, 0x00}}), {Lower(), Upper(0, 128)}}),
    [](const testing::TestParamInfo<PlanCase>& info) { return info.param.name; });

TEST(ModulePagesToReadTest, IdentifierGroupsMatchTheDecoder) {
  // SFF-8024 Table 4-1, as optics::ModuleTypeFromIdentifier groups them.
  for (int id = 0; id < 256; ++id) {
    const auto plan = ModulePagesToRead(Known(128, {{0, static_cast<uint8_t>(id)}}));
    size_t want = 2;
    if (id == 0x0C || id == 0x0D || id == 0x11) want = 3;  // + page 03h
    if (id == 0x18 || id == 0x19 || id == 0x1B || id == 0x1E || id == 0x1F || id == 0x20) want = 6;
    EXPECT_EQ(plan.size(), want) << "identifier " << id;
  }
}

// ================================================================ module EEPROM, image assembly

// A module behind the by-page op: 256 bytes per (i2c, page, bank), the lower half meaningful
// only for page 0. Byte values encode where they came from.
struct FakeModule {
  using Key = std::tuple<uint8_t, uint8_t, uint8_t>;  // i2c, page, bank
  std::map<Key, std::array<uint8_t, 256>> memory;
  std::map<Key, int> errnos;    // a page that fails
  size_t chunk = 128;           // bytes per answer: a driver that reads less than asked
  std::map<Key, size_t> limit;  // bytes a page answers before it reads 0 (a dying module)
  std::vector<ModulePageRead> reads;

  void Add(uint8_t i2c, uint8_t page, uint8_t bank = 0) {
    std::array<uint8_t, 256> bytes;
    for (size_t a = 0; a < bytes.size(); ++a) {
      bytes[a] = static_cast<uint8_t>(a + 37 * page + 91 * (i2c - 0x50) + 13 * bank + 1);
    }
    memory[{i2c, page, bank}] = bytes;
  }
  uint8_t& At(uint8_t i2c, uint8_t page, size_t address) {
    return memory.at({i2c, page, 0})[address];
  }
  // Expected image bytes of one half page.
  std::vector<uint8_t> Half(uint8_t i2c, uint8_t page, size_t offset) {
    const auto& bytes = memory.at({i2c, page, 0});
    return std::vector<uint8_t>(bytes.begin() + offset, bytes.begin() + offset + 128);
  }

  ModuleReader Reader() {
    return [this](const ModulePageRead& part) -> Result<std::vector<uint8_t>> {
      reads.push_back(part);
      const Key key{part.i2c_address, part.page, part.bank};
      if (auto e = errnos.find(key); e != errnos.end()) {
        return Error(FromErrno(e->second, "read"));
      }
      auto it = memory.find(key);
      if (it == memory.end()) return Error(FromErrno(EINVAL, "read"));  // kernel fallback range
      size_t n = std::min<size_t>(part.length, chunk);
      if (auto l = limit.find(key); l != limit.end()) {
        const size_t served = part.offset % 128;
        n = served >= l->second ? 0 : std::min(n, l->second - served);
      }
      return std::vector<uint8_t>(it->second.begin() + part.offset,
                                  it->second.begin() + part.offset + n);
    };
  }
};

std::vector<uint8_t> Concat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

FakeModule Sfp(bool ddm) {
  FakeModule m;
  m.Add(0x50, 0);
  m.Add(0x51, 0);
  m.At(0x50, 0, 0) = 0x03;
  m.At(0x50, 0, 92) = ddm ? 0x68 : 0x00;
  return m;
}

TEST(ReadModuleImageTest, Sff8472WithDdmIsA0ThenA2) {
  for (size_t chunk : {size_t{128}, size_t{32}, size_t{1}}) {
    FakeModule m = Sfp(true);
    m.chunk = chunk;
    auto image = ReadModuleImage(m.Reader());
    ASSERT_TRUE(image) << image.error().ToString();
    EXPECT_EQ(*image, Concat({m.Half(0x50, 0, 0), m.Half(0x50, 0, 128), m.Half(0x51, 0, 0),
                              m.Half(0x51, 0, 128)}));
    EXPECT_EQ(m.reads.size(), 4 * (128 / chunk)) << "chunk " << chunk;
    for (const ModulePageRead& read : m.reads) {
      EXPECT_LE(read.offset % 128 + read.length, 128);
    }
  }
}

TEST(ReadModuleImageTest, Sff8472WithoutDdmIsA0Only) {
  FakeModule m = Sfp(false);
  auto image = ReadModuleImage(m.Reader());
  ASSERT_TRUE(image) << image.error().ToString();
  EXPECT_EQ(*image, Concat({m.Half(0x50, 0, 0), m.Half(0x50, 0, 128)}));
  EXPECT_EQ(m.reads.size(), 2u);
}

FakeModule Qsfp(uint8_t status, uint8_t options) {
  FakeModule m;
  for (uint8_t page : {0, 1, 2, 3}) m.Add(0x50, page);
  m.At(0x50, 0, 0) = 0x11;
  m.At(0x50, 0, 2) = status;
  m.At(0x50, 0, 195) = options;
  return m;
}

TEST(ReadModuleImageTest, Sff8636PagedWithoutOptionalPagesKeepsPage03At512) {
  FakeModule m = Qsfp(0x00, 0x00);
  auto image = ReadModuleImage(m.Reader());
  ASSERT_TRUE(image) << image.error().ToString();
  ASSERT_EQ(image->size(), 640u);
  EXPECT_EQ(*image, Concat({m.Half(0x50, 0, 0), m.Half(0x50, 0, 128), std::vector<uint8_t>(256, 0),
                            m.Half(0x50, 3, 128)}));
  EXPECT_EQ(m.reads.size(), 3u);
}

TEST(ReadModuleImageTest, Sff8636PagedWithAllPages) {
  FakeModule m = Qsfp(0x00, 0xc0);
  auto image = ReadModuleImage(m.Reader());
  ASSERT_TRUE(image) << image.error().ToString();
  EXPECT_EQ(*image, Concat({m.Half(0x50, 0, 0), m.Half(0x50, 0, 128), m.Half(0x50, 1, 128),
                            m.Half(0x50, 2, 128), m.Half(0x50, 3, 128)}));
}

TEST(ReadModuleImageTest, Sff8636FlatIsTwoHalves) {
  FakeModule m = Qsfp(0x04, 0xc0);
  auto image = ReadModuleImage(m.Reader());
  ASSERT_TRUE(image) << image.error().ToString();
  EXPECT_EQ(image->size(), 256u);
}

TEST(ReadModuleImageTest, CmisPagedIsBank0Pages) {
  FakeModule m;
  for (uint8_t page : {0x00, 0x01, 0x02, 0x10, 0x11}) m.Add(0x50, page);
  m.Add(0x50, 0x11, 1);  // bank 1 exists, and is not read
  m.At(0x50, 0, 0) = 0x18;
  m.At(0x50, 0, 2) = 0x00;
  auto image = ReadModuleImage(m.Reader());
  ASSERT_TRUE(image) << image.error().ToString();
  EXPECT_EQ(*image,
            Concat({m.Half(0x50, 0, 0), m.Half(0x50, 0, 128), m.Half(0x50, 1, 128),
                    m.Half(0x50, 2, 128), m.Half(0x50, 0x10, 128), m.Half(0x50, 0x11, 128)}));
  for (const ModulePageRead& read : m.reads) EXPECT_EQ(read.bank, 0);
}

TEST(ReadModuleImageTest, LaterPageRefusedEndsTheImage) {
  // The kernel's fallback for a driver whose legacy eeprom_len is 256 refuses page 03h (EINVAL);
  // a by-page driver without a page answers EOPNOTSUPP (sfp.c: "Only page 0 supported").
  for (int err : {EINVAL, EOPNOTSUPP}) {
    FakeModule m = Qsfp(0x00, 0x00);
    m.errnos[{0x50, 3, 0}] = err;
    auto image = ReadModuleImage(m.Reader());
    ASSERT_TRUE(image) << image.error().ToString();
    EXPECT_EQ(*image, Concat({m.Half(0x50, 0, 0), m.Half(0x50, 0, 128)})) << err;
  }
}

TEST(ReadModuleImageTest, LaterPageFailureIsAnError) {
  FakeModule m = Sfp(true);
  m.errnos[{0x51, 0, 0}] = EIO;
  auto image = ReadModuleImage(m.Reader());
  ASSERT_FALSE(image);
  EXPECT_EQ(image.error().sys_errno(), EIO);
}

TEST(ReadModuleImageTest, LowerPageFailureIsReturnedAsIs) {
  for (int err : {EOPNOTSUPP, EINVAL, EPERM}) {
    FakeModule m = Sfp(true);
    m.errnos[{0x50, 0, 0}] = err;
    auto image = ReadModuleImage(m.Reader());
    ASSERT_FALSE(image);
    EXPECT_EQ(image.error(), FromErrno(err, "read"));
    EXPECT_EQ(m.reads.size(), 1u);
  }
}

TEST(ReadModuleImageTest, ShortAndEmptyAnswers) {
  {
    FakeModule m = Sfp(true);
    m.limit[{0x50, 0, 0}] = 0;  // the lower page reads nothing: no module answered
    auto image = ReadModuleImage(m.Reader());
    ASSERT_FALSE(image);
    EXPECT_EQ(image.error().code(), StatusCode::kNoData) << image.error().ToString();
  }
  {
    FakeModule m = Qsfp(0x00, 0x00);
    m.limit[{0x50, 3, 0}] = 0;  // page 03h reads nothing: it is absent, no zero gap is added
    auto image = ReadModuleImage(m.Reader());
    ASSERT_TRUE(image) << image.error().ToString();
    EXPECT_EQ(image->size(), 256u);
  }
  {
    FakeModule m = Sfp(true);
    m.chunk = 50;
    m.limit[{0x51, 0, 0}] = 100;  // A2h lower half stops after 100 bytes: the image ends there
    auto image = ReadModuleImage(m.Reader());
    ASSERT_TRUE(image) << image.error().ToString();
    ASSERT_EQ(image->size(), 356u);
    const auto a2 = m.Half(0x51, 0, 0);
    EXPECT_TRUE(std::equal(a2.begin(), a2.begin() + 100, image->begin() + 256));
  }
}

TEST(ReadModuleImageTest, OverlongAnswerIsMalformed) {
  auto image = ReadModuleImage([](const ModulePageRead& part) {
    return Result<std::vector<uint8_t>>(std::vector<uint8_t>(part.length + 1u, 0x03));
  });
  ASSERT_FALSE(image);
  EXPECT_EQ(image.error().code(), StatusCode::kInvalidArgument);
}

// ================================================================ module EEPROM, error mapping

Status WithExtack(int err, const std::string& extack) {
  Status s = FromErrno(err, "netdev eth0: ethtool netlink MODULE_EEPROM_GET");
  if (extack.empty()) return s;
  return Status(s.code(), s.message() + " (kernel: " + extack + ")", err);
}

TEST(ModuleEepromErrorStatusTest, NoModuleIsNoDataOnlyWhereTheDriverSaysSo) {
  struct Case {
    int err;
    std::string extack;
    bool first_read;
    bool netdev_exists;
    StatusCode want;
  };
  const std::vector<Case> cases = {
      {ENODEV, "", true, true, StatusCode::kNoData},   // sfp.c: no module present
      {ENODEV, "", false, true, StatusCode::kNoData},  // unplugged while being read
      {ENODEV, "no device matches name", true, false, StatusCode::kNotFound},
      {EIO, "", true, true, StatusCode::kNoData},     // mlx5 MCIA on an empty cage
      {EIO, "", false, true, StatusCode::kInternal},  // a module that fails mid-read
      {ENXIO, "", true, true, StatusCode::kNoData},   // I2C address not ACKed
      {EREMOTEIO, "", true, true, StatusCode::kNoData},
      {EINVAL, "bnxt_en: Transceiver module not inserted", true, true, StatusCode::kNoData},
      {EINVAL, "reading cross half page boundary is illegal", true, true,
       StatusCode::kInvalidArgument},
      {EOPNOTSUPP, "", true, true, StatusCode::kUnimplemented},  // no module ops at all
      {EPERM, "", true, true, StatusCode::kPermissionDenied},    // no CAP_NET_ADMIN
      {EBUSY, "Module firmware flashing is in progress", true, true, StatusCode::kUnavailable},
  };
  for (const Case& c : cases) {
    const Status in = WithExtack(c.err, c.extack);
    const Status out = ModuleEepromErrorStatus(in, c.first_read, c.netdev_exists);
    EXPECT_EQ(out.code(), c.want) << in.ToString() << " first=" << c.first_read;
    EXPECT_EQ(out.sys_errno(), c.err);
    EXPECT_EQ(out.message().rfind(in.message(), 0), 0u) << "the cause must stay in the message";
  }
}

}  // namespace
}  // namespace fabricwatch::sys
