#pragma once
// The `probe:` section of --config.file and the --probe.* flags (issue 37), into
// probe::ProbeConfig (exporter/probe/probe_config.h).
//
//   probe:
//     enabled: false            # the agent may probe a port itself (hooks.confirm_with_probe)
//     duration: 1s              # bandwidth phase; > 0
//     timeout: 5s               # the whole probe, set-up included; >= duration × 1.1 + 1s
//     message-size: 65536       # bytes of one RDMA WRITE: 64 .. 4194304 (KiB, MiB suffixes)
//     window: 16                # writes in flight: 1 .. 128
//     degraded-fraction: 0.5    # below this fraction of the expected rate: degraded; (0, 1]
//     min-interval: 10m         # one probe of a port per interval; > 0
//     allow-with-jobs: false    # probe while a running job holds the port's device open
//     partners: {"mlx5_0/1": "mlx5_1/1"}   # pair path through the fabric; else loopback
//
// Flags: --probe.enabled, --probe.duration, --probe.timeout, --probe.degraded-fraction,
// --probe.min-interval, --probe.allow-with-jobs (given flags win over the file, as every flag
// does).

#include <string>

#include "base/status.h"
#include "base/yaml_reader.h"
#include "exporter/probe/probe_config.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace fabricwatch::exporter {

// Applies the value of the `probe` key over `config` (the defaults); errors name the file, the
// line and the key: "fw.yml:3:13: probe.window: expected an integer between 1 and 128, got 0".
Status ApplyProbeYaml(const YamlValue& node, probe::ProbeConfig& config);

// The ranges of issue 37: degraded-fraction in (0, 1], duration and min-interval > 0, timeout
// >= MinProbeTimeout(duration), window 1..128, message size 64 B..4 MiB, partners "dev/port" and
// not the port itself.
Status ValidateProbeConfig(const probe::ProbeConfig& config);

// The shortest probe.timeout for `duration`: duration × 1.1 (the latency phase adds a tenth of
// it) + 1 s of set-up (opening the device, registering memory, connecting the QPs).
std::chrono::milliseconds MinProbeTimeout(std::chrono::milliseconds duration);

// The --probe.* flags, as text until applied (only given flags override).
struct ProbeFlags {
  bool enabled = false;
  bool allow_with_jobs = false;
  std::string duration, timeout, degraded_fraction, min_interval;
  CLI::Option* enabled_flag = nullptr;
  CLI::Option* allow_with_jobs_flag = nullptr;
  CLI::Option* duration_flag = nullptr;
  CLI::Option* timeout_flag = nullptr;
  CLI::Option* degraded_fraction_flag = nullptr;
  CLI::Option* min_interval_flag = nullptr;
};
void AddProbeFlags(CLI::App& app, ProbeFlags& flags);
Status ApplyProbeFlags(const ProbeFlags& flags, probe::ProbeConfig& config);

}  // namespace fabricwatch::exporter
