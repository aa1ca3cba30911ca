#pragma once
// Transceiver EEPROM images built byte by byte from the spec tables (SFF-8472, SFF-8636, CMIS),
// in the flat layout of docs/design.md §5: shared by the decoder tests and the optics collector
// tests, which write them into replay directories.

#include "tools/fabricsim/module_image.h"

namespace fabricwatch::testing {

using Image = ::fabricwatch::sim::Image;


Image SfpInternal();   // SFP+ 10G-SR, internally calibrated, 512 bytes
Image SfpExternal();   // the same, externally calibrated
Image Qsfp28Paged();   // QSFP28 100G-SR4, paged, 640 bytes
Image QsfpFlatDac();   // QSFP+ passive DAC, flat memory, 256 bytes
Image Cmis8Lane();     // QSFP-DD 400G-SR8, 768 bytes, 8 lanes
Image CmisFlatDac();   // CMIS passive DAC, flat memory, 256 bytes

}  // namespace fabricwatch::testing
