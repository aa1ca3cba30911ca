#include "tools/fabricsim/module.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fabricwatch::sim {
namespace {

uint16_t Clamp16(double v) { return static_cast<uint16_t>(std::clamp(std::lround(v), 0L, 65535L)); }
int16_t Temp16(double c) {
  return static_cast<int16_t>(std::clamp(std::lround(c * 256.0), -32768L, 32767L));
}
uint16_t Vcc16(double v) { return Clamp16(v * 10000.0); }      // 100 µV
uint16_t Bias16(double ma) { return Clamp16(ma * 500.0); }     // 2 µA
uint16_t Power16(double mw) { return Clamp16(mw * 10000.0); }  // 0.1 µW

// Alarm/warning bits of one value: high alarm, low alarm, high warning, low warning.
struct Flags {
  bool ha, la, hw, lw;
};
// Rx LOS is the receiver's own loss-of-signal detector, not the DOM low-alarm flag: it asserts far
// below the low alarm (here -20 dBm), so a dim lane between the two still reports its power.
constexpr double kRxLosMw = 0.01;
bool RxLos(double rx_mw) { return rx_mw < kRxLosMw; }

Flags Check(double v, const Thresholds& t) {
  return {v > t.high_alarm, v < t.low_alarm, v > t.high_warning, v < t.low_warning};
}

void Thresholds4(Image& img, size_t at, const Thresholds& t, uint16_t (*enc)(double)) {
  img.U16(at, enc(t.high_alarm)).U16(at + 2, enc(t.low_alarm));
  img.U16(at + 4, enc(t.high_warning)).U16(at + 6, enc(t.low_warning));
}

void TempThresholds4(Image& img, size_t at, const Thresholds& t) {
  img.S16(at, Temp16(t.high_alarm)).S16(at + 2, Temp16(t.low_alarm));
  img.S16(at + 4, Temp16(t.high_warning)).S16(at + 6, Temp16(t.low_warning));
}

uint8_t Sum(const Image& img, size_t from, size_t to) {  // checksum of [from, to)
  unsigned sum = 0;
  for (size_t i = from; i < to; ++i) sum += img.bytes()[i];
  return static_cast<uint8_t>(sum);
}

double Lane(const std::vector<double>& v, int lane) {
  return lane < static_cast<int>(v.size()) ? v[lane] : 0.0;
}

// SFF-8472 rev 12.4: A0h Table 4-1, A2h Tables 9-5 (thresholds), 9-11 (A/D values), 9-12
// (status), 9-13/9-14 (alarm and warning flags). Internally calibrated.
Image RenderSfp(const ModuleState& m) {
  Image img(512);
  img.U8(0, 0x03).U8(1, 0x04).U8(2, 0x07);  // SFP/SFP+/SFP28, 2-wire ID, LC
  img.U8(3, 0x10);                          // 10GBASE-SR compliance bit; 25G in byte 36
  img.U8(12, 0xFF).U8(36, 0x02);            // nominal rate > 25.4 Gb/s; 25GBASE-SR
  img.Ascii(20, 16, m.vendor).U8(37, 0x00).U8(38, 0x02).U8(39, 0xc9);
  img.Ascii(40, 16, m.part).Ascii(56, 4, "A0").U16(60, 850);
  img.U8(63, Sum(img, 0, 63));
  img.U8(66, 0x67);  // nominal rate, 250 Mb/s units (25.78 Gb/s)
  img.Ascii(68, 16, m.serial).Ascii(84, 8, m.date_code);
  img.U8(92, 0x68).U8(93, 0xF0).U8(94, 0x08);  // DDM, internal cal., average Rx; rev 12.3
  img.U8(95, Sum(img, 64, 95));
  const size_t a2 = 256;
  TempThresholds4(img, a2 + 0, m.temperature);
  Thresholds4(img, a2 + 8, m.vcc, Vcc16);
  Thresholds4(img, a2 + 16, m.bias, Bias16);
  Thresholds4(img, a2 + 24, m.tx_power, Power16);
  Thresholds4(img, a2 + 32, m.rx_power, Power16);
  img.U8(a2 + 95, Sum(img, a2, a2 + 95));
  img.S16(a2 + 96, Temp16(m.temperature_c)).U16(a2 + 98, Vcc16(m.vcc_v));
  img.U16(a2 + 100, Bias16(Lane(m.bias_ma, 0)));
  img.U16(a2 + 102, Power16(Lane(m.tx_power_mw, 0)));
  img.U16(a2 + 104, Power16(Lane(m.rx_power_mw, 0)));
  const Flags t = Check(m.temperature_c, m.temperature), v = Check(m.vcc_v, m.vcc);
  const Flags b = Check(Lane(m.bias_ma, 0), m.bias);
  const Flags tx = Check(Lane(m.tx_power_mw, 0), m.tx_power);
  const Flags rx = Check(Lane(m.rx_power_mw, 0), m.rx_power);
  img.U8(a2 + 110, rx.la ? 0x02 : 0x00);  // Rx_LOS follows the low alarm
  img.U8(a2 + 112, static_cast<uint8_t>(t.ha << 7 | t.la << 6 | v.ha << 5 | v.la << 4 |
                                         b.ha << 3 | b.la << 2 | tx.ha << 1 | tx.la));
  img.U8(a2 + 113, static_cast<uint8_t>(rx.ha << 7 | rx.la << 6));
  img.U8(a2 + 116, static_cast<uint8_t>(t.hw << 7 | t.lw << 6 | v.hw << 5 | v.lw << 4 |
                                         b.hw << 3 | b.lw << 2 | tx.hw << 1 | tx.lw));
  img.U8(a2 + 117, static_cast<uint8_t>(rx.hw << 7 | rx.lw << 6));
  return img;
}

uint8_t Nibble(const Flags& f) {
  return static_cast<uint8_t>(f.ha << 3 | f.la << 2 | f.hw << 1 | f.lw);
}

// SFF-8636 rev 2.10a: lower page Tables 6-2..6-10 (flags bytes 3-14, monitors 22-57), upper page
// 00h Tables 6-15..6-27, page 03h Table 6-29 (thresholds). Image: lower 0-127, page 00h 128-255,
// pages 01h, 02h, 03h at 256, 384, 512 (each holding bytes 128-255).
Image RenderQsfp28(const ModuleState& m) {
  Image img(640);
  img.U8(0, 0x11).U8(1, 0x08).U8(2, 0x00);  // QSFP28, SFF-8636 rev 2.8+, paged, data ready
  uint8_t los = 0;
  for (int lane = 0; lane < 4; ++lane) {
    if (RxLos(Lane(m.rx_power_mw, lane))) los |= static_cast<uint8_t>(1 << lane);
  }
  img.U8(3, los);
  const Flags t = Check(m.temperature_c, m.temperature), v = Check(m.vcc_v, m.vcc);
  img.U8(6, static_cast<uint8_t>(t.ha << 7 | t.la << 6 | t.hw << 5 | t.lw << 4));
  img.U8(7, static_cast<uint8_t>(v.ha << 7 | v.la << 6 | v.hw << 5 | v.lw << 4));
  // Bytes 9-14: two lanes per byte, lane 1 (or 3) in the high nibble.
  auto lane_flags = [&](size_t at, const std::vector<double>& values, const Thresholds& th) {
    for (int pair = 0; pair < 2; ++pair) {
      const uint8_t hi = Nibble(Check(Lane(values, 2 * pair), th));
      const uint8_t lo = Nibble(Check(Lane(values, 2 * pair + 1), th));
      img.U8(at + pair, static_cast<uint8_t>(hi << 4 | lo));
    }
  };
  lane_flags(9, m.rx_power_mw, m.rx_power);
  lane_flags(11, m.bias_ma, m.bias);
  lane_flags(13, m.tx_power_mw, m.tx_power);
  img.S16(22, Temp16(m.temperature_c)).U16(26, Vcc16(m.vcc_v));
  for (int lane = 0; lane < 4; ++lane) {
    img.U16(34 + 2 * lane, Power16(Lane(m.rx_power_mw, lane)));
    img.U16(42 + 2 * lane, Bias16(Lane(m.bias_ma, lane)));
    img.U16(50 + 2 * lane, Power16(Lane(m.tx_power_mw, lane)));
  }
  img.U8(128, 0x11).U8(129, 0x00).U8(130, 0x0C);  // QSFP28, MPO 1x12
  img.U8(131, 0x80);                              // extended compliance (byte 192)
  img.U8(147, 0x00).Ascii(148, 16, m.vendor).U8(165, 0x00).U8(166, 0x02).U8(167, 0xc9);
  img.Ascii(168, 16, m.part).Ascii(184, 2, "A0").U16(186, 850 * 20);
  img.U8(191, Sum(img, 128, 191));
  img.U8(192, 0x02);  // 100GBASE-SR4
  img.Ascii(196, 16, m.serial).Ascii(212, 8, m.date_code);
  img.U8(220, 0x0C | 0x30);  // temperature, Vcc, average Rx power, Tx power measured
  img.U8(223, Sum(img, 192, 223));
  const size_t p3 = 512 - 128;  // page 03h byte N lives at image offset p3 + N
  TempThresholds4(img, p3 + 128, m.temperature);
  Thresholds4(img, p3 + 144, m.vcc, Vcc16);
  Thresholds4(img, p3 + 176, m.rx_power, Power16);
  Thresholds4(img, p3 + 184, m.bias, Bias16);
  Thresholds4(img, p3 + 192, m.tx_power, Power16);
  return img;
}

// CMIS 5.2: lower page Table 8-4 ff. (module flags byte 9, monitors 14-17, application 1 at
// 86-89), page 00h (identity 128-255), page 01h (138 wavelength, 159-160 monitor support),
// page 02h (thresholds), page 11h (lane flags 135-152, lane monitors 154-201).
Image RenderCmis(const ModuleState& m) {
  Image img(768);
  const uint8_t id = m.type == ModuleType::kOsfp ? 0x19 : 0x18;
  img.U8(0, id).U8(1, 0x52).U8(2, 0x00).U8(3, 3 << 1);  // CMIS 5.2, paged, ModuleReady
  const Flags t = Check(m.temperature_c, m.temperature), v = Check(m.vcc_v, m.vcc);
  img.U8(9, static_cast<uint8_t>(t.ha | t.la << 1 | t.hw << 2 | t.lw << 3 | v.ha << 4 |
                                  v.la << 5 | v.hw << 6 | v.lw << 7));
  img.S16(14, Temp16(m.temperature_c)).U16(16, Vcc16(m.vcc_v));
  // MMF media; application 1: 400GAUI-4 host (0x?) to 400GBASE-SR4 media.
  img.U8(85, 0x01).U8(86, 0x1C).U8(87, 0x11);
  img.U8(88, static_cast<uint8_t>((m.lanes & 0x0F) << 4 | (m.lanes & 0x0F))).U8(89, 0x01);
  img.U8(128, id).Ascii(129, 16, m.vendor).U8(145, 0x00).U8(146, 0x02).U8(147, 0xc9);
  img.Ascii(148, 16, m.part).Ascii(164, 2, "A0").Ascii(166, 16, m.serial);
  img.Ascii(182, 8, m.date_code).U8(203, 0x0D);  // MPO 1x12
  const size_t p1 = 256 - 128, p2 = 384 - 128, p11 = 640 - 128;
  img.U16(p1 + 138, 850 * 20);
  img.U8(p1 + 159, 0x03);  // temperature and Vcc monitors
  img.U8(p1 + 160, 0x07);  // bias, Tx power, Rx power monitors; bias multiplier x1
  TempThresholds4(img, p2 + 128, m.temperature);
  Thresholds4(img, p2 + 136, m.vcc, Vcc16);
  Thresholds4(img, p2 + 176, m.tx_power, Power16);
  Thresholds4(img, p2 + 184, m.bias, Bias16);
  Thresholds4(img, p2 + 192, m.rx_power, Power16);
  uint8_t tx_flags[4] = {}, bias_flags[4] = {}, rx_flags[4] = {}, rx_los = 0;
  for (int lane = 0; lane < m.lanes && lane < 8; ++lane) {
    const uint8_t bit = static_cast<uint8_t>(1 << lane);
    auto mark = [&](uint8_t (&out)[4], const Flags& f) {
      if (f.ha) out[0] |= bit;
      if (f.la) out[1] |= bit;
      if (f.hw) out[2] |= bit;
      if (f.lw) out[3] |= bit;
    };
    const Flags rx = Check(Lane(m.rx_power_mw, lane), m.rx_power);
    mark(tx_flags, Check(Lane(m.tx_power_mw, lane), m.tx_power));
    mark(bias_flags, Check(Lane(m.bias_ma, lane), m.bias));
    mark(rx_flags, rx);
    if (RxLos(Lane(m.rx_power_mw, lane))) rx_los |= bit;
    img.U16(p11 + 154 + 2 * lane, Power16(Lane(m.tx_power_mw, lane)));
    img.U16(p11 + 170 + 2 * lane, Bias16(Lane(m.bias_ma, lane)));
    img.U16(p11 + 186 + 2 * lane, Power16(Lane(m.rx_power_mw, lane)));
  }
  for (int i = 0; i < 4; ++i) {
    img.U8(p11 + 139 + i, tx_flags[i]).U8(p11 + 143 + i, bias_flags[i]);
    img.U8(p11 + 149 + i, rx_flags[i]);
  }
  img.U8(p11 + 147, rx_los);
  return img;
}

}  // namespace

