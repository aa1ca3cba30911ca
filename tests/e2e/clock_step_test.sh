#!/usr/bin/env bash
# A step of the wall clock while a finding is active (issue 39 item 7). Three agents read one
# simulated node (fabricsim, on the real clock) whose port flaps twice; link_flap raises "slow
# flapping" and clears it when the first down leaves the 20 s slow window. Each agent runs under
# libfaketime (wall clock from a file re-read on every call, monotonic clock real):
#   steady  no step: the reference clear time;
#   back    starts an hour in the future, stepped back to the true time while the finding is
#           active (NTP correcting a wrong-future clock);
#   fwd     starts on time, stepped an hour forward while the finding is active.
# Windows run on the monotonic clock, so both stepped agents must clear within a few seconds of
# the steady one (before: the back agent held the finding for the size of the step, the
# forward one cleared it at once), count the step, and show the finding's start in wall time.
# Usage: clock_step_test.sh /path/to/fabricwatch. Exit 77 (skip) without faketime or fabricsim.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init "clock_step" "$@"

FAKETIME_LIB=""
for lib in /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 \
  /usr/lib/"$(uname -m)"-linux-gnu/faketime/libfaketimeMT.so.1 /usr/local/lib/faketime/libfaketimeMT.so.1; do
  if [[ -r "$lib" ]]; then
    FAKETIME_LIB="$lib"
    break
  fi
done
[[ -n "$FAKETIME_LIB" ]] || skip "libfaketime is not installed (apt-get install faketime)"
FABRICSIM="${FABRICSIM_BIN:-$(dirname "$FABRICWATCH_BIN")/../tools/fabricsim/fabricsim}"
[[ -x "$FABRICSIM" ]] || skip "the simulator is not built ($FABRICSIM)"

# Timing (real seconds after the simulation starts): downs at 6 s and 10 s, the step at 14 s, the
# clear expected at ~26 s (6 + 20 s of slow window); the stepped agents get until 50 s.
SLOW_WINDOW=20
STEP_AT=14
DEADLINE=50
TOLERANCE=4  # seconds a stepped agent's clear may differ from the steady one's

cat >"$E2E_TMP/flap.yml" <<'YAML'
preset: roce-small
duration: 5m
events:
  - at: 6s
    fault: link_flap
    device: mlx5_0
    count: 2
    period: 4s
    down: 1
YAML
"$FABRICSIM" build --preset roce-small --root "$E2E_TMP/sim" >/dev/null 2>&1 || fail "fabricsim build"

declare -A PORT LOG RAISED CLEARED STEPS
start_faked() {
  local name="$1" offset="$2"
  printf '%s\n' "$offset" >"$E2E_TMP/$name.faketime"
  E2E_WRAP=(env LD_PRELOAD="$FAKETIME_LIB" FAKETIME_TIMESTAMP_FILE="$E2E_TMP/$name.faketime"
    FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1)
  start_agent --path.sysfs="$E2E_TMP/sim/sys" --path.ethtool="$E2E_TMP/sim/ethtool" \
    --detector.disable-defaults --detector.link_flap \
    --detector.link_flap.slow-window=${SLOW_WINDOW}s --detector.link_flap.half-life=3s
  E2E_WRAP=()
  PORT[$name]="$AGENT_PORT"
  LOG[$name]="$AGENT_LOG"
}
start_faked steady "+0"
start_faked back "+3600"
start_faked fwd "+0"
faked_now="$(env LD_PRELOAD="$FAKETIME_LIB" FAKETIME_TIMESTAMP_FILE="$E2E_TMP/back.faketime" \
  FAKETIME_NO_CACHE=1 date +%s)"
((faked_now - $(date +%s) > 3500)) || skip "libfaketime did not move the clock of a child (date said $faked_now)"

metrics_of() { curl -s --max-time 5 "http://127.0.0.1:${PORT[$1]}/metrics" || true; }
active() { grep -q '^fabric_anomaly_active{detector="link_flap"' <<<"$1"; }
started_of() { awk '/^fabric_anomaly_started_timestamp_seconds\{detector="link_flap"/ { print $2; exit }' <<<"$1"; }

