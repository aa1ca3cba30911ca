#!/usr/bin/env bash
# `fabricwatch probe` against the real kernel RDMA stack: soft-RoCE (rdma_rxe) devices on a veth
# pair (docs/probe.md, docs/kernel-guest.md). Runs inside the guest that tests/kernel/guest.sh
# boots, or directly on any host, as root, whose kernel has rdma_rxe.
#
#   rxe0 on veth0 (10.77.0.1) <-> veth1 (10.77.0.2) with rxe1
#
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/kernel/rdma_probe_test.sh <fabricwatch binary>
# Each check is one line of $GUEST_RESULTS/checks.tsv when GUEST_RESULTS is set.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"
e2e_init rdma_probe_test "$@"

# ------------------------------------------------------------------ checks recorded for the host
# shellcheck source-path=SCRIPTDIR source=guest_checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/guest_checks.sh"

((EUID == 0)) || skip "needs root (modprobe, veth, rdma link add); running as uid $EUID"
for tool in ip rdma tc python3; do
  command -v "$tool" >/dev/null || skip "$tool not installed (iproute2, python3)"
done
for m in veth rdma_rxe ib_uverbs sch_netem; do
  modprobe "$m" 2>/dev/null || skip "this kernel has no $m module ($(uname -r))"
done
# On a real host nothing of the host's may be touched (as in rdma_rxe_test.sh).
for n in veth0 veth1; do
  ip link show "$n" >/dev/null 2>&1 && skip "a netdev $n exists already: not touching this host"
done
for d in rxe0 rxe1; do
  [[ -e /sys/class/infiniband/$d ]] && skip "an RDMA device $d exists already: not touching this host"
done
ip -4 addr | grep -q ' 10\.77\.' && skip "10.77.0.0/16 is in use on this host"
[[ -z "$(ip rule show pref 10)$(ip route show table 77)$(ip route show table 78)" ]] ||
  skip "routing rule preference 10 or table 77/78 is in use on this host"

# ------------------------------------------------------------------ the fabric
active() { [[ "$(cut -d: -f1 /sys/class/infiniband/rxe0/ports/1/state)" == 4 &&
  "$(cut -d: -f1 /sys/class/infiniband/rxe1/ports/1/state)" == 4 ]]; }
ip link set lo up
on_cleanup "ip link del veth0"
ip link add veth0 type veth peer name veth1
for n in 0 1; do ip link set "veth$n" mtu 9000 up; done
ip addr add 10.77.0.1/24 dev veth0
ip addr add 10.77.0.2/24 dev veth1
on_cleanup "rdma link delete rxe0; rdma link delete rxe1"
rdma link add rxe0 type rxe netdev veth0
rdma link add rxe1 type rxe netdev veth1
# rxe0 and rxe1 share one network stack: a packet from 10.77.0.1 to 10.77.0.2 would be local and
# go through lo. Rules for locally generated packets between the two addresses send it out of the
# veth instead, and accept_local lets the other end take it (as in rdma_rxe_test.sh). A QP pair
# with equal source and destination IP (loopback) is turned around inside rxe (rxe_net.c,
# RXE_LOOPBACK_MASK) and never reaches a netdev.
for c in all default veth0 veth1; do
  for k in rp_filter accept_local; do
    on_cleanup "sysctl -qw net.ipv4.conf.$c.$k=$(sysctl -n "net.ipv4.conf.$c.$k")"
  done
  sysctl -qw "net.ipv4.conf.$c.rp_filter=0" "net.ipv4.conf.$c.accept_local=1"
done
on_cleanup "ip rule add pref 0 lookup local; ip rule del pref 100 lookup local"
ip rule add pref 100 lookup local && ip rule del pref 0 lookup local
on_cleanup "ip rule del pref 10 lookup 77; ip rule del pref 10 lookup 78"
ip rule add pref 10 iif lo from 10.77.0.1 to 10.77.0.2 lookup 77
ip rule add pref 10 iif lo from 10.77.0.2 to 10.77.0.1 lookup 78
ip route add 10.77.0.2 dev veth0 src 10.77.0.1 table 77
ip route add 10.77.0.1 dev veth1 src 10.77.0.2 table 78
ip neigh replace 10.77.0.2 lladdr "$(cat /sys/class/net/veth1/address)" dev veth0 nud permanent
ip neigh replace 10.77.0.1 lladdr "$(cat /sys/class/net/veth0/address)" dev veth1 nud permanent
wait_until 10 active || fail "rxe0/rxe1 port 1 never ACTIVE: $(cat /sys/class/infiniband/rxe{0,1}/ports/1/state)"
ok "rxe0, rxe1 on veth0, veth1, routed across the veth ($(uname -r), $(cat /sys/class/infiniband/rxe0/ports/1/rate))"

