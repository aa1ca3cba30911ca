#!/usr/bin/env bash
# The agent binary against the replay fixtures: exposition validity (promtool), golden metrics,
# HTTP behaviour (gzip, 404/405, status page, healthz, concurrency), bind failure, flag and config
# errors, --config.check, a malformed tree, and SIGTERM latency.
#
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/agent_e2e_test.sh <fabricwatch binary>
# UPDATE_GOLDEN=1 rewrites tests/golden/e2e/roce-node.prom instead of comparing.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init agent_e2e_test "$@"

FIXTURES="$FABRICWATCH_SOURCE_DIR/tests/fixtures/sysfs"
ROCE="$FIXTURES/roce-node/sys"
MALFORMED="$FIXTURES/malformed/sys"
GOLDEN="$FABRICWATCH_SOURCE_DIR/tests/golden/e2e/roce-node.prom"
[[ -d "$ROCE/class/net" ]] || fail "fixture missing: $ROCE (run tests/fixtures/sysfs/make_fixtures.sh)"

command -v promtool >/dev/null ||
  fail "promtool not found: install it with 'apt-get install prometheus' (make test installs it)"

# ---------------------------------------------------------------------------------------------
# roce-node: exposition, golden, self metrics.

# Detectors off: the golden pins the collectors' series; detector evidence (outage lengths,
# decaying penalties) depends on wall time and is tested by tests/unit/detectors and the netns
# e2e test. --metrics.all: the golden pins every series the collectors make; what the series
# budget trims from them is e2e.series_budget_test's.
start_agent --path.sysfs="$ROCE" --detector.disable-defaults --metrics.all
ok "agent started on 127.0.0.1:0, bound port $AGENT_PORT"
# The port line is logged before the first collection: wait for it.
wait_for_metric /metrics 'fabricwatch_collector_success{collector="netdev"}' 10 1 ||
  fail "fabricwatch_collector_success{collector=\"netdev\"} did not become 1 within 10 s:
$(scrape /metrics | grep '^fabricwatch_collector' || true)"

metrics="$(scrape /metrics)"
printf '%s\n' "$metrics" >"$E2E_TMP/roce.prom"

set +e
promtool_out="$(promtool check metrics <"$E2E_TMP/roce.prom" 2>&1)"
promtool_rc=$?
set -e
[[ $promtool_rc -eq 0 && -z "$promtool_out" ]] ||
  fail "promtool check metrics: exit $promtool_rc, output:
$promtool_out"
ok "promtool check metrics: exit 0, no output"

deterministic="$(grep -E '^(fabric_|# (HELP|TYPE) fabric_)' "$E2E_TMP/roce.prom" || true)"
[[ -n "$deterministic" ]] || fail "no fabric_ series in /metrics"
if [[ "${UPDATE_GOLDEN:-}" == 1 ]]; then
  mkdir -p "$(dirname "$GOLDEN")"
  printf '%s\n' "$deterministic" >"$GOLDEN"
  ok "golden written: $GOLDEN ($(wc -l <"$GOLDEN") lines)"
else
  [[ -f "$GOLDEN" ]] || fail "golden missing: $GOLDEN (run with UPDATE_GOLDEN=1 to create it)"
  if ! diff_out="$(diff -u --label "$GOLDEN" --label /metrics "$GOLDEN" <(printf '%s\n' "$deterministic"))"; then
    fail "fabric_ series differ from $GOLDEN (UPDATE_GOLDEN=1 rewrites it):
$diff_out"
  fi
  ok "fabric_ series match golden ($(wc -l <"$GOLDEN") lines)"
fi

grep -Eq '^fabricwatch_build_info\{[^}]*version="[^"]+"[^}]*\} 1$' <<<"$metrics" ||
  fail "fabricwatch_build_info{version=...} 1 missing"
ok "fabricwatch_build_info present"
[[ "$(metric_value "$metrics" 'fabricwatch_collector_success{collector="netdev"}')" == 1 ]] ||
  fail "fabricwatch_collector_success{collector=\"netdev\"} is not 1"
