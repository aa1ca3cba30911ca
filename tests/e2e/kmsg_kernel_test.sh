#!/usr/bin/env bash
# Real kernel log (issue 23, "Real kernel"): records written to the host's /dev/kmsg that name a
# netdev of our own veth pair, read by the kmsg collector from the agent's end of the real ring.
#   1. With --collector.kmsg.user-records=true (a writer to /dev/kmsg gets facility LOG_USER, which
#      the collector otherwise ignores), three "Port module event ... High Temperature" lines are
#      counted in fabric_kernel_events_total{device="",netdev=<veth>,event="module_high_temperature"}
#      and driver_fault raises a warning on {"netdev": <veth>} whose `log` holds the tagged lines
#      with their times (boot time + the record's µs, so near now); a "Fatal error 1 detected" line
#      then makes it critical and drain-eligible.
#   2. A restart with the same state file resumes after the saved sequence
#      (detectors._kmsg_cursor): the lines read before are not counted again, lines written while
#      the agent was down and after it came back are.
#   3. Without --collector.kmsg.user-records the same writes are read (records_total moves) and not
#      counted: no series and no finding for the veth.
#   4. /dev/kmsg that cannot be opened (a private mount namespace binds a mode-000 node of the same
#      device over it; the agent runs with every capability dropped, so no DAC override and no
#      CAP_SYSLOG): exactly one warn line names /dev/kmsg, the kmsg collector reports no data
#      (success 0, no error counted, no series), and netdev still exports the veth. Skipped with a
#      message when the kernel refuses the namespace or the bind mount.
# Every line carries a tag unique to this run, so no real host line can match, and names only our
# veth (the pattern table reads "<driver> <netdev>: ..." as that netdev, found in /sys/class/net).
# The veth lives in the root namespace because the agent must see it on the host's /sys while it
# reads the host's /dev/kmsg; it is removed on exit.
#
# Needs root; otherwise exits 77 (skipped). Skipped too when /dev/kmsg takes no writes
# (kernel.printk_devkmsg=off and locked) or no veth can be made.
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/kmsg_kernel_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init kmsg_kernel_test "$@"
# Agents run with --metrics.all: this test checks the collectors' series, not the series
# budget (e2e.series_budget_test).

((EUID == 0)) || skip "needs root to write /dev/kmsg and create a veth pair (running as uid $EUID)"
for tool in ip python3; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (make test installs it)"
done
[[ -c /dev/kmsg ]] || skip "/dev/kmsg is not a character device here (a container?)"

# --- /dev/kmsg must take our writes -------------------------------------------------------------
# printk_devkmsg: "ratelimit" (default) allows a burst of 10 writes per open file and 5 s; every
# record below is one open and one write, so the limit never bites and the setting is left alone.
# "off" refuses writes: turned on for the test and restored (it may be locked from the kernel
# command line, then the test is skipped).
DEVKMSG_SYSCTL=/proc/sys/kernel/printk_devkmsg
if [[ -r "$DEVKMSG_SYSCTL" && "$(cat "$DEVKMSG_SYSCTL")" == off ]]; then
  if ! echo on >"$DEVKMSG_SYSCTL" 2>/dev/null; then
    skip "kernel.printk_devkmsg=off and cannot be changed (printk.devkmsg=off on the command line?)"
  fi
  on_cleanup "echo off >$DEVKMSG_SYSCTL"
  ok "kernel.printk_devkmsg was off: on for the test, restored on exit"
fi

TAG="fwtest-$$-$RANDOM$RANDOM"
# kmsg_write TEXT: one record at priority 3 (err). The kernel gives it facility LOG_USER (1), so its
# prefix reads "11,<seq>,...".
kmsg_write() { printf '<3>%s\n' "$1" >/dev/kmsg; }
module_line() { printf 'mlx5_core %s: Port module event[error]: module 0, Cable error, High Temperature %s-%s' "$VETH" "$TAG" "$1"; }
fatal_line() { printf 'mlx5_core %s: poll_health:836:(pid 0): Fatal error 1 detected %s' "$VETH" "$TAG"; }
if ! err="$(kmsg_write "fabricwatch kmsg_kernel_test $TAG: probe (matches no pattern)" 2>&1)"; then
  skip "cannot write /dev/kmsg: $err"
fi

# --- a veth pair of our own in the root namespace -----------------------------------------------
VETH="fwk$$a"
PEER="fwk$$b"
if ! err="$(ip link add "$VETH" type veth peer name "$PEER" 2>&1)"; then
  skip "cannot create a veth pair: $err"
fi
on_cleanup "ip link del $VETH"
[[ -e "/sys/class/net/$VETH/ifindex" ]] || fail "$VETH is not in /sys/class/net"
ok "veth $VETH <-> $PEER in the root namespace, tag $TAG"