"$FABRICSIM" run --root "$E2E_TMP/sim" --scenario "$E2E_TMP/flap.yml" >"$E2E_TMP/sim.out" 2>&1 &
register_pid $!
t0=$(now_ms)
stepped=0
declare -A STARTED_AFTER
while :; do
  t=$((($(now_ms) - t0) / 1000))
  if ((stepped == 0 && t >= STEP_AT)); then
    for name in steady back fwd; do
      [[ -n "${RAISED[$name]:-}" ]] || fail "agent $name raised no link_flap finding by ${t}s; log:
$(tail -n 20 "${LOG[$name]}")"
    done
    printf '+0\n' >"$E2E_TMP/back.faketime"
    printf '+3600\n' >"$E2E_TMP/fwd.faketime"
    stepped=1
    log "t=${t}s: back stepped -3600 s, fwd stepped +3600 s"
    sleep 2.5  # an engine round and a scrape render see the step
    for name in steady back fwd; do
      body="$(metrics_of "$name")"
      STARTED_AFTER[$name]="$(started_of "$body")"
      STEPS[$name]="$(metric_value "$body" fabricwatch_clock_steps_total)"
    done
  fi
  done_all=1
  for name in steady back fwd; do
    [[ -z "${CLEARED[$name]:-}" ]] || continue
    done_all=0
    body="$(metrics_of "$name")"
    if active "$body"; then
      [[ -n "${RAISED[$name]:-}" ]] || RAISED[$name]=$(($(now_ms) - t0))
    elif [[ -n "${RAISED[$name]:-}" ]]; then
      CLEARED[$name]=$(($(now_ms) - t0))
      log "agent $name: raised at ${RAISED[$name]} ms, cleared at ${CLEARED[$name]} ms"
    fi
  done
  ((done_all == 0)) || break
  (($(now_ms) - t0 < DEADLINE * 1000)) || break
  sleep 0.25
done

[[ -n "${CLEARED[steady]:-}" ]] || fail "the steady agent did not clear the finding within ${DEADLINE}s"
ok "no step: raised at ${RAISED[steady]} ms, cleared at ${CLEARED[steady]} ms"
for name in back fwd; do
  if [[ -z "${CLEARED[$name]:-}" ]]; then
    fail_later "agent $name (stepped at ${STEP_AT}s) still had the finding at ${DEADLINE}s; the steady one cleared at ${CLEARED[steady]} ms"
    continue
  fi
  diff=$((CLEARED[$name] - CLEARED[steady]))
  if ((${diff#-} <= TOLERANCE * 1000)); then
    ok "agent $name (stepped at ${STEP_AT}s) cleared at ${CLEARED[$name]} ms (${diff} ms from the steady one)"
  else
    fail_later "agent $name (stepped at ${STEP_AT}s) cleared at ${CLEARED[$name]} ms, ${diff} ms from the steady one's ${CLEARED[steady]} ms"
  fi
done

# The start shown is wall time: the steady agent's (true) start; an hour later on the agent whose
# clock was stepped forward (its earlier readings were an hour behind its clock's).
within() { python3 -c 'import sys; a, b, d = map(float, sys.argv[1:]); sys.exit(abs(a - b) > d)' "$@"; }
s_steady="${STARTED_AFTER[steady]:-}"
[[ -n "$s_steady" ]] || fail "no started timestamp on the steady agent after the step"
for pair in "back 0" "fwd 3600"; do
  read -r name shift <<<"$pair"
  s="${STARTED_AFTER[$name]:-}"
  if [[ -n "$s" ]] && within "$s" "$(python3 -c "print($s_steady + $shift)")" 2; then
    ok "agent $name shows the start in wall time after the step ($s, steady $s_steady)"
  else
    fail_later "agent $name shows started=${s:-none} after the step; want steady's $s_steady + $shift s"
  fi
  if [[ "${STEPS[$name]:-}" == 1 ]]; then
    ok "agent $name counted the step (fabricwatch_clock_steps_total 1)"
  else
    fail_later "agent $name: fabricwatch_clock_steps_total=${STEPS[$name]:-absent}, want 1"
  fi
done
if grep -q 'the wall clock stepped back by 3600' "${LOG[back]}"; then
  ok "the back agent logged the step"
else
  fail_later "no step warning in the back agent's log"
fi
[[ "${STEPS[steady]:-}" == 0 ]] || fail_later "the steady agent counted ${STEPS[steady]:-no} step(s), want 0"
finish
