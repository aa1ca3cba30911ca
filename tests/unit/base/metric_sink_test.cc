#include "base/metric_sink.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/metric_family.h>
#include <prometheus/metric_type.h>

namespace fabricwatch {
namespace {

// The sink keeps pointers to descriptors: every one used with a sink has static storage.
constexpr MetricDesc kRxBytes{"test_receive_bytes_total", "Bytes received.", MetricKind::kCounter,
                              {"netdev"}};
constexpr MetricDesc kMtu{"test_mtu_bytes", "MTU.", MetricKind::kGauge, {"netdev"}};
constexpr MetricDesc kInfo{"test_netdev_info", "Facts. Constant 1.", MetricKind::kInfo,
                           {"netdev", "driver"}};
constexpr MetricDesc kNoLabels{"test_up", "Always there.", MetricKind::kGauge, {}};
constexpr MetricDesc kTwoLabels{"test_port_state", "Port state.", MetricKind::kGauge,
                                {"device", "port"}};
// Same name as kMtu, different HELP.
constexpr MetricDesc kMtuOtherHelp{"test_mtu_bytes", "Another HELP.", MetricKind::kGauge,
                                   {"netdev"}};
// Same name as kMtu, same HELP, different kind.
constexpr MetricDesc kMtuOtherKind{"test_mtu_bytes", "MTU.", MetricKind::kInfo, {"netdev"}};
// Same name, HELP and kind as kMtu, but a distinct object (e.g. declared in two places).
constexpr MetricDesc kMtuTwin{"test_mtu_bytes", "MTU.", MetricKind::kGauge, {"netdev"}};
// Same name, HELP and kind as kMtu, but a label the naming contract forbids.
constexpr MetricDesc kMtuTwinTypeLabel{"test_mtu_bytes", "MTU.", MetricKind::kGauge, {"type"}};
// Invalid descriptors.
constexpr MetricDesc kBadCounter{"test_drops", "Drops.", MetricKind::kCounter, {"netdev"}};
constexpr MetricDesc kBadName{"test-bad-name", "Bad.", MetricKind::kGauge, {}};
constexpr MetricDesc kTypeLabel{"test_typed", "Typed.", MetricKind::kGauge, {"type"}};

// ---------------------------------------------------------------- ValidateDesc

struct DescCase {
  MetricDesc desc;
  bool valid;
  std::string_view message_part;  // for invalid ones
};

constexpr DescCase kDescCases[] = {
    {{"fabric_rx_bytes_total", "h", MetricKind::kCounter, {"netdev"}}, true, ""},
    {{"fabric_mtu_bytes", "h", MetricKind::kGauge, {"netdev"}}, true, ""},
    {{"fabric_netdev_info", "h", MetricKind::kInfo, {"netdev", "driver"}}, true, ""},
    {{"fabric_up", "h", MetricKind::kGauge, {}}, true, ""},
    {{"fabric:recorded_rule", "h", MetricKind::kGauge, {}}, true, ""},
    {{"_leading_underscore", "h", MetricKind::kGauge, {"_x"}}, true, ""},
    // Suffix rules.
    {{"fabric_rx_bytes", "h", MetricKind::kCounter, {}}, false, "must end in _total"},
    {{"fabric_total_bytes", "h", MetricKind::kCounter, {}}, false, "must end in _total"},
    {{"fabric_mtu_total", "h", MetricKind::kGauge, {}}, false, "must not end in _total"},
    {{"fabric_x_info_total", "h", MetricKind::kInfo, {}}, false, "must not end in _total"},
    {{"fabric_netdev", "h", MetricKind::kInfo, {}}, false, "must end in _info"},
    {{"fabric_info_x", "h", MetricKind::kInfo, {}}, false, "must end in _info"},
    // Metric names.
    {{"", "h", MetricKind::kGauge, {}}, false, "invalid metric name"},
    {{"1fabric", "h", MetricKind::kGauge, {}}, false, "invalid metric name"},
    {{"fabric-mtu", "h", MetricKind::kGauge, {}}, false, "invalid metric name"},
    {{"fabric mtu", "h", MetricKind::kGauge, {}}, false, "invalid metric name"},
    {{"fabric_mtü", "h", MetricKind::kGauge, {}}, false, "invalid metric name"},
    // Label names.
    {{"fabric_a", "h", MetricKind::kGauge, {"net-dev"}}, false, "invalid label name \"net-dev\""},
    {{"fabric_a", "h", MetricKind::kGauge, {"1port"}}, false, "invalid label name \"1port\""},
    {{"fabric_a", "h", MetricKind::kGauge, {"a:b"}}, false, "invalid label name \"a:b\""},
    {{"fabric_a", "h", MetricKind::kGauge, {""}}, false, "invalid label name"},
    {{"fabric_a", "h", MetricKind::kGauge, {"netdev", "type"}}, false,
     "label named \"type\" is not allowed"},
    {{"fabric_a", "h", MetricKind::kGauge, {"netdev", "port", "netdev"}}, false,
     "duplicate label \"netdev\""},
    // HELP.
    {{"fabric_a", "", MetricKind::kGauge, {}}, false, "has no HELP text"},
};

TEST(ValidateDescTest, rules_table) {
  for (const DescCase& c : kDescCases) {
    SCOPED_TRACE(std::string(c.desc.name));
    const Status status = ValidateDesc(c.desc);
    if (c.valid) {
      EXPECT_TRUE(status.ok()) << status.ToString();
      continue;
    }
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find(c.message_part), std::string::npos) << status.message();
  }
}

TEST(ValidateDescTest, message_names_the_metric) {
  const Status status = ValidateDesc(kBadCounter);
  EXPECT_EQ(status.message(), "counter test_drops must end in _total");
  EXPECT_EQ(ValidateDesc(kTypeLabel).message(),
            "metric test_typed: a label named \"type\" is not allowed");
}

// ---------------------------------------------------------------- MetricSink helpers

const prometheus::MetricFamily* FindFamily(const std::vector<prometheus::MetricFamily>& families,
                                           std::string_view name) {
  for (const auto& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> Labels(const prometheus::ClientMetric& metric) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& label : metric.label) out.emplace_back(label.name, label.value);
  return out;
}

using LabelVector = std::vector<std::pair<std::string, std::string>>;

// ---------------------------------------------------------------- MetricSink

TEST(MetricSinkTest, valid_samples_become_typed_families) {
  MetricSink sink;
  sink.Add(kRxBytes, {{"netdev", "eth0"}}, 1234);
  sink.Add(kRxBytes, {{"netdev", "eth1"}}, 5678);
  sink.Add(kMtu, {{"netdev", "eth0"}}, 1500);
  sink.AddInfo(kInfo, {{"netdev", "eth0"}, {"driver", "mlx5_core"}});
  sink.Add(kNoLabels, {}, 1);
  EXPECT_EQ(sink.error_count(), 0u);
  EXPECT_TRUE(sink.errors().empty());
  EXPECT_EQ(sink.sample_count(), 5u);

  const std::vector<prometheus::MetricFamily> families = sink.TakeFamilies();
  ASSERT_EQ(families.size(), 4u);

  const auto* rx = FindFamily(families, "test_receive_bytes_total");
  ASSERT_NE(rx, nullptr);
  EXPECT_EQ(rx->help, "Bytes received.");
  EXPECT_EQ(rx->type, prometheus::MetricType::Counter);
  ASSERT_EQ(rx->metric.size(), 2u);
  EXPECT_EQ(Labels(rx->metric[0]), (LabelVector{{"netdev", "eth0"}}));
  EXPECT_DOUBLE_EQ(rx->metric[0].counter.value, 1234);
  EXPECT_EQ(Labels(rx->metric[1]), (LabelVector{{"netdev", "eth1"}}));
  EXPECT_DOUBLE_EQ(rx->metric[1].counter.value, 5678);

  const auto* mtu = FindFamily(families, "test_mtu_bytes");
  ASSERT_NE(mtu, nullptr);
  EXPECT_EQ(mtu->type, prometheus::MetricType::Gauge);
  ASSERT_EQ(mtu->metric.size(), 1u);
  EXPECT_DOUBLE_EQ(mtu->metric[0].gauge.value, 1500);

  const auto* info = FindFamily(families, "test_netdev_info");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->type, prometheus::MetricType::Gauge);  // info metrics are gauges of value 1
  ASSERT_EQ(info->metric.size(), 1u);
  EXPECT_EQ(Labels(info->metric[0]),
            (LabelVector{{"netdev", "eth0"}, {"driver", "mlx5_core"}}));
  EXPECT_DOUBLE_EQ(info->metric[0].gauge.value, 1);