# The kernel's RDMA objects of rxe0 and rxe1 (pd, cq, qp, mr, ctx, ... per device), from the
# resource tracker: what a probe leaves behind shows here.
res_now() { rdma resource show | grep -E 'rxe[01]:' | sed 's/^[0-9]*: //'; }
BASELINE="$(res_now)"
save res-baseline.txt "$BASELINE"
printf 'rdma resource show before any probe:\n%s\n' "$BASELINE"

# probe NAME ARGS...: `fabricwatch probe ARGS --json`, held alive (--hold) after it printed,
# so that the resources it did not free itself would still be there; sets P_EXIT, P_WALL_MS,
# P_RES (rdma resource show while it held on), P_JSON and the fields below.
# Small writes and a short window: under TCG rxe moves some tens of MB/s.
PROBE_ARGS=(--duration 1s --timeout 8s --message-size 16384 --window 4 --expected-rate-gbps 0)
probe() {
  local name="$1"; shift
  local out="$E2E_TMP/probe-$name.json" t0 pid
  t0=$(now_ms)
  "$FABRICWATCH_BIN" probe "${PROBE_ARGS[@]}" "$@" --json --hold 2s >"$out" 2>"$out.err" &
  pid=$!
  register_pid "$pid"
  wait_until 40 test -s "$out" || true
  P_WALL_MS=$(($(now_ms) - t0))
  P_RES="$(res_now)"
  wait "$pid" && P_EXIT=0 || P_EXIT=$?
  P_JSON="$(cat "$out")"
  save "probe-$name.json" "$P_JSON"
  read -r P_OUTCOME P_VERDICT P_GBPS P_MED_US P_MAX_US P_ELAPSED P_REG P_WRITES < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["outcome"], d["verdict"], "%.3f" % d["bandwidth_gbps"], "%.0f" % (d["latency_median_ns"] / 1e3),
      "%.0f" % (d["latency_max_ns"] / 1e3), "%.2f" % (d["elapsed_ns"] / 1e9), d["registered_bytes"],
      d["writes_completed"])' "$out" 2>"$out.parse") ||
    { P_OUTCOME="unparsed" P_VERDICT="" P_GBPS=0 P_MED_US=0 P_MAX_US=0 P_ELAPSED=0 P_REG=0 P_WRITES=0; }
  printf 'probe %s: exit %s, %s/%s, %s Gb/s, round trip %s us median, %s us max, %s s, %s B pinned, %s writes, %s ms wall; %s\n' \
    "$name" "$P_EXIT" "$P_OUTCOME" "$P_VERDICT" "$P_GBPS" "$P_MED_US" "$P_MAX_US" "$P_ELAPSED" "$P_REG" \
    "$P_WRITES" "$P_WALL_MS" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["error"])' "$out" 2>/dev/null)"
  cat "$out.err"
}
figures() { echo "$P_GBPS Gb/s, round trip $P_MED_US us median / $P_MAX_US us max, $P_ELAPSED s, $P_REG B pinned"; }
# clean NAME: check (e), after each probe
clean() {
  local after
  after="$(res_now)"
  if [[ "$P_RES" == "$BASELINE" && "$after" == "$BASELINE" ]]; then
    ok "after the $1 probe (still running, and after it exited) rdma resource show is the baseline: $(tr '\n' ';' <<<"$BASELINE")"
  else
    fail_later "after the $1 probe: baseline '$BASELINE', while it held on '$P_RES', after it exited '$after'"
  fi
}
gt0() { awk -v g="$1" 'BEGIN {exit !(g > 0)}'; }

# ------------------------------------------------------------------ (a) loopback
check probe.loopback
line="$("$FABRICWATCH_BIN" probe rxe0/1 "${PROBE_ARGS[@]}" 2>&1)" && rc=0 || rc=$?
echo "$line"
[[ $rc == 0 && "$line" == "fabricwatch probe: OK: rxe0/1 loopback "* ]] &&
  ok "exit 0: $line" || fail_later "exit $rc: $line"
probe loopback rxe0/1
if [[ $P_EXIT == 0 && $P_OUTCOME == ok && $P_VERDICT == healthy ]] && gt0 "$P_GBPS" && gt0 "$P_MED_US"; then
  ok "rxe0/1 loopback: $(figures)"
