#!/usr/bin/env bash
# Slow readers over a real link (issue 39 item 3): clients that send `GET /metrics` and never
# read. Over a NIC (MTU 1500, MSS 1448) a response larger than the socket's send buffer leaves
# such a connection in the writing state; on loopback (MTU 64 KiB) it never does, which is why
# e2e.http_abuse_test could not see it. Two private network namespaces joined by a veth pair with
# MTU 1500 (the host's namespace is not touched): the agent in one on a fabricsim hgx-roce root
# with --metrics.all (a /metrics body far larger than a send buffer), the clients in the other.
#
#   1. the default cap (4,096): 4,400 slow readers from 80 source addresses (55 each, under
#      the per-address limit) fill it; 80 curl scrapes over the veth, one every 0.5 s, must all
#      succeed (the cap evicts responses that make no progress);
#   2. --web.max-connections=64: 130 slow readers from 4 addresses, reconnecting 5 s after a
#      reset; 60 scrapes must succeed;
#   3. 300 slow readers from one address: the per-address limit (64) holds them off; 20 scrapes
#      from another address must succeed.
# Slow readers reconnect 1 s after the server resets them. No timing is asserted.
#
# Needs root and network namespaces; otherwise exits 77 (skipped).
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/http_slow_reader_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init http_slow_reader_test "$@"

((EUID == 0)) || skip "needs root to create network namespaces (running as uid $EUID)"
command -v ip >/dev/null || skip "iproute2 'ip' not installed"
command -v python3 >/dev/null || fail "python3 is required (tools/bench/http_abuse.py)"
ABUSE="$FABRICWATCH_SOURCE_DIR/tools/bench/http_abuse.py"
SIM="${FABRICSIM:-$(dirname "$FABRICWATCH_BIN")/../tools/fabricsim/fabricsim}"
[[ -x "$SIM" ]] || fail "the simulator is not built ($SIM); it is part of the default build"

NS="fwslow-$$"
CLIENT_NS="fwslowc-$$"
if ! err="$(ip netns add "$NS" 2>&1)"; then
  skip "ip netns add $NS failed: $err"
fi
on_cleanup "ip netns del $NS"
ip netns add "$CLIENT_NS" || fail "ip netns add $CLIENT_NS failed after $NS succeeded"
on_cleanup "ip netns del $CLIENT_NS"
if ! err="$(ip -n "$NS" link add fwsr0 type veth peer name fwsr1 netns "$CLIENT_NS" 2>&1)"; then
  skip "cannot create a veth pair (no veth support in this kernel?): $err"
fi
SERVER_IP=10.239.0.1
SCRAPER_IP=10.239.0.2
ip -n "$NS" link set lo up
ip -n "$CLIENT_NS" link set lo up
ip -n "$NS" link set fwsr0 mtu 1500 up
ip -n "$CLIENT_NS" link set fwsr1 mtu 1500 up
ip -n "$NS" addr add "$SERVER_IP/16" dev fwsr0
ip -n "$CLIENT_NS" addr add "$SCRAPER_IP/16" dev fwsr1
# The slow readers' source addresses: 10.239.1.1-80 (80 addresses; 10.239.1.1-4 for part 2).
SOURCES=()
for i in $(seq 1 80); do
  ip -n "$CLIENT_NS" addr add "10.239.1.$i/16" dev fwsr1
  SOURCES+=("10.239.1.$i")
done
ALL_SOURCES="$(
  IFS=,
  echo "${SOURCES[*]}"
)"
deadline=$(($(now_ms) + 10000))
until ip netns exec "$CLIENT_NS" ping -c1 -W1 "$SERVER_IP" >/dev/null 2>&1; do
  (($(now_ms) < deadline)) || fail "no route over the veth pair: $(ip -n "$NS" addr show fwsr0)"
  sleep 0.1
done
mtu="$(ip -n "$NS" -o link show fwsr0 | sed -n 's/.* mtu \([0-9]*\) .*/\1/p')"
[[ "$mtu" == 1500 ]] || fail "fwsr0 has MTU $mtu, not 1500"
ok "veth fwsr0 ($NS, $SERVER_IP) <-> fwsr1 ($CLIENT_NS, $SCRAPER_IP + 80 sources), MTU 1500"

ROOT="$E2E_TMP/node"
"$SIM" build --preset hgx-roce --root "$ROOT" >/dev/null || fail "fabricsim build failed"

