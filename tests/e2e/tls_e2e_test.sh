#!/usr/bin/env bash
# --web.config.file end to end (issue 19): TLS with a required, verified client certificate and
# basic auth, as Prometheus deploys them. openssl makes a CA, a server and a client certificate;
# curl and a real Prometheus (Debian's) scrape the agent over https. Checks: up == 1 with the
# right credentials, 401 without them or with a wrong password, a TLS failure without the client
# certificate, a rotated certificate served without a restart, and the bad files an operator
# writes (missing certificate, a key that does not match, a malformed hash, a YAML typo) refused
# at start with exit 1 and the file named, and kept out on SIGHUP.
#
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/tls_e2e_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init tls_e2e_test "$@"

PROMETHEUS="${PROMETHEUS:-/usr/bin/prometheus}"
[[ -x "$PROMETHEUS" ]] || fail "$PROMETHEUS not found (apt-get install prometheus; make test installs it)"
command -v openssl >/dev/null || fail "openssl not found (apt-get install openssl; make test installs it)"
command -v python3 >/dev/null || fail "python3 is required (bcrypt hash through libcrypt, JSON)"
ROCE="$FABRICWATCH_SOURCE_DIR/tests/fixtures/sysfs/roce-node/sys"
[[ -d "$ROCE/class/net" ]] || fail "fixture missing: $ROCE"

PKI=""
make_tmpdir PKI
cd "$PKI"

# --- PKI: a CA, the server (SAN 127.0.0.1), a second server certificate for the rotation, the
# client Prometheus presents (SAN prometheus.test), and a client from another CA.
openssl_quiet() { openssl "$@" >/dev/null 2>&1 || fail "openssl $*: $(openssl "$@" 2>&1 | tail -3)"; }
issue() { # issue NAME CN SAN [CA_PREFIX]
  local name="$1" cn="$2" san="$3" ca="${4:-ca}"
  openssl_quiet req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$name.key" \
    -out "$name.csr" -subj "/CN=$cn"
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$san" >"$name.ext"
  openssl_quiet x509 -req -in "$name.csr" -CA "$ca.crt" -CAkey "$ca.key" -CAcreateserial \
    -days 2 -extfile "$name.ext" -out "$name.crt"
}
for ca in ca otherca; do
  openssl_quiet req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$ca.key" \
    -out "$ca.crt" -days 2 -subj "/CN=fabricwatch test $ca"
done
issue server fabricwatch-server "IP:127.0.0.1,DNS:localhost"
issue rotated fabricwatch-rotated "IP:127.0.0.1,DNS:localhost"
issue client prometheus-client "DNS:prometheus.test"
issue stranger stranger "DNS:prometheus.test" otherca
cp server.crt live.crt
cp server.key live.key
ok "openssl made a CA, server, rotated-server and client certificates"

# bcrypt through libxcrypt (the library the agent verifies with), cost 4 to keep the test quick.
HASH="$(python3 - <<'EOF'
import ctypes
lib = ctypes.CDLL("libcrypt.so.1")
lib.crypt_gensalt.restype = ctypes.c_char_p
lib.crypt_gensalt.argtypes = [ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p, ctypes.c_int]
lib.crypt.restype = ctypes.c_char_p
lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
print(lib.crypt(b"s3cret-pass", lib.crypt_gensalt(b"$2y$", 4, None, 0)).decode())
EOF
)"
[[ "$HASH" == '$2y$04$'* ]] || fail "could not make a bcrypt hash: $HASH"

cat >web.yml <<EOF
tls_server_config:
  cert_file: live.crt
  key_file: live.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
  client_allowed_sans: [prometheus.test]
  min_version: TLS12
basic_auth_users:
  prometheus: '$HASH'
http_server_config:
  headers:
    X-Content-Type-Options: nosniff
EOF

check_out="$("$FABRICWATCH_BIN" --config.check --web.config.file="$PKI/web.yml" \
  --path.sysfs="$ROCE" 2>&1)" || fail "--config.check rejected a valid web config: $check_out"
grep -q 'TLS on, basic auth on' <<<"$check_out" ||
  fail "--config.check does not report TLS and basic auth: $check_out"
ok "--config.check accepts the web config (TLS on, basic auth on)"

