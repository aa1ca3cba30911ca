#!/usr/bin/env bash
# `fabricwatch check` (issue 37, docs/check.md) on simulated nodes (tools/fabricsim):
#  1. every healthy preset: exit 0 and the summary line alone on stdout;
#  2. every fault of the scenario catalogue, with the simulator stopped while the fault is on:
#     the faults one look shows give exit 2 or 1 and the detector's NHC line; the rate-based ones
#     (flaps, storms, error growth, drifts) give exit 0 from one look alone (table below);
#  3. the same rate-based faults ARE reported, with "[agent]", when a running agent on the tree
#     answers on --check.agent-url; with nothing answering, one NOTE line says so;
#  4. --check.output=json, an unreadable state file, and a check beside an agent holding the state
#     file's lock (the check takes no lock and binds no port).
# Usage: bash tests/e2e/check_e2e_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init check_e2e_test "$1"
SIM="${FABRICSIM:-$(dirname "$FABRICWATCH_BIN")/../tools/fabricsim/fabricsim}"
[[ -x "$SIM" ]] || fail "the simulator is not built ($SIM); it is part of the default build"
SCENARIOS="$FABRICWATCH_SOURCE_DIR/tools/fabricsim/scenarios"
SPEED=400  # simulated seconds per wall second while a fault is brought on (at most: CPU-bound)

paths() {
  local r="$1"
  printf '%s\n' --path.sysfs="$r/sys" --path.ethtool="$r/ethtool" --path.kmsg="$r/kmsg" \
    --path.procfs="$r/proc" --path.smp="$r/smp" --path.lldp="$r/lldp"
}

# run_check ROOT ARGS...: sets CHECK_RC, CHECK_OUT (stdout), CHECK_ERR (stderr).
run_check() {
  local r="$1"
  shift
  local -a p
  mapfile -t p < <(paths "$r")
  CHECK_RC=0
  "$FABRICWATCH_BIN" check "${p[@]}" "$@" >"$E2E_TMP/check.out" 2>"$E2E_TMP/check.err" || CHECK_RC=$?
  CHECK_OUT="$(cat "$E2E_TMP/check.out")"
  CHECK_ERR="$(cat "$E2E_TMP/check.err")"
}

# --- 1. healthy presets -------------------------------------------------------------------------
for preset in hgx-ib hgx-ib-hdr hgx-roce roce-small; do
  root="$E2E_TMP/healthy-$preset"
  "$SIM" build --preset "$preset" --root "$root" >/dev/null 2>&1 || fail "fabricsim build $preset"
  run_check "$root" --check.agent-url=
  [[ "$CHECK_RC" == 0 ]] || fail "healthy $preset: exit $CHECK_RC:
$CHECK_OUT
$CHECK_ERR"
  [[ "$(wc -l <<<"$CHECK_OUT")" == 1 && "$CHECK_OUT" =~ ^"fabricwatch check: healthy ("[0-9]+" ports, 0 findings, "[0-9.]+" s)"$ ]] ||
    fail "healthy $preset: stdout is not the summary alone: $CHECK_OUT"
  [[ -z "$CHECK_ERR" ]] || fail "healthy $preset: stderr not empty: $CHECK_ERR"
  ok "healthy $preset: exit 0, $CHECK_OUT"
done
# The shape manifests of the healthy nodes, for hca_missing and hot_unplug (one look cannot know
# an HCA that is not there without the manifest or the state file's history).
for preset in hgx-ib hgx-roce; do
  "$FABRICWATCH_BIN" "$(paths "$E2E_TMP/healthy-$preset" | head -1)" --shape.print \
    >"$E2E_TMP/$preset-shape.yaml" 2>/dev/null || fail "--shape.print on $preset"
done

