#!/usr/bin/env bash
# The agent's lifecycle (issue 19, item 6): SIGHUP reloads a valid configuration and keeps the
# running one when the new one is invalid; other signals are logged, not fatal; SIGTERM saves
# the state file; two agents cannot share one state file.
#
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/lifecycle_e2e_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init lifecycle_e2e_test "$@"

ROCE="$FABRICWATCH_SOURCE_DIR/tests/fixtures/sysfs/roce-node/sys"
[[ -d "$ROCE/class/net" ]] || fail "fixture missing: $ROCE"
CONFIG="$E2E_TMP/fabricwatch.yml"
STATE="$E2E_TMP/state.json"

# wait_for_log PATTERN TIMEOUT_S: polls the agent's log for an extended regular expression.
wait_for_log() {
  local deadline=$(($(now_ms) + $2 * 1000))
  while (($(now_ms) < deadline)); do
    grep -Eq "$1" "$AGENT_LOG" && return 0
    sleep 0.05
  done
  return 1
}

# has_series SERIES: 0 when /metrics has it now.
has_series() { [[ -n "$(metric_value "$(scrape /metrics)" "$1")" ]]; }

LINK_FLAP='fabricwatch_detector_evaluation_duration_seconds{detector="link_flap"}'
cat >"$CONFIG" <<'YAML'
detectors:
  link_flap:
    enabled: true
YAML
start_agent --path.sysfs="$ROCE" --detector.disable-defaults --config.file="$CONFIG" \
  --state.file="$STATE"
wait_for_metric /metrics "$LINK_FLAP" 10 || fail "link_flap not evaluated within 10 s"
ok "started with link_flap enabled"

# --- Two agents, one state file: the second names the holder and exits 1.
second_log="$E2E_TMP/second.log"
"$FABRICWATCH_BIN" --web.listen-address=127.0.0.1:0 --path.sysfs="$ROCE" \
  --state.file="$STATE" >"$second_log" 2>&1 &
second=$!
register_pid "$second"
wait_exit "$second" 10
[[ "$WAIT_RC" == 1 ]] || fail "second agent on the same state file: exit $WAIT_RC, want 1; log:
$(cat "$second_log")"
grep -q "in use by another fabricwatch (pid $AGENT_PID" "$second_log" ||
  fail "second agent does not name the holder (pid $AGENT_PID); log:
$(cat "$second_log")"
ok "second agent on the same state file: exit 1, names pid $AGENT_PID"

# --- SIGHUP with a valid, changed configuration: link_flap off.
cat >"$CONFIG" <<'YAML'
detectors:
  link_flap:
    enabled: false
YAML
kill -HUP "$AGENT_PID"
wait_for_log 'msg="?configuration reloaded' 10 || fail "no 'configuration reloaded' log line:
$(cat "$AGENT_LOG")"
kill -0 "$AGENT_PID" || fail "agent died on SIGHUP; log:
$(cat "$AGENT_LOG")"
wait_for_metric /metrics 'fabricwatch_collector_success{collector="netdev"}' 10 1 ||
  fail "not serving on port $AGENT_PORT after the reload"
has_series "$LINK_FLAP" && fail "link_flap still evaluated after the reload disabled it"
ok "SIGHUP with link_flap disabled: reloaded, same port $AGENT_PORT, link_flap gone"

# --- SIGHUP with invalid configurations: the running one stays, the log names the error.
reload_bad() {
  local what="$1" want="$2"
  local before
  before="$(grep -c 'reload failed' "$AGENT_LOG" || true)"
  kill -HUP "$AGENT_PID"
  local deadline=$(($(now_ms) + 10000))
  while (($(grep -c 'reload failed' "$AGENT_LOG" || true) <= before)); do
    (($(now_ms) < deadline)) || fail "$what: no 'reload failed' log line; log:
$(cat "$AGENT_LOG")"
    sleep 0.05
  done
  grep 'reload failed' "$AGENT_LOG" | tail -n1 | grep -- "$want" >/dev/null ||
    fail "$what: the reload error does not name '$want': $(grep 'reload failed' "$AGENT_LOG" | tail -n1)"
  kill -0 "$AGENT_PID" || fail "$what: agent died"
  wait_for_metric /metrics 'fabricwatch_collector_success{collector="netdev"}' 5 1 ||
    fail "$what: not serving after the failed reload"
  has_series "$LINK_FLAP" && fail "$what: the old configuration (link_flap off) was not kept"
  ok "SIGHUP with $what: old configuration kept, still serving, log names '$want'"
}
printf 'detectors:\n  link_flap:\n    enabled: true\n  bogus_detector: {}\n' >"$CONFIG"
reload_bad "an unknown detector" "bogus_detector"
printf 'detectors:\n  link_flap:\n    enabled: true\n    enabled: true\n' >"$CONFIG"
reload_bad "a duplicate key" "duplicate key"
printf 'hooks:\n  dry_run: "no"\n' >"$CONFIG"
reload_bad 'a quoted dry_run: "no"' "hooks.dry_run"
printf 'detectors: [\n' >"$CONFIG"
reload_bad "malformed YAML" "not valid YAML"

