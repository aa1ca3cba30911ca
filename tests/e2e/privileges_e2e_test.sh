#!/usr/bin/env bash
# Least privilege (README "Privileges"): the agent runs as nobody with only CAP_NET_ADMIN, or
# with no capability at all, and names what is missing.
#   1. Replay root as nobody, with CAP_NET_ADMIN only (setpriv ambient set) and with none: it
#      serves /metrics, every collector succeeds, and a replay needs no capability (no
#      fabricwatch_privilege_missing series, no "privilege missing" line).
#   2. Read-only root: in a private mount namespace every mount is read-only except the state
#      directory; as nobody without capabilities the agent serves, and on SIGTERM saves its
#      state file there.
#   3. The kernel path (a veth in a private network namespace, optics reading module EEPROM
#      through ethtool netlink): with CAP_NET_ADMIN fabricwatch_privilege_missing is 0; without
#      it is 1, with exactly ONE log line, while the kernel's EPERMs are counted and every other
#      collector still succeeds; in a user namespace (CapEff full, but not over the network
#      namespace) the kernel's EPERM alone marks it missing, with one line saying so.
#
# Needs root (setpriv, mount and network namespaces); otherwise exits 77 (skipped).
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/privileges_e2e_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init privileges_e2e_test "$@"

((EUID == 0)) || skip "needs root to drop to nobody and make namespaces (running as uid $EUID)"
for tool in setpriv unshare mount ip python3 promtool; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (make test installs it)"
done
id nobody >/dev/null 2>&1 || skip "no user nobody"
NOGROUP="$(id -gn nobody)"

# The replay root and the binary must be readable by nobody: copy both under a 0755 directory.
chmod 0755 "$E2E_TMP"
REPLAY="$E2E_TMP/replay"
mkdir -p "$REPLAY"
cp -a "$FABRICWATCH_SOURCE_DIR/tests/fixtures/sysfs/roce-node/sys" "$REPLAY/sys"
cp -a "$FABRICWATCH_SOURCE_DIR/tests/fixtures/ethtool/mlx5" "$REPLAY/ethtool"
cp "$FABRICWATCH_BIN" "$E2E_TMP/fabricwatch"
chmod -R a+rX "$REPLAY" "$E2E_TMP/fabricwatch"
FABRICWATCH_BIN="$E2E_TMP/fabricwatch"

AS_NOBODY=(setpriv --reuid=nobody --regid="$NOGROUP" --clear-groups)
# shellcheck disable=SC2054  # setpriv's capability lists are comma-separated
WITH_NET_ADMIN=(--inh-caps=-all,+net_admin --ambient-caps=-all,+net_admin
  --bounding-set=-all,+net_admin)
NO_CAPS=(--inh-caps=-all --ambient-caps=-all --bounding-set=-all)

# The agent's own view of its capabilities, from /proc.
cap_eff() { sed -n 's/^CapEff:[[:space:]]*//p' "/proc/$AGENT_PID/status"; }
# check_serves LABEL: /metrics parses, each collector's last run succeeded or found no data.
check_serves() {
  local body
  body="$(scrape /metrics)"
  promtool_out="$(promtool check metrics <<<"$body" 2>&1)" || true
  [[ -z "$promtool_out" ]] || fail "$1: promtool check metrics: $promtool_out"
  metric_value "$body" 'fabricwatch_collector_success{collector="rdma"}' | grep -qx 1 ||
    fail "$1: rdma collector did not succeed; log:
$(cat "$AGENT_LOG")"
  metric_value "$body" 'fabricwatch_collector_success{collector="ethtool"}' | grep -qx 1 ||
    fail "$1: ethtool collector did not succeed; log:
$(cat "$AGENT_LOG")"
  LAST_BODY="$body"
}
wait_collected() {
  wait_for_metric /metrics 'fabricwatch_collector_success{collector="ethtool"}' 10 1 ||
    fail "$1: no successful ethtool collection within 10 s; log:
$(cat "$AGENT_LOG")"
}

# ---------------------------------------------------------------- 1. replay root, as nobody
for mode in net_admin none; do
  if [[ $mode == net_admin ]]; then caps=("${WITH_NET_ADMIN[@]}"); else caps=("${NO_CAPS[@]}"); fi
  E2E_WRAP=("${AS_NOBODY[@]}" "${caps[@]}" --)
  start_agent --path.sysfs="$REPLAY/sys" --path.ethtool="$REPLAY/ethtool"
  E2E_WRAP=()
  [[ "$(stat -c %U "/proc/$AGENT_PID")" == nobody ]] || fail "$mode: agent does not run as nobody"
  want=0000000000000000
  [[ $mode == net_admin ]] && want=0000000000001000
  [[ "$(cap_eff)" == "$want" ]] || fail "$mode: CapEff $(cap_eff), want $want"
  wait_collected "replay as nobody ($mode)"
  check_serves "replay as nobody ($mode)"
  grep -q '^fabricwatch_privilege_missing' <<<"$LAST_BODY" &&
    fail "replay ($mode): a replay needs no capability, yet: $(grep privilege_missing <<<"$LAST_BODY")"
  grep -q 'privilege missing' "$AGENT_LOG" && fail "replay ($mode): $(grep 'privilege missing' "$AGENT_LOG")"
  stop_agent
  ((STOP_RC == 0)) || fail "replay ($mode): exit $STOP_RC on SIGTERM"
  ok "replay root as nobody with capabilities '$mode' (CapEff $want): serves, promtool clean, nothing missing"
