// Compile-fail cases of the checked labels (issue 36), built by check_compile_fail.sh: case 0
// must compile, every other case must fail with its message. A label the family's descriptor does
// not declare, a family bound to no collector as a detector input, and a collector named by a
// string are compile errors, not reads of "" at run time.
#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>

#include <vector>

#include "collectors/core/family_label.h"
#include "collectors/rdma/rdma_metrics.h"
#include "detectors/core/detector.h"
#include "detectors/core/inputs.h"
#include "detectors/core/snapshot_lookup.h"

namespace fabricwatch::detect {

constexpr MetricDesc kUnbound{"fabric_x", "x", MetricKind::kGauge, {"netdev"}};

[[maybe_unused]] void Reads(const prometheus::ClientMetric& m, const Families& families,
                            const SnapshotView& snapshot) {
#if CASE == 0  // the checked forms, as detectors write them
  (void)Label<rdma::kPortInfo>(m, "netdev");
  (void)FindValue<rdma::kPortState>(families, {{"device", "mlx5_0"}, {"port", "1"}});
  (void)LabelsMatch<rdma::kPortInfo>(m, {{"link_layer", "InfiniBand"}});
  constexpr MetricInput kInput{rdma::kPortInfo, {"device", "netdev"}};
  static_assert(kInput.collector == rdma::kCollector);
  (void)snapshot.From<rdma::kCollector>();
#elif CASE == 1  // expect: label not declared by the family
  (void)Label<rdma::kPortInfo>(m, "netdve");
#elif CASE == 2  // expect: label not declared by the family
  (void)FindValue<rdma::kPortState>(families, {{"netdev", "eth0"}});
#elif CASE == 3  // expect: label not declared by the family
  (void)LabelsMatch<rdma::kPortState>(m, {{"lane", "1"}});
#elif CASE == 4  // expect: MetricInput lists a label the family does not declare
  constexpr MetricInput kInput{rdma::kPortState, {"device", "lane"}};
#elif CASE == 5  // expect: 'const fabricwatch::MetricDesc' is not derived from
  constexpr MetricInput kInput{kUnbound, {"netdev"}};
#elif CASE == 6  // expect: SnapshotView::From(const char [5]) const
  (void)snapshot.From("rdma");
#endif
  (void)m;
  (void)families;
  (void)snapshot;
}

}  // namespace fabricwatch::detect
