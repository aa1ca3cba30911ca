// libFuzzer target for the HTTP request-head parser (exporter/http/request_head.h, issue 19): the
// bytes a client sends before its head ends. Input: byte 0 picks the limits (so small limits are
// reached quickly), the rest is the buffer.
//
// Besides the sanitizers' checks, every result must honour the parser's contract: a complete
// head fits the limits and the buffer, re-parses alike from exactly its own bytes, and has a
// token method; an error is 400, 431 or 505 with a reason.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "exporter/http/request_head.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fabricwatch::exporter::HeadLimits;
  using fabricwatch::exporter::HeadParse;
  using fabricwatch::exporter::ParseRequestHead;
  if (size == 0) return 0;
  const HeadLimits limits{.max_head_bytes = (data[0] & 0x80) != 0 ? 64u : 16384u,
                          .max_fields = static_cast<size_t>(data[0] & 0x0f)};
  const std::string_view buffer(reinterpret_cast<const char*>(data) + 1, size - 1);
  const HeadParse p = ParseRequestHead(buffer, limits);
  switch (p.state) {
    case HeadParse::State::kIncomplete:
      Check(buffer.size() <= limits.max_head_bytes, "incomplete beyond the size limit");
      break;
    case HeadParse::State::kComplete: {
      Check(p.head_bytes > 0 && p.head_bytes <= buffer.size(), "head_bytes outside the buffer");
      Check(p.head_bytes <= limits.max_head_bytes, "complete head over the size limit");
      Check(p.head.fields.size() <= limits.max_fields, "too many fields accepted");
      Check(!p.head.method.empty() && !p.head.target.empty(), "empty method or target");
      Check(p.head.path.empty() || p.head.path.front() == '/', "path not absolute");
      const HeadParse again = ParseRequestHead(buffer.substr(0, p.head_bytes), limits);
      Check(again.state == HeadParse::State::kComplete && again.head_bytes == p.head_bytes,
            "the head's own bytes do not re-parse alike");
      break;
    }
    case HeadParse::State::kError:
      Check(p.status == 400 || p.status == 431 || p.status == 505, "unexpected error status");
      Check(!p.reason.empty(), "error without a reason");
      break;
  }
  return 0;
}
