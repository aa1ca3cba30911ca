#!/usr/bin/env bash
# HTTP abuse (issue 19, "bounded HTTP"): 1,000 hostile connections on loopback, idle, sending a
# request head one byte at a time (slowloris), or a TLS ClientHello that never ends, while real
# clients scrape. Every scrape must succeed. Correctness only: no timing is asserted here (the
# figures come from tools/bench/http_abuse.py, README "Performance"). Then with the cap at 64:
# the oldest half-open connections are evicted for new ones, and the agent reports it.
#
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/http_abuse_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init http_abuse_test "$@"

command -v python3 >/dev/null || fail "python3 is required (tools/bench/http_abuse.py)"
ABUSE="$FABRICWATCH_SOURCE_DIR/tools/bench/http_abuse.py"
ROCE="$FABRICWATCH_SOURCE_DIR/tests/fixtures/sysfs/roce-node/sys"
[[ -d "$ROCE/class/net" ]] || fail "fixture missing: $ROCE"

start_agent --path.sysfs="$ROCE"
ok "agent serving on 127.0.0.1:$AGENT_PORT"
# The attackers come from 20 loopback addresses (50 each, under the per-address limit of 64), as
# many hosts would: one address alone is held to --web.max-connections-per-address.
SOURCES="$(seq -s, -f '127.0.1.%g' 1 20)"

for mode in idle partial tls; do
  out="$(timeout 120 python3 "$ABUSE" --port "$AGENT_PORT" --hostile 1000 --mode "$mode" \
    --source "$SOURCES" --scrapes 20 --interval 0.05 --timeout 10 --json --require-success)" ||
    fail "$mode: the abuse run failed: $out"
  scraped="$(json_get "$out" 'd["ok"]')"
  held="$(json_get "$out" 'd["hostile_open"]')"
  # On this plain-HTTP agent the ClientHello bytes are refused at once (400) and the attacker
  # reconnects: a connection flood rather than held connections.
  [[ "$mode" == tls ]] || ((held >= 900)) ||
    fail "$mode: only $held of 1000 hostile connections were open: $out"
  [[ "$scraped" == 20 ]] || fail "$mode: $scraped of 20 scrapes succeeded with 1000 hostile connections: $out"
  ok "$mode: 20 of 20 scrapes of /metrics succeeded with 1000 hostile clients ($held open)"
done

# A scrape with curl and the body still holds the agent's own series.
body="$(scrape /metrics)"
grep -q '^fabricwatch_build_info' <<<"$body" || fail "/metrics lacks fabricwatch_build_info"
ok "curl scrape after the abuse runs"
stop_agent
[[ "$STOP_RC" == 0 ]] || fail_later "agent exited $STOP_RC after the abuse runs"

# With the cap at 64, 1000 idle connections cannot lock a scraper out: the oldest that never
# sent a request head is closed for each new connection (and reconnects: a flood of connects).
# curl, a client of its own, scrapes meanwhile.
start_agent --path.sysfs="$ROCE" --web.max-connections=64
python3 "$ABUSE" --port "$AGENT_PORT" --hostile 1000 --mode idle --source "$SOURCES" \
  --scrapes 0 --settle 2 --hold 60 >/dev/null 2>&1 &
register_pid $!
# Wait (bounded) until the cap is reached and evicting, then scrape under it.
deadline=$(($(now_ms) + 15000))
until [[ "$(metric_value "$(curl -s --max-time 5 "$(url /metrics)" || true)" \
  fabricwatch_http_connections_evicted_total)" =~ ^[1-9] ]]; do
  (($(now_ms) < deadline)) || fail "capped: the 1000 attackers never filled the 64 connections"
  sleep 0.1
done
evicted=0
for i in $(seq 1 20); do
  body="$(curl -sS --fail --max-time 10 "$(url /metrics)")" || fail "capped: scrape $i failed"
  evicted="$(metric_value "$body" fabricwatch_http_connections_evicted_total)"
done
[[ "${evicted%.*}" -gt 0 ]] || fail "capped: no connection was evicted (evicted_total $evicted)"
ok "capped at 64 connections: 20 of 20 curl scrapes succeeded under 1000 idle attackers ($evicted evicted)"
finish
