#pragma once
// Pure parsers of the text replay formats of --path.ethtool (docs/design.md §5): `ethtool -S`
// (DIR/<netdev>/statistics) and `ethtool <netdev>` (DIR/<netdev>/link, ParseEthtoolLinkText below).
//
// Parser for `ethtool -S <netdev>` text, the replay format of --path.ethtool
// (docs/design.md §5: DIR/<netdev>/statistics holds the text exactly as the tool prints it).
//
// ethtool prints the ETHTOOL_GSTRINGS(ETH_SS_STATS) names and ETHTOOL_GSTATS values
// (docs/reference.md §3.1) as
//     NIC statistics:
//          <name>: <u64 decimal>
// one line per statistic, in driver order. Things seen in real captures and accepted here:
//   - indentation by spaces or tabs (or none);
//   - names that contain dots, dashes, brackets, upper case or ": " themselves: ice
//     "rx_crc_errors.nic", i40e "port.rx_priority_0_xoff_rx" and "rx-0.packets", bnxt_en ring
//     statistics "[0]: rx_ucast_packets" (bnxt_ethtool.c bnxt_get_strings sprintf "[%d]: %s").
//     The value is what follows the LAST colon, so a ring name keeps its "[N]: " prefix verbatim:
//     the parsed name is byte for byte the kernel's GSTRINGS name (minus surrounding blanks), and
//     replay and kernel mode feed NormalizeStat and the passthrough the same strings. That also
//     keeps names unique per ring, so the number of parsed stats equals the number of stat lines;
//   - blank lines, CRLF line ends;
//   - the "NIC statistics:" header (and "Standard stats for <netdev>:" of --all-groups), anywhere;
//   - comment lines whose first non-blank character is '#' (provenance notes in captured
//     fixtures, upstream test comments). No driver statistic name starts with '#'.
// Any other line is malformed: a name without a value, a value that is not an unsigned 64-bit
// decimal (negative, hex, trailing text, out of range), an empty name, a line without a colon.
// A malformed line is skipped and reported in `problems`; the good lines around it are kept.
// Duplicate names are kept as they come (the caller's metric sink rejects duplicate series).
// More than kMaxStatisticsPerNetdev lines that look like statistics (a colon, not a header or a
// comment; collectors/ethtool_source/ethtool.h) is an error, found before anything is stored, and
// no statistic is returned.

#include <cstddef>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "collectors/ethtool_source/ethtool.h"

namespace fabricwatch::sys {

struct ParsedEthtoolStats {
  // Every well-formed statistic, in file order.
  std::vector<EthtoolStat> stats;
  // One kInvalidArgument Status per malformed line ("<what>:<line>: <reason>"), at most
  // kMaxProblems of them; `malformed_lines` is the exact count.
  std::vector<Status> problems;
  size_t malformed_lines = 0;

  static constexpr size_t kMaxProblems = 64;
};

// Parses `text`; `what` names the source (a path) for messages. Fails (kInvalidArgument) only
// when the text has malformed lines and not a single statistic, i.e. it is not `ethtool -S`
// output at all. Empty text, or a header alone, is a valid answer with no statistics.
Result<ParsedEthtoolStats> ParseEthtoolStatsText(std::string_view text, std::string_view what);

// The same into `parsed`, whose contents are replaced: the storage of parsed.stats' names is
// reused, so parsing the same table again (a replay source, every sample) allocates nothing.
Status ParseEthtoolStatsTextInto(std::string_view text, std::string_view what,
                                 ParsedEthtoolStats& parsed);

// Parser for `ethtool <netdev>` text, the replay format of DIR/<netdev>/link: the link settings
// (ethtool netlink/settings.c, or ethtool.c dump_ecmd for the ioctl-era tool). The lines read:
//     Settings for <netdev>:
//     	Supported link modes:   <mode> [<mode>...]       (continued on indented lines)
//     	Advertised link modes:  <mode>...                (or "Not reported")
//     	Speed: <n>Mb/s | Unknown!
//     	Lanes: <n>                                       (ethtool 5.11+, absent otherwise)
//     	Duplex: Full | Half | Unknown! (<n>)
//     	Auto-negotiation: on | off
//     	Port: FIBRE | Direct Attach Copper | Twisted Pair | Other | ... | Unknown! (<n>)
//     	Link detected: yes | no [(<reason>)]
// Quirks of real output accepted here: link-mode lists wrapped over indented continuation lines
// with no key, two modes on one line ("10baseT/Half 10baseT/Full"), "Not reported" lists,
// "Speed: Unknown!" and "Duplex: Unknown! (255)" while the link is down, a missing "Lanes:",
// "Current message level:" with its flag names on an indented second line, tabs or spaces, CRLF,
// no newline at the end, blank lines and '#' comment lines, and keys this parser does not use
// (PHYAD, Transceiver, MDI-X, Wake-on, FEC and pause lines, link-partner lists; `ethtool -i`
// lines before the header). Link modes are named as collectors/ethtool_source/link_modes.h names
// them; a name the table lacks is parsed ("3200000baseCR16/Full"), and "BIT<n>" is bit n.
//
// Malformed lines: a line without "key:" that does not continue a list, a value of a known key
// that does not parse ("Speed: ZeroGb/s", "Duplex: maybe"), a token of a link-mode list that is no
// link-mode name, a list of more than kMaxLinkModes names. Each is skipped and reported in
// `problems` ("<what>:<line>: <reason>"); what the other lines say is kept.
struct ParsedEthtoolLink {
  LinkSettings settings;
  std::vector<Status> problems;  // at most kMaxProblems; malformed_lines is the exact count
  size_t malformed_lines = 0;

  static constexpr size_t kMaxProblems = 16;
  static constexpr size_t kMaxLinkModes = 256;  // per list; the kernel has 125 bits
};

// Parses `text`; `what` names the source (a path) for messages. Fails (kInvalidArgument) only when
// the text has malformed lines and not a single line this parser knows (the header or a link
// key): it is not `ethtool <netdev>` output at all. Empty text is a valid answer with nothing set.
Result<ParsedEthtoolLink> ParseEthtoolLinkText(std::string_view text, std::string_view what);

}  // namespace fabricwatch::sys
