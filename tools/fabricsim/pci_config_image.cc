#include "tools/fabricsim/pci_config_image.h"

#include <cmath>

namespace fabricwatch::sim {
namespace {

constexpr size_t kSpaceSize = 4096;
constexpr uint8_t kPm = 0x40, kMsi = 0x50, kPcie = 0x60;
constexpr uint16_t kAer = 0x100, kAcs = 0x148;

class Image {
 public:
  Image() : bytes_(kSpaceSize, 0) {}
  void Put8(size_t at, uint8_t v) { bytes_[at] = v; }
  void Put16(size_t at, uint16_t v) {
    bytes_[at] = static_cast<uint8_t>(v);
    bytes_[at + 1] = static_cast<uint8_t>(v >> 8);
  }
  void Put32(size_t at, uint32_t v) {
    Put16(at, static_cast<uint16_t>(v));
    Put16(at + 2, static_cast<uint16_t>(v >> 16));
  }
  std::vector<uint8_t> Take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

// Link speed encoding (PCI_EXP_LNKCAP_SLS_*): 1 = 2.5 GT/s ... 6 = 64 GT/s.
uint8_t SpeedCode(double gts) {
  constexpr double kSpeeds[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  for (int i = 0; i < 6; ++i) {
    if (std::fabs(gts - kSpeeds[i]) < 0.01) return static_cast<uint8_t>(i + 1);
  }
  return 1;
}

}  // namespace

uint8_t SizeCode(int bytes) {
  uint8_t n = 0;
  while (n < 5 && (128 << n) < bytes) ++n;
  return n;
}

std::vector<uint8_t> RenderPciConfig(const PciConfigSpec& s) {
  Image img;
  const bool bridge = s.port_type != kPcieEndpoint;
  const bool port = bridge;  // root and switch ports have a link of their own below
  img.Put16(0x00, s.vendor);
  img.Put16(0x02, s.device);
  img.Put16(0x04, 0x0406);  // memory space, bus master, INTx disabled
  img.Put16(0x06, 0x0010);  // PCI_STATUS_CAP_LIST
  img.Put8(0x08, 0x00);     // revision
  img.Put8(0x09, static_cast<uint8_t>(s.class_code));
  img.Put8(0x0a, static_cast<uint8_t>(s.class_code >> 8));
  img.Put8(0x0b, static_cast<uint8_t>(s.class_code >> 16));
  img.Put8(0x0e, static_cast<uint8_t>((bridge ? 0x01 : 0x00) | (s.multi_function ? 0x80 : 0)));
  if (bridge) {
    img.Put8(0x19, s.secondary_bus);
    img.Put8(0x1a, s.subordinate_bus);
  } else {
    img.Put16(0x2c, s.vendor);  // subsystem vendor
    img.Put16(0x2e, 0x0001);
  }
  img.Put8(0x34, kPm);

  // Power Management (version 3) -> MSI-X (endpoints) or MSI (bridges) -> PCI Express.
  img.Put8(kPm, 0x01);
  img.Put8(kPm + 1, kMsi);
  img.Put16(kPm + 2, 0x0003);
  img.Put8(kMsi, bridge ? 0x05 : 0x11);
  img.Put8(kMsi + 1, kPcie);

  img.Put8(kPcie, 0x10);
  img.Put8(kPcie + 1, 0x00);
  img.Put16(kPcie + 0x02, static_cast<uint16_t>(
                              0x0002 | (s.port_type << 4) |
                              (s.port_type == kPcieDownstreamPort || s.port_type == kPcieRootPort
                                   ? 0x0100  // slot implemented
                                   : 0)));
  img.Put32(kPcie + 0x04, 0x00008000u | (s.mps_supported & 0x7));  // role-based error reporting
  img.Put16(kPcie + 0x08, static_cast<uint16_t>(0x0010 |           // relaxed ordering
                                                ((s.mps & 0x7) << 5) | ((s.mrrs & 0x7) << 12)));
  const uint8_t speed = SpeedCode(s.link_gts);
  const uint32_t width = static_cast<uint32_t>(s.link_width) & 0x3f;
  img.Put32(kPcie + 0x0c, speed | (width << 4) | (port ? 0x00100000u : 0) |  // DLL active rep.
                              (static_cast<uint32_t>(s.port_number) << 24));
  const uint8_t speed_now = s.link_gts_now > 0 ? SpeedCode(s.link_gts_now) : speed;
  const uint32_t width_now =
      s.link_width_now > 0 ? static_cast<uint32_t>(s.link_width_now) & 0x3f : width;
  img.Put16(kPcie + 0x12, static_cast<uint16_t>(speed_now | (width_now << 4) |
                                                (port ? 0x2000 : 0)));  // DLL active
  img.Put32(kPcie + 0x2c, static_cast<uint32_t>(((1u << speed) - 1) << 1));
  img.Put16(kPcie + 0x30, speed);

  // Extended capabilities: AER -> ACS (when the function has it).
  const uint16_t after_aer = s.acs ? kAcs : 0;
  img.Put32(kAer, 0x0001u | (1u << 16) | (static_cast<uint32_t>(after_aer) << 20));
  if (s.acs) {
    img.Put32(kAcs, 0x000du | (1u << 16));
    img.Put16(kAcs + 0x04, s.acs->capability);
    img.Put16(kAcs + 0x06, s.acs->control);
  }
  return img.Take();
}

}  // namespace fabricwatch::sim