  const auto* up = FindFamily(families, "test_up");
  ASSERT_NE(up, nullptr);
  ASSERT_EQ(up->metric.size(), 1u);
  EXPECT_TRUE(up->metric[0].label.empty());
}

TEST(MetricSinkTest, families_keep_first_use_order) {
  MetricSink sink;
  sink.Add(kMtu, {{"netdev", "eth0"}}, 1500);
  sink.Add(kRxBytes, {{"netdev", "eth0"}}, 1);
  sink.Add(kMtu, {{"netdev", "eth1"}}, 9000);
  auto families = sink.TakeFamilies();
  ASSERT_EQ(families.size(), 2u);
  EXPECT_EQ(families[0].name, "test_mtu_bytes");
  EXPECT_EQ(families[0].metric.size(), 2u);
  EXPECT_EQ(families[1].name, "test_receive_bytes_total");
}

TEST(MetricSinkTest, span_overload_adds_samples) {
  MetricSink sink;
  const std::vector<LabelPair> labels = {{"device", "mlx5_0"}, {"port", "1"}};
  sink.Add(kTwoLabels, std::span<const LabelPair>(labels), 4);
  auto families = sink.TakeFamilies();
  ASSERT_EQ(families.size(), 1u);
  ASSERT_EQ(families[0].metric.size(), 1u);
  EXPECT_EQ(Labels(families[0].metric[0]), (LabelVector{{"device", "mlx5_0"}, {"port", "1"}}));
  EXPECT_DOUBLE_EQ(families[0].metric[0].gauge.value, 4);
}

