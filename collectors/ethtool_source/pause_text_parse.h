#pragma once
// Pure parsers of two small replay texts of --path.ethtool (docs/design.md §5.2):
//
// DIR/<netdev>/pause: the text of `ethtool -a <netdev>` (ethtool netlink/pause.c; ethtool.c
// dump_pause for the ioctl-era tool):
//     Pause parameters for <netdev>:
//     Autonegotiate:	off
//     RX:		on
//     TX:		on
//     RX negotiated: on                  (only with autonegotiation and a link partner)
//     TX negotiated: on
//     Statistics:                        (only with -I / --include-statistics)
//       tx_pause_frames: 0
//       rx_pause_frames: 0
// Values are `on` or `off`. Tabs or spaces, CRLF, blank lines and '#' comment lines are
// accepted. A line the parser does not know is counted (unknown_lines) and skipped; a known line
// with a value that is not on/off (or not a number) is a problem naming the line; text without a
// single known line is an error (it is not `ethtool -a` output).
//
// DIR/<netdev>/tunables: the text of `ethtool --get-tunable <netdev> pfc-prevention-tout`
// (ethtool.c print_tunable: "<name>: <value>" one line per tunable asked), e.g.
//     pfc-prevention-tout: 100
// The value is in milliseconds; 0 means storm prevention is off.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "collectors/ethtool_source/ethtool.h"

namespace fabricwatch::sys {

struct ParsedPauseText {
  PauseInfo info;
  std::vector<Status> problems;  // one per malformed known line, at most kMaxProblems
  size_t unknown_lines = 0;
  static constexpr size_t kMaxProblems = 16;
};

// `what` names the source (a path) in messages.
Result<ParsedPauseText> ParseEthtoolPauseText(std::string_view text, std::string_view what);

// The value of tunable `name` ("pfc-prevention-tout") in `ethtool --get-tunable` text. kNoData
// when the text does not list it (the driver refused it: ethtool printed the error to stderr);
// kInvalidArgument when its value is not an unsigned decimal.
Result<uint32_t> ParseEthtoolTunableText(std::string_view text, std::string_view name,
                                         std::string_view what);

}  // namespace fabricwatch::sys
