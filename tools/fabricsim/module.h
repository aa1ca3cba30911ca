#pragma once
// A live transceiver: identity, thresholds and readings, rendered as the flat memory image the
// optics collector reads (docs/design.md §5): SFF-8472 512 bytes (A0h + A2h), SFF-8636 640 bytes
// (lower page + upper pages 00h-03h), CMIS 768 bytes (lower + pages 00h, 01h, 02h, 10h, 11h).
// All three specs use the same units for the monitors: temperature 1/256 °C (signed), Vcc
// 100 µV, bias 2 µA, optical power 0.1 µW. Alarm and warning flags are derived from the values
// against the module's own thresholds, as a module's firmware sets them.

#include <string>
#include <vector>

#include "tools/fabricsim/module_image.h"
#include "tools/fabricsim/node.h"

namespace fabricwatch::sim {

struct Thresholds {  // in the quantity's base unit of the struct below
  double high_alarm, low_alarm, high_warning, low_warning;
};

struct ModuleState {
  ModuleType type = ModuleType::kNone;
  std::string vendor = "FABRICSIM";
  std::string part;
  std::string serial;
  std::string date_code = "24031500";
  int lanes = 4;
  double temperature_c = 45.0;
  double vcc_v = 3.30;
  std::vector<double> bias_ma;
  std::vector<double> tx_power_mw;
  std::vector<double> rx_power_mw;
  Thresholds temperature{75, -5, 70, 0};
  Thresholds vcc{3.63, 2.97, 3.465, 3.135};
  Thresholds bias{15.0, 2.0, 13.0, 3.0};
  Thresholds tx_power{3.162, 0.100, 2.512, 0.158};  // +5 / -10 / +4 / -8 dBm
  Thresholds rx_power{3.162, 0.079, 2.512, 0.126};  // +5 / -11 / +4 / -9 dBm
};

// A healthy module of `type` for a port with `lanes` lanes; serial_seed makes the serial.
ModuleState NewModule(ModuleType type, int lanes, int rate_gbps, int serial_seed);

// The flat image; empty for ModuleType::kNone.
Image RenderModule(const ModuleState& module);

}  // namespace fabricwatch::sim