start_agent --path.sysfs="$ROCE" --web.config.file="$PKI/web.yml"
AGENT1="$AGENT_PID"
ok "agent serving https on 127.0.0.1:$AGENT_PORT"

HTTPS="https://127.0.0.1:$AGENT_PORT"
tls_curl() { curl -sS --max-time 10 --cacert ca.crt "$@"; }
code_of() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 --cacert ca.crt "$@" || true; }

body="$(tls_curl --fail --cert client.crt --key client.key -u prometheus:s3cret-pass "$HTTPS/metrics")" ||
  fail "curl with the client certificate and credentials failed"
grep -q '^fabricwatch_build_info' <<<"$body" || fail "/metrics over https lacks fabricwatch_build_info"
headers="$(tls_curl -D - -o /dev/null --cert client.crt --key client.key -u prometheus:s3cret-pass \
  "$HTTPS/healthz")"
grep -qi '^x-content-type-options: nosniff' <<<"$headers" ||
  fail "the configured response header is missing: $headers"
ok "curl: 200 over TLS with client certificate and basic auth, configured header present"

code="$(code_of --cert client.crt --key client.key "$HTTPS/metrics")"
[[ "$code" == 401 ]] || fail "no credentials: HTTP $code, want 401"
challenge="$(tls_curl -D - -o /dev/null --cert client.crt --key client.key "$HTTPS/metrics")"
grep -qi '^www-authenticate: basic' <<<"$challenge" || fail "401 without WWW-Authenticate: $challenge"
code="$(code_of --cert client.crt --key client.key -u prometheus:wrong "$HTTPS/metrics")"
[[ "$code" == 401 ]] || fail "wrong password: HTTP $code, want 401"
code="$(code_of --cert client.crt --key client.key -u prometheus:s3cret-pass "$HTTPS/healthz")"
[[ "$code" == 200 ]] || fail "/healthz with credentials: HTTP $code"
code="$(code_of --cert client.crt --key client.key "$HTTPS/healthz")"
[[ "$code" == 401 ]] || fail "/healthz is authenticated by default: HTTP $code, want 401"
ok "401 (with a Basic challenge) without credentials and with a wrong password; /healthz too"

if tls_curl -o /dev/null -u prometheus:s3cret-pass "$HTTPS/metrics" 2>/dev/null; then
  fail "a client without a certificate was served"
fi
if tls_curl -o /dev/null --cert stranger.crt --key stranger.key -u prometheus:s3cret-pass \
  "$HTTPS/metrics" 2>/dev/null; then
  fail "a client certificate from another CA was served"
fi
code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$AGENT_PORT/metrics" || true)"
[[ "$code" != 200 ]] || fail "plain HTTP on the TLS port was served"
ok "TLS failure without a client certificate, with another CA's certificate; no plain HTTP"

# --- A real Prometheus scrapes with scheme https, tls_config and basic_auth; a second job with
# a wrong password must be down with a 401.
PROM_DIR=""
make_tmpdir PROM_DIR
printf 's3cret-pass' >"$PROM_DIR/password"
cat >"$PROM_DIR/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: fabricwatch
    scheme: https
    tls_config: {ca_file: $PKI/ca.crt, cert_file: $PKI/client.crt, key_file: $PKI/client.key}
    basic_auth: {username: prometheus, password_file: $PROM_DIR/password}
    static_configs: [{targets: ['127.0.0.1:$AGENT_PORT']}]
  - job_name: wrong_password
    scheme: https
    tls_config: {ca_file: $PKI/ca.crt, cert_file: $PKI/client.crt, key_file: $PKI/client.key}
    basic_auth: {username: prometheus, password: not-it}
    static_configs: [{targets: ['127.0.0.1:$AGENT_PORT']}]
EOF
promtool check config "$PROM_DIR/prometheus.yml" >/dev/null 2>&1 ||
  fail "promtool rejected the scrape config: $(promtool check config "$PROM_DIR/prometheus.yml" 2>&1)"