EVENTS="fabric_kernel_events_total{device=\"\",netdev=\"$VETH\",event=\"module_high_temperature\"}"
FATAL="fabric_kernel_events_total{device=\"\",netdev=\"$VETH\",event=\"fw_fatal\"}"
STATE_DIR="$(mktemp -d)"
on_cleanup "rm -rf $STATE_DIR"
STATE="$STATE_DIR/state.json"

# wait_kmsg_running: the kmsg collector has opened /dev/kmsg and read once (it starts after the
# newest record, so a line written before that would never be seen).
wait_kmsg_running() {
  wait_for_metric /metrics 'fabricwatch_collector_success{collector="kmsg"}' 10 1 ||
    fail "kmsg collector did not succeed within 10 s:
$(scrape /metrics | grep -E 'collector="kmsg"|fabric_kernel' || true)
log:
$(cat "$AGENT_LOG")"
}
# veth_anomaly FIELD_EXPR: FIELD_EXPR evaluated on the driver_fault finding of the veth (a), or
# "none".
veth_anomaly() {
  json_get "$(scrape /api/v1/anomalies)" "next(($1 for a in d['anomalies'] if a['detector'] == 'driver_fault' and a['entity'] == {'netdev': '$VETH'}), 'none')"
}
kmsg_warnings() { grep 'level=warn' "$AGENT_LOG" | grep -c '/dev/kmsg' || true; }

# --- 1. user records counted, warning then critical ---------------------------------------------
start_agent --metrics.all --collector.kmsg.user-records=true --collector.kmsg.interval=200ms \
  --state.file="$STATE"
wait_kmsg_running
ok "agent on the host's /sys and /dev/kmsg (user records on), 127.0.0.1:$AGENT_PORT"
written_ms=$(now_ms)
for i in 1 2 3; do kmsg_write "$(module_line "$i")"; done
wait_for_metric /metrics "$EVENTS" 10 3 ||
  fail "$EVENTS is not 3 within 10 s:
$(scrape /metrics | grep -E "fabric_kernel|$VETH" || true)"
ok "3 module lines counted: $EVENTS 3"
deadline=$(($(now_ms) + 10000))
until [[ "$(veth_anomaly "a['severity']")" == warning ]]; do
  (($(now_ms) < deadline)) || fail "no driver_fault warning on {netdev: $VETH}: $(scrape /api/v1/anomalies)"
  sleep 0.2
done
finding="$(scrape /api/v1/anomalies)"
count="$(json_get "$finding" "len([l for a in d['anomalies'] if a['entity'] == {'netdev': '$VETH'} for l in a['log'] if '$TAG' in l['text']])")"
((count == 3)) || fail "the finding's log holds $count tagged lines, want 3: $finding"
# Record times are boot time + the record's µs: within a minute of when they were written.
skew="$(python3 - "$finding" "$VETH" "$TAG" "$written_ms" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
a = next(a for a in d["anomalies"] if a["entity"] == {"netdev": sys.argv[2]})
times = [l["timestamp"] for l in a["log"] if sys.argv[3] in l["text"] and l.get("time")]
print("%.3f" % max(abs(t - int(sys.argv[4]) / 1000) for t in times) if len(times) == 3 else "missing")
PY
)"
[[ "$skew" != missing ]] || fail "a tagged log line lacks its time: $finding"
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 60 else 1)' "$skew" ||
  fail "log line times are ${skew} s away from the write: $finding"
ok "driver_fault warning on {netdev: $VETH}, log has the 3 tagged lines with times (${skew} s from the write)"
[[ "$(veth_anomaly "a['drain_eligible']")" == False ]] || fail "module warning is drain-eligible"

kmsg_write "$(fatal_line)"
deadline=$(($(now_ms) + 10000))
until [[ "$(veth_anomaly "(a['severity'], a['drain_eligible'])")" == "('critical', True)" ]]; do
  (($(now_ms) < deadline)) || fail "no critical drain-eligible driver_fault on {netdev: $VETH}: $(scrape /api/v1/anomalies)"
  sleep 0.2
done
[[ "$(metric_value "$(scrape /metrics)" "$FATAL")" == 1 ]] || fail "$FATAL is not 1"
json_get "$(scrape /api/v1/anomalies)" "any('Fatal error 1 detected $TAG' in l['text'] for a in d['anomalies'] if a['entity'] == {'netdev': '$VETH'} for l in a['log'])" |
  grep -qx True || fail "the critical finding's log lacks the fatal line: $(scrape /api/v1/anomalies)"