# shellcheck disable=SC2034  # read by lib.sh (url)
AGENT_HOST="$SERVER_IP"
# The agent in $NS on $SERVER_IP (start_agent's own listen address is loopback, which the other
# namespace cannot reach); the curl helpers run in the clients' namespace.
E2E_WRAP=(ip netns exec "$CLIENT_NS")
agent_in_ns() {
  AGENT_LOG="$(mktemp "$E2E_TMP/agent.XXXXXX.log")"
  ip netns exec "$NS" "$FABRICWATCH_BIN" --web.listen-address="$SERVER_IP:0" \
    --path.sysfs="$ROOT/sys" --path.ethtool="$ROOT/ethtool" --metrics.all "$@" >"$AGENT_LOG" 2>&1 &
  AGENT_PID=$!
  register_pid "$AGENT_PID"
  AGENT_PORT="$(wait_for_port "$AGENT_PID" "$AGENT_LOG" 10)" ||
    fail "agent did not report its port within 10 s (args: $*); log:
$(cat "$AGENT_LOG")"
}

# slow_readers N SOURCES [RECONNECT_S]: N slow readers from SOURCES (comma-separated) in the
# background, each reconnecting RECONNECT_S (1) after a reset, held for 600 s at most (the trap
# ends them sooner).
slow_readers() {
  ip netns exec "$CLIENT_NS" python3 "$ABUSE" --host "$SERVER_IP" --port "$AGENT_PORT" \
    --mode slowread --hostile "$1" --source "$2" --reconnect "${3:-1}" --scrapes 0 --settle 20 \
    --hold 600 >/dev/null 2>&1 &
  SLOW_PID=$!
  register_pid "$SLOW_PID"
}

stop_slow_readers() {
  kill -TERM "$SLOW_PID" 2>/dev/null || true
  wait "$SLOW_PID" 2>/dev/null || true
}

# scrapes N INTERVAL: N curl scrapes of /metrics from $SCRAPER_IP; prints how many were 200,
# and logs the others' status codes (000: refused or reset) to $E2E_TMP/codes.
scrapes() {
  local n="$1" interval="$2" good=0 code
  : >"$E2E_TMP/codes"
  for _ in $(seq 1 "$n"); do
    code="$("${E2E_WRAP[@]}" curl -s -o /dev/null -w '%{http_code}' --max-time 10 \
      --interface "$SCRAPER_IP" "$(url /metrics)" || true)"
    if [[ "$code" == 200 ]]; then good=$((good + 1)); else printf '%s ' "$code" >>"$E2E_TMP/codes"; fi
    sleep "$interval"
  done
  printf '%s\n' "$good"
}

# established: the TCP connections established to the agent's port, as the kernel of its
# namespace sees them (not the agent's own figure: a full agent may not answer).
established() {
  ip netns exec "$NS" ss -Htn state established "( sport = :$AGENT_PORT )" | wc -l
}

# wait_open N: waits (30 s) until at least N connections to the agent are established.
wait_open() {
  local want="$1" open=0 deadline=$(($(now_ms) + 30000))
  while (($(now_ms) < deadline)); do
    open="$(established)"
    ((open >= want)) && return 0
    sleep 0.5
  done
  printf '%s\n' "$open"
  return 1
}

# metrics: the body of /metrics (5 tries: an agent at its cap may refuse one too), or nothing.
metrics() {
  local body=""
  for _ in 1 2 3 4 5; do
    body="$("${E2E_WRAP[@]}" curl -sf --max-time 10 --interface "$SCRAPER_IP" "$(url /metrics)")" &&
      break
    sleep 0.2
  done
  printf '%s\n' "$body"
}

# http_counters BODY: the HTTP server's counters that tell why a scrape failed.
http_counters() {
  grep -E '^fabricwatch_http_(connections_(evicted|stalled_evicted|rejected|per_address_rejected)_total|overloaded_total|timeouts_total)' <<<"$1" |
    tr '\n' ' ' || true
}

counter() { # counter BODY NAME: the value, 0 when absent
  local v
  v="$(metric_value "$1" "$2")"
  printf '%s\n' "${v%.*}"
}

# --- 1. The default cap -------------------------------------------------------------------------
agent_in_ns
size="$(scrape /metrics --interface "$SCRAPER_IP" | wc -c)"
((size > 262144)) || fail "/metrics is $size bytes: too small to outgrow a send buffer"
ok "agent in $NS on $SERVER_IP:$AGENT_PORT, /metrics $size bytes"

