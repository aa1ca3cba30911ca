#!/usr/bin/env bash
# Consistency of alerts/ and dashboards/ with what the agent exports, against a real Prometheus:
#  1. every metric name used in the alerting and recording rules and in the dashboard queries
#     exists in the agent's exposition (or --help-metrics), is a recording rule of alerts/, or a
#     Prometheus-made series (up, scrape_*, ALERTS);
#  2. Prometheus (1 s scrapes, the shipped rules loaded) scrapes agents for a while, and every
#     dashboard panel query returns data, from the agent on the simulator (build/tools/fabricsim)
#     running early faults. Only the event-listener panels may be empty (those metrics exist on a
#     host /sys, never on a replay root), and unknown kernel-log lines (the simulator writes none).
# Usage: bash tests/e2e/dashboard_queries_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=alerting_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/alerting_lib.sh"
e2e_init dashboard_queries_test "$1"
for t in jq promtool; do command -v "$t" >/dev/null || fail "$t missing (tools/install-deps.sh test)"; done
SRC="$FABRICWATCH_SOURCE_DIR"
SIM="${FABRICSIM:-$(dirname "$FABRICWATCH_BIN")/../tools/fabricsim/fabricsim}"

targets=()
[[ -x "$SIM" ]] || fail "the simulator is not built ($SIM); it is part of the default build"
mkdir -p "$E2E_TMP/sim"
# Faults from the first seconds, so the anomaly panels have data within the test's window, and
# lasting past it, so a slow Prometheus start on a loaded machine still scrapes them: the link
# flaps until 43 s (the flapping-ports rules need carrier-down increases Prometheus saw), the
# module ramps ~2 °C/s, past its warning and alarm by ~18 s and there until 42 s (a ramp
# recovers when it ends). PFC off on one port feeds the configuration row (config_drift held 2 s
# rather than 30 s, within the window); failed ACCESS_REG commands in the kernel log feed the
# kernel-log panels. A NIC that trains at half width feeds the downtrained-links table (the series
# budget exports a link's flag once it is 1).
cat >"$E2E_TMP/scenario.yaml" <<'YAML'
preset: hgx-roce
duration: 30m
events:
  - {at: 2s, fault: pfc_storm_source, device: mlx5_1, priority: 3, duration: 20m}
  - {at: 2s, fault: congestion, device: mlx5_0, priority: 3, duration: 20m}
  - {at: 3s, fault: link_flap, device: mlx5_3, count: 20, period: 2s, down: 1}
  - {at: 2s, fault: module_temp_ramp, device: mlx5_6, target_celsius: 120, duration: 40s}
  - {at: 2s, fault: pfc_off, device: mlx5_2, duration: 20m}
  - {at: 2s, fault: pcie_downtrain, device: mlx5_5, duration: 20m}
  - {at: 2s, fault: access_reg_flood, device: mlx5_4, rate: 5, duration: 20m}
YAML
# A state file and a dry-run notify hook, so the agent-health panels of both have series.
cat >"$E2E_TMP/agent.yaml" <<'YAML'
hooks:
  dry_run: true
  run:
    - {name: notify, command: [/bin/true], action: notify, detectors: [pfc_storm, link_flap]}
YAML
"$SIM" run --preset hgx-roce --root "$E2E_TMP/sim" --scenario "$E2E_TMP/scenario.yaml" --speed 1 \
  >"$E2E_TMP/sim.jsonl" 2>"$E2E_TMP/sim.log" &
register_pid $!
for _ in $(seq 1 100); do [[ -d "$E2E_TMP/sim/sys/class/net" ]] && break; sleep 0.1; done
# Each module read every 2 s rather than every 30 s: the temperature ramp reaches its alarm within
# the test's window, and a module first read before the ramp must be read again inside it. The
# PCIe topology every 2 s rather than 60 s, so the downtrain at 2 s is seen inside it.
start_agent --path.sysfs="$E2E_TMP/sim/sys" --path.ethtool="$E2E_TMP/sim/ethtool" \
  --path.kmsg="$E2E_TMP/sim/kmsg" \
  --config.file="$E2E_TMP/agent.yaml" --state.file="$E2E_TMP/state.json" \
  --collector.optics.interval=1s --collector.optics.module-interval=2s \
  --collector.topology.interval=2s --detector.config_drift.hold-for=2s
targets+=("127.0.0.1:$AGENT_PORT")
ok "agent on the simulator's hgx-roce preset"

