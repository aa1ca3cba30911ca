#!/usr/bin/env bash
# Pod names from the kubelet (issue 24): the jobs collector names a Kubernetes pod found in a
# replay /proc through the kubelet's GET /pods, over HTTPS with a bearer token.
#
# No Kubernetes runs here (Debian 12 packages no kubelet): tests/e2e/fake_kubelet.py serves the
# kubelet's /pods format (a v1.PodList) over TLS on 127.0.0.1 with an openssl-made CA and server
# certificate, and answers 401 to any token but its own. A replay /proc (--path.procfs) holds one
# process in a kubepods cgroup (systemd driver, burstable) with uverbs0 (fabricsim's mlx5_0) open.
#
#   1. the right token and CA: fabric_device_job_info names the pod (job_id ml/trainer-0,
#      pod_namespace, pod_name); a simulated PFC storm on mlx5_0's port raises a finding whose
#      jobs in /api/v1/anomalies are ["kubernetes:ml/trainer-0"]; one request, counted success.
#   2. a wrong token: 401, the pod stays its UID with empty pod labels, unauthorized counted,
#      one warning in the log.
#   3. a CA that did not sign the kubelet's certificate: tls; with insecure-skip-verify: named.
#   4. the kubelet stopped: connect, the UID.
#
# Usage: kubelet_pods_test.sh /path/to/fabricwatch
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init kubelet_pods_test "$@"

for tool in python3 openssl curl; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (tools/install-deps.sh test)"
done
FABRICSIM="${FABRICSIM_BIN:-$(dirname "$FABRICWATCH_BIN")/../tools/fabricsim/fabricsim}"
[[ -x "$FABRICSIM" ]] || skip "the simulator is not built ($FABRICSIM)"

T="$E2E_TMP"
UID_DASHED=1b4e28ba-2fa1-11d2-883f-0016d3cca427
OTHER_UID=2c5f39cb-3fb2-42e3-994f-1127e4ddb538

# --- certificates: a CA, the kubelet's serving certificate for 127.0.0.1, and a stranger CA ----
openssl_quiet() { openssl "$@" >/dev/null 2>&1 || fail "openssl $*"; }
openssl_quiet req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=fabricwatch-test-ca" \
  -keyout "$T/ca.key" -out "$T/ca.crt"
openssl_quiet req -newkey rsa:2048 -nodes -subj "/CN=fwnode1" -keyout "$T/kubelet.key" \
  -out "$T/kubelet.csr"
printf 'subjectAltName=IP:127.0.0.1,DNS:fwnode1\nextendedKeyUsage=serverAuth\n' >"$T/san.ext"
openssl_quiet x509 -req -in "$T/kubelet.csr" -CA "$T/ca.crt" -CAkey "$T/ca.key" -CAcreateserial \
  -days 2 -extfile "$T/san.ext" -out "$T/kubelet.crt"
openssl_quiet req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=stranger-ca" \
  -keyout "$T/stranger.key" -out "$T/stranger.crt"
# A ServiceAccount token is a JWT; its content does not matter to the stand-in.
printf 'eyJhbGciOiJSUzI1NiIsImtpZCI6InRlc3QifQ.eyJzdWIiOiJmYWJyaWN3YXRjaCJ9.c2ln\n' >"$T/token"
printf 'eyJhbGciOiJSUzI1NiJ9.d3Jvbmc.c2ln\n' >"$T/wrong-token"
ok "CA, kubelet certificate (SAN IP:127.0.0.1) and a stranger CA made with $(openssl version | cut -d' ' -f1-2)"

# --- the kubelet stand-in ---------------------------------------------------------------------
python3 "$FABRICWATCH_SOURCE_DIR/tests/e2e/fake_kubelet.py" --cert "$T/kubelet.crt" \
  --key "$T/kubelet.key" --token-file "$T/token" --port-file "$T/kubelet.port" \
  --requests "$T/requests.log" "$UID_DASHED=ml/trainer-0" "$OTHER_UID=infra/logger-7" \
  >"$T/kubelet.out" 2>&1 &
