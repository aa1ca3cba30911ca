// The status page's HTML (exporter/pages/status_html.h): hostile strings in every field of the
// model stay text (issue 25: "<script>, quotes and invalid UTF-8 in every string field"), the
// page's Content-Security-Policy hashes match the style and script it carries, and a page before
// the first sample says it is waiting.

#include "exporter/pages/status_html.h"

#include <gtest/gtest.h>

#include <regex>

#include "base/metric_sink.h"
#include "exporter/pages/status_assets.h"

namespace fabricwatch::exporter::status {
namespace {

using namespace std::chrono_literals;

const std::string kScript = "<script>alert(1)</script>";
const std::string kAttribute = "x\" onmouseover=\"alert(2)";
const std::string kSingle = "y' onclick='alert(3)";
const std::string kInvalidUtf8 = "bad \xff\xfe \xc3( \xed\xa0\x80 end\xc3";
const std::string kLong = std::string(10 * 1024, 'A');
// Every hostile string a field gets: markup, a double and a single quote breaking out of an
// attribute, invalid UTF-8, and (in some fields) 10 KB.
const std::string kHostile = kScript + kAttribute + kSingle + kInvalidUtf8 + "<b>&amp;";

const detect::TimePoint kNow = detect::TimePoint{} + std::chrono::hours(24 * 20000);

bool ValidUtf8(std::string_view s) { return SanitizeUtf8(s) == s; }

size_t Count(const std::string& text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

PortRow ActivePort(std::string device, std::string netdev) {
  PortRow p;
  p.device = std::move(device);
  p.port = "1";
  p.netdev = std::move(netdev);
  p.state = 4;
  return p;
}

Reading HostileReading() {
  return Reading{.value = 1, .abnormal = true, .why = kHostile, .detail = kHostile};
}

StatusModel HostileModel() {
  StatusModel m;
  m.hostname = kHostile;
  m.sysfs_root = kHostile;
  m.now = kNow;
  m.uptime_seconds = 3600;
  m.waiting_for_samples = false;
  m.collectors_pending = {kHostile};
  CollectorRow c;
  c.name = kHostile;
  c.health.has_run = true;
  c.health.last_status = Status(StatusCode::kInvalidArgument, kLong + kHostile);
  c.age_seconds = 2;
  c.privileges_missing = {kHostile};
  m.collectors = {c};
  PortRow p{.device = kHostile,
            .port = kHostile,
            .netdev = kHostile,
            .link_layer = kHostile,
            .state = 1,
            .state_abnormal = true,
            .state_why = kHostile,
            .rate_gbps = HostileReading(),
            .width = HostileReading(),
            .ber = HostileReading(),
            .pfc_pause = HostileReading(),
            .temperature_celsius = HostileReading(),
            .rx_power_dbm = HostileReading(),
            .peer_name = kHostile,
            .peer_port = kHostile,
            .peer_source = kHostile,
            .jobs = {kHostile},
            .anomalies = {kHostile},
            .abnormal = true};
  m.ports = {p};
  detect::ActiveAnomaly a;
  a.detector = kHostile;
  a.finding.severity = detect::Severity::kCritical;
  a.finding.entity = {{kHostile, kHostile}};
  a.finding.reason = kLong + kHostile;
  a.finding.evidence = {{kHostile, 1}};
  a.finding.log = {{.time = kNow, .text = kHostile}};
  a.finding.peer = kHostile;
  a.finding.jobs = {kHostile};
  a.started = kNow - 10s;
  m.anomalies = {a};
  detect::AnomalyTransition t{
      .detector = kHostile, .raised = true, .time = kNow, .started = kNow, .finding = a.finding};
  m.transitions = {t};
  m.events = {{.time = kNow, .subject = kHostile, .what = kHostile, .bad = true}};
  m.topology.gpus = {kHostile};
  m.topology.nics = {kHostile};
  m.topology.level[{kHostile, kHostile}] = 10;
  m.topology.nearest.insert({kHostile, kHostile});
  return m;
}

TEST(StatusHtmlTest, hostile_strings_in_every_field_stay_text) {
  const std::string page = RenderStatusPage(HostileModel());
  // The one <script> is the page's own.
  EXPECT_EQ(Count(page, "<script"), 1u);
  EXPECT_NE(page.find("<script>" + std::string(kStatusScript) + "</script>"), std::string::npos);
  EXPECT_EQ(page.find("<b>"), std::string::npos);
  EXPECT_EQ(page.find("onmouseover=\""), std::string::npos);
  EXPECT_EQ(page.find("onclick='"), std::string::npos);
  EXPECT_NE(page.find("&lt;b&gt;&amp;amp;"), std::string::npos);  // escaped once, as text
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;x&quot; onmouseover=&quot;"),
            std::string::npos);
  EXPECT_NE(page.find("y&#39; onclick=&#39;"), std::string::npos);
  EXPECT_TRUE(ValidUtf8(page));
  EXPECT_NE(page.find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD where the bad bytes were
  // The 10 KB status and reason are cut like label values.
  EXPECT_EQ(page.find(std::string(kMaxLabelValueBytes + 1, 'A')), std::string::npos);
  // Every field reached the page: the escaped hostile text appears once per field or more.
  EXPECT_GE(Count(page, "&lt;script&gt;alert(1)"), 40u);
}

TEST(StatusHtmlTest, abnormal_values_carry_a_text_mark_not_only_a_colour) {
  StatusModel m = HostileModel();
  m.ports[0] = ActivePort("mlx5_3", "eth3");
  m.ports[0].temperature_celsius = {
      .value = 82, .abnormal = true, .why = "\u2265 high warning 70 °C", .detail = ""};
  m.ports[0].abnormal = true;
  const std::string page = RenderStatusPage(m);
  EXPECT_NE(page.find("data-port=\"mlx5_3/1\" data-netdev=\"eth3\" data-status=\"abnormal\"><td "
                      "class=\"bad st\">\u26a0 abnormal</td>"),
            std::string::npos);
  EXPECT_NE(
      page.find("<td class=\"bad\">\u26a0 82.0 °C<small>\u2265 high warning 70 °C</small></td>"),
      std::string::npos);
}

TEST(StatusHtmlTest, policy_hashes_are_those_of_the_inline_style_and_script) {
  const std::string page = RenderStatusPage(HostileModel());
  const auto headers = StatusPageHeaders();
  ASSERT_EQ(headers.size(), 1u);
  EXPECT_EQ(headers[0].first, "Content-Security-Policy");
  const std::string& policy = headers[0].second;
  auto between = [&](const std::string& open, const std::string& close) {
    const size_t start = page.find(open) + open.size();
    return page.substr(start, page.find(close, start) - start);
  };
  EXPECT_NE(policy.find("style-src " + CspHashSource(between("<style>", "</style>")) + ";"),
            std::string::npos);
  EXPECT_NE(policy.find("script-src " + CspHashSource(between("<script>", "</script>")) + ";"),
            std::string::npos);
  EXPECT_TRUE(policy.starts_with("default-src 'none';"));
  EXPECT_NE(policy.find("connect-src 'self'"), std::string::npos);
  // SHA-256 of "" in base64 (FIPS 180-4 test vector): the encoding, checked once.
  EXPECT_EQ(CspHashSource(""), "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='");
}

TEST(StatusHtmlTest, before_the_first_sample_the_page_says_it_is_waiting) {
  StatusModel m;
  m.hostname = "gpu-node-17";
  m.now = kNow;
  const std::string page = RenderStatusPage(m);
  EXPECT_NE(page.find("Waiting for the first samples"), std::string::npos);
  EXPECT_NE(page.find("data-state=\"wait\""), std::string::npos);
  EXPECT_EQ(page.find("OK:"), std::string::npos);
  EXPECT_EQ(page.find("None.</p>"), std::string::npos);
}

TEST(StatusHtmlTest, a_node_with_nothing_wrong_says_ok) {
  StatusModel m;
  m.hostname = "gpu-node-17";
  m.now = kNow;
  m.waiting_for_samples = false;
  m.ports = {ActivePort("mlx5_0", "eth0")};
  const std::string page = RenderStatusPage(m);
  EXPECT_NE(page.find("data-state=\"ok\">\u2713 OK: no active anomaly; all 1 ports as expected."),
            std::string::npos);
}

TEST(StatusHtmlTest, ages_read_as_an_on_call_says_them) {
  EXPECT_EQ(AgeText(12.4), "12s");
  EXPECT_EQ(AgeText(312), "5m 12s");
  EXPECT_EQ(AgeText(7500), "2h 5m");
  EXPECT_EQ(AgeText(3 * 86400 + 4 * 3600 + 59), "3d 4h");
  EXPECT_EQ(AgeText(-3), "0s");  // a clock step back
}

}  // namespace
}  // namespace fabricwatch::exporter::status
