#!/usr/bin/env bash
# Real kernel link flaps: a veth pair between two private network namespaces (the host's is not
# touched). The agent runs in the first one on the real /sys, so its rtnetlink listener is on;
# the peer end is flapped 5 times and the agent must report exactly 10 carrier transitions
# (events API and fabric_netdev_link_events_total) and carrier counters equal to the kernel's.
# The link_flap detector (short windows through --detector.link_flap.* flags) must raise
# fabric_anomaly_active{detector="link_flap",severity="critical",netdev="fwv0"} on /metrics and
# /api/v1/anomalies within 1 s of the fifth down (the netlink path), clear it by itself later,
# and persist its state in --state.file.
#
# Needs root and network namespaces; otherwise exits 77 (skipped).
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/netns_flap_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init netns_flap_test "$@"
# Agents run with --metrics.all: this test checks the collectors' series, not the series
# budget (e2e.series_budget_test).

FLAPS=5
((EUID == 0)) || skip "needs root to create network namespaces (running as uid $EUID)"
command -v ip >/dev/null || skip "iproute2 'ip' not installed"

NS="fwtest-$$"
PEER_NS="fwpeer-$$"
if ! err="$(ip netns add "$NS" 2>&1)"; then
  skip "ip netns add $NS failed: $err"
fi
on_cleanup "ip netns del $NS"
ip netns add "$PEER_NS" || fail "ip netns add $PEER_NS failed after $NS succeeded"
on_cleanup "ip netns del $PEER_NS"
ok "network namespaces $NS and $PEER_NS created"

if ! err="$(ip -n "$NS" link add fwv0 type veth peer name fwv1 netns "$PEER_NS" 2>&1)"; then
  skip "cannot create a veth pair (no veth support in this kernel?): $err"
fi
ip -n "$NS" link set lo up
ip -n "$NS" link set fwv0 up
ip -n "$PEER_NS" link set lo up
ip -n "$PEER_NS" link set fwv1 up

in_ns() { ip netns exec "$NS" "$@"; }
sys_value() { in_ns cat "/sys/class/net/fwv0/$1"; }

# Let the initial carrier-up settle before the agent starts, so it is part of the baseline.
deadline=$(($(now_ms) + 10000))
until [[ "$(sys_value carrier 2>/dev/null || true)" == 1 ]]; do
  (($(now_ms) < deadline)) || fail "fwv0 carrier did not come up within 10 s: $(ip -n "$NS" link show fwv0)"
  sleep 0.05
done
ok "veth fwv0 ($NS) <-> fwv1 ($PEER_NS) up, carrier 1"

# shellcheck disable=SC2034  # used by lib.sh
E2E_WRAP=(ip netns exec "$NS")
STATE_DIR="$(mktemp -d)"
on_cleanup "rm -rf $STATE_DIR"
start_agent --metrics.all --collector.netdev.interval=100ms --state.file="$STATE_DIR/state.json" \
  --detector.link_flap.hard-window=5s --detector.link_flap.half-life=1s \
  --detector.link_flap.slow-window=8s
ok "agent running in $NS on 127.0.0.1:$AGENT_PORT"
wait_for_metric /metrics 'fabric_netdev_carrier{netdev="fwv0"}' 10 1 ||
  fail "agent did not report fabric_netdev_carrier{netdev=\"fwv0\"} 1 within 10 s:
$(scrape /metrics | grep 'fwv0' || true)
log:
$(cat "$AGENT_LOG")"
metrics="$(scrape /metrics)"
first_listener_up="$(metric_value "$metrics" fabricwatch_link_listener_up)"
if [[ "$first_listener_up" != 1 ]]; then
  # Known startup race (reported, not asserted because it is timing-dependent):
  # LinkEventListener::Start() returns before its thread runs Run(), and only Run() calls
  # LinkEventLog::SetListening(true); a netdev collection that runs first publishes
  # fabricwatch_link_listener_up 0 although the listener started.
  printf '# note: first snapshot had fabricwatch_link_listener_up=%s (listener startup race)\n' \
    "${first_listener_up:-absent}"
