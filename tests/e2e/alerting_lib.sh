# shellcheck shell=bash
# Helpers for the alerting end-to-end tests (source after lib.sh): start a real Prometheus or
# Alertmanager from Debian on a free loopback port, and a webhook receiver (socat) that stores
# every notification body it gets as a file.

# free_port: prints a random high port nobody listens on.
free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { printf '%s\n' "$p"; return 0; }
  done
  return 1
}

# start_server NAME READY_PATH ARGS_WITH_@PORT@...: starts the binary ARGS[0] with @PORT@ replaced
# by a free port, retrying on port conflicts; sets SERVER_PORT and SERVER_PID.
start_server() {
  local name="$1" ready="$2"; shift 2
  local attempt port pid logf deadline args a
  for attempt in 1 2 3 4 5 6; do
    port="$(free_port)" || fail "no free port"
    args=()
    for a in "$@"; do args+=("${a//@PORT@/$port}"); done
    logf="$E2E_TMP/$name.$attempt.log"
    "${args[@]}" >"$logf" 2>&1 &
    pid=$!
    register_pid "$pid"
    deadline=$(($(now_ms) + 30000))
    while (($(now_ms) < deadline)) && kill -0 "$pid" 2>/dev/null; do
      if curl -sf --max-time 2 "http://127.0.0.1:$port$ready" >/dev/null 2>&1; then
        SERVER_PORT=$port SERVER_PID=$pid SERVER_LOG=$logf
        return 0
      fi
      sleep 0.2
    done
    kill -0 "$pid" 2>/dev/null && fail "$name on port $port not ready in 30 s: $(tail -n 20 "$logf")"
    grep -qi 'address already in use' "$logf" || fail "$name exited at startup: $(tail -n 20 "$logf")"
  done
  fail "could not start $name on a free port"
}

# start_prometheus CONFIG [ARGS...]: real Prometheus with CONFIG; sets PROM_URL. Alerts are
# re-sent every second (default 1 m), so the first ones, sent before the Alertmanager was
# discovered and dropped, do not wait a minute.
start_prometheus() {
  local data="$E2E_TMP/prom-data"
  mkdir -p "$data"
  start_server prometheus /-/ready "${PROMETHEUS:-/usr/bin/prometheus}" --config.file="$1" \
    --storage.tsdb.path="$data" --web.listen-address=127.0.0.1:@PORT@ \
    --web.console.templates=/usr/share/prometheus/consoles \
    --web.console.libraries=/usr/share/prometheus/console_libraries --log.level=warn \
    --rules.alert.resend-delay=1s "${@:2}"
  PROM_URL="http://127.0.0.1:$SERVER_PORT" PROM_PID=$SERVER_PID PROM_LOG=$SERVER_LOG
}

# start_alertmanager CONFIG: real Alertmanager (clustering off) with CONFIG; sets AM_URL.
start_alertmanager() {
  local data="$E2E_TMP/am-data"
  mkdir -p "$data"
  start_server alertmanager /-/ready "${ALERTMANAGER:-/usr/bin/prometheus-alertmanager}" \
    --config.file="$1" --storage.path="$data" --web.listen-address=127.0.0.1:@PORT@ \
    --cluster.listen-address= --log.level=warn
  AM_URL="http://127.0.0.1:$SERVER_PORT" AM_PID=$SERVER_PID
}

# start_webhook DIR: socat HTTP receiver; each POST body goes to DIR/<n>.<path>.json. Sets
# WEBHOOK_PORT.
start_webhook() {
  local dir="$1" handler="$E2E_TMP/webhook-handler.sh"
  mkdir -p "$dir"
  cat >"$handler" <<'HANDLER'
#!/usr/bin/env bash
# One HTTP request on stdin/stdout (socat SYSTEM): store the body, answer 200.
dir="$1"; len=0; path=/
read -r _method path _ || exit 0
while IFS= read -r line; do
  line="${line%$'\r'}"
  [[ -z "$line" ]] && break
  if [[ "${line,,}" == content-length:* ]]; then len="${line#*:}"; len="${len// /}"; fi
done
name="$(date +%s%N).$(tr -c 'a-zA-Z0-9' '_' <<<"${path#/}" | cut -c1-30)"
head -c "$len" >"$dir/.$name.tmp" && mv "$dir/.$name.tmp" "$dir/$name.json"
printf 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'
HANDLER
  local port attempt pid
  for attempt in 1 2 3 4 5; do
    port="$(free_port)"
    socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" "SYSTEM:bash $handler $dir" \
      >"$E2E_TMP/webhook.log" 2>&1 &
    pid=$!
    register_pid "$pid"
    sleep 0.3
    if kill -0 "$pid" 2>/dev/null; then WEBHOOK_PORT=$port; return 0; fi
  done
  fail "could not start the socat webhook receiver: $(cat "$E2E_TMP/webhook.log")"
}

# wait_notification DIR PATH_PART JQ_FILTER TIMEOUT_S: waits for a stored notification of the
# receiver path PATH_PART for which JQ_FILTER is true; prints its file name.
wait_notification() {
  local dir="$1" part="$2" filter="$3" timeout="$4" f
  local deadline=$(($(now_ms) + timeout * 1000))
  while (($(now_ms) < deadline)); do
    for f in "$dir"/*."$part"*.json; do
      [[ -e "$f" ]] || continue
      if jq -e "$filter" "$f" >/dev/null 2>&1; then printf '%s\n' "$f"; return 0; fi
    done
    sleep 0.5
  done
  return 1
}

# example_alertmanager_config WEBHOOK_BASE OUT: the shipped example with the receivers pointed at
# WEBHOOK_BASE and group_wait/group_interval shortened (routing, grouping and inhibition as
# shipped).
example_alertmanager_config() {
  sed -e "s#http://127.0.0.1:5001#$1#" \
    -e 's/^\( *\)group_wait: .*/\1group_wait: 1s/' \
    -e 's/^\( *\)group_interval: .*/\1group_interval: 2s/' \
    "$FABRICWATCH_SOURCE_DIR/alerts/alertmanager.example.yml" >"$2"
}
