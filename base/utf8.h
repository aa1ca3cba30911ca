#pragma once
// UTF-8 checks shared by the metric sink (label values are sanitised with them) and the parsers
// of external text (kernel log records, LLDP TLVs, SMP node descriptions), which reject what is
// not UTF-8. No dependency beyond the standard library, so the fuzz targets link it alone.

#include <cstddef>
#include <string_view>

namespace fabricwatch {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is invalid (RFC 3629: no
// overlongs, no surrogates, nothing above U+10FFFF).
size_t Utf8SequenceLength(std::string_view s, size_t i);

// True when all of `value` is well-formed UTF-8.
bool IsValidUtf8(std::string_view value);

}  // namespace fabricwatch
