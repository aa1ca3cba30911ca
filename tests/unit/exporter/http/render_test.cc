#include "exporter/http/render.h"

#include <gtest/gtest.h>
#include <prometheus/metric_family.h>
#include <prometheus/metric_type.h>
#include <prometheus/text_serializer.h>
#include <zlib.h>

#include <algorithm>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/testing/families.h"

namespace fabricwatch::exporter {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

prometheus::MetricFamily Family(std::string name, std::string help, prometheus::MetricType type,
                                std::vector<std::pair<Labels, double>> samples) {
  return fabricwatch::testing::MakeFamily(std::move(name), type, std::move(samples),
                                          std::move(help));
}

size_t Count(std::string_view text, std::string_view needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string_view::npos;
       pos = text.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

// Inflates a gzip stream (windowBits 15 + 16: gzip header and trailer required).
bool Gunzip(std::string_view compressed, std::string& out) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK) return false;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  out.clear();
  char buf[16384];
  int rc;
  do {
    stream.next_out = reinterpret_cast<Bytef*>(buf);
    stream.avail_out = sizeof(buf);
    rc = inflate(&stream, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&stream);
      return false;
    }
    out.append(buf, sizeof(buf) - stream.avail_out);
  } while (rc != Z_STREAM_END);
  const bool consumed_all = stream.avail_in == 0;
  inflateEnd(&stream);
  return consumed_all;
}

// ---------------------------------------------------------------- RenderText

TEST(RenderTextTest, renders_help_type_and_samples) {
  std::vector<prometheus::MetricFamily> families;
  families.push_back(Family("fabric_mtu_bytes", "MTU.", prometheus::MetricType::Gauge,
                            {{{{"netdev", "eth0"}}, 1500}}));
  families.push_back(Family("fabric_rx_bytes_total", "Bytes received.",
                            prometheus::MetricType::Counter, {{{{"netdev", "eth0"}}, 42}}));
  EXPECT_EQ(RenderText(std::move(families)),
            "# HELP fabric_mtu_bytes MTU.\n"
            "# TYPE fabric_mtu_bytes gauge\n"
            "fabric_mtu_bytes{netdev=\"eth0\"} 1500\n"
            "# HELP fabric_rx_bytes_total Bytes received.\n"
            "# TYPE fabric_rx_bytes_total counter\n"
            "fabric_rx_bytes_total{netdev=\"eth0\"} 42\n");
}

TEST(RenderTextTest, empty_input_renders_nothing) { EXPECT_EQ(RenderText({}), ""); }

TEST(RenderTextTest, merges_families_of_the_same_name) {
  std::vector<prometheus::MetricFamily> families;
  families.push_back(Family("fabric_port_state", "Port state.", prometheus::MetricType::Gauge,
                            {{{{"device", "mlx5_0"}}, 4}}));
  families.push_back(Family("fabric_mtu_bytes", "MTU.", prometheus::MetricType::Gauge,
                            {{{{"netdev", "eth0"}}, 1500}}));
  families.push_back(Family("fabric_port_state", "Port state.", prometheus::MetricType::Gauge,
                            {{{{"device", "mlx5_1"}}, 1}, {{{"device", "mlx5_2"}}, 2}}));
  const std::string text = RenderText(std::move(families));
  EXPECT_EQ(Count(text, "# HELP fabric_port_state "), 1u) << text;
  EXPECT_EQ(Count(text, "# TYPE fabric_port_state "), 1u) << text;
  EXPECT_EQ(text,
            "# HELP fabric_mtu_bytes MTU.\n"
            "# TYPE fabric_mtu_bytes gauge\n"
            "fabric_mtu_bytes{netdev=\"eth0\"} 1500\n"
            "# HELP fabric_port_state Port state.\n"
            "# TYPE fabric_port_state gauge\n"
            "fabric_port_state{device=\"mlx5_0\"} 4\n"
            "fabric_port_state{device=\"mlx5_1\"} 1\n"
            "fabric_port_state{device=\"mlx5_2\"} 2\n");
}

TEST(RenderTextTest, sorts_families_by_name) {
  std::vector<prometheus::MetricFamily> families;
  for (const char* name : {"process_open_fds", "fabric_b", "fabricwatch_build_info", "fabric_a"}) {
    families.push_back(Family(name, "h", prometheus::MetricType::Gauge, {{{}, 1}}));
  }
  const std::string text = RenderText(std::move(families));
  const size_t a = text.find("# HELP fabric_a ");
  const size_t b = text.find("# HELP fabric_b ");
  const size_t build = text.find("# HELP fabricwatch_build_info ");
  const size_t fds = text.find("# HELP process_open_fds ");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(build, std::string::npos);
  ASSERT_NE(fds, std::string::npos);
  EXPECT_LT(a, b);
  EXPECT_LT(b, build);
  EXPECT_LT(build, fds);
}

