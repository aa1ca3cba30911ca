// Outputs safe for hostile input (issue 19 item 5): strings a collector reads from devices and
// drivers reach the exposition (escaped per the text format) and the JSON API (valid UTF-8, never
// an exception), each bounded in length (docs/design.md §5.6). The status page's own test is
// status_html_test.cc.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "base/metric_sink.h"
#include "collectors/sys/link_events.h"
#include "exporter/pages/pages.h"
#include "exporter/http/render.h"

namespace fabricwatch::exporter {
namespace {

const std::string kScript = "<script>alert(1)</script>";
const std::string kQuotes = "say \"hi\" back\\slash 'single' & amp";
const std::string kNewlines = "line one\nline two\r\n";
const std::string kInvalidUtf8 = "bad \xff\xfe \xc3( \xed\xa0\x80 \xf4\x90\x80\x80 end\xc3";
const std::string kLong = std::string(10 * 1024, 'A') + kScript;

bool ValidUtf8(std::string_view s) { return SanitizeUtf8(s) == s; }

constexpr MetricDesc kInfo{
    "test_device_info", "Hostile strings as labels.", MetricKind::kInfo, {"device", "fw_ver"}};

TEST(BoundLabelValueTest, short_values_are_unchanged) {
  for (const std::string& s : {std::string(), kScript, kQuotes, kNewlines,
                               std::string(kMaxLabelValueBytes, 'x'), std::string("ünïcødé ✓")}) {
    EXPECT_EQ(BoundLabelValue(s), s);
  }
}

TEST(BoundLabelValueTest, long_values_are_cut_with_the_marker) {
  const std::string cut = BoundLabelValue(kLong);
  EXPECT_LE(cut.size(), kMaxLabelValueBytes);
  EXPECT_TRUE(cut.ends_with(kTruncationMarker)) << cut.substr(cut.size() - 20);
  EXPECT_TRUE(cut.starts_with("AAAA"));
  EXPECT_EQ(BoundLabelValue(std::string(kMaxLabelValueBytes + 1, 'x')).size(), kMaxLabelValueBytes);
}

TEST(BoundLabelValueTest, cuts_at_a_character_boundary) {
  // Multi-byte characters across the cut, at every alignment: the result stays valid UTF-8.
  for (size_t pad = 0; pad < 4; ++pad) {
    std::string s(pad, 'p');
    while (s.size() < 3 * kMaxLabelValueBytes) s += "é✓😀";
    const std::string cut = BoundLabelValue(s);
    EXPECT_LE(cut.size(), kMaxLabelValueBytes) << pad;
    EXPECT_TRUE(ValidUtf8(cut)) << pad;
    EXPECT_TRUE(cut.ends_with(kTruncationMarker)) << pad;
  }
}

TEST(BoundLabelValueTest, invalid_utf8_is_replaced_before_the_cut) {
  const std::string out = BoundLabelValue(kInvalidUtf8);
  EXPECT_TRUE(ValidUtf8(out));
  EXPECT_NE(out.find("\xef\xbf\xbd"), std::string::npos);
  const std::string long_bad = BoundLabelValue(std::string(4000, '\xff'));
  EXPECT_TRUE(ValidUtf8(long_bad));
  EXPECT_LE(long_bad.size(), kMaxLabelValueBytes);
}

TEST(MetricSinkBoundTest, sink_stores_bounded_valid_label_values) {
  MetricSink sink;
  sink.AddInfo(kInfo, {{"device", kLong}, {"fw_ver", kInvalidUtf8}});
  auto families = sink.TakeFamilies();
  ASSERT_EQ(families.size(), 1u);
  ASSERT_EQ(families[0].metric.size(), 1u);
  for (const auto& label : families[0].metric[0].label) {
    EXPECT_LE(label.value.size(), kMaxLabelValueBytes) << label.name;
    EXPECT_TRUE(ValidUtf8(label.value)) << label.name;
  }
  EXPECT_EQ(sink.error_count(), 0u);
}

TEST(MetricSinkBoundTest, exposition_of_hostile_labels_parses_line_by_line) {
  MetricSink sink;
  int n = 0;
  for (const std::string& s : {kScript, kQuotes, kNewlines, kInvalidUtf8, kLong}) {
    sink.AddInfo(kInfo, {{"device", "dev" + std::to_string(n++)}, {"fw_ver", s}});
  }
  const std::string text = RenderText(sink.TakeFamilies());
  // Text format 0.0.4: a sample line is name{label="value",...} value, where a value holds no raw
  // newline or quote: \\, \" and \n are the only escapes.
  const std::regex sample(
      R"re(test_device_info\{device="dev[0-9]",fw_ver="((?:[^"\\\n]|\\[\\"n])*)"\} 1)re");
  size_t samples = 0;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    ASSERT_NE(end, std::string::npos) << "unterminated last line";
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.starts_with("#")) continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, sample)) << line.substr(0, 200);
    EXPECT_LE(m[1].length(), 2 * kMaxLabelValueBytes);  // escaped: at most doubled
    ++samples;
  }
  EXPECT_EQ(samples, 5u);
  EXPECT_TRUE(ValidUtf8(text));
  EXPECT_NE(text.find(R"(fw_ver="line one\nline two)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(say \"hi\" back\\slash)"), std::string::npos) << text;
}

