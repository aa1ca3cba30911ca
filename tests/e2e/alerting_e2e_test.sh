#!/usr/bin/env bash
# Alerting end to end, real components from Debian on loopback: the agent, Prometheus (1 s
# scrape and evaluation) with the shipped rules of alerts/, Alertmanager with the shipped example
# routing (alerts/alertmanager.example.yml, receivers pointed at a socat webhook receiver and
# group_wait/group_interval shortened), and the webhook receiver of this test.
#
#   MODE agent-down (default): the agent serves a replay fixture; the test stops it, and the
#     ticket receiver must get FabricwatchTargetDown (warning) with the instance, then the resolved
#     notification once the agent is back on the same port. The heartbeat receiver must get the
#     FabricwatchWatchdog.
#   MODE pfc-storm: the simulator (build/tools/fabricsim/fabricsim) runs the PFC-storm source
#     scenario; the pager receiver must get FabricPfcStormSource (critical) with the detector,
#     role and netdev/priority labels, then the resolved notification when the scenario ends.
#     Skipped (77) while the simulator is not built.
#
# Usage: bash tests/e2e/alerting_e2e_test.sh <fabricwatch binary> [agent-down|pfc-storm]
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=alerting_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/alerting_lib.sh"
MODE="${2:-agent-down}"
e2e_init "alerting_e2e_test.$MODE" "$1"

for t in jq socat promtool; do command -v "$t" >/dev/null || fail "$t missing (tools/install-deps.sh test)"; done
[[ -x "${PROMETHEUS:-/usr/bin/prometheus}" ]] || fail "prometheus missing (apt-get install prometheus)"
[[ -x "${ALERTMANAGER:-/usr/bin/prometheus-alertmanager}" ]] ||
  fail "alertmanager missing (apt-get install prometheus-alertmanager)"

SIM="${FABRICSIM:-$(dirname "$FABRICWATCH_BIN")/../tools/fabricsim/fabricsim}"
SCENARIO="$FABRICWATCH_SOURCE_DIR/tools/fabricsim/scenarios/pfc_storm_source.yaml"
if [[ "$MODE" == pfc-storm ]]; then
  [[ -x "$SIM" ]] || skip "the simulator is not built ($SIM missing): the PFC-storm alerting path needs it (the agent-down path runs in e2e.alerting_agent_down)"
  [[ -f "$SCENARIO" ]] || skip "scenario $SCENARIO missing"
fi

HOOK_DIR="$E2E_TMP/notifications"
start_webhook "$HOOK_DIR"
ok "webhook receiver (socat) on 127.0.0.1:$WEBHOOK_PORT"
example_alertmanager_config "http://127.0.0.1:$WEBHOOK_PORT" "$E2E_TMP/alertmanager.yml"
amtool check-config "$E2E_TMP/alertmanager.yml" >/dev/null || fail "amtool rejects the derived config"
start_alertmanager "$E2E_TMP/alertmanager.yml"
ok "alertmanager $(prometheus-alertmanager --version 2>&1 | awk 'NR==1{print $3}') on $AM_URL with the example routing"

if [[ "$MODE" == pfc-storm ]]; then
  SIM_ROOT="$E2E_TMP/sim"
  mkdir -p "$SIM_ROOT"
  "$SIM" run --preset hgx-roce --root "$SIM_ROOT" --scenario "$SCENARIO" --speed 1 \
    >"$E2E_TMP/sim.jsonl" 2>"$E2E_TMP/sim.log" &
  SIM_PID=$!
  register_pid "$SIM_PID"
  for _ in $(seq 1 100); do [[ -d "$SIM_ROOT/sys/class/net" ]] && break; sleep 0.1; done
  [[ -d "$SIM_ROOT/sys/class/net" ]] || fail "simulator did not create $SIM_ROOT/sys: $(cat "$E2E_TMP/sim.log")"
  start_agent --path.sysfs="$SIM_ROOT/sys" --path.ethtool="$SIM_ROOT/ethtool"
else
  start_agent --path.sysfs="$FABRICWATCH_SOURCE_DIR/tests/fixtures/sysfs/roce-node/sys" \
    --path.ethtool="$FABRICWATCH_SOURCE_DIR/tests/fixtures/ethtool/mlx5"
fi
INSTANCE="127.0.0.1:$AGENT_PORT"
ok "agent on $INSTANCE"

