// Writes the seed corpora of optics_fuzz.cc (see its header for the input formats) and of
// pci_config_fuzz.cc (OUT_DIR/pci_config/: the config-space images of
// tests/testing/pci_config_images.cc in the 64, 256 and 4096-byte views).
//
//   make_seeds OUT_DIR [FILE.hex ...]
//
// Images: the hand-built ones of tests/testing/module_images.cc, plus each ethtool-style hex
// dump given ("0x0000:  03 04 ..." lines, '#' comments and other lines ignored). Every image is
// written, in each target's format, to OUT_DIR/{sff8472,sff8636,cmis,image}/ — every image to
// every target, whatever its identifier: a QSFP image fed to the SFP decoder is a fine seed.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/module_images.h"
#include "tests/testing/pci_config_images.h"

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

Bytes Slice(const Bytes& b, size_t at, size_t len) {
  if (at >= b.size()) return {};
  return Bytes(b.begin() + at, b.begin() + std::min(b.size(), at + len));
}

// Header of u16 page lengths, then the pages.
Bytes Paged(const std::vector<Bytes>& pages) {
  Bytes out;
  for (const Bytes& p : pages) {
    out.push_back(static_cast<uint8_t>(p.size() >> 8));
    out.push_back(static_cast<uint8_t>(p.size()));
  }
  for (const Bytes& p : pages) out.insert(out.end(), p.begin(), p.end());
  return out;
}

void Write(const fs::path& dir, const std::string& name, const Bytes& bytes) {
  fs::create_directories(dir);
  std::ofstream f(dir / name, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void Emit(const fs::path& out, const std::string& name, const Bytes& img) {
  if (img.empty()) return;
  constexpr size_t P = 128;
  // Flat layouts of DecodeModuleImage (module_eeprom.h).
  Write(out / "sff8472", name, Paged({Slice(img, 0, 256), Slice(img, 256, 256)}));
  Write(out / "sff8636", name, Paged({Slice(img, 0, P), Slice(img, P, P), Slice(img, 4 * P, P)}));
  Write(out / "cmis", name,
        Paged({Slice(img, 0, P), Slice(img, P, P), Slice(img, 2 * P, P), Slice(img, 3 * P, P),
               Slice(img, 4 * P, P), Slice(img, 5 * P, P)}));
  Bytes keep{0xFF};  // selector >= 0x80: keep the image's own identifier
  keep.insert(keep.end(), img.begin(), img.end());
  Write(out / "image", name, keep);
}

// ethtool -m --hex style: "0x0010:\t\t1e 0f 00 ..." lines.
bool ReadHex(const fs::path& path, Bytes& img) {
  std::ifstream f(path);
  if (!f) return false;
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("0x", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t offset = std::strtoul(line.substr(2, colon - 2).c_str(), nullptr, 16);
    std::istringstream rest(line.substr(colon + 1));
    std::string tok;
    while (rest >> tok) {
      if (offset > 4096) return false;
      if (img.size() <= offset) img.resize(offset + 1);
      img[offset++] = static_cast<uint8_t>(std::strtoul(tok.c_str(), nullptr, 16));
    }
  }
  return !img.empty();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR [FILE.hex ...]\n", argv[0]);
    return 2;
  }
  const fs::path out = argv[1];
  namespace t = fabricwatch::testing;
  const std::pair<const char*, t::Image> builtin[] = {
      {"sfp_internal", t::SfpInternal()}, {"sfp_external", t::SfpExternal()},
      {"qsfp28_paged", t::Qsfp28Paged()}, {"qsfp_flat_dac", t::QsfpFlatDac()},
      {"cmis_8lane", t::Cmis8Lane()},     {"cmis_flat_dac", t::CmisFlatDac()},
  };
  int count = 0;
  for (const auto& [name, image] : builtin) {
    Emit(out, std::string("builtin_") + name, image.bytes());
    ++count;
  }
  for (int i = 2; i < argc; ++i) {
    Bytes img;
    if (!ReadHex(argv[i], img)) {
      std::fprintf(stderr, "make_seeds: skipping %s (no hex data)\n", argv[i]);
      continue;
    }
    Emit(out, "ext_" + fs::path(argv[i]).stem().string(), img);
    ++count;
  }
  const std::pair<const char*, t::PciConfigImage> pci[] = {
      {"endpoint", t::TypicalPciConfig(0, 2, 1, 5)},
      {"dsp_acs", t::TypicalPciConfig(6, 2, 1, 2, t::AcsRegs{0x005f, 0x001d})},
      {"root_port_acs_off", t::TypicalPciConfig(4, 1, 1, 2, t::AcsRegs{0x007f, 0})},
  };
  for (const auto& [name, image] : pci) {
    for (size_t size : {64u, 256u, 4096u}) {
      Write(out / "pci_config", std::string(name) + "_" + std::to_string(size), image.Bytes(size));
    }
  }
  std::printf("make_seeds: %d images -> %s\n", count, out.c_str());
  return 0;
}
