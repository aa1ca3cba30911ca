#pragma once
// A transceiver memory image under construction: big-endian fields at byte offsets, in the flat
// layout of docs/design.md §5 (SFF-8472 A0h+A2h, SFF-8636 lower + upper pages, CMIS lower + pages).
// Shared by the fabric simulator (which renders live modules) and the decoder tests (which build
// images straight from the spec tables, tests/testing/module_images.h).

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace fabricwatch::sim {

class Image {
 public:
  explicit Image(size_t size, uint8_t fill = 0) : bytes_(size, fill) {}
  Image& U8(size_t at, uint8_t v) {
    bytes_.at(at) = v;
    return *this;
  }
  Image& U16(size_t at, uint16_t v) {
    bytes_.at(at) = static_cast<uint8_t>(v >> 8);
    bytes_.at(at + 1) = static_cast<uint8_t>(v);
    return *this;
  }
  Image& S16(size_t at, int16_t v) { return U16(at, static_cast<uint16_t>(v)); }
  Image& F32(size_t at, float v) {
    uint32_t bits = std::bit_cast<uint32_t>(v);
    U16(at, static_cast<uint16_t>(bits >> 16));
    return U16(at + 2, static_cast<uint16_t>(bits));
  }
  Image& Ascii(size_t at, size_t width, std::string_view text) {
    for (size_t i = 0; i < width; ++i) bytes_.at(at + i) = i < text.size() ? text[i] : ' ';
    return *this;
  }
  // Four thresholds in the specs' order: high alarm, low alarm, high warning, low warning.
  Image& Thresholds4(size_t at, uint16_t ha, uint16_t la, uint16_t hw, uint16_t lw) {
    return U16(at, ha).U16(at + 2, la).U16(at + 4, hw).U16(at + 6, lw);
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  operator std::span<const uint8_t>() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace fabricwatch::sim