PROM_PORT=""
for attempt in 1 2 3 4 5 6 7 8; do
  port=$((20000 + RANDOM % 40000))
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi
  "$PROMETHEUS" --config.file="$PROM_DIR/prometheus.yml" --storage.tsdb.path="$PROM_DIR/data.$attempt" \
    --web.listen-address="127.0.0.1:$port" --log.level=warn >"$PROM_DIR/prom.$attempt.log" 2>&1 &
  pid=$!
  register_pid "$pid"
  deadline=$(($(now_ms) + 30000))
  while (($(now_ms) < deadline)) && kill -0 "$pid" 2>/dev/null; do
    if curl -sf --max-time 2 "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1; then
      PROM_PORT=$port
      break 2
    fi
    sleep 0.2
  done
  kill -0 "$pid" 2>/dev/null && fail "prometheus neither became ready nor exited in 30 s"
  grep -qi 'address already in use' "$PROM_DIR/prom.$attempt.log" ||
    fail "prometheus exited at startup: $(tail -n 5 "$PROM_DIR/prom.$attempt.log")"
done
[[ -n "$PROM_PORT" ]] || fail "could not start prometheus on a free port"

# target_state JOB: "HEALTH LAST_ERROR" of the job's target, once it has been scraped (30 s).
target_state() {
  local job="$1" out deadline=$(($(now_ms) + 30000)) state=""
  while (($(now_ms) < deadline)); do
    out="$(curl -sS --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/targets" || true)"
    if [[ -n "$out" ]]; then
      state="$(json_get "$out" \
        '([(t["health"] + " " + t["lastError"]) for t in d["data"]["activeTargets"] if t["labels"]["job"] == "'"$job"'"] + ["unknown"])[0]')"
      [[ "$state" == unknown* ]] || break
    fi
    sleep 0.5
  done
  printf '%s\n' "$state"
}
state="$(target_state fabricwatch)"
[[ "$state" == "up " ]] || fail "prometheus: job fabricwatch is '$state', want up"
ok "prometheus (https, tls_config with client certificate, basic_auth): up == 1"
state="$(target_state wrong_password)"
[[ "$state" == down*401* ]] || fail "prometheus: job wrong_password is '$state', want down with 401"
ok "prometheus with a wrong password: down, '$state'"

# --- Rotation: replace the certificate and key in place; new handshakes get the new certificate,
# the agent is the same process.
served_cn() {
  openssl s_client -connect "127.0.0.1:$AGENT_PORT" -CAfile ca.crt -cert client.crt \
    -key client.key </dev/null 2>/dev/null | openssl x509 -noout -subject 2>/dev/null || true
}
[[ "$(served_cn)" == *fabricwatch-server* ]] || fail "the first certificate is not served: $(served_cn)"
cp rotated.key live.key.new && mv live.key.new live.key
cp rotated.crt live.crt.new && mv live.crt.new live.crt
deadline=$(($(now_ms) + 15000))
until [[ "$(served_cn)" == *fabricwatch-rotated* ]]; do
  (($(now_ms) < deadline)) || fail "the rotated certificate was not served within 15 s: $(served_cn)
$(tail -n 5 "$AGENT_LOG")"
  sleep 0.2
done
kill -0 "$AGENT1" || fail "the agent is gone after the rotation"
tls_curl --fail -o /dev/null --cert client.crt --key client.key -u prometheus:s3cret-pass \
  "$HTTPS/metrics" || fail "scrape after the rotation failed"
ok "rotated certificate served by the same process (pid $AGENT1), scrapes go on"

# --- SIGHUP with a broken web config keeps the running one.
cp web.yml web.yml.good
printf 'tls_server_config:\n  cert_file: live.crt\n  key_file: live.key\n  min_versoin: TLS12\n' >web.yml
kill -HUP "$AGENT1"
deadline=$(($(now_ms) + 10000))
until grep -q 'reload failed, keeping the running configuration' "$AGENT_LOG"; do
  (($(now_ms) < deadline)) || fail "no 'reload failed' line after SIGHUP with a broken web config:
$(tail -n 5 "$AGENT_LOG")"
  sleep 0.1
done
grep 'reload failed' "$AGENT_LOG" | grep 'web.yml' >/dev/null || fail "the reload error does not name web.yml"
tls_curl --fail -o /dev/null --cert client.crt --key client.key -u prometheus:s3cret-pass \
  "$HTTPS/metrics" || fail "not serving with the old web config after a failed reload"
ok "SIGHUP with a typo in the web config: logged, naming the file; the old configuration serves"
cp web.yml.good web.yml

