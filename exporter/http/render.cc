#include "exporter/http/render.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

namespace fabricwatch::exporter {

namespace {

// printf("%.16g", value), the precision TextSerializer's stream uses; integers below 1e15 (every
// counter in practice) take the short path, which prints the same digits.
void AppendDouble(double value, std::string& out) {
  if (std::isnan(value)) {
    out += "Nan";
    return;
  }
  if (std::isinf(value)) {
    out += value < 0 ? "-Inf" : "+Inf";
    return;
  }
  char buffer[32];
  std::to_chars_result result;
  if (value == std::trunc(value) && std::fabs(value) < 1e15 &&
      !(value == 0 && std::signbit(value))) {
    result = std::to_chars(buffer, buffer + sizeof(buffer), static_cast<int64_t>(value));
  } else {
    result = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::general, 16);
  }
  out.append(buffer, result.ptr);
}

void AppendUint(uint64_t value, std::string& out) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

// Exposition format: in label values a backslash, a double quote and a newline are escaped; in
// HELP text a backslash and a newline.
void AppendEscaped(std::string_view text, bool quote, std::string& out) {
  size_t plain = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '\\' && c != '\n' && !(quote && c == '"')) continue;
    out.append(text.substr(plain, i - plain));
    out += '\\';
    out += c == '\n' ? 'n' : c;
    plain = i + 1;
  }
  out.append(text.substr(plain));
}

// `name{labels[,extra]} ` of one sample line.
void AppendHead(const prometheus::MetricFamily& family, const prometheus::ClientMetric& metric,
                std::string& out, std::string_view suffix = {}, std::string_view extra_name = {},
                std::string_view extra_value = {}) {
  out += family.name;
  out += suffix;
  if (!metric.label.empty() || !extra_name.empty()) {
    out += '{';
    bool first = true;
    for (const prometheus::ClientMetric::Label& label : metric.label) {
      if (!first) out += ',';
      first = false;
      out += label.name;
      out += "=\"";
      AppendEscaped(label.value, true, out);
      out += '"';
    }
    if (!extra_name.empty()) {
      if (!first) out += ',';
      out += extra_name;
      out += "=\"";
      out += extra_value;
      out += '"';
    }
    out += '}';
  }
  out += ' ';
}

void AppendTail(const prometheus::ClientMetric& metric, std::string& out) {
  if (metric.timestamp_ms != 0) {
    out += ' ';
    char buffer[24];
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), metric.timestamp_ms);
    out.append(buffer, result.ptr);
  }
  out += '\n';
}

// A double as a label value (a histogram's `le`, a summary's `quantile`).
std::string_view DoubleLabel(double value, std::string& scratch) {
  scratch.clear();
  AppendDouble(value, scratch);
  return scratch;
}

// The one line of a counter, gauge or untyped sample.
void AppendLine(const prometheus::MetricFamily& family, const prometheus::ClientMetric& metric,
                double value, std::string& out) {
  AppendHead(family, metric, out);
  AppendDouble(value, out);
  AppendTail(metric, out);
}

// The `_count` and `_sum` lines of a summary or histogram.
void AppendCountAndSum(const prometheus::MetricFamily& family,
                       const prometheus::ClientMetric& metric, uint64_t count, double sum,
                       std::string& out) {
  AppendHead(family, metric, out, "_count");
  AppendUint(count, out);
  AppendTail(metric, out);
  AppendHead(family, metric, out, "_sum");
  AppendDouble(sum, out);
  AppendTail(metric, out);
}

void AppendSamples(const prometheus::MetricFamily& family, std::string& out, SeriesFilter* filter) {
  std::string scratch;
  for (const prometheus::ClientMetric& metric : family.metric) {
    if (filter != nullptr && !filter->WantSample(family, metric)) continue;
    switch (family.type) {
      case prometheus::MetricType::Counter:
        AppendLine(family, metric, metric.counter.value, out);
        break;
      case prometheus::MetricType::Gauge:
        AppendLine(family, metric, metric.gauge.value, out);
        break;
      case prometheus::MetricType::Untyped:
        AppendLine(family, metric, metric.untyped.value, out);
        break;
      case prometheus::MetricType::Summary:
        AppendCountAndSum(family, metric, metric.summary.sample_count, metric.summary.sample_sum,
                          out);
        for (const auto& quantile : metric.summary.quantile) {
          AppendHead(family, metric, out, {}, "quantile", DoubleLabel(quantile.quantile, scratch));
          AppendDouble(quantile.value, out);
          AppendTail(metric, out);
        }
        break;
      case prometheus::MetricType::Histogram: {
        AppendCountAndSum(family, metric, metric.histogram.sample_count,
                          metric.histogram.sample_sum, out);
        double last = -std::numeric_limits<double>::infinity();
        for (const auto& bucket : metric.histogram.bucket) {
          AppendHead(family, metric, out, "_bucket", "le",
                     DoubleLabel(bucket.upper_bound, scratch));
          last = bucket.upper_bound;
          AppendUint(bucket.cumulative_count, out);
          AppendTail(metric, out);
        }
        if (last != std::numeric_limits<double>::infinity()) {
          AppendHead(family, metric, out, "_bucket", "le", "+Inf");
          AppendUint(metric.histogram.sample_count, out);
          AppendTail(metric, out);
        }
        break;
      }
    }
  }
}

