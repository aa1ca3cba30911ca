#!/usr/bin/env bash
# A real Prometheus (Debian's /usr/bin/prometheus) scrapes the agent serving the roce-node replay
# fixture: the target must go "up" and the series must be queryable with the fixture's values.
#
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/prometheus_e2e_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init prometheus_e2e_test "$@"

PROMETHEUS="${PROMETHEUS:-/usr/bin/prometheus}"
[[ -x "$PROMETHEUS" ]] ||
  fail "$PROMETHEUS not found: install it with 'apt-get install prometheus' (make test installs it)"
command -v python3 >/dev/null || fail "python3 is required to read the Prometheus API's JSON"
ROCE="$FABRICWATCH_SOURCE_DIR/tests/fixtures/sysfs/roce-node/sys"
[[ -d "$ROCE/class/net" ]] || fail "fixture missing: $ROCE"

start_agent --path.sysfs="$ROCE"
ok "agent serving roce-node on 127.0.0.1:$AGENT_PORT"

PROM_DIR=""
make_tmpdir PROM_DIR
cat >"$PROM_DIR/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: fabricwatch
    static_configs:
      - targets: ['127.0.0.1:$AGENT_PORT']
EOF
promtool check config "$PROM_DIR/prometheus.yml" >/dev/null 2>&1 ||
  fail "promtool check config rejected the generated prometheus.yml:
$(promtool check config "$PROM_DIR/prometheus.yml" 2>&1)"

# Prometheus cannot bind port 0: try random high ports until one binds.
PROM_PID=""
PROM_PORT=""
for attempt in 1 2 3 4 5 6 7 8; do
  port=$((20000 + RANDOM % 40000))
  # Taken already? (a connect that succeeds means someone listens there)
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi
  PROM_LOG="$PROM_DIR/prometheus.$attempt.log"
  "$PROMETHEUS" --config.file="$PROM_DIR/prometheus.yml" \
    --storage.tsdb.path="$PROM_DIR/data.$attempt" \
    --web.listen-address="127.0.0.1:$port" \
    --web.console.templates=/usr/share/prometheus/consoles \
    --web.console.libraries=/usr/share/prometheus/console_libraries \
    --log.level=warn >"$PROM_LOG" 2>&1 &
  pid=$!
  register_pid "$pid"
  # Ready, or exited (most likely: address already in use)?
  deadline=$(($(now_ms) + 30000))
  while (($(now_ms) < deadline)) && kill -0 "$pid" 2>/dev/null; do
    if curl -sf --max-time 2 "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1; then
      PROM_PID=$pid
      PROM_PORT=$port
      break 2
    fi
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    fail "prometheus on port $port neither became ready nor exited in 30 s:
$(tail -n 20 "$PROM_LOG")"
  fi
  grep -qi 'address already in use' "$PROM_LOG" ||
    fail "prometheus exited at startup (not a port conflict):
$(tail -n 20 "$PROM_LOG")"
  log "port $port taken, retrying"
done
[[ -n "$PROM_PORT" ]] || fail "could not start prometheus on a free port after 8 attempts"
ok "prometheus $("$PROMETHEUS" --version 2>&1 | awk 'NR==1{print $3}') ready on 127.0.0.1:$PROM_PORT"

PROM="http://127.0.0.1:$PROM_PORT"
prom_get() { curl -sS --fail --max-time 5 "$@"; }

# Target health.
health=""
deadline=$(($(now_ms) + 60000))
while (($(now_ms) < deadline)); do
  targets="$(prom_get "$PROM/api/v1/targets" || true)"
  if [[ -n "$targets" ]]; then
    health="$(json_get "$targets" \
      '",".join(t["health"] for t in d["data"]["activeTargets"] if t["labels"]["job"] == "fabricwatch") or "none"')"
    [[ "$health" == up ]] && break
  fi
  sleep 0.5
done
[[ "$health" == up ]] || fail "target did not become up within 60 s (health: '$health'); targets:
$targets"
ok "target 127.0.0.1:$AGENT_PORT is up"

# query EXPR: the result vector as JSON (empty list when none); retried for 10 s while empty.
query() {
  local expr="$1" out result deadline=$(($(now_ms) + 10000))
  while :; do
    out="$(prom_get -G "$PROM/api/v1/query" --data-urlencode "query=$expr")" ||
      fail "query $expr failed"
    [[ "$(json_get "$out" 'd["status"]')" == success ]] || fail "query $expr: $out"
    result="$(json_get "$out" 'json.dumps(d["data"]["result"])')"
    if [[ "$result" != "[]" ]] || (($(now_ms) >= deadline)); then
      printf '%s\n' "$result"
      return 0
    fi
    sleep 0.5
  done
}

result="$(query fabricwatch_build_info)"
[[ "$result" != "[]" ]] || fail "fabricwatch_build_info: empty result"
[[ "$(json_get "$result" 'd[0]["value"][1]')" == 1 ]] ||
  fail "fabricwatch_build_info value is not 1: $result"
ok "fabricwatch_build_info queryable: $(json_get "$result" 'd[0]["metric"].get("version")')"

result="$(query 'fabric_netdev_carrier_down_changes_total{netdev="enp65s0f0np0"}')"
[[ "$result" != "[]" ]] || fail "fabric_netdev_carrier_down_changes_total{netdev=\"enp65s0f0np0\"}: empty"
value="$(json_get "$result" 'd[0]["value"][1]')"
[[ "$value" == 2 ]] || fail "fabric_netdev_carrier_down_changes_total{netdev=\"enp65s0f0np0\"} = $value, want 2"
ok "fabric_netdev_carrier_down_changes_total{netdev=\"enp65s0f0np0\"} = 2"

result="$(query 'fabricwatch_collector_success{collector="netdev"}')"
[[ "$(json_get "$result" 'd[0]["value"][1] if d else "none"')" == 1 ]] ||
  fail "fabricwatch_collector_success{collector=\"netdev\"} via Prometheus: $result"
result="$(query 'up{job="fabricwatch"}')"
[[ "$(json_get "$result" 'd[0]["value"][1] if d else "none"')" == 1 ]] || fail "up{job=\"fabricwatch\"}: $result"
ok "up{job=\"fabricwatch\"} = 1, collector success = 1"

# Prometheus logs a warning per scrape that fails to parse; there must be none.
if grep -Ei 'level=(warn|error).*(scrape|append)' "$PROM_LOG" >/dev/null; then
  fail "prometheus logged scrape problems:
$(grep -Ei 'level=(warn|error).*(scrape|append)' "$PROM_LOG" | head -n 5)"
fi
ok "no scrape warnings in the prometheus log"

stop_agent "$PROM_PID"
[[ "$STOP_RC" == 0 ]] || fail "prometheus exited $STOP_RC on SIGTERM"
stop_agent "$AGENT_PID"
[[ "$STOP_RC" == 0 ]] || fail "agent exited $STOP_RC on SIGTERM"
ok "prometheus and agent stopped (agent in $STOP_MS ms)"
finish