fi
wait_for_metric /metrics fabricwatch_link_listener_up 3 1 ||
  fail "fabricwatch_link_listener_up is not 1 before the flaps; log:
$(cat "$AGENT_LOG")"
ok "agent sees fwv0 with carrier 1, link listener up"

events_json="$(scrape /api/v1/link-events)"
baseline="$(json_get "$events_json" 'sum(1 for e in d["events"] if e["netdev"] == "fwv0")')"
[[ "$baseline" == 0 ]] || fail "fwv0 has $baseline link events before any flap: $events_json"

CRIT='fabric_anomaly_active{detector="link_flap",severity="critical",netdev="fwv0"}'
detect_ms=""
for i in $(seq 1 "$FLAPS"); do
  ip -n "$PEER_NS" link set fwv1 down
  if ((i == FLAPS)); then
    # Event-driven: the fifth down must show as a critical anomaly within 1 s.
    down_ms=$(now_ms)
    while (($(now_ms) - down_ms < 1000)); do
      if [[ "$(metric_value "$(scrape /metrics)" "$CRIT")" == 1 ]]; then
        detect_ms=$(($(now_ms) - down_ms))
        break
      fi
      sleep 0.05
    done
    anomalies_json="$(scrape /api/v1/anomalies)"
  else
    sleep 0.3
  fi
  ip -n "$PEER_NS" link set fwv1 up
  sleep 0.3
done
[[ -n "$detect_ms" ]] || fail "link_flap did not raise $CRIT within 1 s of the fifth down:
$(scrape /metrics | grep -E 'anomaly|link_flap' || true)
log:
$(cat "$AGENT_LOG")"
ok "link_flap critical on /metrics ${detect_ms} ms after the fifth down"
api="$(json_get "$anomalies_json" '",".join(a["detector"]+"/"+a["severity"]+"/"+a["entity"].get("netdev","")+"/"+str(a["drain_eligible"]) for a in d["anomalies"])')"
[[ "$api" == *"link_flap/critical/fwv0/True"* ]] ||
  fail "/api/v1/anomalies does not list the link_flap critical of fwv0: $anomalies_json"
ok "/api/v1/anomalies lists link_flap critical fwv0 (drain-eligible)"
grep -q 'anomaly raised detector=link_flap severity=critical netdev=fwv0' "$AGENT_LOG" ||
  fail "no structured log line for the raise; log:
$(cat "$AGENT_LOG")"
ok "one structured log line for the raise"
sleep 1
ok "flapped the peer fwv1 $FLAPS times"

want_events=$((2 * FLAPS))
# Events for fwv0, as "carrier:inferred" words, oldest first.
fwv0_events() {
  json_get "$(scrape /api/v1/link-events)" \
    '" ".join(e["carrier"] + ":" + str(e["inferred"]).lower() for e in d["events"] if e["netdev"] == "fwv0")'
}
deadline=$(($(now_ms) + 5000))
while :; do
  events="$(fwv0_events)"
  n=$(wc -w <<<"$events")
  ((n >= want_events || $(now_ms) >= deadline)) && break
  sleep 0.2
done
sleep 0.5
events="$(fwv0_events)"
n=$(wc -w <<<"$events")
inferred=$(grep -o ':true' <<<"$events" | wc -l || true)
((n == want_events)) ||
  fail "/api/v1/link-events lists $n events for fwv0, want $want_events: $events"
expected=""
for _ in $(seq 1 "$FLAPS"); do expected+="down up "; done
actual="${events//:true/}"
actual="${actual//:false/}"
[[ "$actual " == "$expected" ]] ||
  fail "fwv0 events do not alternate down/up starting with down: $events"
ok "/api/v1/link-events: $n events for fwv0 alternating down/up ($inferred inferred)"

# Counters: agent vs kernel, read inside the namespace after the flaps.
kernel_changes="$(sys_value carrier_changes)"
kernel_up="$(sys_value carrier_up_count)"
kernel_down="$(sys_value carrier_down_count)"
deadline=$(($(now_ms) + 5000))
while :; do
  metrics="$(scrape /metrics)"
  changes="$(metric_value "$metrics" 'fabric_netdev_carrier_changes_total{netdev="fwv0"}')"
  up="$(metric_value "$metrics" 'fabric_netdev_carrier_up_changes_total{netdev="fwv0"}')"
  down="$(metric_value "$metrics" 'fabric_netdev_carrier_down_changes_total{netdev="fwv0"}')"
  [[ "$changes/$up/$down" == "$kernel_changes/$kernel_up/$kernel_down" ]] && break
  (($(now_ms) < deadline)) || break
  sleep 0.2