TEST(MetricSinkTest, bad_desc_is_dropped_and_counted) {
  MetricSink sink;
  sink.Add(kBadCounter, {{"netdev", "eth0"}}, 1);
  EXPECT_EQ(sink.error_count(), 1u);
  ASSERT_EQ(sink.errors().size(), 1u);
  EXPECT_EQ(sink.errors()[0].code(), StatusCode::kInvalidArgument);
  EXPECT_NE(sink.errors()[0].message().find("test_drops"), std::string::npos);
  EXPECT_NE(sink.errors()[0].message().find("_total"), std::string::npos);

  // Every further sample of the rejected desc is counted, the message is not repeated.
  sink.Add(kBadCounter, {{"netdev", "eth1"}}, 2);
  EXPECT_EQ(sink.error_count(), 2u);
  EXPECT_EQ(sink.errors().size(), 1u);

  sink.Add(kBadName, {}, 1);
  sink.Add(kTypeLabel, {{"type", "x"}}, 1);
  EXPECT_EQ(sink.error_count(), 4u);
  ASSERT_EQ(sink.errors().size(), 3u);
  EXPECT_NE(sink.errors()[1].message().find("invalid metric name"), std::string::npos);
  EXPECT_NE(sink.errors()[2].message().find("\"type\""), std::string::npos);

  sink.Add(kMtu, {{"netdev", "eth0"}}, 1500);
  EXPECT_EQ(sink.sample_count(), 1u);
  auto families = sink.TakeFamilies();
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].name, "test_mtu_bytes");
}