ok "fatal line: driver_fault critical, drain-eligible on {netdev: $VETH}, with the line in its log"
grep -q "anomaly raised detector=driver_fault severity=critical netdev=$VETH" "$AGENT_LOG" ||
  fail "no log line for the critical raise; log:
$(cat "$AGENT_LOG")"
(($(kmsg_warnings) == 0)) || fail "warnings about /dev/kmsg while it is readable:
$(cat "$AGENT_LOG")"
ok "one structured line for the raise, no warning about /dev/kmsg"

# --- 2. restart with the state file: resume after the saved sequence -----------------------------
stop_agent "$AGENT_PID"
[[ "$STOP_RC" == 0 ]] || fail "agent exited $STOP_RC on SIGTERM; log:
$(cat "$AGENT_LOG")"
cursor="$(json_get "$(cat "$STATE")" "d['detectors']['_kmsg_cursor']['sequence']")"
[[ "$cursor" =~ ^[0-9]+$ ]] || fail "state file has no detectors._kmsg_cursor.sequence: $(head -c 2000 "$STATE")"
ok "state file keeps the kernel log position: detectors._kmsg_cursor.sequence = $cursor"
# Written while no agent runs: a restart that started at the end of the log would miss these.
kmsg_write "$(module_line 4)"
kmsg_write "$(module_line 5)"
start_agent --metrics.all --collector.kmsg.user-records=true --collector.kmsg.interval=200ms \
  --state.file="$STATE"
wait_kmsg_running
wait_for_metric /metrics "$EVENTS" 10 2 ||
  fail "after the restart $EVENTS is not 2 (the two lines written while stopped):
$(scrape /metrics | grep -E "fabric_kernel|$VETH" || true)
log:
$(cat "$AGENT_LOG")"
sleep 0.6  # three more collections: nothing older may show up late
metrics="$(scrape /metrics)"
[[ "$(metric_value "$metrics" "$EVENTS")" == 2 ]] ||
  fail "after the restart $EVENTS = $(metric_value "$metrics" "$EVENTS"), want 2 (old lines counted again?)"
[[ -z "$(metric_value "$metrics" "$FATAL")" ]] ||
  fail "the fatal line read before the restart was counted again: $FATAL $(metric_value "$metrics" "$FATAL")"
ok "restart: the 4 lines read before are not counted again, the 2 written while stopped are"
kmsg_write "$(module_line 6)"
wait_for_metric /metrics "$EVENTS" 10 3 || fail "a line written after the restart was not counted"
ok "a line written after the restart is counted ($EVENTS 3)"
stop_agent "$AGENT_PID"

# --- 3. without user-records: read, not counted -------------------------------------------------
start_agent --metrics.all --collector.kmsg.interval=200ms
wait_kmsg_running
records0="$(metric_value "$(scrape /metrics)" fabric_kernel_log_records_total)"
kmsg_write "$(module_line 7)"
kmsg_write "$(fatal_line)"
deadline=$(($(now_ms) + 10000))
while :; do
  records="$(metric_value "$(scrape /metrics)" fabric_kernel_log_records_total)"
  ((records >= records0 + 2)) && break
  (($(now_ms) < deadline)) || fail "fabric_kernel_log_records_total stayed at $records (from $records0): records not read"
  sleep 0.2
done
sleep 0.5  # the detectors see the snapshot
metrics="$(scrape /metrics)"
if grep -q "netdev=\"$VETH\",event=" <<<"$metrics"; then
  fail "user-space records counted without --collector.kmsg.user-records:
$(grep "netdev=\"$VETH\"" <<<"$metrics")"
fi
[[ "$(veth_anomaly "a['severity']")" == none ]] ||
  fail "a finding on {netdev: $VETH} from user-space records: $(scrape /api/v1/anomalies)"
ok "without user-records: both records read (records_total $records0 -> $records), none counted, no finding"
stop_agent "$AGENT_PID"

# --- 4. /dev/kmsg that cannot be opened ---------------------------------------------------------
# A device node of /dev/kmsg's own numbers (c 1 11) with mode 000, bound over /dev/kmsg in a
# private mount namespace; the agent runs as root with every capability dropped (no
# CAP_DAC_OVERRIDE: the mode refuses it; no CAP_SYSLOG either), so open() fails whatever
# kernel.dmesg_restrict says. The host's /dev/kmsg is not touched.
command -v setpriv >/dev/null || fail "setpriv is not installed (util-linux)"
command -v unshare >/dev/null || fail "unshare is not installed (util-linux)"
make_tmpdir NODE_DIR
NODE="$NODE_DIR/kmsg"
NO_CAPS=(setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all --)
# shellcheck disable=SC2016  # expanded by the inner bash
IN_PRIVATE_MOUNTS=(unshare -m --propagation private bash -c 'mount --bind "$0" /dev/kmsg && exec "$@"' "$NODE")
probe=""
if ! mknod -m 000 "$NODE" c 1 11 2>/dev/null; then
  probe="mknod of a character device in $NODE_DIR refused"