KUBELET_PID=$!
register_pid "$KUBELET_PID"
for _ in $(seq 1 100); do [[ -s "$T/kubelet.port" ]] && break; sleep 0.05; done
[[ -s "$T/kubelet.port" ]] || fail "the kubelet stand-in did not start: $(cat "$T/kubelet.out")"
KUBELET="https://127.0.0.1:$(cat "$T/kubelet.port")"
code="$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/ca.crt" "$KUBELET/pods")"
[[ "$code" == 401 ]] || fail "stand-in without a token: HTTP $code, want 401"
pods="$(curl -sS --fail --cacert "$T/ca.crt" -H "Authorization: Bearer $(cat "$T/token")" "$KUBELET/pods")"
[[ "$(json_get "$pods" 'd["kind"] + " " + d["items"][0]["metadata"]["name"]')" == "PodList trainer-0" ]] ||
  fail "stand-in /pods: $pods"
: >"$T/requests.log"
ok "kubelet stand-in at $KUBELET: 401 without the token, a PodList with it"

# --- a simulated node and a replay /proc with a pod's process holding uverbs0 -----------------
cat >"$T/storm.yml" <<'EOF'
preset: roce-small
duration: 120s
events:
  - at: 5s
    fault: pfc_storm_source
    device: mlx5_0
    priority: 3
    duration: 60s
EOF
"$FABRICSIM" build --preset roce-small --root "$T/sim" >/dev/null 2>&1 || fail "fabricsim build failed"
[[ "$(cat "$T/sim/sys/class/infiniband_verbs/uverbs0/ibdev" 2>/dev/null)" == mlx5_0 ]] ||
  fail "the simulated node has no uverbs0 -> mlx5_0"
mkdir -p "$T/dev/infiniband" "$T/proc/4242/fd" "$T/proc/4300/fd"
: >"$T/dev/infiniband/uverbs0"
# The systemd cgroup driver writes the UID's dashes as underscores (proc_jobs_parse.h).
printf '0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/cri-containerd-ab12.scope\n' \
  "${UID_DASHED//-/_}" >"$T/proc/4242/cgroup"
ln -s "$T/dev/infiniband/uverbs0" "$T/proc/4242/fd/3"
printf '0::/user.slice/user-1000.slice/session-3.scope\n' >"$T/proc/4300/cgroup"
ln -s /dev/null "$T/proc/4300/fd/0"

JOBS_ARGS=(--path.sysfs="$T/sim/sys" --path.ethtool="$T/sim/ethtool" --path.procfs="$T/proc"
  --collector.jobs.uverbs-dir="$T/dev/infiniband" --collector.jobs.interval=1s
  --collector.jobs.kubelet="$KUBELET" --collector.jobs.kubelet-timeout=2s)
POD_UID_SERIES="fabric_device_job_info{device=\"mlx5_0\",scheduler=\"kubernetes\",job_id=\"$UID_DASHED\",pod_namespace=\"\",pod_name=\"\"}"
POD_NAMED_SERIES='fabric_device_job_info{device="mlx5_0",scheduler="kubernetes",job_id="ml/trainer-0",pod_namespace="ml",pod_name="trainer-0"}'
requests() { metric_value "$(scrape /metrics)" "fabric_jobs_kubelet_requests_total{outcome=\"$1\"}"; }
jobs_metrics() { scrape /metrics | grep -E 'fabric_device_job_info|fabric_jobs_kubelet' || true; }

# --- 1. the right token: named, and named in a finding ----------------------------------------
"$FABRICSIM" run --root "$T/sim" --scenario "$T/storm.yml" >"$T/fabricsim.out" 2>&1 &
SIM_PID=$!
register_pid "$SIM_PID"
start_agent "${JOBS_ARGS[@]}" --detector.pfc_storm \
  --collector.jobs.kubelet-token-file="$T/token" --collector.jobs.kubelet-ca-file="$T/ca.crt"
wait_for_metric /metrics "$POD_NAMED_SERIES" 20 1 ||
  fail "the pod was not named: $(jobs_metrics); log: $(grep -i -E 'kubelet|pod' "$AGENT_LOG" | tail -n 5)"
[[ "$(requests success)" == 1 && "$(requests unauthorized)" == 0 ]] ||
  fail "request counts: $(jobs_metrics)"
[[ "$(metric_value "$(scrape /metrics)" "$POD_UID_SERIES")" == "" ]] || fail "the UID series is still there"
ok "mlx5_0 is held by pod ml/trainer-0 (job_id, pod_namespace, pod_name); one request, success"
deadline=$(($(now_ms) + 60000))
anomalies=""
while (($(now_ms) < deadline)); do
  anomalies="$(scrape /api/v1/anomalies)"
  [[ "$anomalies" == *'"detector":"pfc_storm"'* ]] && break
  sleep 0.5
