# shellcheck shell=bash disable=SC2034  # STOP_RC, WAIT_RC, ... are set for the sourcing script
# Shared helpers for the end-to-end tests. Source it from a script run with bash and
# `set -euo pipefail`:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   e2e_init "my_test" "$@"          # $1: the fabricwatch binary
#   start_agent --path.sysfs=...     # sets AGENT_PID, AGENT_PORT, AGENT_LOG
#   body=$(scrape /metrics)
#   ok "metrics served"
#   finish                           # summary line, exit 0 or 1
#
# Exit codes: 0 pass, 1 fail, 77 skip (ctest SKIP_RETURN_CODE).
# Agents and other background processes started through these helpers, temp dirs and registered
# cleanup commands are torn down by an EXIT trap, whatever way the script ends.

E2E_NAME="${E2E_NAME:-e2e}"
E2E_PASSED=0
E2E_FAILED=0
E2E_FAILURES=()
E2E_PIDS=()
E2E_TMPDIRS=()
E2E_CLEANUPS=()
# Prefix for commands that must run elsewhere (e.g. `ip netns exec NS`); used by start_agent and
# the curl helpers.
E2E_WRAP=()

AGENT_PID=""
AGENT_PORT=""
AGENT_LOG=""
AGENT_HOST="127.0.0.1"

log() { printf '%s\n' "$*" >&2; }

ok() {
  E2E_PASSED=$((E2E_PASSED + 1))
  printf 'ok - %s\n' "$*"
}

# Fatal: prints (to stderr, so that it shows even inside $(...)), then exits 1; the EXIT trap
# cleans up. Inside $(...) it ends the subshell with 1, which `set -e` turns into the script's exit.
fail() {
  E2E_FAILED=$((E2E_FAILED + 1))
  printf 'not ok - %s\n' "$*" >&2
  printf 'FAIL: %s: stopped at the first fatal failure (%d checks passed before it)\n' \
    "$E2E_NAME" "$E2E_PASSED" >&2
  exit 1
}

# Non-fatal: records the failure and goes on; finish exits 1.
fail_later() {
  E2E_FAILED=$((E2E_FAILED + 1))
  E2E_FAILURES+=("$*")
  printf 'not ok - %s\n' "$*"
}

skip() {
  printf 'SKIP: %s\n' "$*"
  exit 77
}

finish() {
  if ((E2E_FAILED > 0)); then
    printf 'FAIL: %s: %d passed, %d failed\n' "$E2E_NAME" "$E2E_PASSED" "$E2E_FAILED"
    local f
    for f in "${E2E_FAILURES[@]}"; do printf '  failed: %s\n' "$f"; done
    exit 1
  fi
  printf 'PASS: %s: %d checks passed\n' "$E2E_NAME" "$E2E_PASSED"
  exit 0
}