ok "fabricwatch_collector_success{collector=\"netdev\"} 1"
st="$(metric_value "$metrics" process_start_time_seconds)"
[[ -n "$st" ]] || fail "process_start_time_seconds missing"
now_s=$(date +%s)
python3 -c 'import sys; v=float(sys.argv[1]); n=float(sys.argv[2]); sys.exit(0 if n-3600 < v <= n+1 else 1)' \
  "$st" "$now_s" || fail "process_start_time_seconds=$st is not close to now ($now_s)"
ok "process_start_time_seconds present ($st)"
[[ "$(metric_value "$metrics" 'fabricwatch_collector_errors_total{collector="netdev"}')" == 0 ]] ||
  fail "roce-node should collect without errors: $(grep collector_errors <<<"$metrics")"
ok "roce-node collected without errors"

# ---------------------------------------------------------------------------------------------
# HTTP behaviour.

headers="$E2E_TMP/gzip.headers"
gz_body="$(scrape /metrics --compressed -D "$headers")"
grep -iq '^content-encoding: gzip' "$headers" ||
  fail "curl --compressed: no Content-Encoding: gzip; headers:
$(cat "$headers")"
grep -q '^fabricwatch_build_info' <<<"$gz_body" || fail "gzip body did not decode to metrics"
ok "gzip scrape: Content-Encoding: gzip, body decodes"
raw_gz="$E2E_TMP/raw.gz"
scrape /metrics -H 'Accept-Encoding: gzip' -o "$raw_gz"
# A here-string, not a pipe into grep -q: grep -q exits at the first match, gunzip's next write
# dies of SIGPIPE, and pipefail would call that a failure.
grep -q '^fabricwatch_build_info' <<<"$(gunzip -c "$raw_gz")" || fail "raw gzip body does not gunzip"
plain_headers="$E2E_TMP/plain.headers"
scrape /metrics -D "$plain_headers" -o /dev/null
! grep -iq '^content-encoding' "$plain_headers" ||
  fail "Content-Encoding sent without Accept-Encoding"
grep -iq '^content-type: text/plain; version=0.0.4' "$plain_headers" ||
  fail "unexpected Content-Type: $(grep -i '^content-type' "$plain_headers")"
ok "raw gzip gunzips; no encoding without Accept-Encoding; Content-Type text/plain; version=0.0.4"

code="$(http_code /does-not-exist)"
[[ "$code" == 404 ]] || fail "GET /does-not-exist: $code, want 404"
ok "unknown path: 404"
for method in POST PUT DELETE; do
  code="$(http_code /metrics -X "$method" -D "$E2E_TMP/405.headers")"
  [[ "$code" == 405 ]] || fail "$method /metrics: $code, want 405"
  grep -iq '^allow: GET, HEAD' "$E2E_TMP/405.headers" || fail "$method /metrics: no Allow: GET, HEAD"
done
ok "POST/PUT/DELETE: 405 with Allow: GET, HEAD"
code="$(http_code /metrics -I)"
[[ "$code" == 200 ]] || fail "HEAD /metrics: $code"
ok "HEAD /metrics: 200"

page="$(scrape /)"
grep -q fabricwatch <<<"$page" || fail "/ does not mention fabricwatch"
grep -q netdev <<<"$page" || fail "/ does not mention netdev"
ok "status page mentions fabricwatch and netdev"
[[ "$(scrape /healthz)" == ok ]] || fail "/healthz: '$(scrape /healthz)', want ok"
ok "/healthz: ok"
events="$(scrape /api/v1/link-events)"
[[ "$(json_get "$events" 'd["listening"] is False and d["total"] == 0 and d["events"] == []')" == True ]] ||
  fail "/api/v1/link-events on a replay root should be idle: $events"
ok "/api/v1/link-events: valid JSON, listener off on a replay root"