else
  fail_later "rxe0/1 loopback: exit $P_EXIT, $P_JSON"
fi
LOOP_MED=$P_MED_US
# The probe process's peak memory, for the record (GNU time, where installed): with this test's
# small buffers and with the defaults (64 KiB x 16 in flight: 2 MiB pinned).
if [[ -x /usr/bin/time ]]; then
  for args in "--message-size 16384 --window 4" "--message-size 65536 --window 16"; do
    # shellcheck disable=SC2086 # the two options are meant to split
    rss="$(/usr/bin/time -f 'maxrss_kib=%M' "$FABRICWATCH_BIN" probe rxe0/1 --duration 1s --timeout 8s \
      --expected-rate-gbps 0 $args 2>&1 >/dev/null | grep -o 'maxrss_kib=[0-9]*')"
    echo "probe rxe0/1 loopback ($args): peak RSS ${rss#maxrss_kib=} KiB"
  done
fi
check probe.cleanup; clean loopback
# The comparison above means something only if the tracker shows a running probe's objects.
check probe.cleanup_sees_objects
"$FABRICWATCH_BIN" probe rxe0/1 --duration 3s --timeout 8s --message-size 16384 --window 4 \
  --expected-rate-gbps 0 >"$E2E_TMP/probe-long.txt" 2>&1 &
pid=$!
register_pid "$pid"
sleep 1.5
during="$(res_now)"
wait "$pid" && rc=0 || rc=$?
# Loopback: both QPs on rxe0, each with its own context, PD, MR, CQ and QP.
if [[ $rc == 0 && "$during" == *"rxe0: pd 3 cq 3 qp 3 "*"mr 2 ctx 2"* ]]; then
  ok "while a loopback probe runs: $(tr '\n' ';' <<<"$during")"
else
  fail_later "exit $rc ($(cat "$E2E_TMP/probe-long.txt")); while it ran, rdma resource show said: $(tr '\n' ';' <<<"$during")"
fi

# ------------------------------------------------------------------ (f) the JSON
check probe.json
if python3 -c '
import json, sys
d = json.loads(sys.argv[1])
want = {"port", "partner", "path", "outcome", "verdict", "error", "bandwidth_bytes_per_second",
        "latency_median_ns", "latency_max_ns", "bytes_written", "writes_completed", "elapsed_ns",
        "registered_bytes"}
missing = want - d.keys()
sys.exit(1 if missing or d["path"] != "loopback" or d["registered_bytes"] != 2 * 16384 * 4 else 0)' "$P_JSON"; then
  ok "--json parses, with outcome, verdict and every measurement field; registered_bytes 2 x 16384 x 4"
else
  fail_later "--json: $P_JSON"
fi

# ------------------------------------------------------------------ one probe at a time on the node
# The node-wide lock (docs/probe.md §3): a second probe while one runs is refused (unavailable,
# exit 3), after a bounded wait, and says why.
check probe.node_lock
"$FABRICWATCH_BIN" probe rxe0/1 --duration 4s --timeout 9s --message-size 16384 --window 4 \
  --expected-rate-gbps 0 >"$E2E_TMP/probe-lock-holder.txt" 2>&1 &
holder=$!
register_pid "$holder"
# /run/fabricwatch-probe.lock: the root probe creates it 0644 when missing (probe.h).
if [[ ! -d /run || ! -w /run ]]; then
  wait "$holder" || true
  printf 'skip - %s: /run is missing or read-only here, probes run unlocked\n' "$CHECK"
  record SKIP "$CHECK" "/run not writable: probes run unlocked"
else
  wait_until 10 test -e /run/fabricwatch-probe.lock || true
  sleep 0.5
  t0=$(now_ms)
  second="$("$FABRICWATCH_BIN" probe rxe1/1 "${PROBE_ARGS[@]}" 2>&1)" && rc=0 || rc=$?
  waited=$(($(now_ms) - t0))
  wait "$holder" && hrc=0 || hrc=$?
  mode="$(stat -c %a /run/fabricwatch-probe.lock 2>/dev/null)"
  if [[ $rc == 3 && "$second" == *"another probe runs on this node"* && $hrc == 0 && $mode == 644 ]]; then
    ok "a second probe while one runs: exit 3 after $waited ms: $second; the first ended 0; lock file mode $mode"
  else
    fail_later "second probe: exit $rc after $waited ms: $second; first: exit $hrc $(cat "$E2E_TMP/probe-lock-holder.txt"); lock mode '$mode'"
  fi