slow_readers 4400 "$ALL_SOURCES"
if ! held="$(wait_open 4000)"; then
  fail "default cap: the 4400 slow readers never held 4000 connections (open: $held)"
fi
good="$(scrapes 80 0.5)"
body="$(metrics)"
stalled="$(counter "$body" fabricwatch_http_connections_stalled_evicted_total)"
printf '# default cap: %s of 80 scrapes with 4400 slow readers from 80 addresses; failed: %s; agent: %s\n' \
  "$good" "$(cat "$E2E_TMP/codes")" "$(http_counters "$body")"
# 75-80 of 80 were seen (25 before). The rare loss: at the cap, the oldest connection without a
# complete request head goes first (the slowloris rule), and a scraper whose GET has not arrived
# yet when the next reader connects can be that one (README "HTTP server limits").
if ((good >= 72)); then
  ok "default cap: $good of 80 scrapes over the veth with 4400 slow readers (${stalled:-?} stalled responses evicted; at least 72 wanted, 25 before)"
else
  fail_later "default cap: $good of 80 scrapes succeeded with 4400 slow readers from 80 addresses (want at least 72)"
fi
[[ "${stalled:-0}" -gt 0 ]] ||
  fail_later "default cap: fabricwatch_http_connections_stalled_evicted_total is ${stalled:-absent}"
stop_slow_readers
stop_agent

# --- 2. --web.max-connections=64 ----------------------------------------------------------------
agent_in_ns --web.max-connections=64
# Reconnecting after 5 s: 66 readers over the cap that reconnect every second outrun the 64
# stalled responses a second the cap can evict (measured: 56-58 of 60 scrapes); that is a
# flood eviction cannot answer, this is a persistent attacker. A scraper that arrives while every
# slot holds a response younger than the 1 s stall threshold is still refused (README "HTTP
# server limits"): 53-60 of 60 were seen (53 on a CI run with other tests beside it), against 1
# of 60 before stalled responses were evicted. The bound asserts that difference, not all 60.
slow_readers 130 "${SOURCES[0]},${SOURCES[1]},${SOURCES[2]},${SOURCES[3]}" 5
held="$(wait_open 60)" || fail "cap 64: the 130 slow readers never held 60 connections (open: $held)"
good="$(scrapes 60 0.5)"
body="$(metrics)"
stalled="$(counter "$body" fabricwatch_http_connections_stalled_evicted_total)"
printf '# cap 64: %s of 60 scrapes with 130 slow readers from 4 addresses; failed: %s; agent: %s\n' \
  "$good" "$(cat "$E2E_TMP/codes")" "$(http_counters "$body")"
if ((good >= 45)); then
  ok "cap 64: $good of 60 scrapes with 130 slow readers (${stalled:-?} stalled responses evicted; at least 45 wanted, 1 before)"
else
  fail_later "cap 64: $good of 60 scrapes succeeded with 130 slow readers from 4 addresses (want at least 45)"
fi
stop_slow_readers
stop_agent

# --- 3. One address -----------------------------------------------------------------------------
agent_in_ns
slow_readers 300 "${SOURCES[0]}"
sleep 5
good="$(scrapes 20 0.25)"
body="$(metrics)"
refused="$(counter "$body" fabricwatch_http_connections_per_address_rejected_total)"
evicted="$(counter "$body" fabricwatch_http_connections_evicted_total)"
open="$(counter "$body" fabricwatch_http_connections)"
printf '# one address: %s of 20 scrapes, %s connections open, %s refused for the address\n' \
  "$good" "${open:-absent}" "${refused:-absent}"
[[ "$good" == 20 ]] || fail_later "one address: $good of 20 scrapes succeeded"
# At its limit an address makes room by losing its own oldest idle or stalled connection
# (evicted) or, when none is, by being refused: either way no more than 64 stay open.
if ((${open:-999} <= 70 && ${refused:-0} + ${evicted:-0} > 0)); then
  ok "one address: 300 slow readers held to the per-address limit ($open open, ${evicted:-0} evicted, ${refused:-0} refused), 20 of 20 scrapes"
else
  fail_later "one address: ${open:-absent} connections open, ${evicted:-absent} evicted, ${refused:-absent} refused for the address (limit 64)"
fi
stop_slow_readers
stop_agent
finish