# 20 concurrent scrapes.
pids=()
for i in $(seq 1 20); do
  "${E2E_WRAP[@]}" curl -sS --fail --max-time 10 -o "$E2E_TMP/concurrent.$i" "$(url /metrics)" &
  pids+=($!)
done
failed=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed=$((failed + 1))
done
((failed == 0)) || fail "$failed of 20 concurrent scrapes failed"
for i in $(seq 1 20); do
  grep -q '^fabricwatch_build_info' "$E2E_TMP/concurrent.$i" ||
    fail "concurrent scrape $i: body lacks fabricwatch_build_info ($(wc -c <"$E2E_TMP/concurrent.$i") bytes)"
done
ok "20 concurrent scrapes succeeded with full bodies"

# A second agent on the same port.
second_log="$E2E_TMP/second.log"
"$FABRICWATCH_BIN" --web.listen-address="127.0.0.1:$AGENT_PORT" --path.sysfs="$ROCE" \
  >"$second_log" 2>&1 &
second=$!
register_pid "$second"
wait_exit "$second" 10
[[ "$WAIT_RC" == 1 ]] || fail "second agent on port $AGENT_PORT: exit $WAIT_RC, want 1; log:
$(cat "$second_log")"
grep -q "cannot listen on 127.0.0.1:$AGENT_PORT: Address already in use" "$second_log" ||
  fail "second agent log lacks 'cannot listen on 127.0.0.1:$AGENT_PORT: Address already in use':
$(cat "$second_log")"
ok "second agent on the same port exits 1: Address already in use"
[[ "$(scrape /healthz)" == ok ]] || fail "first agent stopped serving after the bind conflict"

# SIGTERM latency.
stop_agent "$AGENT_PID"
[[ "$STOP_RC" == 0 ]] || fail "agent exited $STOP_RC after SIGTERM, want 0; log:
$(cat "$AGENT_LOG")"
((STOP_MS < 1000)) || fail "SIGTERM -> exit took $STOP_MS ms, want < 1000"
grep -q 'msg=stopped\|msg="stopped"' "$AGENT_LOG" || fail "no 'stopped' log line after SIGTERM"
ok "SIGTERM: exit 0 in $STOP_MS ms"
SIGTERM_MS=$STOP_MS

# ---------------------------------------------------------------------------------------------
# --config.check, flags, config file.

set +e
check_out="$("$FABRICWATCH_BIN" --config.check --path.sysfs="$ROCE" 2>&1)"
check_rc=$?
set -e
[[ $check_rc -eq 0 ]] || fail "--config.check on roce-node: exit $check_rc:
$check_out"
grep -Eq '^netdev +ok ' <<<"$check_out" || fail "--config.check on roce-node: netdev not ok:
$check_out"
ok "--config.check roce-node: exit 0, netdev ok"

set +e
check_out="$("$FABRICWATCH_BIN" --config.check --path.sysfs="$MALFORMED" 2>&1)"
check_rc=$?
set -e
[[ $check_rc -eq 0 ]] || fail "--config.check on malformed: exit $check_rc:
$check_out"
grep -Eq '^netdev +partial ' <<<"$check_out" ||
  fail "--config.check on malformed: no 'partial':
$check_out"
ok "--config.check malformed: exit 0, netdev partial"

set +e
flag_err="$("$FABRICWATCH_BIN" --no-such-flag 2>&1 >/dev/null)"
flag_rc=$?
set -e
[[ $flag_rc -eq 2 ]] || fail "bad flag: exit $flag_rc, want 2"
grep -q '^fabricwatch: .*--no-such-flag' <<<"$flag_err" ||
  fail "bad flag: stderr lacks 'fabricwatch: ... --no-such-flag': $flag_err"
ok "bad flag: exit 2, 'fabricwatch: <message>' naming it"