done

# ---------------------------------------------------------------- 2. read-only root
STATE="$E2E_TMP/state"
mkdir -p "$STATE"
chown nobody:"$NOGROUP" "$STATE"
# Inside `unshare -m`: the state directory becomes its own mount, then every mount is remounted
# read-only except it (MS_BIND|MS_REMOUNT|MS_RDONLY changes only this namespace's view).
cat >"$E2E_TMP/readonly-root.sh" <<'SH'
set -eu
state="$1"
shift
mount --make-rprivate /
mount --bind "$state" "$state"
awk '{ print $5 }' /proc/self/mountinfo | sort -u | while read -r m; do
  m="$(printf '%b' "$m")"
  [ "$m" = "$state" ] && continue
  mount -o remount,bind,ro "$m" 2>/dev/null || true
done
# Prove it before the agent runs: nothing but the state directory takes a write.
for probe in / /tmp /var "$(dirname "$state")"; do
  if touch "$probe/.fabricwatch-rw-probe" 2>/dev/null; then
    rm -f "$probe/.fabricwatch-rw-probe"
    echo "readonly-root: $probe is still writable" >&2
    exit 3
  fi
done
touch "$state/.probe" && rm "$state/.probe"
exec "$@"
SH
if ! err="$(unshare -m sh -c 'mount --make-rprivate / && mount -o remount,bind,ro /' 2>&1)"; then
  skip "cannot remount / read-only in a mount namespace: $err"
fi
E2E_WRAP=(unshare -m sh "$E2E_TMP/readonly-root.sh" "$STATE" "${AS_NOBODY[@]}" "${NO_CAPS[@]}" --)
start_agent --path.sysfs="$REPLAY/sys" --path.ethtool="$REPLAY/ethtool" \
  --state.file="$STATE/state.json"
E2E_WRAP=()
grep -q 'is still writable' "$AGENT_LOG" && fail "read-only root: $(cat "$AGENT_LOG")"
wait_collected "read-only root"
check_serves "read-only root"
[[ "$(metric_value "$LAST_BODY" 'fabricwatch_state_file_errors_total{operation="load"}')" =~ ^0?$ ]] ||
  fail "read-only root: state load errors: $(grep state_file_errors <<<"$LAST_BODY")"
stop_agent
((STOP_RC == 0)) || fail "read-only root: exit $STOP_RC on SIGTERM; log:
$(cat "$AGENT_LOG")"
[[ -s "$STATE/state.json" ]] || fail "read-only root: no state file saved in $STATE; log:
$(cat "$AGENT_LOG")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["format"]=="fabricwatch-state"' \
  "$STATE/state.json" || fail "read-only root: state file is not the agent's JSON"
grep -qi 'error' "$AGENT_LOG" && fail "read-only root: errors logged:
$(grep -i error "$AGENT_LOG")"
ok "read-only root but the state directory, as nobody without capabilities: serves, saves state"

# ---------------------------------------------------------------- 3. the kernel path
NS="fwpriv-$$"
PEER_NS="fwprivp-$$"
if ! err="$(ip netns add "$NS" 2>&1)"; then skip "ip netns add $NS failed: $err"; fi
on_cleanup "ip netns del $NS"
ip netns add "$PEER_NS" || fail "ip netns add $PEER_NS failed after $NS succeeded"
on_cleanup "ip netns del $PEER_NS"
if ! err="$(ip -n "$NS" link add fwp0 type veth peer name fwp1 netns "$PEER_NS" 2>&1)"; then
  skip "cannot create a veth pair: $err"
fi
ip -n "$NS" link set lo up
ip -n "$NS" link set fwp0 up
ip -n "$PEER_NS" link set fwp1 up

SERIES='fabricwatch_privilege_missing{capability="CAP_NET_ADMIN",feature="module_eeprom"}'
# The kernel log (CAP_SYSLOG, feature kernel_log) is off here: this test is about module_eeprom,
# and tests/e2e/kmsg_kernel_test.sh covers /dev/kmsg without privilege.
# --metrics.all: a veth's ethtool series are its static link attributes, which the series budget
# keeps inside the agent; the check below is that the unprivileged ethtool reads happen.
KERNEL_ARGS=(--no-collector.kmsg --collector.optics.device-include='^fwp0$' --collector.optics.interval=100ms
  --collector.optics.module-interval=100ms --collector.ethtool.device-include='^fwp0$'
  --collector.netdev.interval=100ms --metrics.all)