fi

# ------------------------------------------------------------------ (b) pair across the veth
check probe.pair
tx0="$(cat /sys/class/net/veth0/statistics/tx_bytes)"
probe pair rxe0/1 --partner rxe1/1
d_tx=$(($(cat /sys/class/net/veth0/statistics/tx_bytes) - tx0))
if [[ $P_EXIT == 0 && $P_OUTCOME == ok ]] && gt0 "$P_GBPS" && gt0 "$P_MED_US"; then
  ok "rxe0/1 pair to rxe1/1: $(figures); veth0 carried $d_tx B"
else
  fail_later "rxe0/1 pair to rxe1/1: exit $P_EXIT, $P_JSON"
fi
PAIR_MED=$P_MED_US
check probe.cleanup; clean pair

# ------------------------------------------------------------------ (g) fabricwatch check --check.probe
# The check probes every ACTIVE port it saw (rxe0/1 by the pair path to rxe1/1, rxe1/1 by
# loopback). rxe reports the veth's 10 Gb/s; under TCG it moves a few hundred Mb/s, so the bar is
# lowered here to what an emulated CPU reaches (docs/probe.md §4).
CHECK_YAML="$E2E_TMP/check.yml"
printf 'probe:\n  message-size: 16384\n  window: 4\n  timeout: 8s\n  degraded-fraction: 0.001\n  partners: {"rxe0/1": "rxe1/1"}\n' >"$CHECK_YAML"
run_check() { # NAME: fabricwatch check --check.probe on this kernel's devices; sets C_EXIT, C_OUT
  "$FABRICWATCH_BIN" check --config.file="$CHECK_YAML" --check.agent-url= --check.probe \
    >"$E2E_TMP/check-$1.txt" 2>"$E2E_TMP/check-$1.err" && C_EXIT=0 || C_EXIT=$?
  C_OUT="$(cat "$E2E_TMP/check-$1.txt")"
  printf 'fabricwatch check (%s): exit %s\n%s\n%s\n' "$1" "$C_EXIT" "$C_OUT" "$(cat "$E2E_TMP/check-$1.err")"
}
check check.probe_healthy
run_check healthy
if [[ $C_EXIT == 0 && "$C_OUT" == "fabricwatch check: healthy"* && "$(wc -l <<<"$C_OUT")" == 1 ]]; then
  ok "both ports probed healthy: exit 0, only the summary: $C_OUT"
else
  fail_later "exit $C_EXIT: $C_OUT $(cat "$E2E_TMP/check-healthy.err")"
fi

# ------------------------------------------------------------------ (d) 5 ms one way on veth0
check probe.netem_delay
on_cleanup "tc qdisc del dev veth0 root"
tc qdisc add dev veth0 root netem delay 5ms
probe pair-delay rxe0/1 --partner rxe1/1
rise=$((P_MED_US - PAIR_MED))
if [[ $P_EXIT == 0 && $P_OUTCOME == ok ]] && ((rise >= 4000)); then
  ok "netem delay 5ms on veth0: the pair's median round trip rose by $rise us ($PAIR_MED -> $P_MED_US us); $(figures)"
else
  fail_later "netem delay 5ms on veth0: pair exit $P_EXIT, median $PAIR_MED -> $P_MED_US us (rise $rise us, want >= 4000)"
fi
check probe.cleanup; clean pair-delay
check probe.netem_loopback
probe loopback-delay rxe0/1
rise=$((P_MED_US - LOOP_MED))
if [[ $P_EXIT == 0 && $P_OUTCOME == ok ]] && ((rise < 2000)); then
  ok "with the same delay, loopback's median round trip did not rise: $LOOP_MED -> $P_MED_US us (it never reaches veth0); $(figures)"
else
  fail_later "loopback under netem on veth0: exit $P_EXIT, median $LOOP_MED -> $P_MED_US us"
fi
check probe.cleanup; clean loopback-delay

# ------------------------------------------------------------------ the least --timeout
# `fabricwatch probe --timeout` must be at least --duration × 1.1 + 1s, the config's rule
# (docs/probe.md §6): 1150 ms for a 1 s probe is a usage error (exit 3), no probe runs. At the
# least timeout (2.1 s) a slow path that never fails the transport (30 ms one way stays under
# the QP's 67 ms ACK timeout) ends ok; a set-up slow enough under TCG to leave the data phases
# less than --duration × 1.1 + 200 ms stops before them as setup_error ("not enough time
# left"), never as a timeout in the bandwidth phase (docs/probe.md §3). A data-phase timeout
# cannot be provoked here any more: within the transport's retry bound the data phases fit.
check probe.timeout
short="$("$FABRICWATCH_BIN" probe rxe0/1 --duration 1s --timeout 1150ms 2>&1)" && rc=0 || rc=$?
if [[ $rc == 3 && "$short" == *"× 1.1 + 1s"* ]]; then
  ok "--timeout 1150ms for a 1 s probe: exit 3: $short"
