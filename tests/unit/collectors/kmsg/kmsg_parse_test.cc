// /dev/kmsg records (collectors/kmsg/kmsg_parse.h): the structured format with its continuation
// lines, the prefix fields newer kernels add, fragments, escapes, and every kind of bad input
// the issue lists (too long, invalid UTF-8, a continuation without a record, a truncated file).

#include "collectors/kmsg/kmsg_parse.h"

#include <gtest/gtest.h>

namespace fabricwatch::kmsg {
namespace {

TEST(KmsgParseTest, ARecordWithItsDeviceContinuation) {
  // An mlx5 health line as the kernel gives it to a reader (prefix, message, dictionary).
  auto r = ParseKmsgRecord(
      "3,4521,912345678,-;mlx5_core 0000:3b:00.0: mlx5_health_check_fatal_sensors:"
      "222:(pid 0): fw fatal error\n SUBSYSTEM=pci\n DEVICE=+pci:0000:3b:00.0\n");
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->priority, 3);
  EXPECT_EQ(r->facility, 0u);
  EXPECT_EQ(r->sequence, 4521u);
  EXPECT_EQ(r->timestamp_us, 912345678u);
  EXPECT_FALSE(r->fragment);
  EXPECT_EQ(r->subsystem, "pci");
  EXPECT_EQ(r->device, "+pci:0000:3b:00.0");
  EXPECT_NE(r->message.find("fw fatal error"), std::string::npos);
}

TEST(KmsgParseTest, NewerPrefixFieldsFragmentsAndUserFacility) {
  // Kernels with the caller id add a field; a userspace writer (facility 1, user) at warning.
  auto r = ParseKmsgRecord("12,77,1000,c,caller=T42;fabricwatch-test-7f3a eth9 link down");
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->priority, 4);
  EXPECT_EQ(r->facility, 1u);
  EXPECT_TRUE(r->fragment);
  EXPECT_EQ(r->message, "fabricwatch-test-7f3a eth9 link down");
  EXPECT_TRUE(r->device.empty());
}

TEST(KmsgParseTest, EscapesAreKeptAndUnescapedOnRequest) {
  auto r = ParseKmsgRecord("6,1,2,-;a\\x09tab and a backslash \\x5c and \\xZZ");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->message, "a\\x09tab and a backslash \\x5c and \\xZZ");
  EXPECT_EQ(UnescapeKmsg(r->message), "a\ttab and a backslash \\ and \\xZZ");
}

TEST(KmsgParseTest, BadRecordsAreErrorsNamingTheProblem) {
  const std::pair<std::string, std::string> cases[] = {
      {"no semicolon here", "no ';'"},
      {"6,1,2;short prefix", "fewer than 4"},
      {"x,1,2,-;bad priority", "priority"},
      {"6,-1,2,-;bad sequence", "sequence"},
      {"6,1,2.5,-;bad timestamp", "timestamp"},
      {"6,1,2,;empty flags", "flags"},
      {"6,1,2,-;" + std::string(1025, 'a'), "1024"},
      {std::string(9000, 'a'), "8192"},
      {"6,1,2,-;bad \xc3\x28 utf8", "UTF-8"},
      {"6,1,2,-;overlong \xc0\xaf", "UTF-8"},
      {"6,1,2,-;ok\nnot a continuation", "continuation"},
  };
  for (const auto& [text, why] : cases) {
    auto r = ParseKmsgRecord(text);
    ASSERT_FALSE(r) << text.substr(0, 40);
    EXPECT_NE(r.error().message().find(why), std::string::npos) << r.error().message();
  }
  EXPECT_TRUE(ParseKmsgRecord("6,1,2,-;valid \xe2\x9c\x93 utf8"));
}

TEST(KmsgParseTest, TheSplitterWaitsForContinuationsAndDropsOrphans) {
  KmsgSplitter s;
  std::string record;
  s.Feed(" SUBSYSTEM=pci\n");  // a continuation with no record: a file opened mid-record
  s.Feed("6,1,2,-;first\n SUBSYSTEM=net\n");
  EXPECT_FALSE(s.Next(record)) << "the next line may still continue it";
  s.Feed(" DEVICE=n3\n6,2,3,-;sec");
  ASSERT_TRUE(s.Next(record));
  EXPECT_EQ(record, "6,1,2,-;first\n SUBSYSTEM=net\n DEVICE=n3\n");
  EXPECT_FALSE(s.Next(record)) << "the second record is still being written";
  s.Feed("ond\n");
  EXPECT_FALSE(s.Next(record));
  s.Finish();
  ASSERT_TRUE(s.Next(record));
  EXPECT_EQ(record, "6,2,3,-;second\n");
  EXPECT_EQ(s.dropped(), 1u);
  // A record that never ends is dropped once it passes the bound, and the stream recovers.
  KmsgSplitter huge;
  huge.Feed("6,1,2,-;" + std::string(kMaxKmsgRecordBytes + 10, 'x'));
  EXPECT_FALSE(huge.Next(record));
  EXPECT_EQ(huge.dropped(), 1u);
  huge.Feed("\n6,3,4,-;after\n");
  huge.Finish();
  ASSERT_TRUE(huge.Next(record));
  EXPECT_EQ(record.substr(0, 8), "6,3,4,-;");
}

}  // namespace
}  // namespace fabricwatch::kmsg
