#pragma once
// The rdma collector's own families that nothing else reads (the shared ones are in
// rdma_metrics.h), apart from rdma.cc so that it stays within the size limit.

#include "base/metric_sink.h"
#include "collectors/rdma/rdma_metrics.h"

namespace fabricwatch::rdma {

inline constexpr LabelNames kPortCounterLabels{"device", "port", "counter"};

inline constexpr Family kPortActive{"fabric_rdma_port_active",
                                    "1 if the logical port state is ACTIVE (4), else 0.",
                                    MetricKind::kGauge, kPortLabels};
inline constexpr Family kPortLinkUp{
    "fabric_rdma_port_physical_link_up",
    "1 if the physical port state is LinkUp (5), else 0.",
    MetricKind::kGauge,
    kPortLabels,
    {},
    {ExportRule::kOff, "fabric_rdma_port_phys_state == 5 (LinkUp)"}};
inline constexpr Family kPortLid{"fabric_rdma_port_lid",
                                 "Local identifier of an InfiniBand port (lid); 0 without an SM.",
                                 MetricKind::kGauge, kPortLabels};
inline constexpr Family kSaturated{
    "fabric_rdma_port_saturated",
    "1 if an IBA port counter sits at its maximum (all ones) and stopped counting: its rate "
    "reads zero whatever happens until it is reset (e.g. perfquery -R); 0 otherwise.",
    MetricKind::kGauge,
    kPortCounterLabels,
    {},
    {ExportRule::kNonZero,
     "13 IBA counters per port (104 on hgx-roce), 1 only for one stuck at its maximum"}};
inline constexpr Family kPmaOther{
    "fabric_rdma_port_pma_stat_total",
    "A counters/ or counters_ext/ file with no curated metric, by raw file name.",
    MetricKind::kCounter, kPortCounterLabels};
inline constexpr Family kHwOther{
    "fabric_rdma_port_hw_stat_total",
    "A driver counter in ports/<n>/hw_counters with no curated metric, by raw file name.",
    MetricKind::kCounter, kPortCounterLabels};
inline constexpr Family kDeviceHw{
    "fabric_rdma_device_hw_stat_total",
    "A device-level driver counter in <device>/hw_counters, by raw file name.",
    MetricKind::kCounter,
    {"device", "counter"}};

}  // namespace fabricwatch::rdma