TEST(MetricSinkTest, labels_not_matching_desc_are_dropped_and_counted) {
  struct Case {
    std::string_view what;
    std::vector<LabelPair> labels;
  };
  const std::vector<Case> cases = {
      {"no labels", {}},
      {"too few", {{"device", "mlx5_0"}}},
      {"too many", {{"device", "mlx5_0"}, {"port", "1"}, {"extra", "x"}}},
      {"wrong name", {{"device", "mlx5_0"}, {"prot", "1"}}},
      {"wrong order", {{"port", "1"}, {"device", "mlx5_0"}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.what));
    MetricSink sink;
    sink.Add(kTwoLabels, std::span<const LabelPair>(c.labels), 1);
    EXPECT_EQ(sink.error_count(), 1u);
    ASSERT_EQ(sink.errors().size(), 1u);
    EXPECT_EQ(sink.errors()[0].code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(sink.errors()[0].message(),
              "metric test_port_state: labels differ from its descriptor");
    EXPECT_EQ(sink.sample_count(), 0u);
    // The family was declared but got no sample: it is not rendered.
    EXPECT_TRUE(sink.TakeFamilies().empty());
  }
}

TEST(MetricSinkTest, info_value_other_than_one_is_rejected) {
  const double values[] = {0, 2, -1, 0.5};
  for (double value : values) {
    SCOPED_TRACE(value);
    MetricSink sink;
    sink.Add(kInfo, {{"netdev", "eth0"}, {"driver", "mlx5_core"}}, value);
    EXPECT_EQ(sink.error_count(), 1u);
    ASSERT_EQ(sink.errors().size(), 1u);
    EXPECT_NE(sink.errors()[0].message().find("must have value 1"), std::string::npos);
    EXPECT_EQ(sink.sample_count(), 0u);
    EXPECT_TRUE(sink.TakeFamilies().empty());
  }
}

TEST(MetricSinkTest, duplicate_series_is_dropped_and_counted) {
  MetricSink sink;
  sink.Add(kMtu, {{"netdev", "eth0"}}, 1500);
  sink.Add(kMtu, {{"netdev", "eth0"}}, 9000);
  sink.Add(kNoLabels, {}, 1);
  sink.Add(kNoLabels, {}, 2);
  EXPECT_EQ(sink.error_count(), 2u);
  ASSERT_EQ(sink.errors().size(), 2u);
  EXPECT_EQ(sink.errors()[0].message(), "metric test_mtu_bytes: duplicate series dropped");
  EXPECT_EQ(sink.errors()[1].message(), "metric test_up: duplicate series dropped");
  EXPECT_EQ(sink.sample_count(), 2u);
  auto families = sink.TakeFamilies();
  const auto* mtu = FindFamily(families, "test_mtu_bytes");
  ASSERT_NE(mtu, nullptr);
  ASSERT_EQ(mtu->metric.size(), 1u);
  EXPECT_DOUBLE_EQ(mtu->metric[0].gauge.value, 1500);  // the first one wins
}

TEST(MetricSinkTest, label_values_are_not_confused_across_positions) {
  // ("ab", "c") and ("a", "bc") are different series.
  MetricSink sink;
  sink.Add(kTwoLabels, {{"device", "ab"}, {"port", "c"}}, 1);
  sink.Add(kTwoLabels, {{"device", "a"}, {"port", "bc"}}, 2);
  EXPECT_EQ(sink.error_count(), 0u);
  EXPECT_EQ(sink.sample_count(), 2u);
}

TEST(MetricSinkTest, same_name_with_different_help_or_kind_is_rejected) {
  const MetricDesc* conflicting[] = {&kMtuOtherHelp, &kMtuOtherKind};
  for (const MetricDesc* other : conflicting) {
    SCOPED_TRACE(std::string(other->help));
    MetricSink sink;
    sink.Add(kMtu, {{"netdev", "eth0"}}, 1500);
    sink.Add(*other, {{"netdev", "eth1"}}, 1);
    EXPECT_EQ(sink.error_count(), 1u);
    ASSERT_EQ(sink.errors().size(), 1u);
    EXPECT_NE(sink.errors()[0].message().find("test_mtu_bytes described twice"),
              std::string::npos)
        << sink.errors()[0].message();
    auto families = sink.TakeFamilies();
    ASSERT_EQ(families.size(), 1u);
    EXPECT_EQ(families[0].help, "MTU.");
    ASSERT_EQ(families[0].metric.size(), 1u);
    EXPECT_EQ(families[0].metric[0].label[0].value, "eth0");
  }
}

TEST(MetricSinkTest, identical_twin_desc_shares_the_family) {
  MetricSink sink;
  sink.Add(kMtu, {{"netdev", "eth0"}}, 1500);
  sink.Add(kMtuTwin, {{"netdev", "eth1"}}, 9000);
  EXPECT_EQ(sink.error_count(), 0u);
  auto families = sink.TakeFamilies();
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].metric.size(), 2u);
}

