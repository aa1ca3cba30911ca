#include "tests/testing/module_images.h"

namespace fabricwatch::testing {

// ---------------------------------------------------------------- hand-built images

// SFF-8472 Table 4-1 + Table 9-5/9-11: a 10G-SR SFP+, internally calibrated.
Image SfpInternal() {
  Image img(512);
  img.U8(0, 0x03).U8(1, 0x04).U8(2, 0x07);  // SFP, 2-wire ID, LC
  img.Ascii(20, 16, "ACME OPTICS").U8(37, 0x00).U8(38, 0x11).U8(39, 0x22);
  img.Ascii(40, 16, "SR-10G").Ascii(56, 4, "A1").U16(60, 850);
  img.Ascii(68, 16, "SN0001").Ascii(84, 8, "24010100");
  img.U8(92, 0x68).U8(93, 0x80).U8(94, 0x08);  // DDM, internal, average Rx; flags; rev 12.3
  const size_t a2 = 256;
  img.Thresholds4(a2 + 0, 80 * 256, static_cast<uint16_t>(-10 * 256), 75 * 256, 0xFB00);  // °C
  img.Thresholds4(a2 + 8, 36300, 29700, 34650, 31350);  // 3.63/2.97/3.465/3.135 V
  img.Thresholds4(a2 + 16, 6000, 1000, 5000, 1500);     // 12/2/10/3 mA
  img.Thresholds4(a2 + 24, 10000, 1000, 8000, 1500);    // 1.0/0.1/0.8/0.15 mW
  img.Thresholds4(a2 + 32, 12000, 100, 10000, 200);     // 1.2/0.01/1.0/0.02 mW
  img.S16(a2 + 96, static_cast<int16_t>(35.5 * 256)).U16(a2 + 98, 33000);
  img.U16(a2 + 100, 3500).U16(a2 + 102, 5500).U16(a2 + 104, 4321);
  img.U8(a2 + 110, 0x02);                     // RX_LOS
  img.U8(a2 + 112, 0x08).U8(a2 + 113, 0x40);  // bias high alarm, Rx power low alarm
  img.U8(a2 + 116, 0x80);                     // temperature high warning
  return img;
}

// Same module, externally calibrated (§9.3): the A/D values need the A2h 56-91 constants.
Image SfpExternal() {
  Image img = SfpInternal();
  const size_t a2 = 256;
  img.U8(92, 0x58);  // DDM, external, average
  img.F32(a2 + 56, 0.0f).F32(a2 + 60, 0.0f).F32(a2 + 64, 1e-5f);  // Rx_PWR(4), (3), (2)
  img.F32(a2 + 68, 0.5f).F32(a2 + 72, 5.0f);                      // Rx_PWR(1), Rx_PWR(0)
  img.U16(a2 + 76, 0x0200).S16(a2 + 78, 100);                     // bias ×2 + 100
  img.U16(a2 + 80, 0x0080).S16(a2 + 82, 10);                      // Tx power ×0.5 + 10
  img.U16(a2 + 84, 0x0180).S16(a2 + 86, -256);                    // temperature ×1.5 − 1 °C
  img.U16(a2 + 88, 0x0100).S16(a2 + 90, 500);                     // Vcc ×1 + 50 mV
  img.S16(a2 + 96, 20 * 256).U16(a2 + 98, 32500);
  img.U16(a2 + 100, 2000).U16(a2 + 102, 8000).U16(a2 + 104, 1000);
  return img;
}

// SFF-8636 Tables 6-2..6-7, 6-15, 6-23, 6-29: a QSFP28 100G-SR4, paged, 640 bytes.
Image Qsfp28Paged() {
  Image img(640);
  img.U8(0, 0x11).U8(1, 0x08).U8(2, 0x00);   // QSFP28, rev 2.8+, paged, data ready
  img.U8(3, 0x21);                           // Rx LOS lane 1, Tx LOS lane 2
  img.U8(4, 0x08);                           // Tx fault lane 4
  img.U8(6, 0x20).U8(7, 0x40);               // temp high warning, Vcc low alarm
  img.U8(9, 0x08).U8(10, 0x01);              // Rx power: lane 2 high alarm, lane 4 low warning
  img.U8(11, 0x80).U8(14, 0x04);             // bias lane 1 high alarm, Tx power lane 4 LA
  img.S16(22, static_cast<int16_t>(41.25 * 256)).U16(26, 32900);
  for (int lane = 0; lane < 4; ++lane) {
    img.U16(34 + 2 * lane, static_cast<uint16_t>(8000 + 100 * lane));   // Rx 0.80.. mW
    img.U16(42 + 2 * lane, static_cast<uint16_t>(3000 + 250 * lane));   // 6.0.. mA
    img.U16(50 + 2 * lane, static_cast<uint16_t>(6000 + 10 * lane));    // 0.60.. mW
  }
  img.U8(128, 0x11).U8(130, 0x0C);  // MPO 1x12
  img.U8(147, 0x00).Ascii(148, 16, "ACME").Ascii(168, 16, "QSFP28-SR4");
  img.Ascii(184, 2, "B").U16(186, 850 * 20).Ascii(196, 16, "Q28SN").Ascii(212, 8, "230101");
  img.U8(220, 0x3C);  // temp, Vcc, average Rx, Tx power measured
  const size_t p3 = 512 - 128;  // page 03h upper: image offset 512 holds byte 128
  img.Thresholds4(p3 + 128, 75 * 256, static_cast<uint16_t>(-5 * 256), 70 * 256, 0);
  img.Thresholds4(p3 + 144, 36000, 30000, 35000, 31000);
  img.Thresholds4(p3 + 176, 34674, 513, 27542, 1288);
  img.Thresholds4(p3 + 184, 7500, 1000, 7000, 1500);
  img.Thresholds4(p3 + 192, 31623, 1000, 25119, 1585);
  return img;
}

// A flat-memory passive QSFP+ DAC: lower page + page 00h only, no DOM at all.
Image QsfpFlatDac() {
  Image img(256);
  img.U8(0, 0x0D).U8(1, 0x05).U8(2, 0x04);  // QSFP+, Flat_mem
  img.U8(128, 0x0D).U8(130, 0x23).U8(147, 0xA0);
  img.Ascii(148, 16, "CABLECO").Ascii(168, 16, "DAC-40G-1M").Ascii(196, 16, "DAC123");
  img.U16(186, 0x0304);  // attenuation, not a wavelength
  return img;
}

// CMIS 5.0 Tables 8-4..8-80: a 400G-SR8 QSFP-DD, 768 bytes, 8 media lanes, bias multiplier ×2.
Image Cmis8Lane() {
  Image img(768);
  img.U8(0, 0x18).U8(1, 0x50).U8(2, 0x00).U8(3, 3 << 1);  // QSFP-DD, CMIS 5.0, paged, Ready
  img.U8(9, 0x05);  // temp high alarm + temp high warning
  img.S16(14, static_cast<int16_t>(52.5 * 256)).U16(16, 33100);
  img.U8(85, 0x01).U8(86, 0x11).U8(87, 0x10).U8(88, 0x88).U8(89, 0x01);  // MMF, 8 host/8 media
  img.U8(128, 0x18).Ascii(129, 16, "ACME").U8(145, 0x00).U8(146, 0x1c).U8(147, 0x73);
  img.Ascii(148, 16, "QDD-400G-SR8").Ascii(164, 2, "01").Ascii(166, 16, "CMISSN01");
  img.Ascii(182, 8, "24020200").U8(203, 0x0D);
  const size_t p1 = 256 - 128, p2 = 384 - 128, p11 = 640 - 128;
  img.U16(p1 + 138, 850 * 20);  // nominal wavelength, 0.05 nm units
  img.U8(p1 + 159, 0x03);       // temperature + Vcc monitors
  img.U8(p1 + 160, 0x07 | (1 << 3));  // bias, Tx, Rx power monitors; bias multiplier 01b = ×2
  img.Thresholds4(p2 + 128, 75 * 256, 0, 70 * 256, 5 * 256);
  img.Thresholds4(p2 + 136, 34650, 31350, 34500, 31500);
  img.Thresholds4(p2 + 176, 31623, 501, 25119, 794);
  img.Thresholds4(p2 + 184, 7500, 500, 7000, 1000);  // ×2 µA ×2 → 30/2/28/4 mA
  img.Thresholds4(p2 + 192, 31623, 251, 25119, 398);
  img.U8(p11 + 135, 0x80).U8(p11 + 136, 0x40).U8(p11 + 147, 0x01);  // fault 8, Tx LOS 7, LOS 1
  img.U8(p11 + 139, 0x02).U8(p11 + 146, 0x04).U8(p11 + 150, 0x01);  // lane flags
  for (int lane = 0; lane < 8; ++lane) {
    img.U16(p11 + 154 + 2 * lane, static_cast<uint16_t>(7000 + lane));
    img.U16(p11 + 170 + 2 * lane, static_cast<uint16_t>(2000 + 10 * lane));
    img.U16(p11 + 186 + 2 * lane, static_cast<uint16_t>(6000 + 100 * lane));
  }
  return img;
}

// A flat-memory CMIS passive copper DAC (256 bytes: lower page + page 00h).
Image CmisFlatDac() {
  Image img(256);
  img.U8(0, 0x18).U8(1, 0x40).U8(2, 0x80).U8(3, 3 << 1);
  img.U8(85, 0x03).U8(86, 0x11).U8(87, 0x01).U8(88, 0x88);
  img.U8(128, 0x18).Ascii(129, 16, "CABLECO").Ascii(148, 16, "QDD-DAC-1M");
  img.Ascii(166, 16, "DAC0001").U8(203, 0x23);
  return img;
}

}  // namespace fabricwatch::testing