else
  fail_later "--timeout 1150ms for a 1 s probe: exit $rc: $short"
fi
tc qdisc change dev veth0 root netem delay 30ms
saved=("${PROBE_ARGS[@]}")
PROBE_ARGS=(--duration 1s --timeout 2100ms --message-size 16384 --window 4 --expected-rate-gbps 0)
probe pair-timeout rxe0/1 --partner rxe1/1
PROBE_ARGS=("${saved[@]}")
elapsed_ms="$(json_get "$P_JSON" 'd["elapsed_ns"] // 1000000')"
P_ERR="$(json_get "$P_JSON" 'd["error"]')"
if [[ $P_EXIT == 0 && $P_OUTCOME == ok ]]; then
  ok "--timeout 2100ms, 30 ms one way: ok in $elapsed_ms ms, $(figures)"
elif [[ $P_EXIT == 3 && $P_OUTCOME == setup_error && "$P_ERR" == *"set-up"* ]]; then
  # An emulated CPU under host load can spend the time in set-up: unavailable, not failed.
  printf 'skip - %s: the set-up took the time here (%s ms): %s\n' "$CHECK" "$elapsed_ms" "$P_ERR"
  record SKIP "$CHECK" "the set-up took the time under load: $P_ERR"
else
  fail_later "--timeout 2100ms, 30 ms one way: exit $P_EXIT after $elapsed_ms ms: $P_JSON"
fi
check probe.cleanup; clean pair-timeout

# ------------------------------------------------------------------ a dead path, ports ACTIVE
check probe.dead_path
tc qdisc change dev veth0 root netem loss 100%
probe pair-loss rxe0/1 --partner rxe1/1
if [[ $P_EXIT == 2 && $P_OUTCOME == error && "$(json_get "$P_JSON" 'd["error"]')" == *"retry counter exceeded"* ]] &&
  ((P_WALL_MS < 8000)); then
  ok "netem loss 100% on veth0: exit 2 after $P_WALL_MS ms, $P_OUTCOME: $(json_get "$P_JSON" 'd["error"]')"
else
  fail_later "netem loss 100% on veth0: exit $P_EXIT after $P_WALL_MS ms: $P_JSON"
fi
check probe.cleanup; clean pair-loss
check check.probe_failed
run_check loss
if [[ $C_EXIT == 2 && "$C_OUT" == *"rxe0/1: pair probe failed"* && "$C_OUT" == *"fabricwatch check: unhealthy"* ]]; then
  ok "netem loss 100% on veth0: exit 2, $(grep -m1 'rxe0/1' <<<"$C_OUT")"
else
  fail_later "netem loss 100% on veth0: exit $C_EXIT: $C_OUT"
fi
tc qdisc del dev veth0 root

# ------------------------------------------------------------------ (c) the peer's link down
check probe.port_down
ip link set veth1 down
port_not_active() { [[ $(cut -d: -f1 "/sys/class/infiniband/$1/ports/1/state") != 4 ]]; }
wait_until 10 port_not_active rxe0 && wait_until 10 port_not_active rxe1 ||
  fail "veth1 down, but the rxe ports stayed ACTIVE: $(cat /sys/class/infiniband/rxe{0,1}/ports/1/state)"
probe pair-down rxe0/1 --partner rxe1/1
if [[ $P_EXIT == 2 && $P_OUTCOME == port_down ]] && ((P_WALL_MS < 8000)); then
  ok "veth1 down: exit 2 after $P_WALL_MS ms, $P_OUTCOME: $(json_get "$P_JSON" 'd["error"]')"
else
  fail_later "veth1 down: exit $P_EXIT after $P_WALL_MS ms: $P_JSON"
fi
line="$("$FABRICWATCH_BIN" probe rxe0/1 --partner rxe1/1 "${PROBE_ARGS[@]}" 2>&1)" && rc=0 || rc=$?
echo "$line"
[[ $rc == 2 && "$line" == "fabricwatch probe: ERROR: rxe0/1 pair to rxe1/1: "* ]] &&
  ok "the line: $line" || fail_later "exit $rc: $line"