# --- Signals that must not end the agent.
for sig in USR1 USR2 ALRM PWR; do
  kill "-$sig" "$AGENT_PID"
  wait_for_log "received SIG$sig, ignored" 5 || fail "no log line for SIG$sig"
  kill -0 "$AGENT_PID" || fail "agent died on SIG$sig"
done
ok "SIGUSR1, SIGUSR2, SIGALRM, SIGPWR: logged and ignored"

# --- SIGTERM saves the state (after the reloads: the reloaded agent owns the file).
rm -f "$STATE"
stop_agent "$AGENT_PID"
[[ "$STOP_RC" == 0 ]] || fail "exit $STOP_RC after SIGTERM, want 0"
[[ -s "$STATE" ]] || fail "SIGTERM did not save the state file $STATE"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["format"]=="fabricwatch-state"' \
  "$STATE" || fail "saved state is not a fabricwatch state file"
ok "SIGTERM: exit 0 in $STOP_MS ms, state saved"

# --- --config.check checks every hook's executable, for the user the hooks run as.
HOOK="$E2E_TMP/hooks/notify"
mkdir -p "$(dirname "$HOOK")"
chmod 0755 "$E2E_TMP" "$(dirname "$HOOK")"
printf '#!/bin/sh\nexit 0\n' >"$HOOK"
chmod 0700 "$HOOK"
check_config() {
  printf 'hooks:\n%s  run:\n    - {name: %s, action: notify, command: [%s]}\n' "$1" "$2" "$3" >"$CONFIG"
  set +e
  check_out="$("$FABRICWATCH_BIN" --config.check --path.sysfs="$ROCE" --config.file="$CONFIG" 2>&1)"
  check_rc=$?
  set -e
}
check_config "" page "$E2E_TMP/hooks/missing"
[[ $check_rc == 1 ]] || fail "--config.check with a missing hook: exit $check_rc, want 1"
grep -Eq "^hook page +FAILED .*hooks/missing" <<<"$check_out" ||
  fail "--config.check does not name the missing hook: $check_out"
check_config "" page "$HOOK"
[[ $check_rc == 0 ]] || fail "--config.check with an executable hook: exit $check_rc: $check_out"
grep -Eq "^hook page +ok " <<<"$check_out" || fail "--config.check: hook not ok: $check_out"
ok "--config.check: a missing hook fails (exit 1) naming it; an executable one passes"
if [[ $(id -u) == 0 ]]; then
  check_config "  user: nobody
" page "$HOOK"
  [[ $check_rc == 1 ]] || fail "--config.check, hook mode 0700 root, user nobody: exit $check_rc"
  grep -q "not executable by uid 65534" <<<"$check_out" ||
    fail "--config.check does not say the hook is not executable by nobody: $check_out"
  ok "--config.check as root with hooks.user nobody: a root-only hook fails"
else
  log "not root: the hooks.user part of the --config.check test needs root"
fi

# --- SIGQUIT and SIGINT also stop with the state saved.
for sig in QUIT INT; do
  rm -f "$STATE"
  start_agent --path.sysfs="$ROCE" --detector.disable-defaults --state.file="$STATE"
  kill "-$sig" "$AGENT_PID"
  wait_exit "$AGENT_PID" 5
  [[ "$WAIT_RC" == 0 ]] || fail "SIG$sig: exit $WAIT_RC, want 0"
  [[ -s "$STATE" ]] || fail "SIG$sig did not save the state file"
  ok "SIG$sig: exit 0, state saved"
done

# --- --state.file naming what is not a regular file of ours (issue 39 item 2): refused at start
# with exit 1, at once (a FIFO used to block the engine forever), and left as it was. All in the
# test's own directory, never the host's /dev.
bad_state() { # bad_state WHAT PATH PATTERN
  local what="$1" path="$2" pattern="$3" out rc=0 start
  start="$(now_ms)"
  out="$(timeout 20 "$FABRICWATCH_BIN" --web.listen-address=127.0.0.1:0 --path.sysfs="$ROCE" \
    --state.file="$path" 2>&1)" || rc=$?
  [[ "$rc" == 1 ]] || fail "--state.file at $what: exit $rc, want 1: $out"
  grep -q -- "$pattern" <<<"$out" || fail "--state.file at $what: the error does not say '$pattern': $out"
  ok "--state.file at $what: exit 1 in $(($(now_ms) - start)) ms, '$pattern'"
}
mkfifo "$E2E_TMP/state.fifo"
bad_state "a FIFO" "$E2E_TMP/state.fifo" "is a FIFO"
[[ -p "$E2E_TMP/state.fifo" ]] || fail "the FIFO was replaced"
printf 'root:$6$not-a-real-hash:19000::::::\n' >"$E2E_TMP/shadow"
ln -s "$E2E_TMP/shadow" "$E2E_TMP/state.link"
bad_state "a symlink" "$E2E_TMP/state.link" "symbolic link"
[[ -L "$E2E_TMP/state.link" && "$(cat "$E2E_TMP/shadow")" == 'root:$6$not-a-real-hash:19000::::::' ]] ||
  fail "the link or its target was changed"