// Regression: MetricSink::FamilyFor once validated only the first descriptor of a family name. A second,
// distinct descriptor object with the same name, HELP and kind is accepted without ValidateDesc,
// so its labels (here the forbidden "type") reach the exposition.
TEST(MetricSinkTest, twin_desc_with_invalid_labels_is_rejected) {
  MetricSink sink;
  sink.Add(kMtu, {{"netdev", "eth0"}}, 1500);
  sink.Add(kMtuTwinTypeLabel, {{"type", "x"}}, 1);
  EXPECT_EQ(sink.error_count(), 1u);
  EXPECT_EQ(sink.sample_count(), 1u);
  auto families = sink.TakeFamilies();
  ASSERT_EQ(families.size(), 1u);
  for (const auto& metric : families[0].metric) {
    for (const auto& label : metric.label) EXPECT_NE(label.name, "type");
  }
}

TEST(MetricSinkTest, invalid_utf8_label_values_become_replacement_characters) {
  MetricSink sink;
  sink.Add(kMtu, {{"netdev", "eth\xff" "0"}}, 1500);
  sink.Add(kMtu, {{"netdev", "caf\xc3\xa9"}}, 9000);
  EXPECT_EQ(sink.error_count(), 0u);
  auto families = sink.TakeFamilies();
  ASSERT_EQ(families.size(), 1u);
  ASSERT_EQ(families[0].metric.size(), 2u);
  EXPECT_EQ(families[0].metric[0].label[0].value, "eth\xef\xbf\xbd" "0");
  EXPECT_EQ(families[0].metric[1].label[0].value, "caf\xc3\xa9");
}

TEST(MetricSinkTest, label_values_equal_after_sanitising_are_duplicates) {
  MetricSink sink;
  sink.Add(kMtu, {{"netdev", "x\xff"}}, 1);
  sink.Add(kMtu, {{"netdev", "x\xfe"}}, 2);
  EXPECT_EQ(sink.sample_count(), 1u);
  EXPECT_EQ(sink.error_count(), 1u);
}

TEST(MetricSinkTest, duplicates_are_found_among_many_series) {
  // Enough series to grow the duplicate index several times.
  MetricSink sink;
  for (int i = 0; i < 1000; ++i) {
    const std::string device = "mlx5_" + std::to_string(i);
    sink.Add(kTwoLabels, {{"device", device}, {"port", "1"}}, i);
    sink.Add(kMtu, {{"netdev", device}}, i);
  }
  for (int i = 0; i < 1000; i += 7) {
    sink.Add(kTwoLabels, {{"device", "mlx5_" + std::to_string(i)}, {"port", "1"}}, -1);
  }
  EXPECT_EQ(sink.sample_count(), 2000u);
  EXPECT_EQ(sink.error_count(), 143u);
  auto families = sink.TakeFamilies();
  const auto* ports = FindFamily(families, "test_port_state");
  ASSERT_NE(ports, nullptr);
  ASSERT_EQ(ports->metric.size(), 1000u);
  for (size_t i = 0; i < ports->metric.size(); ++i) {
    EXPECT_DOUBLE_EQ(ports->metric[i].gauge.value, static_cast<double>(i));
  }
}

TEST(MetricSinkTest, reset_starts_a_new_collection_with_counts_and_errors_from_zero) {
  MetricSink sink;
  sink.Add(kMtu, {{"netdev", "eth0"}}, 1500);
  sink.Add(kMtu, {{"netdev", "eth0"}}, 1500);  // duplicate
  sink.RecordError(Status(StatusCode::kNotFound, "port 2"));
  EXPECT_EQ(sink.TakeFamilies().size(), 1u);
  EXPECT_EQ(sink.sample_count(), 1u);  // still readable after TakeFamilies
  EXPECT_EQ(sink.error_count(), 2u);
  sink.Reset();
  EXPECT_EQ(sink.sample_count(), 0u);
  EXPECT_EQ(sink.error_count(), 0u);
  EXPECT_TRUE(sink.errors().empty());
  // The indexes of the last collection are forgotten: eth0 is no duplicate now.
  sink.Add(kMtu, {{"netdev", "eth0"}}, 9000);
  auto families = sink.TakeFamilies();
  ASSERT_EQ(families.size(), 1u);
  ASSERT_EQ(families[0].metric.size(), 1u);
  EXPECT_DOUBLE_EQ(families[0].metric[0].gauge.value, 9000);
}

