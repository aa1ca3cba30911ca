#!/usr/bin/env bash
# Real kernel DCB (issue 21): the ethtool collector asks every selected netdev for its PFC and QoS
# configuration over rtnetlink (RTM_GETDCB: IEEE PFC and APP tables). veth has no dcbnl_ops, so
# the kernel answers "not supported". In a private network namespace with a veth pair, the agent
# (ethtool collector selecting both veths, every 100 ms, log level debug) must stay quiet:
#  - /metrics has no DCB-derived series for the veths (fabric_pfc_enabled,
#    fabric_pfc_capable_traffic_classes, fabric_pfc_dcb_frames_total, fabric_qos_*);
#  - fabricwatch_collector_errors_total{collector="ethtool"} stays 0: "not supported" is no error;
#  - the log has exactly one debug line "<veth>: DCB PFC configuration not supported: ..." per
#    veth after many collections, and no warning or error line at all.
# The real `dcb pfc show dev <veth>` (iproute2) runs in the same namespace first, to show what the
# kernel answers; its exit status and stderr are printed (skipped, with a message, without dcb).
#
# Needs root and network namespaces; otherwise exits 77 (skipped).
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/dcb_veth_quiet_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init dcb_veth_quiet_test "$@"
# Agents run with --metrics.all: this test checks the collectors' series, not the series
# budget (e2e.series_budget_test).

((EUID == 0)) || skip "needs root to create network namespaces (running as uid $EUID)"
command -v ip >/dev/null || skip "ip (iproute2) is not installed"
ip netns list >/dev/null 2>&1 || skip "ip netns is not available: $(ip netns list 2>&1 | head -n1)"

NS="fwdcb-$$"
if ! err="$(ip netns add "$NS" 2>&1)"; then
  skip "ip netns add $NS failed: $err"
fi
on_cleanup "ip netns del $NS"
if ! err="$(ip -n "$NS" link add fwd0 type veth peer name fwd1 2>&1)"; then
  skip "cannot create a veth pair: $err"
fi
ip -n "$NS" link set lo up
ip -n "$NS" link set fwd0 up
ip -n "$NS" link set fwd1 up
ok "veth pair fwd0 <-> fwd1 in network namespace $NS"

in_ns() { ip netns exec "$NS" "$@"; }

# --- what the kernel answers to the dcb tool ---------------------------------------------------
if command -v dcb >/dev/null; then
  rc=0
  dcb_err="$(in_ns dcb pfc show dev fwd0 2>&1 >/dev/null)" || rc=$?
  log "  dcb pfc show dev fwd0: exit status $rc, stderr: ${dcb_err:-(empty)}"
  ((rc != 0)) || fail "dcb pfc show dev fwd0 succeeded on veth (exit 0); stderr: $dcb_err"
  grep -qi 'not supported' <<<"$dcb_err" ||
    fail "dcb pfc show dev fwd0 failed (exit $rc) without 'not supported': $dcb_err"
  ok "the kernel answers 'not supported' to dcb pfc show on veth (dcb exit $rc: $dcb_err)"
else
  log "  dcb (iproute2's DCB tool) is not installed: the dcb pfc show part is skipped"
  ok "dcb pfc show skipped: dcb not installed"
fi

# --- the agent --------------------------------------------------------------------------------
# shellcheck disable=SC2034  # used by lib.sh
E2E_WRAP=(ip netns exec "$NS")
start_agent --metrics.all --collector.ethtool.interval=100ms --collector.ethtool.device-include='^fwd[01]$' \
  --log.level=debug
ok "agent running in $NS on 127.0.0.1:$AGENT_PORT"

# The DCB query is made in the first collection of each veth; wait for both debug lines, then
# for at least 10 more ethtool collections (distinct snapshot timestamps), polling /metrics.
dcb_lines() { grep -c "$1: DCB PFC configuration not supported" "$AGENT_LOG" || true; }
deadline=$(($(now_ms) + 10000))
until (($(dcb_lines fwd0) >= 1 && $(dcb_lines fwd1) >= 1)); do
  (($(now_ms) < deadline)) || fail "no 'DCB PFC configuration not supported' debug line for both veths within 10 s; log:
$(cat "$AGENT_LOG")"
  kill -0 "$AGENT_PID" 2>/dev/null || fail "agent exited; log:
$(cat "$AGENT_LOG")"
  sleep 0.05
done
ts_series='fabricwatch_collector_last_sample_timestamp_seconds{collector="ethtool"}'
seen=()
deadline=$(($(now_ms) + 20000))
while ((${#seen[@]} < 11)); do
  (($(now_ms) < deadline)) || fail "only ${#seen[@]} ethtool collections seen in 20 s (interval 100ms)"
  ts="$(metric_value "$(scrape /metrics)" "$ts_series")"
  if [[ -n "$ts" && "$ts" != 0 && " ${seen[*]} " != *" $ts "* ]]; then seen+=("$ts"); fi
  sleep 0.05
done
ok "${#seen[@]} ethtool collections after the first DCB query"

metrics="$(scrape /metrics)"
grep -q 'netdev="fwd0"' <<<"$metrics" ||
  fail "the ethtool collector exports nothing for fwd0: is it selected? log:
$(cat "$AGENT_LOG")"
dcb_series="$(grep -E '^(fabric_pfc_enabled|fabric_pfc_capable_traffic_classes|fabric_pfc_dcb_frames_total|fabric_qos_[a-z_]+)\{[^}]*netdev="fwd[01]"' <<<"$metrics" || true)"
[[ -z "$dcb_series" ]] || fail "DCB-derived series for a veth, which has no DCB:
$dcb_series"
ok "no fabric_pfc_enabled, fabric_pfc_capable_traffic_classes, fabric_pfc_dcb_frames_total or fabric_qos_* series for fwd0/fwd1"

errors="$(metric_value "$metrics" 'fabricwatch_collector_errors_total{collector="ethtool"}')"
[[ "$errors" == 0 ]] || fail "fabricwatch_collector_errors_total{collector=\"ethtool\"} is '$errors', want 0; log:
$(cat "$AGENT_LOG")"
[[ "$(metric_value "$metrics" 'fabricwatch_collector_success{collector="ethtool"}')" == 1 ]] ||
  fail "fabricwatch_collector_success{collector=\"ethtool\"} is not 1"
ok "ethtool collector: 0 errors, success 1 (the DCB 'not supported' is not counted)"

for dev in fwd0 fwd1; do
  lines="$(grep "$dev: DCB PFC configuration not supported" "$AGENT_LOG" || true)"
  n="$(grep -c . <<<"$lines" || true)"
  [[ "$n" == 1 ]] || fail "$n 'DCB PFC configuration not supported' lines for $dev after ${#seen[@]} collections, want exactly 1:
$lines"
  grep -q 'level=debug' <<<"$lines" || fail "the DCB line for $dev is not at debug level: $lines"
  log "  $lines"
done
ok "exactly one debug line per veth about the DCB PFC configuration"

if grep -E 'level=(warn|error)' "$AGENT_LOG"; then
  fail "warning or error lines in the agent log (above)"
fi
ok "no warning or error lines in the agent log"

stop_agent "$AGENT_PID"
[[ "$STOP_RC" == 0 ]] || fail "agent exited $STOP_RC on SIGTERM"
ok "agent stopped in $STOP_MS ms"
finish