# --- Fail closed at run time (issue 39 item 1): the file is re-read when it changes. Emptied (an
# interrupted `cat x > web.yml`) or cut after "basic_auth_users:", it must never turn TLS or auth
# off: the reload fails or is refused, logged at error and counted, and the agent goes on with
# TLS, the client certificate and basic auth.
scrape_ok() { tls_curl --fail -o /dev/null --cert client.crt --key client.key -u prometheus:s3cret-pass "$HTTPS/metrics"; }
outcome_count() { # outcome_count OUTCOME: fabricwatch_web_config_reloads_total{outcome=...}
  tls_curl --cert client.crt --key client.key -u prometheus:s3cret-pass "$HTTPS/metrics" |
    awk -v o="outcome=\"$1\"" 'index($0, "fabricwatch_web_config_reloads_total{") == 1 && index($0, o) { print $2 }'
}
tamper() { # tamper WHAT OUTCOME CHANGE: CHANGE (a command) alters web.yml; the next connection
  # makes the agent look. The count is read before the change: that read's own connection
  # could otherwise already see the changed file.
  local what="$1" outcome="$2" before deadline
  before="$(outcome_count "$outcome")"
  eval "$3"
  deadline=$(($(now_ms) + 10000))
  while [[ "$(outcome_count "$outcome")" == "$before" ]]; do
    (($(now_ms) < deadline)) || fail "$what: no reload $outcome counted within 10 s (${before:-none}): $(tail -n 3 "$AGENT_LOG")"
    sleep 0.3
  done
  scrape_ok || fail "$what: the scrape with certificate and credentials failed"
  [[ "$(code_of --cert client.crt --key client.key "$HTTPS/metrics")" == 401 ]] ||
    fail "$what: basic auth is off"
  ! curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$AGENT_PORT/metrics" ||
    fail "$what: plain HTTP is answered"
  grep -q "web config reload $outcome" "$AGENT_LOG" || fail "$what: no 'reload $outcome' error line"
  ok "$what: reload $outcome (counted, logged); TLS, client certificate and basic auth stay on"
}
tamper "web config emptied at run time" failed ': >web.yml'
# Cut after "basic_auth_users:" (a bare key: an error) and after the TLS block (no users: refused).
head -n 8 web.yml.good | sed '$d' >web.yml.cut && printf 'basic_auth_users:\n' >>web.yml.cut
tamper "web config cut after basic_auth_users:" failed 'mv web.yml.cut web.yml'
head -n 7 web.yml.good >web.yml.cut
tamper "web config cut before basic_auth_users" refused 'mv web.yml.cut web.yml'
# A FIFO renamed over the file: the reload must neither block the event loop nor the stop.
mkfifo web.fifo
tamper "a FIFO renamed over the web config" failed 'mv web.fifo web.yml' 
rm -f web.yml && cp web.yml.good web.yml
stop_agent "$AGENT1"
[[ "$STOP_RC" == 0 ]] || fail_later "agent exited $STOP_RC on SIGTERM"

# --- Bad files at start: exit 1, the file named.
expect_refused() { # expect_refused WHAT PATTERN: web.yml is already written
  local what="$1" pattern="$2" out rc=0
  out="$(timeout 20 "$FABRICWATCH_BIN" --web.listen-address=127.0.0.1:0 --path.sysfs="$ROCE" \
    --web.config.file="$PKI/web.yml" 2>&1)" || rc=$?
  [[ "$rc" == 1 ]] || fail "$what: exit $rc, want 1: $out"
  grep -q -- "$pattern" <<<"$out" || fail "$what: the error does not name '$pattern': $out"
  ok "$what: exit 1, names $pattern"
}
printf 'tls_server_config:\n  cert_file: missing.crt\n  key_file: live.key\n' >web.yml
expect_refused "a missing certificate" missing.crt
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: client.key\n' >web.yml
expect_refused "a key that does not match its certificate" client.key
printf 'basic_auth_users:\n  prometheus: not-a-bcrypt-hash\n' >web.yml
expect_refused "a malformed bcrypt hash" basic_auth_users
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_typo: NoClientCert\n' >web.yml
expect_refused "a YAML typo" client_auth_typo
: >web.yml
expect_refused "an empty web config" "is empty"
mkfifo web.fifo && rm -f web.yml && mv web.fifo web.yml
expect_refused "a FIFO as the web config" "is a FIFO"
rm -f web.yml

finish