done
ev_down="$(metric_value "$metrics" 'fabric_netdev_link_events_total{netdev="fwv0",transition="down"}')"
ev_up="$(metric_value "$metrics" 'fabric_netdev_link_events_total{netdev="fwv0",transition="up"}')"
[[ "$ev_down" == "$FLAPS" && "$ev_up" == "$FLAPS" ]] ||
  fail "fabric_netdev_link_events_total for fwv0: down=$ev_down up=$ev_up, want $FLAPS each"
ok "fabric_netdev_link_events_total{netdev=\"fwv0\"}: down=$ev_down up=$ev_up"
[[ "$changes" == "$kernel_changes" ]] ||
  fail "fabric_netdev_carrier_changes_total{netdev=\"fwv0\"}=$changes, kernel carrier_changes=$kernel_changes"
[[ "$up" == "$kernel_up" ]] ||
  fail "fabric_netdev_carrier_up_changes_total{netdev=\"fwv0\"}=$up, kernel carrier_up_count=$kernel_up"
[[ "$down" == "$kernel_down" ]] ||
  fail "fabric_netdev_carrier_down_changes_total{netdev=\"fwv0\"}=$down, kernel carrier_down_count=$kernel_down"
ok "carrier counters match the kernel: changes=$changes up=$up down=$down"
[[ "$(metric_value "$metrics" fabricwatch_link_listener_up)" == 1 ]] ||
  fail "fabricwatch_link_listener_up is not 1 after the flaps"
ok "fabricwatch_link_listener_up 1"
overruns="$(metric_value "$metrics" fabricwatch_link_listener_overruns_total)"
[[ "$overruns" == 0 ]] || fail "fabricwatch_link_listener_overruns_total=$overruns, want 0"
ok "no listener overruns"
[[ "$(metric_value "$metrics" 'fabric_netdev_carrier{netdev="fwv0"}')" == 1 ]] ||
  fail "fwv0 carrier is not back to 1 after the last flap"
ok "fwv0 carrier back to 1"

# The penalty decays (half-life 1 s) and the windows pass (5 s, 8 s): it clears by itself.
deadline=$(($(now_ms) + 30000))
while grep -q 'fabric_anomaly_active{detector="link_flap",[^}]*netdev="fwv0"' <<<"$(scrape /metrics)"; do
  (($(now_ms) < deadline)) || fail "link_flap anomaly of fwv0 did not clear within 30 s:
$(scrape /metrics | grep -E 'anomaly|link_flap' || true)"
  sleep 0.2
done
ok "link_flap anomaly of fwv0 cleared by itself"
[[ "$(metric_value "$(scrape /metrics)" 'fabric_anomaly_transitions_total{detector="link_flap",severity="critical",transition="clear"}')" == 1 ]] ||
  fail "fabric_anomaly_transitions_total for the critical clear is not 1"
ok "transitions counted"

stop_agent "$AGENT_PID"
[[ "$STOP_RC" == 0 ]] || fail "agent exited $STOP_RC on SIGTERM; log:
$(cat "$AGENT_LOG")"
((STOP_MS < 1000)) || fail "SIGTERM -> exit took $STOP_MS ms with the link listener on, want < 1000"
ok "agent stopped in $STOP_MS ms with the link listener on"
[[ "$(json_get "$(cat "$STATE_DIR/state.json")" '"fwv0" in str(d["detectors"]["link_flap"]["ports"])')" == True ]] ||
  fail "state file lacks the link_flap history of fwv0: $(head -c 2000 "$STATE_DIR/state.json")"
ok "state file holds the link_flap history of fwv0"
printf '# fwv0: %d events, %d inferred; SIGTERM stop %d ms\n' "$n" "$inferred" "$STOP_MS"
finish
