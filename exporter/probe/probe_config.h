#pragma once
// The probe's settings (the `probe:` section of the configuration and the --probe.* flags), read
// by the agent's probe runner (drain confirmation) and by `fabricwatch check --check.probe`.

#include <chrono>
#include <map>

#include "exporter/probe/probe.h"

namespace fabricwatch::probe {

struct ProbeConfig {
  // The agent may probe a port on its own (to confirm a drain, hooks.confirm_with_probe). Off by
  // default: a probe moves real traffic through the port.
  bool enabled = false;
  ProbeOptions options;
  // A probe below this fraction of the port's expected rate is degraded (docs/probe.md says why
  // 0.5 is the default).
  double degraded_fraction = 0.5;
  // At most one probe of a port per interval; a request inside it gets the last result.
  std::chrono::seconds min_interval{600};
  // Probe a port even while a running job holds its RDMA device (the jobs collector knows).
  bool allow_with_jobs = false;
  // port → partner for the pair path ("mlx5_0/1: mlx5_1/1"); a port not listed is probed by
  // loopback.
  std::map<PortRef, PortRef> partners;
};

}  // namespace fabricwatch::probe
