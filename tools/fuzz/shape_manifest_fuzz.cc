// libFuzzer target for the shape manifest parser (--shape.file, detectors/link_degraded/
// manifest.h, issue 20): any bytes as the file. Seeds: tools/fuzz/seeds/shape_manifest/.
//
// Besides the sanitizers' checks, every accepted manifest must honour what the parser promises:
// no exception escapes, every port entry names a port (pci_address, device or netdev), widths are
// IBTA/Ethernet lane counts, rates and lane rates are positive and finite, a lane speed name comes
// with its nominal lane rate, and every error names the file.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "detectors/link_degraded/manifest.h"

namespace {

using fabricwatch::detect::shape::Expectation;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
  }
}

void CheckExpectation(const Expectation& e) {
  if (e.width) {
    const int w = *e.width;
    Check(w == 1 || w == 2 || w == 4 || w == 8 || w == 12, "width is a lane count");
  }
  for (const auto& rate : {e.rate_gbps, e.lane_gbps, e.pcie_speed_gts}) {
    if (rate) Check(std::isfinite(*rate) && *rate > 0, "rates are positive and finite");
  }
  if (!e.lane_speed.empty()) Check(e.lane_gbps.has_value(), "a lane speed has its lane rate");
  if (e.state) Check(*e.state >= 0 && *e.state <= 5, "state is an IB port state");
  Check(e.link_layer.empty() || e.link_layer == "InfiniBand" || e.link_layer == "Ethernet",
        "link layer");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto manifest = fabricwatch::detect::shape::ParseManifest(text, "fuzz.yaml");
    if (!manifest) {
      Check(manifest.error().message().find("fuzz.yaml") != std::string::npos,
            "an error names the file");
      return 0;
    }
    for (const auto& port : manifest->ports) {
      Check(!port.pci_address.empty() || !port.device.empty() || !port.netdev.empty(),
            "a port entry names a port");
      if (port.port) Check(*port.port >= 1 && *port.port <= 255, "port number");
      CheckExpectation(port.expect);
    }
    for (const auto& group : manifest->groups) {
      if (group.count) Check(*group.count >= 0, "count is not negative");
      Check(group.expect.link_layer.empty() && group.expect.board_id.empty(),
            "a group's selectors are not expectations");
      CheckExpectation(group.expect);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exception escaped: %s\n", e.what());
    std::abort();
  }
  return 0;
}
