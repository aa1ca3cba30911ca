#pragma once
// Collector `optics`: transceiver diagnostics (DOM) for SFP (SFF-8472), QSFP (SFF-8636/8436) and
// QSFP-DD/OSFP (CMIS), plus the NIC's own module temperature sensors for InfiniBand ports.
//
// Sources (docs/reference.md §3, §5):
//   module memory  ETHTOOL_MSG_MODULE_EEPROM_GET (pages the module advertises), falling back to
//                  ETHTOOL_GMODULEINFO + ETHTOOL_GMODULEEEPROM; or DIR/<netdev>/module-eeprom
//                  with --path.ethtool=DIR (docs/design.md §5 image layout). Needs CAP_NET_ADMIN.
//   decoding       collectors/optics/{sff8472,sff8636,cmis}.cc
//   hwmon (mlx5)   <sysfs>/class/hwmon/hwmonN with name "mlx5" (kernel 6.6+): temp*_label
//                  "asic" / "Module<N>", temp*_input, temp*_crit, temp*_highest (millidegrees),
//                  device -> the PCI function, mapped to its RDMA device. IB ports have no module
//                  EEPROM through ethtool (IPoIB has no module operations), so this is how
//                  their module temperature is watched.
// Cadence: the collector runs every 5 s, but each module is read only every module-interval
// (30 s), at most a few per run, so eight modules are never read in one burst and a slow I2C read
// delays nothing else. Between reads the last decoded values are exported again with their read
// time (fabric_optics_last_read_timestamp_seconds). No module, an unsupported driver or a port
// without a cage is reported once, quietly, as absent (fabric_optics_module_present 0 or no
// series).

#include <memory>
#include <span>

#include "collectors/core/collector.h"
#include "collectors/core/collector_info.h"

namespace fabricwatch::optics {

std::span<const MetricDesc> OpticsMetrics();
std::span<const CollectorOptionSpec> OpticsOptions();
// CAP_NET_ADMIN for the module EEPROM when the kernel is read.
std::span<const PrivilegeNeed> OpticsPrivileges();
Result<std::unique_ptr<Collector>> NewOpticsCollector(const CollectorContext& context);

}  // namespace fabricwatch::optics
