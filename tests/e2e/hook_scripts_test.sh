#!/usr/bin/env bash
# The shipped hooks (hooks/) against recording stand-ins: kubectl (there is no API server here),
# scontrol (the real one is exercised by slurm_drain_test.sh) and a local HTTP receiver for the
# webhook. Checks the exact commands, the ownership rules, dry run and the fleet-budget refusal.
# Needs no root.
#
# Usage: hook_scripts_test.sh /path/to/fabricwatch
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init hook_scripts_test "$@"

HOOKS="$FABRICWATCH_SOURCE_DIR/hooks"
STANDINS="$FABRICWATCH_SOURCE_DIR/tests/e2e/standins"
T="$E2E_TMP"
RECORD="$T/record"

# The event as the agent describes it (exporter/remediation/hook_environment.cc BuildHookEnvironment), in a clean
# environment like the agent's; extra NAME=value arguments before the command override it.
run() {  # run HOOK_PATH [NAME=value...] [-- ARGS...]: sets out and rc
  local hook="$1"
  shift
  local vars=() args=()
  while (($# > 0)) && [[ "$1" != -- ]]; do vars+=("$1"); shift; done
  (($# > 0)) && shift
  args=("$@")
  : >"$RECORD"
  rc=0
  out="$(env -i PATH="$STANDINS:/usr/bin:/bin" STANDIN_RECORD="$RECORD" \
    STANDIN_STATE="$T/slurm" FABRICWATCH_HOOK=test FABRICWATCH_ACTION=drain \
    FABRICWATCH_EVENT=raise FABRICWATCH_DETECTOR=pfc_storm FABRICWATCH_SEVERITY=critical \
    FABRICWATCH_ENTITY="netdev=eth2 priority=3 role=source" FABRICWATCH_LABEL_NETDEV=eth2 \
    FABRICWATCH_REASON='eth2 priority 3 transmits pause 97% of the time ("source")' \
    FABRICWATCH_VALUE=0.97 FABRICWATCH_EVIDENCE='{"pause_ratio":0.97}' \
    FABRICWATCH_EVIDENCE_TEXT="pause_ratio=0.97" FABRICWATCH_NODE=gpu-a17 \
    FABRICWATCH_STARTED=2027-01-15T08:00:00.000Z FABRICWATCH_TIME=2027-01-15T08:00:01.234Z \
    FABRICWATCH_DRAIN_ELIGIBLE=1 FABRICWATCH_DRY_RUN=0 \
    FABRICWATCH_FLEET_BUDGET_FILE="$T/budget-exhausted" "${vars[@]}" \
    "$hook" "${args[@]}" 2>&1)" || rc=$?
}

# The recorded invocations, one per line, arguments joined by " | ".
calls() { awk '$0 == "--" { print line; line = ""; next } { line = line (line == "" ? "" : " | ") $0 }' "$RECORD"; }
mutating_calls() { calls | grep -Ev '^(get|show) ' || true; }

expect_calls() {  # expect_calls NAME EXPECTED
  local got
  got="$(calls)"
  [[ "$got" == "$2" ]] || fail "$1: calls
$got
want
$2
output: $out"
}

slurm_node() {  # slurm_node STATE [REASON]
  mkdir -p "$T/slurm"
  printf '%s\n' "$1" >"$T/slurm/state"
  if (($# > 1)); then printf '%s' "$2" >"$T/slurm/reason"; else rm -f "$T/slurm/reason"; fi
}

# --- Slurm ------------------------------------------------------------------------------------
S="$HOOKS/slurm-drain"
slurm_node IDLE
run "$S"
[[ "$rc" == 0 ]] || fail "slurm drain: rc $rc: $out"
expect_calls "slurm drain" "show | node | gpu-a17
update | NodeName=gpu-a17 | State=DRAIN | Reason=fabricwatch: pfc_storm netdev=eth2 priority=3 role=source pause_ratio=0.97"
ok "slurm: raise -> scontrol update NodeName State=DRAIN with the owned reason, as one argument"

run "$S" FABRICWATCH_ACTION=resume FABRICWATCH_EVENT=clear
expect_calls "slurm resume" "show | node | gpu-a17
update | NodeName=gpu-a17 | State=RESUME"
ok "slurm: clear -> State=RESUME of our own drain"

slurm_node "IDLE+DRAIN" "admin: bad DIMM"
run "$S"
[[ "$rc" == 0 && -z "$(mutating_calls)" && "$out" == *"another reason"* ]] ||
  fail "slurm drain over an admin drain: rc $rc, calls $(calls), $out"
run "$S" FABRICWATCH_ACTION=resume
[[ "$rc" == 0 && -z "$(mutating_calls)" && "$out" == *"not resuming"* ]] ||
  fail "slurm resume of an admin drain: rc $rc, calls $(calls), $out"
slurm_node "DOWN*+DRAIN" "NHC: check_hw_ib: No IB port is ACTIVE"
run "$S" FABRICWATCH_ACTION=resume
[[ -z "$(mutating_calls)" ]] || fail "slurm resumed an NHC drain: $(calls)"
ok "slurm: a node drained by an admin or NHC is neither re-labelled nor resumed"

slurm_node IDLE
run "$S" FABRICWATCH_ACTION=resume
[[ "$rc" == 0 && -z "$(mutating_calls)" ]] || fail "slurm resume of an idle node: $(calls)"
ok "slurm: resume of a node that is not drained does nothing"

slurm_node IDLE
run "$S" FABRICWATCH_DRY_RUN=1
[[ "$rc" == 0 && -z "$(mutating_calls)" && "$out" == *"dry run: would run: scontrol update NodeName=gpu-a17 State=DRAIN Reason="* ]] ||
  fail "slurm dry run: rc $rc, calls $(calls), $out"
ok "slurm: dry run reads the node and prints the command, changes nothing"

touch "$T/budget-exhausted"
run "$S"
rm -f "$T/budget-exhausted"
[[ "$rc" == 75 && -z "$(mutating_calls)" ]] || fail "slurm fleet budget: rc $rc, $(calls)"
ok "slurm: the fleet-budget file refuses the drain (exit 75)"

# Hostile entity text from a netdev alias: stays one argument, one line, never run by a shell.
run "$S" FABRICWATCH_ENTITY=$'netdev=eth2$(touch '"$T"$'/pwned)\nState=DOWN'
[[ ! -e "$T/pwned" ]] || fail "slurm hook ran text from the event"
[[ "$(mutating_calls)" == "update | NodeName=gpu-a17 | State=DRAIN | Reason=fabricwatch: pfc_storm netdev=eth2\$(touch $T/pwned) State=DOWN pause_ratio=0.97" ]] ||
  fail "slurm hostile reason: $(calls)"
ok "slurm: event text is one argument, newlines flattened, never interpreted"

run "$S" FABRICWATCH_NODE=
[[ "$rc" == 2 ]] || fail "slurm without a node: rc $rc"
slurm_node IDLE
run "$S" FABRICWATCH_NODE= -- --node gpu-b02 drain
[[ "$(mutating_calls)" == "update | NodeName=gpu-b02 | State=DRAIN | Reason="* ]] ||
  fail "slurm --node: $(calls)"
ok "slurm: --node and an explicit action override the event; no node is a usage error"

# --- Kubernetes -------------------------------------------------------------------------------
K="$HOOKS/kubernetes-drain"
check_condition_patch() {  # the -p argument of the status patch is valid JSON with the condition
  local patch
  patch="$(awk '$0 == "--" { if (p) print last; p = 0; next } $0 == "--subresource=status" { p = 1 } { last = $0 }' "$RECORD" | tail -n1)"
  python3 - "$patch" "$1" "$2" <<'PY' || fail "condition patch: $patch"
import json, sys
c = json.loads(sys.argv[1])["status"]["conditions"][0]
assert c["type"] == "FabricwatchFabricHealthy", c
assert c["status"] == sys.argv[2], c
assert c["reason"] == sys.argv[3], c
assert c["message"], c
PY
}

run "$K"
[[ "$rc" == 0 ]] || fail "kubernetes drain: rc $rc: $out"
expect_calls "kubernetes drain (taint)" "$(cat <<EOF
taint | nodes | gpu-a17 | fabricwatch.io/fabric-anomaly=pfc_storm:NoSchedule | --overwrite
annotate | node | gpu-a17 | --overwrite | fabricwatch.io/drain-reason=fabricwatch: pfc_storm netdev=eth2 priority=3 role=source pause_ratio=0.97 | fabricwatch.io/drain-timestamp=$(calls | sed -n 's/.*drain-timestamp=\([^ ]*\)$/\1/p')
$(calls | sed -n 3p)
EOF
)"
[[ "$(calls | sed -n 3p)" == "patch | node | gpu-a17 | --subresource=status | --type=strategic | -p | "* ]] ||
  fail "kubernetes condition call: $(calls | sed -n 3p)"
check_condition_patch False PfcStorm
ok "kubernetes: raise -> NoSchedule taint with the project key, annotations, condition False"

run "$K" FABRICWATCH_ACTION=resume STANDIN_TAINT_KEY=fabricwatch.io/fabric-anomaly
[[ "$(mutating_calls | head -n2)" == "taint | nodes | gpu-a17 | fabricwatch.io/fabric-anomaly:NoSchedule-
annotate | node | gpu-a17 | fabricwatch.io/drain-reason- | fabricwatch.io/drain-timestamp-" ]] ||
  fail "kubernetes resume: $(calls)"
check_condition_patch True NoFabricAnomaly
run "$K" FABRICWATCH_ACTION=resume STANDIN_TAINT_KEY=
[[ "$(mutating_calls)" != *"taint | nodes"* ]] || fail "kubernetes removed a taint it did not find: $(calls)"
ok "kubernetes: clear removes only our own taint key and sets the condition True"

run "$K" STANDIN_UNSCHEDULABLE=true STANDIN_CORDONED_BY= -- --mode cordon
[[ "$(mutating_calls)" != *cordon* && "$out" == *"cordoned by someone else"* ]] ||
  fail "kubernetes cordon over an admin cordon: $(calls)"
run "$K" FABRICWATCH_ACTION=resume STANDIN_UNSCHEDULABLE=true STANDIN_CORDONED_BY= -- --mode cordon
[[ "$(mutating_calls)" != *uncordon* ]] || fail "kubernetes uncordoned an admin cordon: $(calls)"
ok "kubernetes: a node cordoned by someone else is neither claimed nor uncordoned"

run "$K" -- --mode cordon
[[ "$(mutating_calls | head -n2)" == "cordon | gpu-a17
annotate | node | gpu-a17 | --overwrite | fabricwatch.io/cordoned-by=fabricwatch" ]] ||
  fail "kubernetes cordon: $(calls)"
run "$K" FABRICWATCH_ACTION=resume STANDIN_UNSCHEDULABLE=true STANDIN_CORDONED_BY=fabricwatch -- --mode cordon
[[ "$(mutating_calls | head -n2)" == "uncordon | gpu-a17
annotate | node | gpu-a17 | fabricwatch.io/cordoned-by-" ]] || fail "kubernetes uncordon: $(calls)"
ok "kubernetes: --mode cordon records ownership in an annotation and uncordons only its own"

run "$K" FABRICWATCH_DRY_RUN=1
[[ "$rc" == 0 && -z "$(mutating_calls)" && "$out" == *"dry run: would run: kubectl taint nodes gpu-a17"* ]] ||
  fail "kubernetes dry run: rc $rc, $(calls), $out"
run "$K" FABRICWATCH_FLEET_BUDGET_EXHAUSTED=1
[[ "$rc" == 75 && -z "$(calls)" ]] || fail "kubernetes fleet budget: rc $rc, $(calls)"
run "$K" STANDIN_FAIL=1
[[ "$rc" == 3 && "$out" == *forbidden* ]] || fail "kubernetes RBAC failure: rc $rc, $out"
run "$K" NODE_NAME=gpu-a17.cluster.local
[[ "$(mutating_calls | head -n1)" == "taint | nodes | gpu-a17.cluster.local | "* ]] ||
  fail "kubernetes NODE_NAME: $(calls)"
ok "kubernetes: dry run, fleet-budget refusal (75), an RBAC denial (3) and NODE_NAME"

# --- webhook ----------------------------------------------------------------------------------
W="$HOOKS/webhook"
cat >"$T/receiver.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with open(sys.argv[1], "ab") as f:
            f.write(self.headers.get("Content-Type", "").encode() + b"\n" +
                    self.headers.get("X-Token", "").encode() + b"\n" + body + b"\n")
        code = 500 if b"fail_me" in body else 200
        self.send_response(code); self.end_headers(); self.wfile.write(b"accepted")
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$T/receiver.py" "$T/posts" >"$T/receiver.port" &
register_pid $!
for _ in $(seq 1 100); do [[ -s "$T/receiver.port" ]] && break; sleep 0.05; done
URL="http://127.0.0.1:$(cat "$T/receiver.port")/fabric"

run "$W" FABRICWATCH_ACTION=notify -- --url "$URL" --header "X-Token: s3cret"
[[ "$rc" == 0 ]] || fail "webhook: rc $rc: $out"
python3 - "$T/posts" <<'PY' || fail "webhook body: $(cat "$T/posts")"
import json, sys
ctype, token, body = open(sys.argv[1]).read().split("\n")[:3]
assert ctype == "application/json", ctype
assert token == "s3cret", token
d = json.loads(body)
assert d["source"] == "fabricwatch" and d["action"] == "notify" and d["event"] == "raise", d
assert d["detector"] == "pfc_storm" and d["severity"] == "critical" and d["node"] == "gpu-a17", d
assert d["entity"] == {"netdev": "eth2", "priority": "3", "role": "source"}, d
assert d["reason"] == 'eth2 priority 3 transmits pause 97% of the time ("source")', d
assert d["value"] == 0.97 and d["evidence"] == {"pause_ratio": 0.97}, d
assert d["drain_eligible"] is True and d["dry_run"] is False, d
assert d["started"] == "2027-01-15T08:00:00.000Z", d
PY
ok "webhook: POSTs the event as JSON with the configured headers"

rm -f "$T/posts"
run "$W" FABRICWATCH_DRY_RUN=1 -- --url "$URL"
[[ "$rc" == 0 && ! -e "$T/posts" && "$out" == *"dry run: would POST"* ]] || fail "webhook dry run: $out"
touch "$T/budget-exhausted"
run "$W" -- --url "$URL"
rm -f "$T/budget-exhausted"
[[ "$rc" == 75 && ! -e "$T/posts" ]] || fail "webhook drain under an exhausted budget: rc $rc"
run "$W" FABRICWATCH_REASON=fail_me -- --url "$URL"
[[ "$rc" == 3 ]] || fail "webhook HTTP 500: rc $rc, $out"
ok "webhook: dry run sends nothing, a drain request honours the fleet budget, HTTP 500 is exit 3"

finish