e2e_cleanup() {
  local rc=$?
  set +e
  local pid
  for pid in "${E2E_PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null
      for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
  done
  local i
  for ((i = ${#E2E_CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${E2E_CLEANUPS[i]}" >/dev/null 2>&1; done
  local d
  for d in "${E2E_TMPDIRS[@]}"; do rm -rf "$d"; done
  exit "$rc"
}

# e2e_init NAME BINARY: checks the binary, sets FABRICWATCH_BIN, installs the cleanup trap.
e2e_init() {
  E2E_NAME="$1"
  FABRICWATCH_BIN="${2:-}"
  trap e2e_cleanup EXIT
  trap 'exit 130' INT TERM
  [[ -n "$FABRICWATCH_BIN" ]] || fail "usage: $0 /path/to/fabricwatch"
  [[ -x "$FABRICWATCH_BIN" ]] || fail "not an executable: $FABRICWATCH_BIN"
  FABRICWATCH_BIN="$(cd "$(dirname "$FABRICWATCH_BIN")" && pwd)/$(basename "$FABRICWATCH_BIN")"
  if [[ -z "${FABRICWATCH_SOURCE_DIR:-}" ]]; then
    FABRICWATCH_SOURCE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  fi
  command -v curl >/dev/null || fail "curl is not installed (apt-get install curl)"
  make_tmpdir E2E_TMP
}

# make_tmpdir VAR: creates a temp dir removed by the trap and stores its path in VAR. (Not a
# $(...) helper: the registration would be lost in the subshell.)
make_tmpdir() {
  local d
  d="$(mktemp -d "${TMPDIR:-/tmp}/fabricwatch-e2e.XXXXXX")"
  E2E_TMPDIRS+=("$d")
  printf -v "$1" '%s' "$d"
}

# register_pid PID: killed (TERM, then KILL) by the cleanup trap.
register_pid() { E2E_PIDS+=("$1"); }

# on_cleanup 'COMMAND': run (eval, errors ignored) by the trap, in reverse registration order.
on_cleanup() { E2E_CLEANUPS+=("$1"); }

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# start_agent ARGS...: starts ${E2E_WRAP[@]} $FABRICWATCH_BIN --web.listen-address=127.0.0.1:0 ARGS
# in the background, stdout+stderr to a fresh log file, and waits (10 s) for its
# "listening on ... (port N)" line. Sets AGENT_PID, AGENT_PORT, AGENT_LOG. Pass your own
# --web.listen-address in ARGS to override (the last one wins).
start_agent() {
  AGENT_LOG="$(mktemp "$E2E_TMP/agent.XXXXXX.log")"
  "${E2E_WRAP[@]}" "$FABRICWATCH_BIN" --web.listen-address=127.0.0.1:0 "$@" >"$AGENT_LOG" 2>&1 &
  AGENT_PID=$!
  register_pid "$AGENT_PID"
  AGENT_PORT="$(wait_for_port "$AGENT_PID" "$AGENT_LOG" 10)" ||
    fail "agent did not report its port within 10 s (args: $*); log:
$(cat "$AGENT_LOG")"
}

# wait_for_port PID LOG TIMEOUT_S: prints the port from "(port N)", or fails (status 1) when the
# process exits or the timeout passes.
wait_for_port() {
  local pid="$1" logfile="$2" timeout="${3:-10}"
  local deadline=$(($(now_ms) + timeout * 1000)) port
  while (($(now_ms) < deadline)); do
    port="$(grep -o 'listening on .*(port [0-9]*)' "$logfile" 2>/dev/null |
      sed -n 's/.*(port \([0-9]*\)).*/\1/p' | head -n1)"
    if [[ -n "$port" ]]; then
      printf '%s\n' "$port"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# stop_agent [PID]: SIGTERM and wait. Sets STOP_RC (exit status) and STOP_MS (kill -> exit).
# Must run in the script's own shell (not inside $(...)): only the parent can `wait`.
stop_agent() {
  local pid="${1:-$AGENT_PID}" t0
  STOP_RC=0
  t0=$(date +%s%N)
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || STOP_RC=$?
  STOP_MS=$((($(date +%s%N) - t0) / 1000000))
}

# wait_exit PID TIMEOUT_S: waits for a background child to exit. Sets WAIT_RC to its status, or
# to "timeout". Must run in the script's own shell.
wait_exit() {
  local pid="$1" timeout="$2"
  local deadline=$(($(now_ms) + timeout * 1000))
  WAIT_RC=0
  while kill -0 "$pid" 2>/dev/null; do
    if (($(now_ms) >= deadline)); then
      WAIT_RC=timeout
      return 0
    fi
    sleep 0.05
  done
  wait "$pid" 2>/dev/null || WAIT_RC=$?
}

url() { printf 'http://%s:%s%s\n' "$AGENT_HOST" "${PORT_OVERRIDE:-$AGENT_PORT}" "$1"; }

# scrape PATH [CURL_ARGS...]: the body; fails the test on a transport error or HTTP >= 400.
scrape() {
  local path="$1"
  shift
  "${E2E_WRAP[@]}" curl -sS --fail --max-time 10 "$@" "$(url "$path")" ||
    fail "scrape $path failed (curl exit $?)"
}

# http_code PATH [CURL_ARGS...]: prints the HTTP status code only.
http_code() {
  local path="$1"
  shift
  "${E2E_WRAP[@]}" curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@" "$(url "$path")" || true
}

# metric_value TEXT NAME_WITH_LABELS: prints the value of the first sample whose series (name and
# labels exactly as rendered) matches, or nothing.
metric_value() {
  awk -v series="$2" 'substr($0, 1, 1) != "#" && $1 == series { print $2; exit }' <<<"$1"
}

# wait_for_metric PATH SERIES TIMEOUT_S [VALUE]: polls until SERIES is present (with VALUE when
# given). Returns 1 on timeout.
wait_for_metric() {
  local path="$1" series="$2" timeout="$3" want="${4:-}"
  local deadline=$(($(now_ms) + timeout * 1000)) v
  while (($(now_ms) < deadline)); do
    v="$(metric_value "$("${E2E_WRAP[@]}" curl -s --max-time 5 "$(url "$path")" || true)" "$series")"
    if [[ -n "$v" && (-z "$want" || "$v" == "$want") ]]; then return 0; fi
    sleep 0.1
  done
  return 1
}

# json_get JSON PYTHON_EXPR: evaluates PYTHON_EXPR with `d` bound to the parsed JSON.
json_get() {
  python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"
}