if [[ "$(id -u)" == 0 ]] && mknod "$E2E_TMP/state.dev" c 1 5 2>/dev/null; then # /dev/zero's numbers
  bad_state "a character device" "$E2E_TMP/state.dev" "is a character device"
  [[ -c "$E2E_TMP/state.dev" && ! -e "$E2E_TMP/state.dev.lock" ]] || fail "the device node was replaced"
fi

# --- --config.file that would block or never end (issue 39 items 5 and 6): a FIFO (open() used
# to block with the stop signals blocked), /dev/zero (read to 2 GB) and 651 bytes of nested YAML
# anchors (minutes to hours in the duplicate-key walk) are each refused by --config.check at once.
bad_config() { # bad_config WHAT PATH PATTERN
  local what="$1" path="$2" pattern="$3" out rc=0 start
  start="$(now_ms)"
  out="$(timeout 20 "$FABRICWATCH_BIN" --config.check --path.sysfs="$ROCE" --config.file="$path" 2>&1)" || rc=$?
  [[ "$rc" == 2 ]] || fail "--config.file at $what: exit $rc, want 2: $out"
  grep -q -- "$pattern" <<<"$out" || fail "--config.file at $what: the error does not say '$pattern': $out"
  ok "--config.file at $what: refused in $(($(now_ms) - start)) ms, '$pattern'"
}
mkfifo "$E2E_TMP/config.fifo"
bad_config "a FIFO" "$E2E_TMP/config.fifo" "is a FIFO"
bad_config "/dev/zero" /dev/zero "is a character device"
{
  printf 'a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n'
  for i in $(seq 1 10); do
    printf 'a%d: &a%d [' "$i" "$i"
    for j in $(seq 1 10); do printf '%s*a%d' "$([[ $j == 1 ]] || echo ', ')" $((i - 1)); done
    printf ']\n'
  done
} >"$E2E_TMP/laughs.yml"
bad_config "10 levels of YAML anchors" "$E2E_TMP/laughs.yml" "alias"

# --- A hook that hangs: the notify hook still runs, and SIGTERM ends the agent within 2 s
# (before: the stop waited for the hook's whole 20 s timeout, and the hooks ran one after
# another). The simulator's PFC storm raises the finding.
FABRICSIM="${FABRICSIM_BIN:-$(dirname "$FABRICWATCH_BIN")/../tools/fabricsim/fabricsim}"
if [[ ! -x "$FABRICSIM" ]]; then
  log "the simulator is not built ($FABRICSIM): the hanging-hook part did not run"
  finish
fi
printf '#!/bin/sh\ntrap "" TERM\necho started > "$MARK.hang"\nsleep 20\n' >"$E2E_TMP/hooks/hang"
printf '#!/bin/sh\necho ran > "$MARK.notify"\n' >"$E2E_TMP/hooks/notify"
chmod 0755 "$E2E_TMP/hooks/hang" "$E2E_TMP/hooks/notify"
cat >"$E2E_TMP/storm.yml" <<'YAML'
preset: roce-small
duration: 120s
events:
  - at: 1s
    fault: pfc_storm_source
    device: mlx5_0
    priority: 3
    duration: 100s
YAML
cat >"$CONFIG" <<YAML
hooks:
  timeout: 20s
  run:
    - {name: hang, action: notify, command: [$E2E_TMP/hooks/hang], env: {MARK: $E2E_TMP/mark}}
    - {name: page, action: notify, command: [$E2E_TMP/hooks/notify], env: {MARK: $E2E_TMP/mark}}
YAML
"$FABRICSIM" build --preset roce-small --root "$E2E_TMP/sim" >/dev/null 2>&1 || fail "fabricsim build"
"$FABRICSIM" run --root "$E2E_TMP/sim" --scenario "$E2E_TMP/storm.yml" >"$E2E_TMP/sim.out" 2>&1 &
register_pid $!
start_agent --path.sysfs="$E2E_TMP/sim/sys" --path.ethtool="$E2E_TMP/sim/ethtool" \
  --config.file="$CONFIG" --detector.disable-defaults --detector.pfc_storm
deadline=$(($(now_ms) + 60000))
until [[ -e "$E2E_TMP/mark.hang" && -e "$E2E_TMP/mark.notify" ]]; do
  (($(now_ms) < deadline)) || fail "the hooks did not both run within 60 s; log:
$(grep -i hook "$AGENT_LOG" | tail -n 20)"
  sleep 0.1
done
ok "a hanging hook does not delay the notify hook (both started)"
stop_agent "$AGENT_PID"
[[ "$STOP_RC" == 0 ]] || fail "exit $STOP_RC after SIGTERM with a hanging hook"
((STOP_MS < 2000)) || fail "SIGTERM with a hook running took $STOP_MS ms, want < 2000"
grep -q 'hook hang: .* cancelled' "$AGENT_LOG" || fail "no 'cancelled' log line for the hook:
$(grep -i hook "$AGENT_LOG" | tail -n 10)"
ok "SIGTERM with a 20 s hook running: exit 0 in $STOP_MS ms, the hook cancelled"

finish