done
[[ "$anomalies" == *'"detector":"pfc_storm"'* ]] || fail "no pfc_storm finding within 60 s: $anomalies"
[[ "$(json_get "$anomalies" '[a["jobs"] for a in d["anomalies"] if a["detector"] == "pfc_storm"][0]')" == "['kubernetes:ml/trainer-0']" ]] ||
  fail "/api/v1/anomalies jobs: $anomalies"
ok "the PFC storm finding on mlx5_0's port carries jobs [\"kubernetes:ml/trainer-0\"]"
# Scans every second, the finding's wake-ups: still one request (names are cached per UID).
sleep 3
[[ "$(wc -l <"$T/requests.log")" == 1 && "$(requests success)" == 1 ]] ||
  fail "the kubelet was asked again for a named pod: $(cat "$T/requests.log")"
ok "a named pod is not asked for again ($(wc -l <"$T/requests.log") request in $(cat "$T/requests.log"))"
stop_agent
kill "$SIM_PID" 2>/dev/null || true

# --- 2. a wrong token: the UID, unauthorized, said once --------------------------------------
start_agent "${JOBS_ARGS[@]}" --collector.jobs.kubelet-token-file="$T/wrong-token" \
  --collector.jobs.kubelet-ca-file="$T/ca.crt"
wait_for_metric /metrics 'fabric_jobs_kubelet_requests_total{outcome="unauthorized"}' 20 1 ||
  fail "no unauthorized request counted: $(jobs_metrics)"
[[ "$(metric_value "$(scrape /metrics)" "$POD_UID_SERIES")" == 1 ]] ||
  fail "with a wrong token the pod is not its UID: $(jobs_metrics)"
[[ "$(tail -n 1 "$T/requests.log")" == "401 /pods" ]] || fail "stand-in log: $(cat "$T/requests.log")"
[[ "$(grep -c 'exported by UID' "$AGENT_LOG")" == 1 && "$(grep 'exported by UID' "$AGENT_LOG")" == *"HTTP 401"* ]] ||
  fail "want one warning naming HTTP 401: $(grep -i kubelet "$AGENT_LOG")"
ok "a wrong token: 401, the pod stays $UID_DASHED with empty pod labels, unauthorized counted, one warning"
stop_agent

# --- 3. TLS: a CA that did not sign the kubelet's certificate; then skip-verify --------------
start_agent "${JOBS_ARGS[@]}" --collector.jobs.kubelet-token-file="$T/token" \
  --collector.jobs.kubelet-ca-file="$T/stranger.crt"
wait_for_metric /metrics 'fabric_jobs_kubelet_requests_total{outcome="tls"}' 20 1 ||
  fail "an untrusted certificate was not a tls failure: $(jobs_metrics)"
[[ "$(metric_value "$(scrape /metrics)" "$POD_UID_SERIES")" == 1 ]] || fail "tls: $(jobs_metrics)"
stop_agent
start_agent "${JOBS_ARGS[@]}" --collector.jobs.kubelet-token-file="$T/token" \
  --collector.jobs.kubelet-ca-file="$T/stranger.crt" --collector.jobs.kubelet-insecure-skip-verify=true
wait_for_metric /metrics "$POD_NAMED_SERIES" 20 1 ||
  fail "insecure-skip-verify did not name the pod: $(jobs_metrics)"
ok "an untrusted kubelet certificate is a tls failure (UID); kubelet-insecure-skip-verify=true names the pod"
stop_agent

# --- 4. the kubelet stopped: connect, the UID ------------------------------------------------
kill "$KUBELET_PID"
wait "$KUBELET_PID" 2>/dev/null || true
start_agent "${JOBS_ARGS[@]}" --collector.jobs.kubelet-token-file="$T/token" \
  --collector.jobs.kubelet-ca-file="$T/ca.crt"
wait_for_metric /metrics 'fabric_jobs_kubelet_requests_total{outcome="connect"}' 20 1 ||
  fail "a stopped kubelet was not a connect failure: $(jobs_metrics)"
[[ "$(metric_value "$(scrape /metrics)" "$POD_UID_SERIES")" == 1 ]] || fail "stopped: $(jobs_metrics)"
ok "a stopped kubelet: connect counted, the pod stays its UID"
stop_agent
finish