std::string_view TypeName(prometheus::MetricType type) {
  switch (type) {
    case prometheus::MetricType::Counter:
      return "counter";
    case prometheus::MetricType::Gauge:
      return "gauge";
    case prometheus::MetricType::Summary:
      return "summary";
    case prometheus::MetricType::Histogram:
      return "histogram";
    case prometheus::MetricType::Untyped:
      break;
  }
  return "untyped";
}

}  // namespace

void AppendExposition(std::vector<const prometheus::MetricFamily*>& families, std::string& out,
                      SeriesFilter* filter) {
  // Stable: the first family of a name gives HELP and TYPE, and samples keep their sources' order.
  std::stable_sort(families.begin(), families.end(),
                   [](const auto* a, const auto* b) { return a->name < b->name; });
  if (filter != nullptr) filter->Prepare(families);
  for (size_t i = 0; i < families.size();) {
    const prometheus::MetricFamily& head = *families[i];
    if (filter != nullptr && !filter->WantFamily(head.name)) {
      while (i < families.size() && families[i]->name == head.name) ++i;
      continue;
    }
    if (!head.help.empty()) {
      out += "# HELP ";
      out += head.name;
      out += ' ';
      AppendEscaped(head.help, false, out);
      out += '\n';
    }
    out += "# TYPE ";
    out += head.name;
    out += ' ';
    out += TypeName(head.type);
    out += '\n';
    // Every family of this name. Each sample is written from its own family's value field: two
    // sources that disagree on the type still show their values (under the first one's TYPE).
    size_t next = i;
    for (; next < families.size() && families[next]->name == head.name; ++next) {
      AppendSamples(*families[next], out, filter);
    }
    i = next;
  }
}

std::string RenderText(const std::vector<prometheus::MetricFamily>& families) {
  std::vector<const prometheus::MetricFamily*> pointers;
  pointers.reserve(families.size());
  for (const prometheus::MetricFamily& family : families) pointers.push_back(&family);
  std::string out;
  AppendExposition(pointers, out);
  return out;
}

Result<std::string> Gzip(std::string_view data) {
  z_stream stream{};
  // windowBits 15 + 16: write a gzip header and trailer instead of a zlib one.
  if (deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Error(StatusCode::kInternal, "gzip: deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, data.size()) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&stream, Z_FINISH);
  size_t produced = stream.total_out;
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) return Error(StatusCode::kInternal, "gzip: deflate did not finish");
  out.resize(produced);
  return out;
}

bool AcceptsGzip(std::string_view header) {
  // RFC 9110 §12.5.3: a list of codings with optional ;q= weights. gzip;q=0 means "not gzip".
  size_t pos = 0;
  while (pos <= header.size()) {
    size_t comma = header.find(',', pos);
    std::string_view item =
        header.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? header.size() + 1 : comma + 1;
    std::string lowered;
    for (char c : item) {
      if (!std::isspace(static_cast<unsigned char>(c))) {
        lowered += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
    }
    std::string_view coding = lowered;
    std::string_view params;
    if (size_t semi = coding.find(';'); semi != std::string_view::npos) {
      params = coding.substr(semi + 1);
      coding = coding.substr(0, semi);
    }
    if (coding != "gzip" && coding != "x-gzip") continue;
    if (params.starts_with("q=")) {
      std::string_view q = params.substr(2);
      bool zero = !q.empty() && q.find_first_not_of("0.") == std::string_view::npos;
      return !zero;
    }
    return true;
  }
  return false;
}

}  // namespace fabricwatch::exporter
