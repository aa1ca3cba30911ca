#include "detectors/core/registry.h"

#include "detectors/link_flap/link_flap.h"
#include "detectors/pfc_storm/pfc_storm.h"

namespace fabricwatch::detect {
namespace {

// One line per detector. Order is the order of the README table and of --help.
const DetectorInfo kDetectors[] = {
    {"link_flap",
     "Link flaps and outages of netdevs and IB ports: hard (5 in 10 s) and slow (2 in 6 h) "
     "flapping, a decaying flap penalty, sustained link down, downtime against the NCCL budget",
     true, LinkFlapDetectorOptions(), LinkFlapDetectorMetrics(), MakeLinkFlapDetector},
    {"pfc_storm",
     "PFC pause storms per priority: source (we pause, nothing received) and victim (we are "
     "paused, nothing sent) from pause-time ratios, plus NIC storm-prevention events",
     true, PfcStormDetectorOptions(), PfcStormDetectorMetrics(), MakePfcStormDetector},
};

}  // namespace

std::span<const DetectorInfo> DetectorRegistry() { return kDetectors; }

const DetectorInfo* FindDetector(std::string_view name) {
  for (const DetectorInfo& info : kDetectors) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace fabricwatch::detect
