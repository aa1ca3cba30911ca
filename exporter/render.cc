#include "exporter/render.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <unordered_map>

#include <prometheus/text_serializer.h>

namespace fabricwatch::exporter {

std::string RenderText(std::vector<prometheus::MetricFamily> families) {
  // Two sources may contribute to one family name; the exposition format allows one HELP/TYPE
  // block per name, so merge them.
  std::vector<prometheus::MetricFamily> merged;
  std::unordered_map<std::string, size_t> index;
  for (prometheus::MetricFamily& family : families) {
    auto [it, inserted] = index.try_emplace(family.name, merged.size());
    if (inserted) {
      merged.push_back(std::move(family));
    } else {
      auto& target = merged[it->second].metric;
      target.insert(target.end(), std::make_move_iterator(family.metric.begin()),
                    std::make_move_iterator(family.metric.end()));
    }
  }
  std::sort(merged.begin(), merged.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, merged);
  return std::move(out).str();
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