check probe.cleanup; clean pair-down
ip link set veth1 up

# ------------------------------------------------------------------ drain confirmation in the agent
# The long-lived agent with probe.enabled and hooks.confirm_with_probe (docs/design.md §5.11): a
# drain-eligible warning on rxe0 port 1 (config_drift ib_mtu, raised by setting veth0's MTU to
# 1500: rxe0's active IB MTU falls to 1024, the configuration expects 4096) waits for a probe of
# rxe0/1 (pair with rxe1/1); healthy suppresses the drain, failed runs the hook with the probe's
# result. The hook only appends its FABRICWATCH_* environment to a file.
wait_until 15 active || fail "rxe0/rxe1 port 1 not ACTIVE again after veth1 up: $(cat /sys/class/infiniband/rxe{0,1}/ports/1/state)"
HOOK_ENV="$E2E_TMP/hook-env.txt"
HOOK="$E2E_TMP/record-hook"
cat >"$HOOK" <<EOF
#!$(command -v bash)
# One block per run: the hook's FABRICWATCH_* environment, then a line "----" (bash builtins only).
for v in "\${!FABRICWATCH_@}"; do printf '%s=%s\n' "\$v" "\${!v}"; done >>"$HOOK_ENV"
echo ---- >>"$HOOK_ENV"
EOF
chmod 755 "$HOOK"
# min-interval 6s: the finding carries a probe's evidence while the probe is current (younger
# than min-interval, exporter/agent.cc), so 1 s would leave an emulated CPU too little time to
# see it; the failing path below waits past it, so its raise is probed again, not cached.
MIN_INTERVAL_S=6
AGENT_YAML="$E2E_TMP/agent.yml"
cat >"$AGENT_YAML" <<EOF
probe:
  enabled: true
  message-size: 16384
  window: 4
  timeout: 8s
  degraded-fraction: 0.001
  min-interval: ${MIN_INTERVAL_S}s
  partners: {"rxe0/1": "rxe1/1"}
hooks:
  dry_run: false
  confirm_with_probe: true
  cooldown: 1s
  clear_hold_down: 1h
  run:
    - name: record
      command: ["$HOOK"]
      severities: [warning]
      on: [raise]
EOF
check agent.confirm_start
start_agent --metrics.all --config.file="$AGENT_YAML" --state.file="$E2E_TMP/state.json" \
  --collector.rdma.interval=500ms --collector.rdma.mtu-interval=1s \
  --detector.config_drift.hold-for=0s --detector.config_drift.clear-for=0s \
  --detector.config_drift.drain-eligible=true --detector.config_drift.ib-mtu=4096 \
  --no-collector.optics --no-collector.topology --no-collector.peer --no-collector.kmsg
wait_for_metric /metrics 'fabric_rdma_port_active_mtu_bytes{device="rxe0",port="1"}' 20 4096 ||
  fail "no fabric_rdma_port_active_mtu_bytes 4096 for rxe0 within 20 s; log: $(tail -20 "$AGENT_LOG")"
