// libFuzzer target for the `mlnx_qos -i <netdev>` text parser
// (collectors/ethtool_source/qos_parse.h ParseMlnxQosText, the replay format of DIR/<netdev>/qos,
// issue 21): the file's bytes. Seeds: tools/fuzz/seeds/mlnx_qos/.
//
// Besides the sanitizers' checks, every result must honour the parser's contract: problems are
// capped and name the file, priorities and traffic classes are 0-7, trust and DCBX mode take only
// their documented values, a bandwidth is a percentage, and an error names the file.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "collectors/ethtool_source/qos_parse.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fabricwatch::sys::ParsedQos;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = fabricwatch::sys::ParseMlnxQosText(text, "fuzz/qos");
  if (!parsed) {
    Check(parsed.error().message().find("fuzz/qos") != std::string::npos,
          "an error names the file");
    return 0;
  }
  const auto& s = parsed->settings;
  Check(parsed->problems.size() <= ParsedQos::kMaxProblems, "problems are capped");
  for (const auto& problem : parsed->problems) {
    Check(problem.message().find("fuzz/qos:") == 0, "a problem names the file and line");
  }
  Check(s.trust.empty() || s.trust == "pcp" || s.trust == "dscp" || s.trust == "none", "trust");
  Check(s.dcbx_mode.empty() || s.dcbx_mode == "os" || s.dcbx_mode == "firmware", "DCBX mode");
  for (const auto& prio : s.dscp_priority) Check(!prio || *prio <= 7, "DSCP priority is 0-7");
  for (const auto& tc : s.priority_tc) Check(!tc || *tc <= 7, "traffic class is 0-7");
  if (s.default_priority) Check(*s.default_priority <= 7, "default priority is 0-7");
  if (s.priority_buffer) {
    for (uint8_t b : *s.priority_buffer) Check(b <= 7, "receive buffer is 0-7");
  }
  for (const auto& tc : s.traffic_classes) {
    if (!tc) continue;
    if (tc->bandwidth_percent) {
      Check(*tc->bandwidth_percent >= 0 && *tc->bandwidth_percent <= 100, "bandwidth percent");
    }
    if (tc->ratelimit_gbps) Check(std::isfinite(*tc->ratelimit_gbps), "finite rate limit");
  }
  return 0;
}
