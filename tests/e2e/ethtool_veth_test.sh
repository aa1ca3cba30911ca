#!/usr/bin/env bash
# Real kernel ethtool: a veth pair between two private network namespaces, with ping traffic.
# The agent reads the veth's driver statistics through the ETHTOOL_GSTATS ioctl (passthrough on
# for every statistic), and every value must equal what `ethtool -S` prints at the same moment
# (bracketed by two ethtool reads, since counters move). Pause, FEC, link-state, DCB and tunable
# requests on veth must give no error and no log flood.
#
# Needs root and network namespaces; otherwise exits 77 (skipped).
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/ethtool_veth_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init ethtool_veth_test "$@"
# Agents run with --metrics.all: this test checks the collectors' series, not the series
# budget (e2e.series_budget_test).

((EUID == 0)) || skip "needs root to create network namespaces (running as uid $EUID)"
for tool in ip ethtool ping python3 promtool; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (make test installs it)"
done

NS="fweth-$$"
PEER_NS="fwethp-$$"
if ! err="$(ip netns add "$NS" 2>&1)"; then
  skip "ip netns add $NS failed: $err"
fi
on_cleanup "ip netns del $NS"
ip netns add "$PEER_NS" || fail "ip netns add $PEER_NS failed after $NS succeeded"
on_cleanup "ip netns del $PEER_NS"
if ! err="$(ip -n "$NS" link add fwe0 type veth peer name fwe1 netns "$PEER_NS" 2>&1)"; then
  skip "cannot create a veth pair: $err"
fi
# Link-local addresses inside our own namespaces only.
ip -n "$NS" link set lo up
ip -n "$NS" addr add 169.254.88.1/24 dev fwe0
ip -n "$NS" link set fwe0 up
ip -n "$PEER_NS" link set lo up
ip -n "$PEER_NS" addr add 169.254.88.2/24 dev fwe1
ip -n "$PEER_NS" link set fwe1 up
# Note: veth counts its per-queue statistics only on its XDP/NAPI path, so with plain ping most
# stay at 0 (peer_ifindex is not); the comparison still checks every name and value the ioctl
# returns against the ethtool CLI, which reads the same ioctl.
ok "veth fwe0 ($NS, 169.254.88.1) <-> fwe1 ($PEER_NS, 169.254.88.2)"

in_ns() { ip netns exec "$NS" "$@"; }
ping_peer() { in_ns ping -q -c "$1" -i 0.02 -W 1 169.254.88.2 >/dev/null 2>&1 || true; }
ping_peer 20

# shellcheck disable=SC2034  # used by lib.sh
E2E_WRAP=(ip netns exec "$NS")
start_agent --metrics.all --collector.ethtool.interval=100ms --collector.ethtool.device-include='^fwe0$' \
  --collector.ethtool.metrics-include='.*' --log.level=debug
ok "agent running in $NS on 127.0.0.1:$AGENT_PORT"
wait_for_metric /metrics 'fabric_ethtool_driver_stats{netdev="fwe0"}' 10 ||
  fail "no fabric_ethtool_driver_stats for fwe0 within 10 s; log:
$(cat "$AGENT_LOG")"
ok "ethtool collector reads fwe0"

# Traffic while we compare: the counters move between reads.
ping_peer 50 &
traffic=$!
sleep 0.3
before="$(in_ns ethtool -S fwe0)"
sleep 0.25  # at least two collections at 100 ms
metrics="$(scrape /metrics)"
sleep 0.25
after="$(in_ns ethtool -S fwe0)"
wait "$traffic" || true

result="$(python3 - "$before" "$metrics" "$after" <<'PY'
import re, sys
before_text, metrics, after_text = sys.argv[1:4]

def ethtool(text):
    stats = {}
    for line in text.splitlines():
        m = re.match(r"^\s+(.+):\s+(\d+)\s*$", line)
        if m:
            stats[m.group(1)] = int(m.group(2))
    return stats

before, after = ethtool(before_text), ethtool(after_text)
# The passthrough family's HELP quotes the raw statistic name: map raw name -> metric name.
raw_of = {}
for m in re.finditer(r'^# HELP (fabric_ethtool_\S+) Driver statistic "(.*)" \(ethtool -S', metrics, re.M):
    raw_of[m.group(2)] = m.group(1)
values = {}
for m in re.finditer(r'^(fabric_ethtool_\S+)\{netdev="fwe0"\} (\S+)$', metrics, re.M):
    values[m.group(1)] = float(m.group(2))