# --- 1. names -------------------------------------------------------------------------------
known="$E2E_TMP/known.txt"
{
  for t in "${targets[@]}"; do curl -sf "http://$t/metrics" | awk '!/^#/ { sub(/[{ ].*/, ""); print }'; done
  "$FABRICWATCH_BIN" --help-metrics | sed -n 's/^| `\([a-z_:]*\)`.*/\1/p'
  grep -ho '^ *- record: [a-z_:0-9]*' "$SRC"/alerts/*.rules.yml | awk '{print $3}'
  printf '%s\n' up scrape_duration_seconds scrape_samples_scraped ALERTS ALERTS_FOR_STATE
} | sort -u >"$known"
exported="$E2E_TMP/exported.txt"   # what these sources really export (and may return data)
for t in "${targets[@]}"; do curl -sf "http://$t/metrics" | awk '!/^#/ { sub(/[{ ].*/, ""); print }'; done |
  sort -u >"$exported"

# names EXPR...: the metric names (plain and recording-rule names) in PromQL text.
names() {
  sed -E 's/"[^"]*"//g' <<<"$*" | grep -oE '[a-zA-Z_][a-zA-Z0-9_]*(:[a-zA-Z0-9_]+)+|\b(fabric|fabricwatch|process|scrape)_[a-zA-Z0-9_]+\b|\b(up|ALERTS)\b' |
    sort -u
}
rule_exprs="$(awk '/^ *#/ { next } /^ *(expr|record):/ { inexpr = 1 } /^ *(for|labels|annotations|- alert|- record):/ && !/record:/ { inexpr = 0 }
  inexpr { print }' "$SRC"/alerts/*.rules.yml)"
dash_exprs="$(jq -r '(.panels[].targets[]?.expr), (.templating.list[] | select(.type == "query") | .definition)' "$SRC"/dashboards/*.json)"
unknown=()
used=0
while read -r n; do
  [[ -z "$n" ]] && continue
  used=$((used + 1))
  grep -qxF "$n" "$known" || unknown+=("$n")
done < <(names "$rule_exprs"$'\n'"$dash_exprs")
((${#unknown[@]} == 0)) || fail "names in alerts/ or dashboards/ the agent does not export: ${unknown[*]}"
ok "$used metric names used by rules and dashboards all exist"

# --- 2. every panel query returns data --------------------------------------------------------
cat >"$E2E_TMP/prometheus.yml" <<EOC
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
rule_files:
$(for f in "$SRC"/alerts/*.rules.yml; do echo "  - $f"; done)
scrape_configs:
  - job_name: fabricwatch
    static_configs:
      - targets: [$(printf "'%s'," "${targets[@]}" | sed 's/,$//')]
        labels: {fabric: e2e, leaf: leaf01}
EOC
start_prometheus "$E2E_TMP/prometheus.yml"
ok "prometheus on $PROM_URL"
sleep 20

total=0 withdata=0 waived=0
while IFS=$'\t' read -r file title expr; do
  total=$((total + 1))
  q="$(sed -e 's/\$instance/.*/g; s/\$device/.*/g; s/\$netdev/.*/g; s/\$__rate_interval/15s/g' <<<"$expr")"
  res="$(curl -sS --fail -G "$PROM_URL/api/v1/query" --data-urlencode "query=$q")" || fail "$file / $title: query failed: $q"
  [[ "$(jq -r .status <<<"$res")" == success ]] || fail "$file / $title: $res"
  if (($(jq '.data.result | length' <<<"$res") > 0)); then
    withdata=$((withdata + 1))
    continue
  fi
  # The event listeners exist only on the host's own /sys (a replay root has no kernel events).
  if [[ "$q" =~ fabricwatch_(link|verbs)_listener_up|fabricwatch_verbs_devices_open ]] &&
      ! grep -q 'fabricwatch_\(link\|verbs\)_listener_up' <<<"$(curl -s "http://${targets[0]}/metrics")"; then
    waived=$((waived + 1))
    log "  no data (listener metrics exist on a host /sys only): $file / $title"
  elif [[ "$q" == *fabric_kernel_log_unknown_lines_total* ]]; then
    # A series per driver that said something the pattern table does not know: the simulator
    # writes only known lines.
    waived=$((waived + 1))
    log "  no data (no unknown driver line in the simulator's kernel log): $file / $title"
  else
    fail_later "$file / $title: no data for $q"
  fi
done < <(jq -r '. as $d | .panels[] | select(.type != "row") | .title as $t | .targets[] |
  [input_filename, $t, .expr] | @tsv' "$SRC"/dashboards/*.json)
ok "$withdata of $total panel queries return data; $waived waived (event listeners need a host /sys; no unknown kernel-log line)"
finish
