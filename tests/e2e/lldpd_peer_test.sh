#!/usr/bin/env bash
# The far end of a RoCE port through real LLDP (issue 24): Debian's lldpd in two network
# namespaces on a veth pair, a 1 s transmit interval. The switch side (namespace A) is lldpd
# named leaf07 with port ids by ifname; the node side (namespace B) runs the agent, whose replay
# sysfs root has one RoCE port (mlx5_0 port 1) whose GID table names B's veth.
#   1. lldpd on both sides (B receive-only): the agent asks B's lldpd through liblldpctl and
#      exports fabric_port_peer_info{peer_name="leaf07",peer_port=<A's veth>,source="lldpd"}.
#   2. lldpd sending only on A, none on B: the agent's own AF_PACKET listener hears the frames
#      (source="lldp").
# Needs root, ip netns and lldpd; otherwise exits 77 (skipped).
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/lldpd_peer_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init lldpd_peer_test "$@"

((EUID == 0)) || skip "needs root for network namespaces and lldpd (running as uid $EUID)"
for tool in ip lldpd lldpcli; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (make test installs lldpd)"
done
NS_A="fwlldpa-$$"
NS_B="fwlldpb-$$"
DEV_A="fwla$$"
DEV_B="fwlb$$"
DEV_A="${DEV_A:0:15}"
DEV_B="${DEV_B:0:15}"
if ! err="$(ip netns add "$NS_A" 2>&1)"; then skip "ip netns add failed: $err"; fi
on_cleanup "ip netns del $NS_A"
ip netns add "$NS_B"
on_cleanup "ip netns del $NS_B"
ip -n "$NS_A" link add "$DEV_A" type veth peer name "$DEV_B" netns "$NS_B"
ip -n "$NS_A" link set "$DEV_A" up
ip -n "$NS_B" link set "$DEV_B" up
ip -n "$NS_B" link set lo up
# lldpd runs lldpcli on its configuration as _lldpd, which must reach the socket directory.
chmod 0755 "$E2E_TMP"

# The node's replay sysfs: one RoCE port whose netdev is B's veth.
SYS="$E2E_TMP/sys"
mkdir -p "$SYS/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs"
echo Ethernet >"$SYS/class/infiniband/mlx5_0/ports/1/link_layer"
echo "4: ACTIVE" >"$SYS/class/infiniband/mlx5_0/ports/1/state"
echo "$DEV_B" >"$SYS/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0"

# start_lldpd NAME NS DEV FLAGS CONFIG: lldpd in NS on DEV with its own socket, config and log.
start_lldpd() {
  local name="$1" ns="$2" dev="$3" flags="$4" config="$5"
  printf '%s' "$config" >"$E2E_TMP/$name.conf"
  # shellcheck disable=SC2086  # FLAGS is a word list
  ip netns exec "$ns" lldpd -d $flags -u "$E2E_TMP/$name.sock" -I "$dev" -O "$E2E_TMP/$name.conf" \
    >"$E2E_TMP/$name.log" 2>&1 &
  register_pid $!
  LLDPD_PID=$!
}
SWITCH_CONFIG="configure system hostname leaf07
configure system description \"leaf07 test switch\"
configure lldp portidsubtype ifname
configure lldp tx-interval 1
"

# --- 1. through lldpd -----------------------------------------------------------------------
start_lldpd switch "$NS_A" "$DEV_A" "" "$SWITCH_CONFIG"
switch_pid=$LLDPD_PID
start_lldpd node "$NS_B" "$DEV_B" "-r" "configure lldp tx-interval 1
"
node_pid=$LLDPD_PID
E2E_WRAP=(ip netns exec "$NS_B")
start_agent --path.sysfs="$SYS" --collector.peer.lldp=lldpd \
  --collector.peer.lldpd-socket="$E2E_TMP/node.sock" --collector.peer.interval=1s
series="fabric_port_peer_info{device=\"mlx5_0\",port=\"1\",netdev=\"$DEV_B\",peer_name=\"leaf07\",peer_port=\"$DEV_A\","
found=""
for _ in $(seq 1 150); do
  found="$(scrape /metrics | grep -F "$series" || true)"
  [[ -n "$found" ]] && break
  sleep 0.2
done
[[ -n "$found" ]] || fail "no leaf07 neighbour through lldpd in 30 s; metrics:
$(scrape /metrics | grep -E 'fabric_port_peer|collector="peer"'); agent log:
$(tail -n 20 "$AGENT_LOG"); lldpd:
$(tail -n 5 "$E2E_TMP/node.log")"
[[ "$found" == *'source="lldpd"'* ]] || fail "the neighbour did not come from lldpd: $found"
ok "through lldpd: ${found%% *}"
stop_agent
kill "$node_pid" "$switch_pid" 2>/dev/null || true
wait "$node_pid" "$switch_pid" 2>/dev/null || true

# --- 2. the passive listener, lldpd sending only ---------------------------------------------
start_lldpd switch2 "$NS_A" "$DEV_A" "" "${SWITCH_CONFIG}configure lldp status tx-only
"
start_agent --path.sysfs="$SYS" --collector.peer.lldp=listen --collector.peer.interval=1s
found=""
for _ in $(seq 1 150); do
  found="$(scrape /metrics | grep -F "$series" || true)"
  [[ -n "$found" ]] && break
  sleep 0.2
done
[[ -n "$found" ]] || fail "no leaf07 neighbour through the passive listener in 30 s; metrics:
$(scrape /metrics | grep -E 'fabric_port_peer|collector="peer"'); agent log:
$(tail -n 20 "$AGENT_LOG")"
[[ "$found" == *'source="lldp"'* ]] || fail "the neighbour did not come from the listener: $found"
ok "passive listener, lldpd sending only: ${found%% *}"
stop_agent
finish