declare -A V
load() { # scrapes /metrics into M (text) and V (series -> value)
  M="$(scrape /metrics)"
  V=()
  local series v
  while read -r series v _; do [[ "$series" == \#* || -z "$series" ]] || V["$series"]="$v"; done <<<"$M"
}
value() { printf '%s' "${V[$1]:-absent}"; }
RUNS='fabricwatch_hook_runs_total{hook="record",result='
VERDICT='fabricwatch_probe_verdict{device="rxe0",port="1",verdict='
load
# The agent's own verbs objects (its async-event listener's contexts) are in this baseline; no
# probe has run yet.
AGENT_BASELINE="$(res_now)"
save res-agent-baseline.txt "$AGENT_BASELINE"
A="$(scrape /api/v1/anomalies)"
if [[ "$(value 'fabricwatch_probe_runs_total{result="ok"}')" == 0 && "$(value "${VERDICT}\"healthy\"}")" == absent &&
  "$(json_get "$A" 'len(d["anomalies"])')" == 0 ]]; then
  ok "the agent runs (probe.enabled, hooks.confirm_with_probe), no probe yet, no finding; its verbs objects: $(tr '\n' ';' <<<"$AGENT_BASELINE")"
else
  fail "before the fault: probe runs ok $(value 'fabricwatch_probe_runs_total{result="ok"}'), findings: $A"
fi

# ib_mtu_drift: the config_drift ib_mtu finding of rxe0 in /api/v1/anomalies (JSON), or nothing
ib_mtu_drift() {
  curl -s --max-time 5 "$(url /api/v1/anomalies)" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for a in d["anomalies"]:
    if a["detector"] == "config_drift" and a["entity"].get("setting") == "ib_mtu" and a["entity"].get("device") == "rxe0":
        print(json.dumps(a))' 2>/dev/null
}
# The finding carries the probe's evidence only while the probe is current (min-interval): a
# poller in the background, started before the fault, keeps the first answer that shows it, so a
# slow emulated CPU in this script cannot miss the window. curl and grep only, bounded to 60 s.
EVIDENCE="$E2E_TMP/anomalies-probe-evidence.json"
poll_evidence() {
  local deadline=$(($(now_ms) + 60000)) body
  while (($(now_ms) < deadline)); do
    body="$(curl -s --max-time 5 "$(url /api/v1/anomalies)" || true)"
    if [[ "$body" == *'"probe_verdict"'* ]]; then printf '%s\n' "$body" >"$EVIDENCE.tmp" && mv "$EVIDENCE.tmp" "$EVIDENCE"; return 0; fi
    sleep 0.2
  done
}

check agent.confirm_healthy
poll_evidence &
poller=$!
register_pid "$poller"
t0=$(now_ms)
ip link set veth0 mtu 1500
if wait_for_metric /metrics "${RUNS}\"suppressed_probe_healthy\"}" 40 1; then
  healthy_ms=$(($(now_ms) - t0)); HEALTHY_AT=$(now_ms)
  load
  save metrics-confirm-healthy.txt "$M"
  if [[ "$(value "${VERDICT}\"healthy\"}")" == 1 && "$(value "${VERDICT}\"failed\"}")" == 0 &&
    "$(value 'fabricwatch_probe_runs_total{result="ok"}')" == 1 && "$(value "${RUNS}\"success\"}")" == 0 &&
    ! -s "$HOOK_ENV" ]] && grep -q 'probe rxe0/1: healthy (ok, pair path)' "$AGENT_LOG"; then
    ok "veth0 at MTU 1500: config_drift ib_mtu on rxe0/1 held, probed (pair to rxe1/1), healthy; the drain suppressed $healthy_ms ms after the change: suppressed_probe_healthy 1, hook runs success 0, the hook did not run; ${VERDICT}\"healthy\"} 1, probe_runs_total{ok} 1, $(awk -v b="$(value 'fabricwatch_probe_bandwidth_bytes_per_second{device="rxe0",port="1"}')" 'BEGIN {printf "%.1f", b / 1e6}') MB/s"
  else
    fail_later "healthy probe: verdict healthy $(value "${VERDICT}\"healthy\"}"), runs ok $(value 'fabricwatch_probe_runs_total{result="ok"}'), hook success $(value "${RUNS}\"success\"}"), hook environment: $(cat "$HOOK_ENV" 2>/dev/null)"
  fi
  check agent.confirm_evidence
  if wait_until "$MIN_INTERVAL_S" test -s "$EVIDENCE"; then
    DRIFT="$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps([a for a in d["anomalies"] if a["detector"] == "config_drift" and a["entity"].get("device") == "rxe0"][0]))' "$EVIDENCE")"
    save anomaly-confirm-healthy.json "$DRIFT"
    ev="$(json_get "$DRIFT" 'd["evidence"]')"
    if json_get "$DRIFT" '1 if d["evidence"]["probe_verdict"] == 0 and d["evidence"].get("probe_bandwidth_bytes_per_second", 0) > 0 else ""' | grep -q 1; then
      ok "the finding in /api/v1/anomalies carries the probe's evidence (probe_verdict 0 = healthy): $ev; $(json_get "$DRIFT" 'd["reason"]')"
    else
      fail_later "the finding's probe evidence is not a healthy measurement: $ev"
    fi
  else
    fail_later "no probe evidence on the finding within $MIN_INTERVAL_S s of the probe: $(ib_mtu_drift)"
  fi
  kill "$poller" 2>/dev/null || true
else
  fail_later "no suppressed_probe_healthy within 40 s of veth0 at MTU 1500: $(grep -E 'probe|hook|anomal' "$AGENT_LOG" | tail -8); $(scrape /api/v1/anomalies)"
  HEALTHY_AT=$(now_ms)
fi