TEST(RenderTextTest, escapes_label_values) {
  struct Case {
    std::string value;
    std::string rendered;
  };
  const Case cases[] = {
      {"plain", "plain"},
      {"say \"hi\"", "say \\\"hi\\\""},
      {"C:\\path", "C:\\\\path"},
      {"two\nlines", "two\\nlines"},
      {"all \\ \" \n", "all \\\\ \\\" \\n"},
      {"caf\xc3\xa9", "caf\xc3\xa9"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.value);
    std::vector<prometheus::MetricFamily> families;
    families.push_back(Family("fabric_netdev_info", "Facts.", prometheus::MetricType::Gauge,
                              {{{{"ifalias", c.value}}, 1}}));
    const std::string text = RenderText(std::move(families));
    EXPECT_NE(text.find("fabric_netdev_info{ifalias=\"" + c.rendered + "\"} 1\n"),
              std::string::npos)
        << text;
    // Exactly three lines: an escaped newline never breaks a sample line.
    EXPECT_EQ(Count(text, "\n"), 3u) << text;
  }
}

// The direct renderer against prometheus-cpp's TextSerializer, which it replaced: the same bytes
// for every kind of family and for values that exercise each formatting path.
std::string Serialized(const std::vector<prometheus::MetricFamily>& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return std::move(out).str();
}

TEST(RenderTextTest, writes_what_text_serializer_writes) {
  const double values[] = {0.0,
                           -0.0,
                           1.0,
                           -3.5,
                           0.1,
                           0.30000000000000004,
                           1234567.0,
                           999999999999999.0,   // the largest integer of the short path
                           1e15,                // the first one past it
                           4000000000000001.0,  // 16 digits
                           9007199254740993.0,  // 2^53 + 1: not a double, rounds
                           18446744073709551615.0,
                           1e20,
                           1e-7,
                           123.456e-300,
                           5e-324,
                           std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity()};
  std::vector<prometheus::MetricFamily> families;
  for (prometheus::MetricType type :
       {prometheus::MetricType::Counter, prometheus::MetricType::Gauge,
        prometheus::MetricType::Untyped}) {
    prometheus::MetricFamily family;
    family.name = "fabric_value_" + std::to_string(static_cast<int>(type));
    family.help = "Values of every shape.";
    family.type = type;
    for (size_t i = 0; i < std::size(values); ++i) {
      prometheus::ClientMetric metric;
      metric.label = {{"device", "mlx5_" + std::to_string(i)}, {"note", "a \"b\" \\c\nd"}};
      metric.counter.value = metric.gauge.value = metric.untyped.value = values[i];
      if (i == 3) metric.timestamp_ms = 1700000000123;
      family.metric.push_back(metric);
    }
    prometheus::ClientMetric unlabelled;
    unlabelled.gauge.value = unlabelled.counter.value = unlabelled.untyped.value = 7;
    family.metric.push_back(unlabelled);
    families.push_back(std::move(family));
  }
  prometheus::MetricFamily histogram;
  histogram.name = "fabric_latency_seconds";
  histogram.help = "A histogram.";
  histogram.type = prometheus::MetricType::Histogram;
  prometheus::ClientMetric h;
  h.label = {{"op", "read"}};
  h.histogram.sample_count = 12;
  h.histogram.sample_sum = 0.25;
  h.histogram.bucket = {{.cumulative_count = 3, .upper_bound = 0.005},
                        {.cumulative_count = 10, .upper_bound = 1}};
  histogram.metric.push_back(h);
  prometheus::ClientMetric h_inf;  // ends with +Inf itself: no extra bucket
  h_inf.histogram.sample_count = 2;
  h_inf.histogram.bucket = {
      {.cumulative_count = 2, .upper_bound = std::numeric_limits<double>::infinity()}};
  histogram.metric.push_back(h_inf);
  families.push_back(std::move(histogram));
  prometheus::MetricFamily summary;
  summary.name = "fabric_size_bytes";
  summary.help = "A summary.";
  summary.type = prometheus::MetricType::Summary;
  prometheus::ClientMetric q;
  q.summary.sample_count = 5;
  q.summary.sample_sum = 1e6;
  q.summary.quantile = {{.quantile = 0.5, .value = 10}, {.quantile = 0.99, .value = 0.125}};
  summary.metric.push_back(q);
  families.push_back(std::move(summary));
  prometheus::MetricFamily no_help;
  no_help.name = "fabric_no_help";
  no_help.type = prometheus::MetricType::Gauge;
  no_help.metric.emplace_back().gauge.value = 1;
  families.push_back(std::move(no_help));

  // TextSerializer neither sorts nor merges: give it the order RenderText produces.
  std::vector<prometheus::MetricFamily> sorted = families;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  EXPECT_EQ(RenderText(families), Serialized(sorted));
}

