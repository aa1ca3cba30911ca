#include "exporter/render.h"

#include <zlib.h>

#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/metric_family.h>
#include <prometheus/metric_type.h>

namespace fabricwatch::exporter {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

prometheus::MetricFamily Family(std::string name, std::string help, prometheus::MetricType type,
                                std::vector<std::pair<Labels, double>> samples) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  for (const auto& [labels, value] : samples) {
    prometheus::ClientMetric metric;
    for (const auto& [n, v] : labels) metric.label.push_back({n, v});
    if (type == prometheus::MetricType::Counter) {
      metric.counter.value = value;
    } else {
      metric.gauge.value = value;
    }
    family.metric.push_back(std::move(metric));
  }
  return family;
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
