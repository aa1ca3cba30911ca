// libFuzzer target for the ethtool text parsers of the replay directory: `ethtool <netdev>`
// (collectors/ethtool_source/ethtool_replay_parse.h ParseEthtoolLinkText, DIR/<netdev>/link, issue
// 20), `ethtool -a` and `ethtool --get-tunable` (collectors/ethtool_source/pause_text_parse.h,
// DIR/<netdev>/pause and tunables, issue 21): the same bytes go to all three.
//
// Besides the sanitizers' checks, every result must honour the parser's contract: problems are
// capped and never more than the malformed lines, lists stay within kMaxLinkModes, every listed
// mode has a speed no greater than the maximum reported, the port is short printable text, and
// an error means malformed lines without a single known one.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/ethtool_source/ethtool_replay_parse.h"
#include "collectors/ethtool_source/link_modes.h"
#include "collectors/ethtool_source/pause_text_parse.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
  }
}

void CheckList(const std::vector<std::string>& modes, const std::optional<uint32_t>& max) {
  using fabricwatch::sys::LinkModeSpeedOfName;
  using fabricwatch::sys::ParsedEthtoolLink;
  Check(modes.size() <= ParsedEthtoolLink::kMaxLinkModes, "too many link modes kept");
  bool any_speed = false;
  for (const std::string& mode : modes) {
    Check(!mode.empty(), "an empty link-mode name");
    if (auto speed = LinkModeSpeedOfName(mode)) {
      any_speed = true;
      Check(max.has_value() && *speed <= *max, "a mode faster than the reported maximum");
    }
  }
  Check(any_speed == max.has_value(), "a maximum speed without a mode that has it");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fabricwatch::sys::ParsedEthtoolLink;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto pause = fabricwatch::sys::ParseEthtoolPauseText(text, "fuzz/pause")) {
    Check(pause->problems.size() <= fabricwatch::sys::ParsedPauseText::kMaxProblems,
          "pause problems not capped");
  } else {
    Check(!pause.error().message().empty(), "a pause error without a message");
  }
  if (auto timeout =
          fabricwatch::sys::ParseEthtoolTunableText(text, "pfc-prevention-tout", "fuzz/tunables");
      !timeout) {
    Check(!timeout.error().message().empty(), "a tunable error without a message");
  }
  auto parsed = fabricwatch::sys::ParseEthtoolLinkText(text, "fuzz/link");
  if (!parsed) {
    Check(!parsed.error().message().empty(), "an error without a message");
    return 0;
  }
  Check(parsed->problems.size() <= ParsedEthtoolLink::kMaxProblems, "problems not capped");
  Check(parsed->problems.size() <= parsed->malformed_lines, "more problems than malformed lines");
  const auto& s = parsed->settings;
  CheckList(s.supported_modes, s.max_supported_speed_mbps);
  CheckList(s.advertised_modes, s.max_advertised_speed_mbps);
  Check(s.port.size() <= 64, "a long port");
  for (char c : s.port) Check(c >= 0x20 && c <= 0x7e, "a control character in the port");
  Check(s.duplex.empty() || s.duplex == "full" || s.duplex == "half", "an unknown duplex");
  Check(!s.speed_mbps || *s.speed_mbps != 0, "speed 0 reported as known");
  Check(!s.lanes || *s.lanes != 0, "0 lanes reported as known");
  return 0;
}