TEST(MetricSinkTest, storage_of_an_earlier_collection_is_reused_in_place) {
  MetricSink sink;
  sink.Add(kNoLabels, {}, 1);
  sink.Add(kMtu, {{"netdev", "an-interface-name-longer-than-the-small-string-buffer"}}, 1500);
  sink.Add(kMtu, {{"netdev", "eth1"}}, 9000);
  auto first = sink.TakeFamilies();
  ASSERT_EQ(first.size(), 2u);
  const void* series_storage = first[1].metric.data();
  const void* long_value_storage = first[1].metric[0].label[0].value.data();

  sink.Reset(std::move(first));
  sink.Add(kNoLabels, {}, 1);
  sink.Add(kMtu, {{"netdev", "an-interface-name-longer-than-the-small-string-buffer"}}, 1400);
  sink.Add(kMtu, {{"netdev", "eth1"}}, 8000);
  auto second = sink.TakeFamilies();
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[1].metric.data(), series_storage);
  EXPECT_EQ(second[1].metric[0].label[0].value.data(), long_value_storage);
  EXPECT_DOUBLE_EQ(second[1].metric[0].gauge.value, 1400);
  EXPECT_DOUBLE_EQ(second[1].metric[1].gauge.value, 8000);
}

TEST(MetricSinkTest, duplicates_are_found_in_reused_storage) {
  // A collection that starts like its storage and then repeats a series, in every position.
  const std::vector<std::vector<std::string>> collections = {
      {"eth0", "eth1", "eth0"}, {"eth0", "eth1", "eth2", "eth1"}, {"eth0", "eth0"},
      {"eth1", "eth0", "eth1"}, {"eth0", "eth1", "eth2", "eth3", "eth2"}};
  for (const auto& names : collections) {
    MetricSink sink;
    for (const char* name : {"eth0", "eth1", "eth2"}) sink.Add(kMtu, {{"netdev", name}}, 1);
    sink.Reset(sink.TakeFamilies());
    std::vector<std::string> expected;
    for (const std::string& name : names) {
      sink.Add(kMtu, {{"netdev", name}}, 2);
      if (std::find(expected.begin(), expected.end(), name) == expected.end()) {
        expected.push_back(name);
      }
    }
    EXPECT_EQ(sink.error_count(), names.size() - expected.size());
    auto families = sink.TakeFamilies();
    ASSERT_EQ(families.size(), 1u);
    std::vector<std::string> got;
    for (const auto& metric : families[0].metric) got.push_back(metric.label.at(0).value);
    EXPECT_EQ(got, expected);
  }
}

TEST(MetricSinkTest, a_different_collection_in_reused_storage_is_taken_whole) {
  MetricSink sink;
  sink.Add(kMtu, {{"netdev", "eth0"}}, 1500);
  sink.Add(kMtu, {{"netdev", "eth1"}}, 9000);
  sink.Add(kNoLabels, {}, 1);
  sink.Add(kRxBytes, {{"netdev", "eth0"}}, 5);
  auto storage = sink.TakeFamilies();
  ASSERT_EQ(storage.size(), 3u);

  // Other families in another order, fewer series in one, more in another, a duplicate, a
  // family that gets no sample: nothing of the old collection may show through.
  sink.Reset(std::move(storage));
  sink.Add(kNoLabels, {}, 0);
  for (int i = 0; i < 40; ++i) sink.Add(kTwoLabels, {{"device", "mlx5_" + std::to_string(i)}, {"port", "1"}}, i);
  sink.Add(kTwoLabels, {{"device", "mlx5_3"}, {"port", "1"}}, -1);
  sink.Add(kMtu, {{"netdev", "eth7"}}, 1280);
  sink.Add(kRxBytes, {{"wrong", "eth0"}}, 5);  // declares the family, sample dropped
  EXPECT_EQ(sink.sample_count(), 42u);
  EXPECT_EQ(sink.error_count(), 2u);
  auto families = sink.TakeFamilies();
  ASSERT_EQ(families.size(), 3u);
  EXPECT_EQ(families[0].name, "test_up");
  EXPECT_EQ(families[0].type, prometheus::MetricType::Gauge);
  ASSERT_EQ(families[0].metric.size(), 1u);
  EXPECT_TRUE(families[0].metric[0].label.empty());
  EXPECT_DOUBLE_EQ(families[0].metric[0].gauge.value, 0);
  EXPECT_EQ(families[1].name, "test_port_state");
  ASSERT_EQ(families[1].metric.size(), 40u);
  ASSERT_EQ(families[1].metric[39].label.size(), 2u);
  EXPECT_EQ(families[1].metric[39].label[0].value, "mlx5_39");
  EXPECT_EQ(families[1].metric[39].label[1].name, "port");
  EXPECT_EQ(families[2].name, "test_mtu_bytes");
  ASSERT_EQ(families[2].metric.size(), 1u);
  ASSERT_EQ(families[2].metric[0].label.size(), 1u);
  EXPECT_EQ(families[2].metric[0].label[0].value, "eth7");
  EXPECT_DOUBLE_EQ(families[2].metric[0].gauge.value, 1280);
}