TEST(MetricSinkBoundTest, help_text_is_valid_and_bounded) {
  // A passthrough statistic's HELP quotes the driver's (or a replay file's) raw name.
  const std::string help = "Driver statistic \"" + kInvalidUtf8 + kLong + "\"";
  const MetricDesc desc{"test_passthrough", help, MetricKind::kUntyped, {"netdev"}};
  MetricSink sink;
  sink.Add(desc, {{"netdev", "eth0"}}, 1);
  auto families = sink.TakeFamilies();
  ASSERT_EQ(families.size(), 1u);
  EXPECT_TRUE(ValidUtf8(families[0].help));
  EXPECT_LE(families[0].help.size(), kMaxLabelValueBytes);
  EXPECT_TRUE(families[0].help.ends_with(kTruncationMarker));
  const std::string text = RenderText(families);
  EXPECT_TRUE(ValidUtf8(text));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << "HELP, TYPE, one sample";
}

TEST(MetricSinkBoundTest, overlong_metric_names_are_rejected_and_counted) {
  const std::string name = "fabric_ethtool_" + std::string(10 * 1024, 'x');
  const MetricDesc desc{name, "A statistic with a 10 KB name.", MetricKind::kUntyped, {"netdev"}};
  EXPECT_FALSE(ValidateDesc(desc).ok());
  const std::string fits = "fabric_ethtool_" + std::string(kMaxMetricNameBytes - 15, 'x');
  EXPECT_TRUE(ValidateDesc({fits, "Fits.", MetricKind::kUntyped, {"netdev"}}).ok());
  MetricSink sink;
  sink.Add(desc, {{"netdev", "eth0"}}, 1);
  sink.Add(desc, {{"netdev", "eth1"}}, 1);
  EXPECT_EQ(sink.sample_count(), 0u);
  EXPECT_EQ(sink.error_count(), 2u);
  ASSERT_FALSE(sink.errors().empty());
  EXPECT_LE(sink.errors()[0].message().size(), 200u) << "the error does not quote 10 KB";
  EXPECT_TRUE(sink.TakeFamilies().empty());
}

TEST(HtmlEscapeTest, table) {
  EXPECT_EQ(HtmlEscape(kScript), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(HtmlEscape("a & b \"c\" 'd'"), "a &amp; b &quot;c&quot; &#39;d&#39;");
  EXPECT_EQ(HtmlEscape("&amp;"), "&amp;amp;");  // not unescaped first
  EXPECT_EQ(HtmlEscape("plain ünï ✓"), "plain ünï ✓");
  EXPECT_EQ(HtmlEscape("x\xffy"), "x\xef\xbf\xbdy");  // invalid UTF-8 → U+FFFD
}

detect::ActiveAnomaly HostileAnomaly() {
  detect::ActiveAnomaly a;
  a.detector = "link_flap";
  a.finding.severity = detect::Severity::kWarning;
  a.finding.entity = {{"device", kScript}, {"port", kInvalidUtf8}, {"netdev", kQuotes}};
  a.finding.reason = kLong + kNewlines + kInvalidUtf8;
  a.finding.evidence = {{"flaps", 3}};
  a.started = a.updated = std::chrono::system_clock::now();
  return a;
}

TEST(AnomaliesJsonTest, hostile_strings_give_valid_json) {
  const std::string body = AnomaliesJson({HostileAnomaly()});
  EXPECT_TRUE(ValidUtf8(body));
  nlohmann::json parsed;
  ASSERT_NO_THROW(parsed = nlohmann::json::parse(body));
  const auto& a = parsed.at("anomalies").at(0);
  EXPECT_EQ(a.at("entity").at("device"), kScript);  // JSON carries it as data, escaped by JSON
  EXPECT_EQ(a.at("entity").at("netdev"), kQuotes);
  EXPECT_NE(a.at("entity").at("port").get<std::string>().find("\xef\xbf\xbd"), std::string::npos);
}

TEST(LinkEventsJsonTest, invalid_utf8_netdev_gives_valid_json) {
  sys::LinkEventLog log;
  log.Record({.time = std::chrono::system_clock::now(),
              .ifindex = 3,
              .netdev = "eth\xff\"<b>",
              .carrier_up = true,
              .operstate = "up\n\xc3",
              .inferred = false});
  const std::string body = LinkEventsJson(&log, nullptr, 16);
  nlohmann::json parsed;
  ASSERT_NO_THROW(parsed = nlohmann::json::parse(body));
  EXPECT_EQ(parsed.at("events").at(0).at("netdev"), "eth\xef\xbf\xbd\"<b>");
}

}  // namespace
}  // namespace fabricwatch::exporter