set +e
bad_dur="$("$FABRICWATCH_BIN" --collector.netdev.interval=fast --path.sysfs="$ROCE" 2>&1 >/dev/null)"
bad_dur_rc=$?
set -e
[[ $bad_dur_rc -eq 2 && "$bad_dur" == fabricwatch:* ]] ||
  fail "bad interval: exit $bad_dur_rc, stderr: $bad_dur"
ok "bad --collector.netdev.interval: exit 2"

config="$E2E_TMP/bad.yml"
printf 'collectors:\n  netdev:\n    interval: 1s\nbogus_section: 1\n' >"$config"
set +e
cfg_err="$("$FABRICWATCH_BIN" --config.file="$config" --path.sysfs="$ROCE" 2>&1 >/dev/null)"
cfg_rc=$?
set -e
[[ $cfg_rc -eq 2 ]] || fail "config with an unknown key: exit $cfg_rc, want 2 ($cfg_err)"
grep -q '^fabricwatch: .*bogus_section' <<<"$cfg_err" ||
  fail "config with an unknown key: stderr does not name bogus_section: $cfg_err"
ok "config file with unknown top-level key: exit 2, names it"
printf 'collectors:\n  netdev:\n    frobnicate: yes\n' >"$config"
set +e
cfg_err="$("$FABRICWATCH_BIN" --config.file="$config" --path.sysfs="$ROCE" 2>&1 >/dev/null)"
cfg_rc=$?
set -e
{ [[ $cfg_rc -eq 2 ]] && grep -q '^fabricwatch: .*frobnicate' <<<"$cfg_err"; } ||
  fail "config with an unknown collector option: exit $cfg_rc, stderr: $cfg_err"
ok "config file with unknown collector option: exit 2, names it"

# ---------------------------------------------------------------------------------------------
# The malformed tree is still served.

start_agent --path.sysfs="$MALFORMED"
wait_for_metric /metrics 'fabricwatch_collector_success{collector="netdev"}' 10 1 ||
  fail "malformed: netdev collector never succeeded:
$(scrape /metrics | grep '^fabricwatch_collector' || true)"
metrics="$(scrape /metrics)"
grep -q '^fabric_netdev_oper_up{netdev="good0"} ' <<<"$metrics" ||
  fail "malformed: good0 metrics missing"
grep -q '^fabric_netdev_carrier_down_changes_total{netdev="good0"} ' <<<"$metrics" ||
  fail "malformed: good0 counters missing"
errors="$(metric_value "$metrics" 'fabricwatch_collector_errors_total{collector="netdev"}')"
{ [[ -n "$errors" ]] && python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)' "$errors"; } ||
  fail "malformed: fabricwatch_collector_errors_total{collector=\"netdev\"} = '$errors', want > 0"
set +e
promtool_out="$(promtool check metrics <<<"$metrics" 2>&1)"
promtool_rc=$?
set -e
[[ $promtool_rc -eq 0 && -z "$promtool_out" ]] ||
  fail "promtool check metrics on the malformed tree: exit $promtool_rc: $promtool_out"
ok "malformed tree served: good0 present, netdev errors_total=$errors, promtool clean"

# ---------------------------------------------------------------------------------------------
# SIGTERM while a client holds a connection without sending a request (a port scanner, a stuck
# load-balancer probe). HttpServer documents that Stop() never waits on an idle client.
exec 3<>"/dev/tcp/127.0.0.1/$AGENT_PORT"
sleep 0.2
stop_agent "$AGENT_PID"
exec 3<&- 3>&-
[[ "$STOP_RC" == 0 ]] || fail "agent exited $STOP_RC after SIGTERM with an idle client"
if ((STOP_MS < 1000)); then
  ok "SIGTERM with an idle client connected: exit 0 in $STOP_MS ms"
else
  fail_later "SIGTERM with an idle client connected took $STOP_MS ms, want < 1000 (the HTTP event loop closes idle connections at once on Stop, exporter/http/http_server.h)"
fi

printf '# SIGTERM stop: %d ms (no client), %d ms (idle client connected)\n' "$SIGTERM_MS" "$STOP_MS"
finish