TEST(MetricSinkTest, a_collection_departing_from_the_previous_sequence_gets_its_own_families) {
  MetricSink sink;
  sink.Add(kNoLabels, {}, 1);
  sink.Add(kMtu, {{"netdev", "eth0"}}, 1500);
  sink.Add(kRxBytes, {{"netdev", "eth0"}}, 10);
  sink.Add(kMtu, {{"netdev", "eth1"}}, 9000);
  ASSERT_EQ(sink.TakeFamilies().size(), 3u);

  // Twice the same departure: the second collection follows the first one's sequence, so both
  // must come out the same. A twin descriptor, a family first seen later than before, a
  // duplicate at the end.
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    sink.Reset(sink.TakeFamilies());
    sink.Add(kNoLabels, {}, 2);
    sink.Add(kRxBytes, {{"netdev", "eth0"}}, 20);
    sink.Add(kMtuTwin, {{"netdev", "eth0"}}, 1400);
    sink.Add(kMtu, {{"netdev", "eth1"}}, 8000);
    sink.Add(kNoLabels, {}, 3);
    EXPECT_EQ(sink.sample_count(), 4u);
    EXPECT_EQ(sink.error_count(), 1u);
    auto families = sink.TakeFamilies();
    ASSERT_EQ(families.size(), 3u);
    EXPECT_EQ(families[0].name, "test_up");
    EXPECT_DOUBLE_EQ(families[0].metric.at(0).gauge.value, 2);
    EXPECT_EQ(families[1].name, "test_receive_bytes_total");
    EXPECT_DOUBLE_EQ(families[1].metric.at(0).counter.value, 20);
    EXPECT_EQ(families[2].name, "test_mtu_bytes");
    ASSERT_EQ(families[2].metric.size(), 2u);
    EXPECT_EQ(Labels(families[2].metric[0]), (LabelVector{{"netdev", "eth0"}}));
    EXPECT_DOUBLE_EQ(families[2].metric[0].gauge.value, 1400);
    EXPECT_EQ(Labels(families[2].metric[1]), (LabelVector{{"netdev", "eth1"}}));
    EXPECT_DOUBLE_EQ(families[2].metric[1].gauge.value, 8000);
    sink.Reset(std::move(families));
    sink.Add(kNoLabels, {}, 1);  // back to the first sequence's opening, then as in round 0
    sink.Add(kMtu, {{"netdev", "eth0"}}, 1500);
    sink.Add(kRxBytes, {{"netdev", "eth0"}}, 10);
    sink.Add(kMtu, {{"netdev", "eth1"}}, 9000);
  }
}

TEST(MetricSinkTest, a_descriptor_rebuilt_at_the_same_address_is_validated_again) {
  MetricDesc desc{"test_ok", "Fine.", MetricKind::kGauge, {}};
  MetricSink sink;
  sink.Add(desc, {}, 1);
  EXPECT_EQ(sink.error_count(), 0u);
  sink.Reset(sink.TakeFamilies());
  desc = MetricDesc{"test-not-a-name", "Bad.", MetricKind::kGauge, {}};
  sink.Add(desc, {}, 1);
  EXPECT_EQ(sink.error_count(), 1u);
  EXPECT_TRUE(sink.TakeFamilies().empty());
  sink.Reset();
  desc = MetricDesc{"test_ok", "Fine.", MetricKind::kGauge, {}};
  sink.Add(desc, {}, 1);
  EXPECT_EQ(sink.error_count(), 0u);
  EXPECT_EQ(sink.TakeFamilies().size(), 1u);
}

