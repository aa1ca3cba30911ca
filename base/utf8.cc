#include "base/utf8.h"

#include <cstdint>

namespace fabricwatch {

size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t len;
  uint32_t min;
  uint32_t cp;
  if ((c & 0xe0) == 0xc0) {
    len = 2, min = 0x80, cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3, min = 0x800, cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4, min = 0x10000, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

bool IsValidUtf8(std::string_view value) {
  for (size_t i = 0; i < value.size();) {
    const size_t len = Utf8SequenceLength(value, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

}  // namespace fabricwatch
