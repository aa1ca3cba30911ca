// libFuzzer target for the module EEPROM decoders (issue 5). One binary per decoder, chosen at
// compile time with -DFUZZ_TARGET_<NAME> (see build_and_run.sh):
//
//   FUZZ_TARGET_SFF8472  DecodeSff8472(a0h, a2h)
//   FUZZ_TARGET_SFF8636  DecodeSff8636({lower, page00, page03})
//   FUZZ_TARGET_CMIS     DecodeCmis({lower, page00, page01, page02, page10, page11})
//   FUZZ_TARGET_IMAGE    DecodeModuleImage(image)
//
// Input format of the per-spec targets (the "paged" format): a header of one big-endian u16 per
// page, the page's length (taken modulo page size + 1, so any value is valid), then the pages'
// bytes back to back. A page gets min(its length, bytes left) bytes, so both truncated pages in
// the middle and a short input are reachable. Page sizes: 256 for A0h/A2h, 128 for the others.
//
// Input format of the image target: byte 0 is a selector, the rest is the flat image. A selector
// below 0x80 overwrites the image's identifier (byte 0) with one of the identifiers the
// dispatcher knows (selector % count), so every decoder sees every image; 0x80 and above keep
// the image's own identifier byte.
//
// Besides the sanitizers' checks, every reading must honour the contract of module_eeprom.h:
// no exception, every exported value finite and inside the range DropImplausibleValues keeps,
// thresholds ordered, at most 16 lanes, identity strings printable ASCII, warnings not OK.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collectors/optics/cmis.h"
#include "collectors/optics/module_eeprom.h"
#include "collectors/optics/sff8472.h"
#include "collectors/optics/sff8636.h"

namespace {

using fabricwatch::StatusCode;
using fabricwatch::optics::Flags;
using fabricwatch::optics::ModuleReading;
using fabricwatch::optics::ModuleType;
using fabricwatch::optics::Thresholds;

[[noreturn]] void Fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "optics_fuzz: invariant violated: %s %s\n", what, detail.c_str());
  std::fflush(stderr);
  std::abort();  // libFuzzer reports a deadly signal and writes the crash input
}

void Check(bool ok, const char* what, const std::string& detail = "") {
  if (!ok) Fail(what, detail);
}

void CheckValue(const std::optional<double>& v, const char* what, double low, double high) {
  if (!v) return;
  Check(std::isfinite(*v), what, "is not finite");
  Check(*v >= low && *v <= high, what, "= " + std::to_string(*v) + " out of range");
}

void CheckThresholds(const std::optional<Thresholds>& t, const char* what, double low,
                     double high) {
  if (!t) return;
  for (double v : {t->high_alarm, t->low_alarm, t->high_warning, t->low_warning}) {
    Check(std::isfinite(v), what, "threshold not finite");
  }
  Check(t->low_alarm >= low && t->high_alarm <= high, what, "thresholds out of range");
  Check(t->high_alarm >= t->high_warning && t->high_warning >= t->low_warning &&
            t->low_warning >= t->low_alarm,
        what, "thresholds not ordered");
}

void CheckText(const std::string& s, const char* what, size_t max_len) {
  Check(s.size() <= max_len, what, "too long: " + std::to_string(s.size()));
  for (unsigned char c : s) Check(c >= 0x20 && c <= 0x7e, what, "non-printable byte");
  if (!s.empty()) {
    Check(s.front() != ' ' && s.back() != ' ', what, "not trimmed: '" + s + "'");
  }
}

void CheckReading(const ModuleReading& r) {
  Check(r.lanes.size() <= 16, "lanes", "count " + std::to_string(r.lanes.size()));
  Check(!r.identifier_name.empty(), "identifier_name", "empty");
  Check(r.identifier_name == fabricwatch::optics::IdentifierName(r.identifier), "identifier_name",
        "does not match IdentifierName(identifier)");
  CheckText(r.vendor, "vendor", 16);
  CheckText(r.part_number, "part_number", 16);
  CheckText(r.serial, "serial", 16);
  CheckText(r.revision, "revision", 16);
  CheckText(r.date_code, "date_code", 8);
  if (r.wavelength_nm) {
    Check(std::isfinite(*r.wavelength_nm) && *r.wavelength_nm >= 0, "wavelength_nm", "bad");
  }
  if (r.connector) (void)fabricwatch::optics::ConnectorName(*r.connector);
  (void)fabricwatch::optics::ModuleTypeName(r.type);
  if (r.tx_bias_multiplier) {
    uint8_t m = *r.tx_bias_multiplier;
    Check(m == 1 || m == 2 || m == 4, "tx_bias_multiplier", std::to_string(m));
  }
  CheckValue(r.temperature_celsius, "temperature_celsius", -60, 150);
  CheckValue(r.supply_voltage_volts, "supply_voltage_volts", 2.0, 5.0);
  for (const auto& lane : r.lanes) {
    CheckValue(lane.tx_bias_amperes, "lane tx_bias_amperes", 0, 1.0);
    CheckValue(lane.tx_power_watts, "lane tx_power_watts", 0, 1.0);
    CheckValue(lane.rx_power_watts, "lane rx_power_watts", 0, 1.0);
  }
  CheckThresholds(r.thresholds.temperature_celsius, "temperature", -60, 150);
  CheckThresholds(r.thresholds.supply_voltage_volts, "supply voltage", 0, 7);
  CheckThresholds(r.thresholds.tx_bias_amperes, "tx bias", 0, 1.0);
  CheckThresholds(r.thresholds.tx_power_watts, "tx power", 0, 1.0);
  CheckThresholds(r.thresholds.rx_power_watts, "rx power", 0, 1.0);
  for (const auto& w : r.warnings) {
    Check(!w.ok(), "warning", "has code kOk");
    Check(!w.message().empty(), "warning", "has an empty message");
  }
}