TEST(MetricSinkTest, storage_with_other_label_names_is_relabelled) {
  constexpr MetricDesc kByNetdev{"test_x", "X.", MetricKind::kGauge, {"netdev"}};
  constexpr MetricDesc kByDevice{"test_x", "X.", MetricKind::kGauge, {"device"}};
  MetricSink sink;
  sink.Add(kByNetdev, {{"netdev", "eth0"}}, 1);
  sink.Reset(sink.TakeFamilies());
  sink.Add(kByDevice, {{"device", "eth0"}}, 2);  // same name and value, another label name
  auto families = sink.TakeFamilies();
  ASSERT_EQ(families.size(), 1u);
  ASSERT_EQ(families[0].metric.size(), 1u);
  EXPECT_EQ(Labels(families[0].metric[0]), (LabelVector{{"device", "eth0"}}));
  EXPECT_DOUBLE_EQ(families[0].metric[0].gauge.value, 2);
}

TEST(MetricSinkTest, record_error_counts_and_remembers_the_first_few) {
  MetricSink sink;
  EXPECT_EQ(sink.error_count(), 0u);
  for (int i = 0; i < 20; ++i) {
    sink.RecordError(Status(StatusCode::kNotFound, "device " + std::to_string(i)));
  }
  EXPECT_EQ(sink.error_count(), 20u);
  ASSERT_FALSE(sink.errors().empty());
  EXPECT_LT(sink.errors().size(), 20u);  // bounded
  EXPECT_EQ(sink.errors()[0].message(), "device 0");
  EXPECT_EQ(sink.errors()[1].message(), "device 1");
  EXPECT_EQ(sink.sample_count(), 0u);
}

TEST(MetricSinkTest, take_families_drops_empty_families_and_keeps_others) {
  MetricSink sink;
  sink.Add(kTwoLabels, {{"device", "mlx5_0"}}, 1);  // declares the family, sample dropped
  sink.Add(kMtu, {{"netdev", "eth0"}}, 1500);
  auto families = sink.TakeFamilies();
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].name, "test_mtu_bytes");
}

// ---------------------------------------------------------------- SanitizeUtf8

TEST(SanitizeUtf8Test, table) {
  const std::string kFffd = "\xef\xbf\xbd";
  struct Case {
    std::string_view what;
    std::string in;
    std::string out;
  };
  const Case cases[] = {
      {"empty", "", ""},
      {"ascii", "eth0", "eth0"},
      {"2-byte", "caf\xc3\xa9", "caf\xc3\xa9"},
      {"3-byte", "\xe2\x82\xac 5", "\xe2\x82\xac 5"},
      {"4-byte", "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
      {"max code point", "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"},
      {"overlong slash", "a\xc0\xaf" "b", "a" + kFffd + kFffd + "b"},
      {"overlong 3-byte", "\xe0\x80\xaf", kFffd + kFffd + kFffd},
      {"surrogate", "\xed\xa0\x80", kFffd + kFffd + kFffd},
      {"above U+10FFFF", "\xf4\x90\x80\x80", kFffd + kFffd + kFffd + kFffd},
      {"lone continuation", "\x80", kFffd},
      {"0xff", "x\xffy", "x" + kFffd + "y"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.what));
    EXPECT_EQ(SanitizeUtf8(c.in), c.out);
  }
}

TEST(SanitizeUtf8Test, truncated_sequences_are_replaced) {
  const std::string kFffd = "\xef\xbf\xbd";
  const std::string inputs[] = {"ab\xe2\x82", "ab\xc3", "ab\xf0\x9f\x98", "ab\xe2\x82z"};
  for (const std::string& in : inputs) {
    SCOPED_TRACE(in);
    const std::string out = SanitizeUtf8(in);
    EXPECT_TRUE(out.starts_with("ab" + kFffd)) << out;
    // Only ASCII and U+FFFD remain: no raw lead bytes survive.
    std::string rest = out.substr(2);
    size_t pos;
    while ((pos = rest.find(kFffd)) != std::string::npos) rest.erase(pos, kFffd.size());
    EXPECT_TRUE(rest.empty() || rest == "z") << rest;
    // Sanitising is idempotent.
    EXPECT_EQ(SanitizeUtf8(out), out);
  }
}

}  // namespace
}  // namespace fabricwatch