cat >"$E2E_TMP/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
$(for f in "$FABRICWATCH_SOURCE_DIR"/alerts/*.rules.yml; do echo "  - $f"; done)
alerting:
  alertmanagers:
    - static_configs:
        - targets: ['${AM_URL#http://}']
scrape_configs:
  - job_name: fabricwatch
    static_configs:
      - targets: ['$INSTANCE']
        labels: {fabric: e2e, leaf: leaf01}
EOC
promtool check config "$E2E_TMP/prometheus.yml" >/dev/null || fail "promtool rejects the generated prometheus.yml"
start_prometheus "$E2E_TMP/prometheus.yml"
ok "prometheus on $PROM_URL with $(ls "$FABRICWATCH_SOURCE_DIR"/alerts/*.rules.yml | wc -l) shipped rule files"

f="$(wait_notification "$HOOK_DIR" heartbeat '.alerts | any(.labels.alertname == "FabricwatchWatchdog")' 60)" ||
  fail "no FabricwatchWatchdog heartbeat within 60 s"
ok "heartbeat receiver got FabricwatchWatchdog (Prometheus -> Alertmanager -> webhook works)"

if [[ "$MODE" == agent-down ]]; then
  stop_agent "$AGENT_PID"
  t0=$(now_ms)
  ok "agent stopped"
  filter='.status == "firing" and (.alerts | any(.labels.alertname == "FabricwatchTargetDown"
    and .labels.severity == "warning" and .labels.instance == "'"$INSTANCE"'" and .labels.fabric == "e2e"
    and .labels.leaf == "leaf01" and .status == "firing" and (.annotations.runbook_url | endswith("#fabricwatchtargetdown"))))'
  f="$(wait_notification "$HOOK_DIR" ticket "$filter" 150)" ||
    fail "ticket receiver got no firing FabricwatchTargetDown within 150 s; got: $(ls "$HOOK_DIR")"
  ok "ticket receiver got FabricwatchTargetDown firing after $((($(now_ms) - t0) / 1000)) s: $(jq -c '.alerts[0].labels' "$f")"
  ! ls "$HOOK_DIR"/*.pager*.json >/dev/null 2>&1 || fail "a warning alert reached the pager: $(cat "$HOOK_DIR"/*.pager*.json)"
  ok "nothing reached the pager (warning routes to the ticket queue)"
  # Same address as before, so that it is the same target (start_agent always binds port 0).
  "$FABRICWATCH_BIN" --path.sysfs="$FABRICWATCH_SOURCE_DIR/tests/fixtures/sysfs/roce-node/sys" \
    --path.ethtool="$FABRICWATCH_SOURCE_DIR/tests/fixtures/ethtool/mlx5" --web.listen-address="$INSTANCE" \
    >"$E2E_TMP/agent2.log" 2>&1 &
  AGENT_PID=$!
  register_pid "$AGENT_PID"
  wait_for_port "$AGENT_PID" "$E2E_TMP/agent2.log" 10 >/dev/null ||
    fail "agent did not come back on $INSTANCE: $(cat "$E2E_TMP/agent2.log")"
  ok "agent back on $INSTANCE"
  filter='.status == "resolved" and (.alerts | any(.labels.alertname == "FabricwatchTargetDown"
    and .labels.instance == "'"$INSTANCE"'" and .status == "resolved"))'
  f="$(wait_notification "$HOOK_DIR" ticket "$filter" 60)" ||
    fail "no resolved FabricwatchTargetDown notification within 60 s"
  ok "ticket receiver got the resolved FabricwatchTargetDown"
else
  filter='.status == "firing" and (.alerts | any(.labels.alertname == "FabricPfcStormSource"
    and .labels.severity == "critical" and .labels.detector == "pfc_storm" and .labels.role == "source"
    and .labels.instance == "'"$INSTANCE"'" and (.labels.netdev // "") != "" and (.labels.priority // "") != ""
    and (.annotations.description | contains("priority")) and .status == "firing"))'
  f="$(wait_notification "$HOOK_DIR" pager "$filter" 180)" ||
    fail "pager got no firing FabricPfcStormSource within 180 s; notifications: $(cat "$HOOK_DIR"/*.json 2>/dev/null | head -c 2000)"
  ok "pager got FabricPfcStormSource critical: $(jq -c '.alerts[] | select(.labels.alertname == "FabricPfcStormSource") | .labels' "$f" | head -n1)"
  wait_exit "$SIM_PID" 240
  [[ "$WAIT_RC" == 0 ]] || fail "simulator did not finish the scenario cleanly (rc $WAIT_RC): $(tail -n 5 "$E2E_TMP/sim.log")"
  ok "scenario ended"
  filter='.status == "resolved" and (.alerts | any(.labels.alertname == "FabricPfcStormSource" and .status == "resolved"))'
  f="$(wait_notification "$HOOK_DIR" pager "$filter" 180)" ||
    fail "no resolved FabricPfcStormSource notification within 180 s after the scenario ended"
  ok "pager got the resolved FabricPfcStormSource"
fi
finish