elif out="$("${IN_PRIVATE_MOUNTS[@]}" "${NO_CAPS[@]}" python3 -c 'open("/dev/kmsg", "rb")' 2>&1)"; then
  probe="/dev/kmsg still opened without capabilities behind a mode-000 node"
elif [[ "$out" != *"Permission denied"* && "$out" != *"Operation not permitted"* ]]; then
  probe="the private mount namespace or the bind mount was refused: $(tail -n1 <<<"$out")"
fi
if [[ -n "$probe" ]]; then
  printf '# skipped: /dev/kmsg that cannot be opened (%s)\n' "$probe"
else
  E2E_WRAP=("${IN_PRIVATE_MOUNTS[@]}" "${NO_CAPS[@]}")
  start_agent --metrics.all --collector.kmsg.interval=200ms --collector.netdev.interval=200ms
  E2E_WRAP=()  # scrapes run from the host
  [[ "$(sed -n 's/^CapEff:[[:space:]]*//p' "/proc/$AGENT_PID/status")" == 0000000000000000 ]] ||
    fail "the agent kept capabilities: $(grep Cap "/proc/$AGENT_PID/status")"
  wait_for_metric /metrics "fabric_netdev_mtu_bytes{netdev=\"$VETH\"}" 10 ||
    fail "netdev does not export $VETH without /dev/kmsg; log:
$(cat "$AGENT_LOG")"
  kmsg_write "$(module_line 8)"
  sleep 1.2  # six kmsg collections: the line would be logged again if it were per collection
  metrics="$(scrape /metrics)"
  warnings="$(kmsg_warnings)"
  ((warnings == 1)) || fail "$warnings warn lines name /dev/kmsg, want exactly 1; log:
$(cat "$AGENT_LOG")"
  # The one line: the privilege log's, when it knows CAP_SYSLOG is missing (dmesg_restrict=1);
  # otherwise the collector's own, with the kernel's answer.
  line="$(grep 'level=warn' "$AGENT_LOG" | grep '/dev/kmsg')"
  [[ ("$line" == *"logger=privileges"* && "$line" == *"CAP_SYSLOG"*) ||
    ("$line" == *"logger=kmsg"* && ("$line" == *"Permission denied"* || "$line" == *"not permitted"*)) ]] ||
    fail "the /dev/kmsg line does not say why: $line"
  ok "one warn line: ${line#*msg=}"
  [[ "$(metric_value "$metrics" 'fabricwatch_collector_success{collector="kmsg"}')" == 0 ]] ||
    fail "kmsg collector success is not 0 without /dev/kmsg"
  [[ "$(metric_value "$metrics" 'fabricwatch_collector_errors_total{collector="kmsg"}')" == 0 ]] ||
    fail "no data counted as a kmsg collector error: $(grep 'collector="kmsg"' <<<"$metrics")"
  [[ "$(metric_value "$metrics" 'fabricwatch_collector_series{collector="kmsg"}')" == 0 ]] ||
    fail "kmsg exports series without /dev/kmsg"
  if grep -q '^fabric_kernel_' <<<"$metrics"; then
    fail "fabric_kernel_* series without /dev/kmsg: $(grep '^fabric_kernel_' <<<"$metrics" | head -5)"
  fi
  ok "kmsg: no data (success 0, errors 0, no series, no fabric_kernel_*)"
  [[ "$(metric_value "$metrics" 'fabricwatch_collector_success{collector="netdev"}')" == 1 ]] ||
    fail "netdev collector stopped succeeding without /dev/kmsg"
  [[ -n "$(metric_value "$metrics" "fabric_netdev_mtu_bytes{netdev=\"$VETH\"}")" ]] ||
    fail "no fabric_netdev_mtu_bytes for $VETH"
  ok "everything else keeps working: netdev succeeds and exports $VETH"
  missing="$(metric_value "$metrics" 'fabricwatch_privilege_missing{capability="CAP_SYSLOG",feature="kernel_log"}')"
  other="$(grep 'level=warn' "$AGENT_LOG" | grep -v '/dev/kmsg' | grep -ciE 'kernel[ _]log|CAP_SYSLOG' || true)"
  ((other == 0)) || fail "$other other warn lines about the kernel log; log:
$(cat "$AGENT_LOG")"
  printf '# privilege_missing{CAP_SYSLOG,kernel_log}=%s; no other warn line about the kernel log\n' \
    "${missing:-absent}"
  stop_agent "$AGENT_PID"
fi
printf '# %s: cursor %s\n' "$VETH" "$cursor"
finish