// Splits a "paged" input: header of u16 lengths, then the pages back to back.
std::vector<std::span<const uint8_t>> SplitPages(const uint8_t* data, size_t size,
                                                 std::span<const size_t> page_sizes) {
  std::vector<std::span<const uint8_t>> pages;
  const size_t header = 2 * page_sizes.size();
  size_t pos = header;
  for (size_t i = 0; i < page_sizes.size(); ++i) {
    size_t want = 0;
    if (2 * i + 1 < size) {
      want = (static_cast<size_t>(data[2 * i]) << 8 | data[2 * i + 1]) % (page_sizes[i] + 1);
    }
    size_t left = size > pos ? size - pos : 0;
    size_t take = want < left ? want : left;
    pages.push_back(take ? std::span<const uint8_t>(data + pos, take)
                         : std::span<const uint8_t>());
    pos += take;
  }
  return pages;
}

// Owns exact-size copies of the pages so that a read one byte past a page is an ASan error even
// when the next page follows it in the fuzz input.
struct OwnedPages {
  std::vector<std::vector<uint8_t>> storage;
  std::vector<std::span<const uint8_t>> spans;
  explicit OwnedPages(const std::vector<std::span<const uint8_t>>& in) {
    storage.reserve(in.size());
    for (auto s : in) {
      storage.emplace_back(s.begin(), s.end());
      spans.push_back(storage.back().empty() ? std::span<const uint8_t>()
                                             : std::span<const uint8_t>(storage.back()));
    }
  }
};

template <typename F>
void Guarded(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    Fail("exception thrown:", e.what());
  } catch (...) {
    Fail("exception thrown:", "(not a std::exception)");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fabricwatch::optics;
#if defined(FUZZ_TARGET_SFF8472)
  static constexpr size_t kSizes[] = {256, 256};
  OwnedPages p(SplitPages(data, size, kSizes));
  Guarded([&] {
    ModuleReading r = DecodeSff8472(p.spans[0], p.spans[1]);
    Check(r.type == ModuleType::kSff8472, "type", "not sff8472");
    Check(r.lanes.size() <= 1, "lanes", "SFP with more than one lane");
    CheckReading(r);
  });
#elif defined(FUZZ_TARGET_SFF8636)
  static constexpr size_t kSizes[] = {128, 128, 128};
  OwnedPages p(SplitPages(data, size, kSizes));
  Guarded([&] {
    ModuleReading r =
        DecodeSff8636({.lower = p.spans[0], .page00 = p.spans[1], .page03 = p.spans[2]});
    Check(r.type == ModuleType::kSff8636, "type", "not sff8636");
    Check(r.lanes.size() <= 4, "lanes", "QSFP with more than four lanes");
    CheckReading(r);
  });
#elif defined(FUZZ_TARGET_CMIS)
  static constexpr size_t kSizes[] = {128, 128, 128, 128, 128, 128};
  OwnedPages p(SplitPages(data, size, kSizes));
  Guarded([&] {
    ModuleReading r = DecodeCmis({.lower = p.spans[0],
                                  .page00 = p.spans[1],
                                  .page01 = p.spans[2],
                                  .page02 = p.spans[3],
                                  .page10 = p.spans[4],
                                  .page11 = p.spans[5]});
    Check(r.type == ModuleType::kCmis, "type", "not cmis");
    CheckReading(r);
  });
#elif defined(FUZZ_TARGET_IMAGE)
  static constexpr uint8_t kIdentifiers[] = {0x03, 0x0C, 0x0D, 0x11, 0x18,
                                             0x19, 0x1B, 0x1E, 0x1F, 0x20};
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  std::vector<uint8_t> image(data + 1, data + size);
  if (selector < 0x80 && !image.empty()) {
    image[0] = kIdentifiers[selector % sizeof(kIdentifiers)];
  }
  Guarded([&] {
    auto result = DecodeModuleImage(image);
    if (image.empty()) {
      Check(!result.has_value(), "DecodeModuleImage", "accepted an empty image");
      Check(result.error().code() == StatusCode::kInvalidArgument, "DecodeModuleImage",
            "empty image error is not kInvalidArgument");
      return;
    }
    Check(result.has_value(), "DecodeModuleImage", "failed on a non-empty image");
    const ModuleReading& r = *result;
    Check(r.identifier == image[0], "identifier", "differs from byte 0");
    Check(r.type == ModuleTypeFromIdentifier(image[0]), "type", "differs from the dispatch");
    CheckReading(r);
    // The collector decodes into the reading it kept from the module's last read: whatever that
    // held (here the previous input's decode), the result must be the fresh decode's.
    static ModuleReading reused;
    Check(DecodeModuleImage(image, reused).ok(), "DecodeModuleImage",
          "into a reused reading failed");
    Check(reused == r, "DecodeModuleImage", "into a reused reading differs from a fresh decode");
  });
#else
#error "define one of FUZZ_TARGET_SFF8472, FUZZ_TARGET_SFF8636, FUZZ_TARGET_CMIS, FUZZ_TARGET_IMAGE"
#endif
  return 0;
}