# bring_on SCENARIO WAIT ROOT EXTRA: runs the scenario at $SPEED until WAIT is met, then stops the
# simulator (SIGTERM leaves the tree as it is; a scenario run to its end would end its faults).
# WAIT: "start" every fault has started, "first" the first one has, "end" every fault has ended.
# EXTRA "timeouts3": also until the kernel log holds 3 command timeouts.
bring_on() {
  # A log of its own: the simulator's redirection happens in the background child, so a shared
  # log could still show the previous scenario's events when it is first read.
  local scenario="$1" wait="$2" root="$3" extra="$4" log="$E2E_TMP/sim-$1.log" event=start want
  want="$(grep -c '^  - at:' "$SCENARIOS/$scenario.yaml" || true)"
  [[ "$wait" == first ]] && want=1
  [[ "$wait" == end ]] && event=end
  "$SIM" run --scenario "$SCENARIOS/$scenario.yaml" --root "$root" --speed "$SPEED" >"$log" 2>&1 &
  local pid=$! deadline=$(($(now_ms) + 60000))
  until (($(grep -c "\"event\":\"$event\"" "$log" || true) >= want)) &&
    { [[ "$extra" != timeouts3 ]] || (($(grep -c 'timeout' "$root/kmsg" 2>/dev/null || true) >= 3)); }; do
    if (($(now_ms) >= deadline)) || ! kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      fail "$scenario: the simulator did not reach '$wait' ($extra): $(cat "$log")"
    fi
    sleep 0.02
  done
  # A few simulated seconds more: every collector's file of the fault is written.
  sleep "$(awk -v s="$SPEED" 'BEGIN { printf "%.2f", 5 / s }')"
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# --- 2. the catalogue ---------------------------------------------------------------------------
# scenario | when to look (bring_on's WAIT) | expected exit | the detector whose line must show
# ("-": none) | extra ("shape": --shape.file of the healthy preset; "timeouts3": see bring_on).
# Exit 0 rows are the rate-based faults: one look cannot see them (flaps are looked at once they
# ended, the link up again); section 3 shows the running agent does.
CATALOGUE="
ib_width_downgrade       start 2 link_degraded -
ib_width_downgrade_field start 2 link_degraded -
ib_speed_downgrade       start 1 link_degraded -
eth_speed_downgrade      start 1 link_degraded -
hca_missing              start 2 link_degraded shape
fw_mismatch              start 1 link_degraded -
port_stuck_init          start 2 link_degraded -
link_down                start 2 link_degraded -
hot_unplug               start 2 link_degraded shape
ecn_off                  start 1 config_drift  -
pfc_off                  start 1 config_drift  -
global_pause_on          start 1 config_drift  -
trust_pcp                start 1 config_drift  -
storm_prevention_off     start 1 config_drift  -
mtu_1500                 start 1 config_drift  -
peermem_unloaded         start 1 config_drift  -
acs_redirect             start 1 config_drift  -
mps_mismatch             first 1 config_drift  -
pcie_downtrain           first 2 pcie_degraded -
kmsg_fw_fatal            start 2 driver_fault  -
kmsg_cmd_timeout         start 1 driver_fault  timeouts3
kmsg_module_error        start 1 driver_fault  -
kmsg_access_reg_flood    start 1 driver_fault  -
kmsg_module_unplug       end   0 -             -
aer_burst                start 0 -             -
link_flap                end   0 -             -
link_flap_hard           end   0 -             -
link_flap_roce           end   0 -             -
ib_micro_flap            end   0 -             -
link_retrain             end   0 -             -
storm_on_flap            end   0 -             -
pfc_storm_source         start 0 -             -
pfc_storm_victim         start 0 -             -
congestion               start 0 -             -
ber_growth               start 0 -             -
ber_lane_imbalance       start 0 -             -
ber_outlier_port         start 0 -             -
gross_ber_after_reload   start 0 -             -
counter_reset            start 0 -             -
counter_wrap32           start 0 -             -
module_swap              end   0 -             -
module_temp_ramp         start 0 -             -
rx_power_decay           start 0 -             -
laser_bias_creep         start 0 -             -
"
# timeout_lines ROOT ARGS...: the cmd_timeout_lines of the check's driver_fault finding ("none").
timeout_lines() {
  run_check "$@" --check.agent-url= --check.output=json
  json_get "$CHECK_OUT" 'next((f["evidence"]["cmd_timeout_lines"] for f in d["findings"] if f["detector"] == "driver_fault" and "cmd_timeout_lines" in f["evidence"]), "none")'
}

# The agent's state file holds driver_fault's history of the log lines it read; the check
# rereads the whole log, so it must not restore that history as well: with the agent's state
# file, it counts each command timeout line once, as without it.
state_does_not_double_log_lines() {
  local root="$1" state="$E2E_TMP/kmsg-state.json" without with body deadline
  local -a p
  mapfile -t p < <(paths "$root")
  without="$(timeout_lines "$root")"
  [[ "$without" =~ ^[0-9]+(\.0)?$ && "${without%.0}" -ge 2 ]] ||
    fail "kmsg_cmd_timeout: the check counted '$without' command timeout lines: $CHECK_OUT"
  start_agent "${p[@]}" --state.file="$state"
  deadline=$(($(now_ms) + 30000))
  until body="$(curl -s --max-time 2 "http://127.0.0.1:$AGENT_PORT/api/v1/anomalies")" &&
    grep -q '"detector":"driver_fault"' <<<"$body"; do
    (($(now_ms) < deadline)) || fail "the agent raised no driver_fault within 30 s: $body"
    sleep 0.2
  done
  stop_agent "$AGENT_PID"
  grep -q '"driver_fault"' "$state" || fail "the agent's state file holds no driver_fault state"
  with="$(timeout_lines "$root" --state.file="$state")"
  [[ "$with" == "$without" ]] ||
    fail "with the agent's state file the check counted $with command timeout lines, $without without"
  ok "kmsg_cmd_timeout with the agent's state file: $with command timeout lines, as without it"
}

covered=()
while read -r scenario wait want detector extra; do
  [[ -n "$scenario" ]] || continue
  covered+=("$scenario")
  root="$E2E_TMP/fault-$scenario"
  bring_on "$scenario" "$wait" "$root" "$extra"
  args=(--check.agent-url=)
  if [[ "$extra" == shape ]]; then
    preset="$(sed -n 's/^preset: *//p' "$SCENARIOS/$scenario.yaml")"
    args+=(--shape.file="$E2E_TMP/$preset-shape.yaml")
  fi
  run_check "$root" "${args[@]}"
  if [[ "$CHECK_RC" != "$want" ]]; then
    fail_later "$scenario: exit $CHECK_RC, expected $want:
$CHECK_OUT
$CHECK_ERR"
  elif [[ "$detector" != - ]] && ! grep -qE "^(ERROR|WARNING):  fabricwatch check:  $detector: " <<<"$CHECK_OUT"; then
    fail_later "$scenario: no $detector line:
$CHECK_OUT"
  else
    ok "$scenario: exit $CHECK_RC ($(head -1 <<<"$CHECK_OUT"))"
  fi
  [[ "$scenario" == kmsg_cmd_timeout ]] && state_does_not_double_log_lines "$root"
  rm -rf "$root"
done <<<"$CATALOGUE"
# Every scenario of the catalogue has its row (demo and status_page are showcases of faults
# listed here).
for file in "$SCENARIOS"/*.yaml; do
  name="$(basename "$file" .yaml)"
  [[ "$name" == demo || "$name" == status_page ]] && continue
  [[ " ${covered[*]} " == *" $name "* ]] || fail_later "scenario $name has no row in the table"
done

# --- 3. the running agent's findings ------------------------------------------------------------
# status_page: a PFC storm source and a hard flap from 2 s on (and a module heating up). One look
# sees neither storm nor flap; the agent, which watches the node, does, and the check reports
# them from its /api/v1/anomalies.
root="$E2E_TMP/agent-node"
"$SIM" run --scenario "$SCENARIOS/status_page.yaml" --root "$root" --speed 1 >"$E2E_TMP/sim-agent.log" 2>&1 &
register_pid $!
for _ in $(seq 1 100); do [[ -d "$root/sys/class/net" ]] && break; sleep 0.1; done
state="$E2E_TMP/state.json"
mapfile -t agent_paths < <(paths "$root")
start_agent "${agent_paths[@]}" --state.file="$state"
agent_url="http://127.0.0.1:$AGENT_PORT"
deadline=$(($(now_ms) + 60000))
until body="$(curl -s --max-time 2 "$agent_url/api/v1/anomalies")" &&
  grep -q '"detector":"pfc_storm"' <<<"$body" && grep -q '"detector":"link_flap"' <<<"$body"; do
  (($(now_ms) < deadline)) || fail "the agent raised no pfc_storm and link_flap within 60 s: $body"
  sleep 0.5
done
ok "the agent on the tree raised pfc_storm and link_flap"

run_check "$root" --check.agent-url=
grep -qE 'pfc_storm|link_flap' <<<"$CHECK_OUT" &&
  fail "one look alone reported a storm or a flap: $CHECK_OUT"
ok "one look alone (no agent asked): exit $CHECK_RC, no storm and no flap line"

# Beside the running agent, on its state file: the agent holds the lock; the check must run.
before="$(stat -c %Y "$state" 2>/dev/null || echo none)"
run_check "$root" --check.agent-url="$agent_url" --state.file="$state"
[[ "$CHECK_RC" == 2 ]] || fail "with the agent: exit $CHECK_RC, expected 2:
$CHECK_OUT
$CHECK_ERR"
grep -qE '^ERROR:  fabricwatch check:  pfc_storm: .* \[agent\]$' <<<"$CHECK_OUT" ||
  fail "no pfc_storm line from the agent: $CHECK_OUT"
# (critical while the flaps are hard, a warning once they are only "2 in 6 h")
grep -qE '^(ERROR|WARNING):  fabricwatch check:  link_flap: .* \[agent\]$' <<<"$CHECK_OUT" ||
  fail "no link_flap line from the agent: $CHECK_OUT"
grep -q 'lock' <<<"$CHECK_ERR" && fail "the check tripped over the agent's lock: $CHECK_ERR"
ok "with the agent answering: exit 2, pfc_storm and link_flap lines marked [agent]"

run_check "$root" --check.agent-url="$agent_url" --check.output=json
[[ "$CHECK_RC" == 2 ]] || fail "json: exit $CHECK_RC"
json_get "$CHECK_OUT" 'd["verdict"] == "unhealthy" and d["exit_code"] == 2 and d["agent"]["answered"] and any(f["detector"] == "pfc_storm" and f["source"] == "agent" and f["severity"] == "critical" and f["entity"]["netdev"] and f["reason"] and f["evidence"] for f in d["findings"]) and d["elapsed_seconds"] > 0 and d["ports"] == 8' |
  grep -qx True || fail "json: unexpected object: $CHECK_OUT"
ok "--check.output=json: verdict, exit code, agent findings with entity and evidence"

# Nothing answers: one NOTE line on stderr, the verdict from the look.
run_check "$root" --check.agent-url=http://127.0.0.1:9
[[ "$CHECK_RC" != 3 && "$CHECK_ERR" == *"NOTE:  fabricwatch check:  no answer from the agent"* ]] ||
  fail "no agent: exit $CHECK_RC, stderr: $CHECK_ERR"
ok "nothing on --check.agent-url: exit $CHECK_RC and a NOTE line"
stop_agent "$AGENT_PID"
after="$(stat -c %Y "$state" 2>/dev/null || echo none)"
[[ -f "$state" ]] || fail "the agent saved no state file"
log "state file mtime before the checks $before, after the agent stopped $after"
# A valid state file, the one the agent just saved: the check reads it and writes nothing to it
# (same content, same modification time to the nanosecond, no lock file left beside it).
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$state" ||
  fail "the agent's state file is not JSON"
sum_before="$(sha256sum <"$state")"
mtime_before="$(stat -c %.9Y "$state")"
lock_before="$(ls -a "$(dirname "$state")")"
sleep 0.05  # a rewrite now would show in the mtime even on a coarse-grained clock
run_check "$root" --check.agent-url= --state.file="$state"
[[ "$CHECK_RC" != 3 ]] || fail "a check on the agent's valid state file: exit 3: $CHECK_ERR"
[[ "$CHECK_ERR" != *"could not read the state file"* ]] ||
  fail "the agent's valid state file was not read: $CHECK_ERR"
[[ "$(sha256sum <"$state")" == "$sum_before" ]] || fail "the check rewrote the valid state file"
[[ "$(stat -c %.9Y "$state")" == "$mtime_before" ]] ||
  fail "the check touched the valid state file (mtime $mtime_before → $(stat -c %.9Y "$state"))"
[[ "$(ls -a "$(dirname "$state")")" == "$lock_before" ]] ||
  fail "the check left a file beside the state file: $(ls -a "$(dirname "$state")")"
ok "a valid state file (the agent's): read, and left with the same hash and mtime"

# --- 4. what cannot be read ---------------------------------------------------------------------
# A state file that is not a regular file, and one that is not JSON: one line each, and the
# verdict from the rest.
run_check "$root" --check.agent-url= --state.file="$E2E_TMP"
[[ "$CHECK_RC" != 3 && "$CHECK_ERR" == *"could not read the state file $E2E_TMP:"* ]] ||
  fail "a directory as state file: exit $CHECK_RC, stderr: $CHECK_ERR"
printf 'not json' >"$E2E_TMP/corrupt.json"
run_check "$root" --check.agent-url= --state.file="$E2E_TMP/corrupt.json"
[[ "$CHECK_RC" != 3 && "$CHECK_ERR" == *"could not read the state file"* ]] ||
  fail "a corrupt state file: exit $CHECK_RC, stderr: $CHECK_ERR"
[[ ! -e "$E2E_TMP/corrupt.json.lock" && "$(cat "$E2E_TMP/corrupt.json")" == "not json" ]] ||
  fail "the check locked or rewrote the state file"
ok "an unusable state file: one NOTE line, verdict from the rest, file untouched and unlocked"
# A usage error is not a verdict.
rc=0
"$FABRICWATCH_BIN" check --check.output=yaml >/dev/null 2>&1 || rc=$?
[[ "$rc" == 3 ]] || fail "--check.output=yaml: exit $rc, expected 3"
# curl takes a 0 timeout as none: 0 (and a negative or an over-long one) is a usage error.
for bad in 0s 0 -1s 31s 1h; do
  rc=0
  err="$("$FABRICWATCH_BIN" check --check.agent-timeout="$bad" 2>&1 >/dev/null)" || rc=$?
  [[ "$rc" == 3 && "$err" == *"--check.agent-timeout"* ]] ||
    fail "--check.agent-timeout=$bad: exit $rc, expected 3 and a message: $err"
done
rc=0
err="$("$FABRICWATCH_BIN" check --check.agent-timeout 0s 2>&1 >/dev/null)" || rc=$?
[[ "$rc" == 3 && "$err" == *"must be above 0 and at most 30s"* ]] ||
  fail "--check.agent-timeout 0s: exit $rc: $err"
ok "a bad --check flag exits 3 (--check.output=yaml, --check.agent-timeout of 0, -1s, 31s, 1h)"
finish