problems, compared, moved = [], 0, 0
for name, low in before.items():
    high = after.get(name, low)
    metric = raw_of.get(name)
    if metric is None or metric not in values:
        problems.append(f"{name}: no passthrough series")
        continue
    v = values[metric]
    lo, hi = min(low, high), max(low, high)
    if not (lo <= v <= hi):
        problems.append(f"{name}: ours {v:.0f}, ethtool -S {low} then {high}")
    compared += 1
    moved += low != high
n_stats = re.search(r'^fabric_ethtool_driver_stats\{netdev="fwe0"\} (\S+)$', metrics, re.M)
if n_stats is None or int(float(n_stats.group(1))) != len(before):
    problems.append(f"driver_stats {n_stats.group(1) if n_stats else None} != {len(before)} ethtool -S lines")
print(f"{compared} {moved}")
for p in problems:
    print(p)
PY
)"
read -r compared moved <<<"$(head -n1 <<<"$result")"
if [[ "$(wc -l <<<"$result")" -gt 1 ]]; then
  fail "values differ from ethtool -S:
$(tail -n +2 <<<"$result")"
fi
((compared > 0)) || fail "no statistic compared"
ok "$compared veth statistics equal ethtool -S within its two reads ($moved moved meanwhile)"

promtool_out="$(promtool check metrics <<<"$metrics" 2>&1)" || true
[[ -z "$promtool_out" ]] || fail "promtool check metrics: $promtool_out"
ok "promtool check metrics clean with the passthrough on"

# Link settings through ethtool netlink LINKMODES_GET + LINKINFO_GET: veth reports 10000 Mb/s,
# full duplex, twisted pair, autoneg off and no link modes (K drivers/net/veth.c).
speed="$(metric_value "$metrics" 'fabric_ethtool_link_speed_bytes_per_second{netdev="fwe0"}')"
[[ "$speed" == 1.25e+09 || "$speed" == 1250000000 ]] ||
  fail "fabric_ethtool_link_speed_bytes_per_second{netdev=\"fwe0\"} is '$speed', want 1.25e9; log:
$(grep 'link settings' "$AGENT_LOG")"
[[ "$(metric_value "$metrics" 'fabric_ethtool_link_autoneg{netdev="fwe0"}')" == 0 ]] ||
  fail "fabric_ethtool_link_autoneg for fwe0 is not 0"
grep -qxF 'fabric_ethtool_link_info{netdev="fwe0",duplex="full",port="Twisted Pair"} 1' \
  <<<"$metrics" ||
  fail "no fabric_ethtool_link_info{duplex=\"full\",port=\"Twisted Pair\"} for fwe0"
if grep -q 'fabric_ethtool_link_supported_max_speed_bytes_per_second{netdev="fwe0"}' <<<"$metrics"; then
  fail "a fastest supported mode for veth, which reports none"
fi
ok "veth link settings: 10000 Mb/s, full duplex, twisted pair, autoneg off, no link modes"

# veth answers "not supported" to pause/FEC/DCB/tunables (and link state gives nothing to export):
# no error, one debug line per capability, not one per collection.
sleep 1
metrics="$(scrape /metrics)"
errors="$(metric_value "$metrics" 'fabricwatch_collector_errors_total{collector="ethtool"}')"
[[ "$errors" == 0 ]] || fail "ethtool collector errors_total=$errors, want 0; log:
$(cat "$AGENT_LOG")"
[[ "$(metric_value "$metrics" 'fabricwatch_collector_success{collector="ethtool"}')" == 1 ]] ||
  fail "ethtool collector success is not 1"
lines="$(grep -c 'not supported' "$AGENT_LOG" || true)"
((lines <= 7)) || fail "$lines 'not supported' log lines after ~20 collections, want at most 7:
$(grep 'not supported' "$AGENT_LOG")"
if grep -q 'level=warn\|level=error' "$AGENT_LOG"; then
  fail "warnings or errors in the log:
$(grep 'level=warn\|level=error' "$AGENT_LOG")"
fi
ok "unsupported requests: 0 errors, $lines debug lines in total, no warnings"

stop_agent "$AGENT_PID"
[[ "$STOP_RC" == 0 ]] || fail "agent exited $STOP_RC on SIGTERM"
ok "agent stopped in $STOP_MS ms"
finish