ModuleState NewModule(ModuleType type, int lanes, int rate_gbps, int serial_seed) {
  ModuleState m;
  m.type = type;
  m.lanes = type == ModuleType::kSfp ? 1 : lanes;
  char serial[24];
  std::snprintf(serial, sizeof(serial), "FS%02d%08X", rate_gbps % 100, 0x5a000 + serial_seed);
  m.serial = serial;
  switch (type) {
    case ModuleType::kSfp: m.part = "SFP28-25G-SR"; break;
    case ModuleType::kQsfp28: m.part = "QSFP28-100G-SR4"; break;
    case ModuleType::kQsfpDd: m.part = rate_gbps >= 400 ? "QDD-400G-SR4" : "QDD-200G-SR4"; break;
    case ModuleType::kOsfp: m.part = "OSFP-400G-SR4"; break;
    case ModuleType::kNone: break;
  }
  for (int lane = 0; lane < m.lanes; ++lane) {
    m.bias_ma.push_back(7.5 + 0.15 * lane);
    m.tx_power_mw.push_back(0.90 - 0.02 * lane);
    m.rx_power_mw.push_back(0.80 - 0.03 * lane);
  }
  return m;
}

Image RenderModule(const ModuleState& m) {
  switch (m.type) {
    case ModuleType::kSfp: return RenderSfp(m);
    case ModuleType::kQsfp28: return RenderQsfp28(m);
    case ModuleType::kQsfpDd:
    case ModuleType::kOsfp: return RenderCmis(m);
    case ModuleType::kNone: break;
  }
  return Image(0);
}

}  // namespace fabricwatch::sim
