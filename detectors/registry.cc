#include "detectors/registry.h"

#include "detectors/ber_growth/ber_growth.h"
#include "detectors/ber_growth/ber_growth_metrics.h"
#include "detectors/config_drift/config_drift.h"
#include "detectors/config_drift/config_drift_metrics.h"
#include "detectors/driver_fault/driver_fault.h"
#include "detectors/driver_fault/driver_fault_metrics.h"
#include "detectors/link_degraded/link_degraded.h"
#include "detectors/link_degraded/link_degraded_metrics.h"
#include "detectors/link_flap/link_flap.h"
#include "detectors/link_flap/link_flap_metrics.h"
#include "detectors/optical_drift/optical_drift.h"
#include "detectors/optical_drift/optical_drift_metrics.h"
#include "detectors/pcie_degraded/pcie_degraded.h"
#include "detectors/pcie_degraded/pcie_degraded_metrics.h"
#include "detectors/pfc_storm/pfc_storm.h"
#include "detectors/pfc_storm/pfc_storm_metrics.h"
#include "detectors/thermal_drift/thermal_drift.h"
#include "detectors/thermal_drift/thermal_drift_metrics.h"

namespace fabricwatch::detect {
namespace {

// One line per detector. Order is the order of the README table and of --help.
const DetectorInfo kDetectors[] = {
    {"link_flap",
     "Link flaps and outages of netdevs and IB ports: hard (5 in 10 s) and slow (2 in 6 h) "
     "flapping, a decaying flap penalty, sustained link down, downtime against the NCCL budget",
     true, LinkFlapDetectorOptions(), LinkFlapDetectorMetrics(), LinkFlapDetectorInputs(),
     MakeLinkFlapDetector, link_flap::kDeclaration, ValidateLinkFlapDetectorOptions},
    {"pfc_storm",
     "PFC pause storms per priority: source (we pause, nothing received) and victim (we are "
     "paused, nothing sent) from pause-time ratios, plus NIC storm-prevention events",
     true, PfcStormDetectorOptions(), PfcStormDetectorMetrics(), PfcStormDetectorInputs(),
     MakePfcStormDetector, pfc_storm::kDeclaration, ValidatePfcStormDetectorOptions},
    {"ber_growth",
     "Bit-error growth: effective (post-FEC) BER over Poisson-sized windows, IB symbol and "
     "fatal-class error counters, pre-FEC BER level and its trend towards the FEC limit",
     true, BerGrowthDetectorOptions(), BerGrowthDetectorMetrics(), BerGrowthDetectorInputs(),
     MakeBerGrowthDetector, ber_growth::kDeclaration, ValidateBerGrowthDetectorOptions},
    {"thermal_drift",
     "Transceiver module temperature against the module's own thresholds, its slew, a trend "
     "projection to the warning threshold, and NIC module over-temperature events",
     true, ThermalDriftDetectorOptions(), ThermalDriftDetectorMetrics(),
     ThermalDriftDetectorInputs(), MakeThermalDriftDetector, thermal_drift::kDeclaration,
     ValidateThermalDriftDetectorOptions},
    {"optical_drift",
     "Per-lane rx power and laser bias against the module's thresholds and against its own "
     "baseline (keyed by module serial, bias per temperature bin)",
     true, OpticalDriftDetectorOptions(), OpticalDriftDetectorMetrics(),
     OpticalDriftDetectorInputs(), MakeOpticalDriftDetector, optical_drift::kDeclaration,
     ValidateOpticalDriftDetectorOptions},
    {"pcie_degraded",
     "GPU and NIC PCIe links trained below their maximum width or speed, and AER error growth",
     true, PcieDegradedDetectorOptions(), PcieDegradedDetectorMetrics(),
     PcieDegradedDetectorInputs(), MakePcieDegradedDetector, pcie_degraded::kDeclaration,
     ValidatePcieDegradedDetectorOptions},
    {"link_degraded",
     "Fabric ports below the node's shape: width loss (4X -> 1X), speed loss (NDR -> HDR, "
     "400G -> 200G), ports stuck in INIT, down or missing when they should be there, firmware "
     "drift; the expectation comes from --shape.file or is learned from siblings and history",
     true, LinkDegradedDetectorOptions(), LinkDegradedDetectorMetrics(),
     LinkDegradedDetectorInputs(), MakeLinkDegradedDetector, link_degraded::kDeclaration,
     ValidateLinkDegradedDetectorOptions},
    {"config_drift",
     "Lossless-fabric, MTU and GPUDirect settings unlike the configuration or the sibling ports: "
     "PFC, ECN, trust, DSCP map, storm prevention, global pause, MTU, IB MTU, the GPUDirect "
     "RDMA module, ACS redirect, MPS and MRRS on GPU-NIC paths",
     true, ConfigDriftDetectorOptions(), ConfigDriftDetectorMetrics(), ConfigDriftDetectorInputs(),
     MakeConfigDriftDetector, config_drift::kDeclaration, ValidateConfigDriftDetectorOptions},
    {"driver_fault",
     "Faults only the fabric driver's kernel log shows: firmware fatal and health failures, "
     "fatal AER, slot power loss (critical); repeated command timeouts, module errors, and a "
     "flood of one event on one device (warning); the lines shown as evidence",
     true, DriverFaultDetectorOptions(), DriverFaultDetectorMetrics(), DriverFaultDetectorInputs(),
     MakeDriverFaultDetector, driver_fault::kDeclaration, ValidateDriverFaultDetectorOptions},
};

}  // namespace

std::span<const DetectorInfo> DetectorRegistry() { return kDetectors; }

std::optional<DetectorOptions> DefaultDetectorSelection(const DetectorInfo& info) {
  if (!info.enabled_by_default) return std::nullopt;
  return DetectorOptions{};
}

Result<std::vector<std::unique_ptr<Detector>>> BuildDetectors(const DetectorSelector& select) {
  std::vector<std::unique_ptr<Detector>> detectors;
  for (const DetectorInfo& info : kDetectors) {
    std::optional<DetectorOptions> options = select(info);
    if (!options) continue;
    auto detector = info.factory(*options);
    if (!detector) return Error(detector.error());
    detectors.push_back(std::move(*detector));
  }
  return detectors;
}

Status ValidateDetectorOptions(const DetectorInfo& info, const DetectorOptions& options) {
  return info.validate(options);
}

const DetectorInfo* FindDetector(std::string_view name) {
  for (const DetectorInfo& info : kDetectors) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace fabricwatch::detect