TEST(RenderTextTest, escapes_help_text_as_the_format_requires) {
  std::vector<prometheus::MetricFamily> families;
  families.push_back(
      Family("fabric_x", "one \\ two\nthree \"q\"", prometheus::MetricType::Gauge, {{{}, 1}}));
  EXPECT_EQ(RenderText(families),
            "# HELP fabric_x one \\\\ two\\nthree \"q\"\n"
            "# TYPE fabric_x gauge\n"
            "fabric_x 1\n");
}

TEST(RenderTextTest, appends_to_what_the_string_holds) {
  prometheus::MetricFamily a = Family("fabric_b", "B.", prometheus::MetricType::Gauge, {{{}, 2}});
  prometheus::MetricFamily b = Family("fabric_a", "A.", prometheus::MetricType::Gauge, {{{}, 1}});
  std::vector<const prometheus::MetricFamily*> families = {&a, &b};
  std::string out = "# prefix\n";
  AppendExposition(families, out);
  EXPECT_EQ(out,
            "# prefix\n"
            "# HELP fabric_a A.\n# TYPE fabric_a gauge\nfabric_a 1\n"
            "# HELP fabric_b B.\n# TYPE fabric_b gauge\nfabric_b 2\n");
}

// ---------------------------------------------------------------- Gzip

TEST(GzipTest, round_trips_empty_input) {
  auto compressed = Gzip("");
  ASSERT_TRUE(compressed.has_value()) << compressed.error().ToString();
  ASSERT_GE(compressed->size(), 18u);  // 10-byte header + empty deflate + 8-byte trailer
  EXPECT_EQ(static_cast<unsigned char>((*compressed)[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>((*compressed)[1]), 0x8b);
  std::string out = "not empty";
  ASSERT_TRUE(Gunzip(*compressed, out));
  EXPECT_EQ(out, "");
}

TEST(GzipTest, round_trips_one_megabyte) {
  // Half compressible exposition text, half pseudo-random bytes.
  std::string data;
  while (data.size() < 512 * 1024) {
    data += "fabric_netdev_receive_bytes_total{netdev=\"eth" + std::to_string(data.size() % 97) +
            "\"} " + std::to_string(data.size()) + "\n";
  }
  std::mt19937 rng(42);
  while (data.size() < 1024 * 1024) data.push_back(static_cast<char>(rng() & 0xff));
  data.resize(1024 * 1024);

  auto compressed = Gzip(data);
  ASSERT_TRUE(compressed.has_value()) << compressed.error().ToString();
  EXPECT_EQ(static_cast<unsigned char>((*compressed)[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>((*compressed)[1]), 0x8b);
  EXPECT_LT(compressed->size(), data.size());
  std::string out;
  ASSERT_TRUE(Gunzip(*compressed, out));
  EXPECT_EQ(out.size(), data.size());
  EXPECT_TRUE(out == data);
}

TEST(GzipTest, round_trips_incompressible_input) {
  std::mt19937 rng(7);
  std::string data(200'000, '\0');
  for (char& c : data) c = static_cast<char>(rng() & 0xff);
  auto compressed = Gzip(data);
  ASSERT_TRUE(compressed.has_value()) << compressed.error().ToString();
  std::string out;
  ASSERT_TRUE(Gunzip(*compressed, out));
  EXPECT_TRUE(out == data);
}

// ---------------------------------------------------------------- AcceptsGzip

TEST(AcceptsGzipTest, table) {
  struct Case {
    std::string_view header;
    bool accepts;
  };
  const Case cases[] = {
      {"gzip", true},
      {"GZIP", true},
      {"x-gzip", true},
      {"deflate, gzip;q=1.0", true},
      {"gzip, deflate, br", true},
      {"br, x-gzip", true},
      {" gzip ", true},
      {"gzip;q=0.5", true},
      {"gzip; q=0.001", true},
      {"gzip;q=0", false},
      {"gzip; q=0.0", false},
      {"gzip;q=0.000", false},
      {"GZIP;Q=0", false},
      {"deflate, gzip;q=0", false},
      {"identity", false},
      {"deflate, br", false},
      {"gzipx", false},
      {"", false},
      // A wildcard would allow gzip per RFC 9110, but the exporter compresses only when the
      // client names gzip explicitly (as Prometheus does); "*" alone gets plain text.
      {"*", false},
      {"identity, *;q=0.5", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("Accept-Encoding: \"" + std::string(c.header) + "\"");
    EXPECT_EQ(AcceptsGzip(c.header), c.accepts);
  }
}

}  // namespace
}  // namespace fabricwatch::exporter