check agent.confirm_failed
ip link set veth0 mtu 9000
drift_gone() { [[ -z "$(ib_mtu_drift)" ]]; }
wait_until 20 drift_gone ||
  fail_later "the ib_mtu finding did not clear within 20 s of veth0 back at 9000"
# Past probe.min-interval since the healthy probe (and past hooks.cooldown): a new probe.
left=$((HEALTHY_AT + MIN_INTERVAL_S * 1000 + 500 - $(now_ms)))
((left <= 0)) || sleep "$(awk -v m="$left" 'BEGIN {printf "%.1f", m / 1000}')"
tc qdisc add dev veth0 root netem loss 100%
t0=$(now_ms)
ip link set veth0 mtu 1500
if wait_until 40 test -s "$HOOK_ENV" && wait_until 5 grep -q -- '^----$' "$HOOK_ENV"; then
  failed_ms=$(($(now_ms) - t0))
  HENV="$(cat "$HOOK_ENV")"
  save hook-env.txt "$HENV"
  printf 'the hook recorded:\n%s\n' "$HENV"
  henv() { sed -n "s/^$1=//p" <<<"$HENV" | head -1; }
  load
  save metrics-confirm-failed.txt "$M"
  if [[ "$(henv FABRICWATCH_PROBE_VERDICT)" == failed && "$(henv FABRICWATCH_PROBE_PATH)" == pair &&
    -n "$(henv FABRICWATCH_PROBE_ERROR)" && "$(henv FABRICWATCH_PROBE_PORT)" == rxe0/1 &&
    "$(henv FABRICWATCH_DETECTOR)" == config_drift && "$(henv FABRICWATCH_ACTION)" == drain &&
    "$(henv FABRICWATCH_DRY_RUN)" == 0 && "$(grep -c -- '^----$' <<<"$HENV")" == 1 ]]; then
    ok "netem loss 100% on veth0, veth0 at MTU 1500 again: the probe failed and the hook ran $failed_ms ms after the change, once, with FABRICWATCH_PROBE_VERDICT=failed PATH=pair PORT=rxe0/1 ERROR='$(henv FABRICWATCH_PROBE_ERROR)'"
  else
    fail_later "the hook's environment: $HENV"
  fi
  if [[ "$(value "${RUNS}\"success\"}")" == 1 && "$(value "${RUNS}\"suppressed_probe_healthy\"}")" == 1 &&
    "$(value "${VERDICT}\"failed\"}")" == 1 && "$(value "${VERDICT}\"healthy\"}")" == 0 ]]; then
    ok "hook runs success 1, suppressed_probe_healthy still 1; ${VERDICT}\"failed\"} 1; probe runs: $(for r in ok error timeout port_down cached; do printf '%s %s ' "$r" "$(value "fabricwatch_probe_runs_total{result=\"$r\"}")"; done)"
  else
    fail_later "after the failed probe: hook success $(value "${RUNS}\"success\"}"), verdict failed $(value "${VERDICT}\"failed\"}"): $(grep -E '^fabricwatch_(hook_runs_total|probe_)' <<<"$M" | tr '\n' ';')"
  fi
else
  fail_later "the hook did not run within 40 s of the fault under netem loss 100%: $(grep -E 'probe|hook|anomal' "$AGENT_LOG" | tail -8)"
fi
tc qdisc del dev veth0 root
ip link set veth0 mtu 9000

check agent.probe_cleanup
same_res() { [[ "$(res_now)" == "$AGENT_BASELINE" ]]; }
if kill -0 "$AGENT_PID" 2>/dev/null && wait_until 5 same_res; then
  ok "after a healthy and a failed probe, with the agent still running, rdma resource show is its baseline: $(tr '\n' ';' <<<"$AGENT_BASELINE")"
else
  fail_later "agent running: $(kill -0 "$AGENT_PID" 2>/dev/null && echo yes || echo no); baseline '$AGENT_BASELINE', now '$(res_now)'"
fi
stop_agent "$AGENT_PID"
if [[ $STOP_RC == 0 ]] && wait_until 5 eval '[[ "$(res_now)" == "$BASELINE" ]]'; then
  ok "the agent stopped (exit 0 in $STOP_MS ms); rdma resource show is the baseline of before it started: its listener's contexts are gone too"
else
  fail_later "agent stop: exit $STOP_RC; before it started '$BASELINE', now '$(res_now)'"
fi
save agent-confirm.log "$(cat "$AGENT_LOG")"
echo "---- agent log (drain confirmation)"; grep -E 'probe|hook|anomal' "$AGENT_LOG" || true

finish