# optics_errors: the optics collector's error counter now.
optics_errors() {
  metric_value "$(scrape /metrics)" 'fabricwatch_collector_errors_total{collector="optics"}'
}
# wait_optics_errors MIN: polls until optics counted at least MIN errors (module reads refused).
wait_optics_errors() {
  local deadline=$(($(now_ms) + 10000)) n
  while (($(now_ms) < deadline)); do
    n="$(optics_errors)"
    [[ -n "$n" ]] && (($(printf '%.0f' "$n") >= $1)) && return 0
    sleep 0.1
  done
  return 1
}
start_kernel_agent() {
  E2E_WRAP=(ip netns exec "$NS" "$@" --)
  start_agent "${KERNEL_ARGS[@]}"
  # curl must reach the agent's loopback inside the namespace.
  E2E_WRAP=(ip netns exec "$NS")
}

start_kernel_agent "${AS_NOBODY[@]}" "${WITH_NET_ADMIN[@]}"
wait_for_metric /metrics 'fabricwatch_collector_success{collector="optics"}' 10 ||
  fail "kernel, CAP_NET_ADMIN: optics never ran; log:
$(cat "$AGENT_LOG")"
wait_for_metric /metrics "$SERIES" 10 0 || fail "kernel, CAP_NET_ADMIN: $SERIES is not 0:
$(scrape /metrics | grep privilege)"
[[ "$(optics_errors)" == 0 ]] ||
  fail "kernel, CAP_NET_ADMIN: optics errors $(optics_errors) (veth answers EOPNOTSUPP, no error)"
grep -q 'privilege missing' "$AGENT_LOG" && fail "kernel, CAP_NET_ADMIN: $(grep 'privilege missing' "$AGENT_LOG")"
stop_agent
ok "kernel path as nobody with CAP_NET_ADMIN: $SERIES 0, module reads not refused"

start_kernel_agent "${AS_NOBODY[@]}" "${NO_CAPS[@]}"
wait_for_metric /metrics "$SERIES" 10 1 || fail "kernel, no capabilities: $SERIES is not 1:
$(scrape /metrics | grep privilege); log:
$(cat "$AGENT_LOG")"
# Several refused reads (one per 100 ms), still one line.
wait_optics_errors 5 || fail "kernel, no capabilities: the kernel's EPERMs were not counted (optics errors $(optics_errors)); log:
$(cat "$AGENT_LOG")"
lines="$(grep -c 'privilege missing' "$AGENT_LOG" || true)"
((lines == 1)) || fail "kernel, no capabilities: $lines 'privilege missing' lines, want 1:
$(cat "$AGENT_LOG")"
grep 'privilege missing' "$AGENT_LOG" | grep 'CAP_NET_ADMIN.*module_eeprom' >/dev/null ||
  fail "kernel, no capabilities: the line does not name CAP_NET_ADMIN and module_eeprom"
body="$(scrape /metrics)"
for c in netdev ethtool; do
  [[ "$(metric_value "$body" "fabricwatch_collector_success{collector=\"$c\"}")" == 1 ]] ||
    fail "kernel, no capabilities: collector $c did not succeed"
done
grep -q '^fabric_netdev_.*netdev="fwp0"' <<<"$body" || fail "kernel, no capabilities: no netdev series of fwp0"
grep -q '^fabric_ethtool_.*netdev="fwp0"' <<<"$body" || fail "kernel, no capabilities: no ethtool series of fwp0"
[[ "$(http_code /)" == 200 && "$(http_code /healthz)" == 200 ]] || fail "kernel, no capabilities: pages do not answer"
stop_agent
refused="$(metric_value "$body" 'fabricwatch_collector_errors_total{collector="optics"}')"
ok "kernel path as nobody without capabilities: $SERIES 1, $lines log line for $refused refused module reads; netdev and ethtool still succeed"

# A user namespace: CapEff is full there, but the network namespace belongs to the initial user
# namespace, so the kernel refuses (GENL_UNS_ADMIN_PERM checks ns_capable(net->user_ns)).
if ! err="$(unshare --user --map-root-user true 2>&1)"; then
  # Not a pass: said as a skip of this one part (the unit test WatchPermissionsTest covers the
  # logic, not the kernel's answer).
  printf 'skip - user namespaces unavailable (%s): confirmation by the kernel EPERM not run\n' "$err"
else
  start_kernel_agent unshare --user --map-root-user
  wait_for_metric /metrics "$SERIES" 10 1 || fail "user namespace: $SERIES is not 1 after refusals:
$(scrape /metrics | grep privilege); log:
$(cat "$AGENT_LOG")"
  wait_optics_errors 3 || fail "user namespace: refusals not counted"
  lines="$(grep -c 'privilege missing' "$AGENT_LOG" || true)"
  ((lines == 1)) || fail "user namespace: $lines 'privilege missing' lines, want 1:
$(cat "$AGENT_LOG")"
  grep -q 'although the effective set has it' "$AGENT_LOG" ||
    fail "user namespace: the line does not say the kernel refused despite CapEff:
$(cat "$AGENT_LOG")"
  stop_agent
  ok "user namespace (CapEff full, kernel refuses): $SERIES 1 from the EPERM alone, one line"
fi

finish
