#!/usr/bin/env bash
# The collection defects of issue 19 item 6, on the real agent and a simulated node
# (tools/fabricsim):
#  1. FIFOs in place of a netdev counter file, an ethtool statistics file and a module EEPROM
#     image: every collector keeps collecting (the FIFOs are errors naming them, counted), none
#     goes stale, and SIGTERM ends the agent within the shutdown bound. Before, each FIFO hung
#     its collector in open() forever and SIGTERM waited for it.
#  2. `prlimit --nofile=256` on a 64-port node: /metrics keeps answering, the collectors keep
#     collecting, and the log says once that the kept-open budget is spent instead of writing
#     hundreds of EMFILE warnings a second.
# Usage: bash tests/e2e/collect_robustness_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init collect_robustness_test "$1"
command -v prlimit >/dev/null || skip "prlimit (util-linux) is not installed"
SIM="${FABRICSIM:-$(dirname "$FABRICWATCH_BIN")/../tools/fabricsim/fabricsim}"
[[ -x "$SIM" ]] || fail "the simulator is not built ($SIM); it is part of the default build"

# metric TEXT SERIES: the value of SERIES in TEXT, or "absent".
metric() { local v; v="$(metric_value "$1" "$2")"; printf '%s\n' "${v:-absent}"; }

# --- 1. FIFOs ---------------------------------------------------------------------------------
root="$E2E_TMP/fifo"
"$SIM" build --preset hgx-roce --root "$root" >/dev/null || fail "fabricsim build failed"
fifos=("$root/sys/class/net/enp22s0f0np0/statistics/rx_bytes"
  "$root/ethtool/enp26s0f0np0/statistics"
  "$root/ethtool/enp54s0f0np0/module-eeprom")
for f in "${fifos[@]}"; do
  [[ -f "$f" ]] || fail "the simulated node has no $f"
  rm "$f" && mkfifo "$f"
done
start_agent --path.sysfs="$root/sys" --path.ethtool="$root/ethtool" \
  --collector.netdev.interval=1s --collector.ethtool.interval=1s --collector.optics.interval=1s \
  --collector.optics.module-interval=1s
for c in netdev ethtool optics rdma; do
  wait_for_metric /metrics "fabricwatch_collector_success{collector=\"$c\"}" 15 1 ||
    fail "collector $c did not succeed with FIFOs in the replay root; log:
$(cat "$AGENT_LOG")"
done
sleep 3  # several intervals of every collector: a blocked one would be stale by now
body="$(scrape /metrics)"
for c in netdev ethtool optics; do
  [[ "$(metric "$body" "fabricwatch_collector_stale{collector=\"$c\"}")" == 0 ]] ||
    fail "collector $c is stale with a FIFO in its path"
  [[ "$(metric "$body" "fabricwatch_collector_success{collector=\"$c\"}")" == 1 ]] ||
    fail "collector $c is failing"
  errors="$(metric "$body" "fabricwatch_collector_errors_total{collector=\"$c\"}")"
  [[ "$errors" != absent && "$errors" != 0 ]] || fail "collector $c counted no error for its FIFO"
done
ok "FIFOs in place of a counter, a statistics file and a module image are counted errors; no collector is stuck"
for f in "${fifos[@]}"; do
  grep -qF "$f: not a regular file (a FIFO)" "$AGENT_LOG" || fail "the log does not name $f"
done
ok "the log names each FIFO"
t0=$(now_ms)
kill -TERM "$AGENT_PID"
wait_exit "$AGENT_PID" 10
[[ "$WAIT_RC" == 0 ]] || fail "SIGTERM did not end the agent cleanly (status $WAIT_RC); log:
$(tail -n 20 "$AGENT_LOG")"
ok "SIGTERM stopped the agent in $(($(now_ms) - t0)) ms"

# --- 2. A low open-file limit -----------------------------------------------------------------
root="$E2E_TMP/stress"
"$SIM" build --preset stress-64 --root "$root" >/dev/null || fail "fabricsim build failed"
E2E_WRAP=(prlimit --nofile=256)
start_agent --path.sysfs="$root/sys" --path.ethtool="$root/ethtool"
E2E_WRAP=()
fds="$(find "/proc/$AGENT_PID/fd" -mindepth 1 | wc -l)"
for c in rdma netdev ethtool; do
  wait_for_metric /metrics "fabricwatch_collector_success{collector=\"$c\"}" 15 1 ||
    fail "collector $c did not succeed under --nofile=256; log:
$(tail -n 20 "$AGENT_LOG")"
done
deadline=$(($(now_ms) + 10000))
scrapes=0
while (($(now_ms) < deadline)); do
  scrape /metrics >/dev/null
  scrapes=$((scrapes + 1))
  sleep 0.2
done
ok "$scrapes scrapes over 10 s under --nofile=256 all answered (the agent held $fds fds at start)"
body="$(scrape /metrics)"
[[ "$(metric "$body" 'process_max_fds')" == 256 ]] || fail "process_max_fds is not 256"
open_fds="$(metric "$body" 'process_open_fds')"
((open_fds <= 256 - 64)) || fail "the agent holds $open_fds fds: the reserve for HTTP is gone"
ok "the collectors leave a reserve: $open_fds of 256 fds open"
lines="$(wc -l <"$AGENT_LOG")"
budget_lines="$(grep -c 'counter files the open-file limit leaves' "$AGENT_LOG" || true)"
[[ "$budget_lines" == 1 ]] || fail "the spent budget was logged $budget_lines times"
((lines <= 20)) || fail "$lines log lines in about 15 s: the log is flooded; first:
$(head -n 20 "$AGENT_LOG")"
ok "the log says once that the budget is spent ($lines lines in all)"
stop_agent
[[ "$STOP_RC" == 0 ]] || fail "the agent exited with $STOP_RC"
ok "stopped cleanly"
finish
