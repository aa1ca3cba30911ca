#pragma once
// Pure parsers for the small text values that sysfs and procfs attributes hold.
// They trim the trailing newline the kernel appends and reject anything else that is not a
// number, so a malformed file becomes a clear InvalidArgument instead of a silent 0.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace fabricwatch {

// Strips ASCII whitespace (the kernel's trailing '\n', stray spaces) from both ends.
std::string_view TrimSpace(std::string_view text);

// `text` in double quotes for an error message: at most `max` bytes, non-printable bytes as
// \xNN, so a binary or hostile file can neither flood a log nor corrupt it.
std::string QuoteForMessage(std::string_view text, size_t max = 64);

// Decimal, optionally "0x"-prefixed hex. `what` names the source for the error message.
Result<uint64_t> ParseUint64(std::string_view text, std::string_view what);
Result<int64_t> ParseInt64(std::string_view text, std::string_view what);

// "0000:03:00.0" (domain:bus:device.function), the basename of a PCI `device` link.
bool IsPciAddress(std::string_view text);

}  // namespace fabricwatch
