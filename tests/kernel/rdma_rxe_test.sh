#!/usr/bin/env bash
# The agent against the real kernel RDMA stack: soft-RoCE (rdma_rxe) devices on veths, with no
# replay flag (docs/kernel-guest.md). Runs inside the guest that tests/kernel/guest.sh boots, or
# directly on any host, as root, whose kernel has rdma_rxe (the device machines).
#
#   rxe0 on veth0 <-> veth1 with rxe1;  rxe2 on veth2 <-> veth3 (no RDMA device)
#
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/kernel/rdma_rxe_test.sh <fabricwatch binary>
# Each check is one line of $GUEST_RESULTS/checks.tsv when GUEST_RESULTS is set.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"
e2e_init rdma_rxe_test "$@"

# ------------------------------------------------------------------ checks recorded for the host
# shellcheck source-path=SCRIPTDIR source=guest_checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/guest_checks.sh"

((EUID == 0)) || skip "needs root (modprobe, veth, rdma link add); running as uid $EUID"
for tool in ip rdma ibv_devinfo ib_write_bw python3; do
  command -v "$tool" >/dev/null || skip "$tool not installed (iproute2, ibverbs-utils, perftest)"
done
for m in veth rdma_rxe ib_uverbs; do
  modprobe "$m" 2>/dev/null || skip "this kernel has no $m module ($(uname -r))"
done
# On a real host nothing of the host's may be touched: every name, address and rule table the
# test uses must be free, and everything it changes is undone by the cleanup trap.
for n in veth0 veth1 veth2 veth3; do
  ip link show "$n" >/dev/null 2>&1 && skip "a netdev $n exists already: not touching this host"
done
for d in rxe0 rxe1 rxe2; do
  [[ -e /sys/class/infiniband/$d ]] && skip "an RDMA device $d exists already: not touching this host"
done
ip -4 addr | grep -q ' 10\.77\.' && skip "10.77.0.0/16 is in use on this host"
[[ -z "$(ip rule show pref 10)$(ip route show table 77)$(ip route show table 78)" ]] ||
  skip "routing rule preference 10 or table 77/78 is in use on this host"

# ------------------------------------------------------------------ the fabric
ip link set lo up
on_cleanup "ip link del veth0; ip link del veth2"
ip link add veth0 type veth peer name veth1
ip link add veth2 type veth peer name veth3
for n in 0 1 2 3; do ip link set "veth$n" mtu 9000 up; done
ip addr add 10.77.0.1/24 dev veth0
ip addr add 10.77.0.2/24 dev veth1
ip addr add 10.77.1.1/24 dev veth2
on_cleanup "rdma link delete rxe0; rdma link delete rxe1; rdma link delete rxe2"
rdma link add rxe0 type rxe netdev veth0
rdma link add rxe1 type rxe netdev veth1
rdma link add rxe2 type rxe netdev veth2
ok "rxe0, rxe1, rxe2 on veth0, veth1, veth2 ($(uname -r))"

PORT=/sys/class/infiniband/rxe0/ports/1
port_state() { cut -d: -f1 "/sys/class/infiniband/$1/ports/1/state"; }
wait_until 10 bash -c "[[ \$(cut -d: -f1 $PORT/state) == 4 ]]" || fail "rxe0 port 1 never ACTIVE: $(cat $PORT/state)"

# ------------------------------------------------------------------ the agent, no replay flag
STATE="$E2E_TMP/state.json"
# Default flap thresholds (5 downs in 10 s is hard flapping, critical); the slow window and the
# penalty are short so that the clearing is seen within the test.
start_agent --metrics.all --state.file="$STATE" --collector.rdma.mtu-interval=1s \
  --detector.config_drift.hold-for=0s --collector.rdma.interval=500ms --detector.link_flap.half-life=2s \
  --detector.link_flap.max-suppress=6s --detector.link_flap.slow-window=30s
wait_for_metric /metrics 'fabric_rdma_port_state{device="rxe2",port="1"}' 20 ||
  fail "no fabric_rdma_port_state for rxe2 within 20 s; log: $(tail -20 "$AGENT_LOG")"

# load: scrapes /metrics into M (text) and V (series -> value): one pass, no process per lookup
# (under an emulated CPU every fork costs tens of milliseconds).
declare -A V
load() {
  M="$(scrape /metrics)"
  V=()
  local series v
  while read -r series v _; do [[ "$series" == \#* || -z "$series" ]] || V["$series"]="$v"; done <<<"$M"
}
# value SERIES: the sample's value in the last load, or "absent"
value() { printf '%s' "${V[$1]:-absent}"; }
same() { # NAME WANT SERIES
  local got="${V[$3]:-absent}"
  [[ "$got" == "$2" ]] && return 0
  fail_later "$1: $3 is $got, the kernel shows $2"; return 1
}
# total NAME LABEL_FILTER: the sum of the samples of NAME whose series contains LABEL_FILTER, in V
total() {
  local k t=0
  for k in "${!V[@]}"; do
    [[ ($k == "$1" || $k == "$1{"*) && $k == *"$2"* ]] && t=$((t + ${V[$k]%.*}))
  done
  echo "$t"
}
gid_index() { # DEVICE IPV4: the index of the IPv4-mapped GID of DEVICE's port 1
  local want; want="$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${2//./ })"
  grep -l -x "$want" /sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null | head -1 | xargs -r basename
}
stat_show() { # DEVICE COUNTER: the value `rdma statistic show` prints
  rdma statistic show link "$1/1" | tr ' ' '\n' | awk -v c="$2" 'prev == c {print; exit} {prev = $0}'
}

sleep 1
load
save metrics-first.txt "$M"

check rdma.port_attributes
bad=0
for dev in rxe0 rxe1 rxe2; do
  p="/sys/class/infiniband/$dev/ports/1"
  L="device=\"$dev\",port=\"1\""
  same "$dev state" "$(cut -d: -f1 "$p/state")" "fabric_rdma_port_state{$L}" || bad=1
  same "$dev phys_state" "$(cut -d: -f1 "$p/phys_state")" "fabric_rdma_port_phys_state{$L}" || bad=1
  # rate: "10 Gb/sec (1X QDR)" and the like; exported in bytes per second.
  gbps="$(awk '{print $1}' "$p/rate")"
  same "$dev rate" "$(awk -v g="$gbps" 'BEGIN {printf "%d", g * 125000000}')" \
    "fabric_rdma_port_rate_bytes_per_second{$L}" || bad=1
  # A RoCE port has no LID (its lid file reads 0): the family is for InfiniBand ports only.
  [[ "$(value "fabric_rdma_port_lid{$L}")" == absent ]] ||
    { fail_later "$dev: a lid is exported for an Ethernet port"; bad=1; }
  grep -q "^fabric_rdma_port_info{.*$L.*link_layer=\"Ethernet\"" <<<"$M" ||
    grep -q "^fabric_rdma_port_info{.*link_layer=\"Ethernet\".*$L" <<<"$M" ||
    { fail_later "$dev: no fabric_rdma_port_info with link_layer Ethernet: $(grep "^fabric_rdma_port_info.*$dev" <<<"$M")"; bad=1; }
done
grep -q "^fabric_rdma_port_info{.*device=\"rxe0\".*netdev=\"veth0\"" <<<"$M" ||
  { fail_later "rxe0 port 1 is not joined to veth0: $(grep '^fabric_rdma_port_info.*rxe0' <<<"$M")"; bad=1; }
((bad == 0)) && ok "state, phys_state, rate ($(cat $PORT/rate)), link_layer Ethernet and the netdev join of 3 ports equal sysfs"

# hw_series DEVICE NAME: sets HW to the series a port hw counter is exported as: its curated
# family where the vendor table maps the name (collectors/rdma/rdma_hw_counters.cc), else
# hw_stat_total{counter}. (No subshell: under an emulated CPU each fork is slow.)
hw_series() {
  local L="device=\"$1\",port=\"1\""
  case "$2" in
    duplicate_request) HW="fabric_rdma_port_duplicate_requests_total{$L}" ;;
    *) HW="fabric_rdma_port_hw_stat_total{$L,counter=\"$2\"}" ;;
  esac
}
check rdma.hw_counters
bad=0 n=0
for dev in rxe0 rxe1 rxe2; do
  for f in /sys/class/infiniband/$dev/ports/1/hw_counters/*; do
    name="$(basename "$f")"
    [[ "$name" == lifespan ]] && continue
    n=$((n + 1))
    read -r want <"$f"
    hw_series "$dev" "$name"
    same "$dev $name" "$want" "$HW" || bad=1
  done
done
((bad == 0)) && ok "$n hw counters equal their files"

check rdma.no_errors
errs="$(total fabricwatch_collector_errors_total 'collector="rdma"')"
[[ "$errs" == 0 ]] && ok "fabricwatch_collector_errors_total{collector=rdma} 0" ||
  fail_later "rdma collector errors: $(grep '^fabricwatch_collector_errors_total{collector="rdma"' <<<"$M")"
[[ ! -d "$PORT/counters" ]] || fail_later "rxe0 has a counters/ directory now: this test assumed none"
if grep -iE 'warn|error' "$AGENT_LOG" | grep -E 'rxe|infiniband|counters' >/dev/null; then
  fail_later "the log warns about the rxe devices: $(grep -iE 'warn|error' "$AGENT_LOG" | grep -E 'rxe|infiniband|counters' | head -5)"
else
  ok "no counters/ directory (rxe has no PMA) and not one warning about it"
fi

# ------------------------------------------------------------------ real RDMA traffic
check rdma.traffic
# rxe0 and rxe1 share one network stack: without help, a packet from 10.77.0.1 to 10.77.0.2 is
# local and goes through lo, where no rxe device listens. A rule for locally generated packets
# between the two addresses sends them out of the veth instead, and accept_local lets the other
# end take a packet whose source is one of its own addresses.
for c in all default veth0 veth1; do
  for k in rp_filter accept_local; do
    on_cleanup "sysctl -qw net.ipv4.conf.$c.$k=$(sysctl -n "net.ipv4.conf.$c.$k")"
  done
  sysctl -qw "net.ipv4.conf.$c.rp_filter=0" "net.ipv4.conf.$c.accept_local=1"
done
on_cleanup "ip rule add pref 0 lookup local; ip rule del pref 100 lookup local"
ip rule add pref 100 lookup local && ip rule del pref 0 lookup local
on_cleanup "ip rule del pref 10 lookup 77; ip rule del pref 10 lookup 78"
ip rule add pref 10 iif lo from 10.77.0.1 to 10.77.0.2 lookup 77
ip rule add pref 10 iif lo from 10.77.0.2 to 10.77.0.1 lookup 78
ip route add 10.77.0.2 dev veth0 src 10.77.0.1 table 77
ip route add 10.77.0.1 dev veth1 src 10.77.0.2 table 78
ip neigh replace 10.77.0.2 lladdr "$(cat /sys/class/net/veth1/address)" dev veth0 nud permanent
ip neigh replace 10.77.0.1 lladdr "$(cat /sys/class/net/veth0/address)" dev veth1 nud permanent
g0="$(gid_index rxe0 10.77.0.1)" g1="$(gid_index rxe1 10.77.0.2)"
[[ -n "$g0" && -n "$g1" ]] || fail "no IPv4 GID on rxe0/rxe1: $(cat /sys/class/infiniband/rxe{0,1}/ports/1/gids/{0,1,2})"
MTU_BYTES=4096 SIZE=65536 ITERS=400
tx0="$(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts)"
rx1="$(cat /sys/class/infiniband/rxe1/ports/1/hw_counters/rcvd_pkts)"
veth_tx0="$(cat /sys/class/net/veth0/statistics/tx_bytes)"
ib_write_bw -d rxe1 -x "$g1" -s "$SIZE" -n "$ITERS" -F -p 18515 >"$E2E_TMP/bw-server.txt" 2>&1 &
server=$!
register_pid "$server"
wait_until 20 bash -c "ss -Hltn 'sport = :18515' | grep -q ." ||
  fail "the ib_write_bw server on rxe1 never listened: $(cat "$E2E_TMP/bw-server.txt")"
timeout 90 ib_write_bw -d rxe0 -x "$g0" -s "$SIZE" -n "$ITERS" -F -p 18515 10.77.0.2 \
  >"$E2E_TMP/bw-client.txt" 2>&1 || fail "ib_write_bw rxe0 -> rxe1 failed: $(tail -15 "$E2E_TMP/bw-client.txt"); server: $(cat "$E2E_TMP/bw-server.txt")"
wait "$server" || true
save ib_write_bw.txt "$(cat "$E2E_TMP/bw-client.txt")"
# perftest's result line: "#bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]"
read -r bytes iters bw_peak bw_avg _ < <(awk -v s="$SIZE" '$1 == s && NF >= 4 {print; exit}' "$E2E_TMP/bw-client.txt")
[[ "${iters:-}" == "$ITERS" ]] || fail "no result line in ib_write_bw's output: $(cat "$E2E_TMP/bw-client.txt")"
sleep 1.5
load
d_tx0=$(($(value 'fabric_rdma_port_hw_stat_total{device="rxe0",port="1",counter="sent_pkts"}') - tx0))
d_rx1=$(($(value 'fabric_rdma_port_hw_stat_total{device="rxe1",port="1",counter="rcvd_pkts"}') - rx1))
# Every RDMA write of SIZE bytes is SIZE/MTU packets on the wire, never fewer; perftest adds a few
# of its own (warm-up, the final handshake) and a slow emulated CPU makes rxe retransmit some
# (seen: 0.5 % to 8 %), so up to a fifth more.
want=$((ITERS * SIZE / MTU_BYTES)) most=$((ITERS * SIZE / MTU_BYTES * 6 / 5))
if ((d_tx0 >= want && d_tx0 <= most && d_rx1 >= want && d_rx1 <= most)); then
  ok "ib_write_bw rxe0 -> rxe1: $iters writes of $bytes B (${bw_avg} MB/s); the agent's sent_pkts of rxe0 moved $d_tx0 and rcvd_pkts of rxe1 $d_rx1, for $want data packets of $MTU_BYTES B"
else
  fail_later "after $iters writes of $bytes B the agent's rxe0 sent_pkts moved $d_tx0 and rxe1 rcvd_pkts $d_rx1, want $want to $most"
fi
d_veth=$(($(value 'fabric_netdev_transmit_bytes_total{netdev="veth0"}') - veth_tx0))
((d_veth >= ITERS * SIZE)) && ok "veth0 carried $d_veth B for $((ITERS * SIZE)) B of RDMA payload" ||
  fail_later "the agent's veth0 transmit bytes moved $d_veth, less than the $((ITERS * SIZE)) B written"
bad=0
for dev in rxe0 rxe1; do
  for name in sent_pkts rcvd_pkts rdma_sends rdma_recvs ack_deferred; do
    hw_series "$dev" "$name"
    same "$dev $name" "$(stat_show "$dev" "$name")" "$HW" || bad=1
  done
done
((bad == 0)) && ok "after the traffic the agent's counters equal rdma statistic show (when it is quiet)"

# ------------------------------------------------------------------ netlink against sysfs
check rdma.netlink_hw_counters
bad=0
for dev in rxe0 rxe1 rxe2; do
  [[ "$(value "fabricwatch_rdma_hw_stats_source{device=\"$dev\",port=\"1\",source=\"netlink\"}")" == 1 ]] ||
    { fail_later "$dev port 1 does not read its hw counters over RDMA netlink: $(grep "^fabricwatch_rdma_hw_stats_source{device=\"$dev\"" <<<"$M")"; bad=1; }
done
((bad == 0)) && ok "every rxe port reads its hw counters with RDMA_NLDEV_CMD_STAT_GET"
# Device reads per sample (collectors/core/device_reads.h): with netlink, one request per port and
# no hw_counters file; compared below with the files the sysfs source reads.
reads='fabricwatch_collector_device_reads{collector="rdma",kind='
nl_requests="$(value "${reads}\"hw_counter_netlink_request\"}")"
nl_files="$(value "${reads}\"hw_counter_file\"}")"
# A second agent reading the files: the counters are quiet now, so both must show the same.
declare -A NL=()
for k in "${!V[@]}"; do [[ $k == fabric_rdma_port_hw_stat_total* || $k == fabric_rdma_port_duplicate_requests_total* ]] && NL[$k]="${V[$k]}"; done
main_port="$AGENT_PORT" main_log="$AGENT_LOG" main_pid="$AGENT_PID"
ONLY_RDMA=(--no-collector.netdev --no-collector.ethtool --no-collector.optics --no-collector.topology
  --no-collector.kmsg --no-collector.peer --no-collector.jobs)
start_agent --metrics.all "${ONLY_RDMA[@]}" --collector.rdma.hw-counters-source=sysfs
sysfs_pid="$AGENT_PID"
wait_for_metric /metrics 'fabricwatch_rdma_hw_stats_source{device="rxe0",port="1",source="sysfs"}' 20 1 ||
  fail_later "the agent with hw-counters-source=sysfs does not say it reads sysfs"
load
bad=0
for k in "${!NL[@]}"; do
  [[ "${V[$k]:-absent}" == "${NL[$k]}" ]] || { fail_later "$k: netlink ${NL[$k]}, sysfs ${V[$k]:-absent}"; bad=1; }
done
((${#NL[@]} >= 45)) || { fail_later "only ${#NL[@]} hw counter series in the netlink agent's answer"; bad=1; }
((bad == 0)) && ok "${#NL[@]} hw counter series read over netlink equal the same read from the files"
hw_ports=0 hw_files=0
for dir in /sys/class/infiniband/*/ports/*/hw_counters; do
  hw_ports=$((hw_ports + 1))
  for f in "$dir"/*; do [[ "${f##*/}" == lifespan ]] || hw_files=$((hw_files + 1)); done
done
fs_files="$(value "${reads}\"hw_counter_file\"}")"
fs_requests="$(value "${reads}\"hw_counter_netlink_request\"}")"
if [[ "$nl_requests" == "$hw_ports" && ("$nl_files" == absent || "$nl_files" == 0) && "$fs_files" == "$hw_files" &&
  "$fs_requests" == absent ]]; then
  ok "device reads per sample: $nl_requests RDMA netlink requests (one per port) for the $fs_files hw_counters file reads of the sysfs source ($hw_ports ports, $hw_files files)"
else
  fail_later "device reads per sample: netlink source $nl_requests requests and $nl_files file reads, sysfs source $fs_files file reads and $fs_requests requests; want $hw_ports requests or $hw_files file reads"
fi
stop_agent "$sysfs_pid"
# Syscalls per sample of the rdma collector alone, one agent per source, 8 samples at 1 s.
syscalls_per_sample() { # SOURCE
  start_agent --metrics.all "${ONLY_RDMA[@]}" --collector.rdma.hw-counters-source="$1" \
    --collector.rdma.interval=1s
  local pid="$AGENT_PID" out="$E2E_TMP/strace-$1.txt"
  sleep 2
  timeout -s INT 8 strace -c -f -p "$pid" -o "$out" >/dev/null 2>&1 || true
  stop_agent "$pid"
  awk '$NF ~ /^(pread64|read|openat|close|lseek|sendto|sendmsg|recvfrom|recvmsg)$/ {n += $4} END {printf "%.0f", n / 8}' "$out"
}
if command -v strace >/dev/null; then
  nl_calls="$(syscalls_per_sample netlink)"
  fs_calls="$(syscalls_per_sample sysfs)"
  save strace-netlink.txt "$(cat "$E2E_TMP/strace-netlink.txt")"
  save strace-sysfs.txt "$(cat "$E2E_TMP/strace-sysfs.txt")"
  ((nl_calls < fs_calls)) &&
    ok "file and socket syscalls per sample, 3 rxe ports with 15 hw counters each: netlink $nl_calls, sysfs $fs_calls" ||
    fail_later "netlink takes $nl_calls file and socket syscalls per sample, sysfs $fs_calls"
else
  printf 'skip - %s: no strace, syscalls per sample not counted\n' "$CHECK"
  record SKIP "$CHECK" "no strace: syscalls per sample not counted"
fi
AGENT_PORT="$main_port" AGENT_LOG="$main_log" AGENT_PID="$main_pid"
load

# ------------------------------------------------------------------ a real flap sequence
check verbs.port_events
before_err="$(value 'fabric_rdma_port_events_total{device="rxe0",port="1",event="port_err"}')"
before_act="$(value 'fabric_rdma_port_events_total{device="rxe0",port="1",event="port_active"}')"
FLAPS=6
for _ in $(seq 1 $FLAPS); do
  ip link set veth1 down; sleep 0.4
  ip link set veth1 up; sleep 0.6
done
wait_until 10 bash -c "[[ \$(cut -d: -f1 $PORT/state) == 4 ]]" || true
sleep 1.5
load
save metrics-flaps.txt "$M"
d_err=$(($(value 'fabric_rdma_port_events_total{device="rxe0",port="1",event="port_err"}') - before_err))
d_act=$(($(value 'fabric_rdma_port_events_total{device="rxe0",port="1",event="port_active"}') - before_act))
((d_err == FLAPS && d_act == FLAPS)) && ok "rxe0 port 1: $d_err port_err and $d_act port_active for $FLAPS flaps of its peer" ||
  fail_later "rxe0 port 1 counted $d_err port_err and $d_act port_active for $FLAPS flaps"
e1_err="$(value 'fabric_rdma_port_events_total{device="rxe1",port="1",event="port_err"}')"
e1_act="$(value 'fabric_rdma_port_events_total{device="rxe1",port="1",event="port_active"}')"
e1_rep="$(value 'fabric_rdma_port_events_repeated_total{device="rxe1",port="1",event="port_active"}')"
((e1_err == FLAPS && e1_act == FLAPS && e1_rep == FLAPS)) && ok "rxe1 port 1 (its own netdev set down and up): $e1_err port_err, $e1_act port_active; the kernel's second port_active of each admin-up (NETDEV_UP, then NETDEV_CHANGE) counted apart as a repeat: $e1_rep" ||
  fail_later "rxe1 port 1 (its netdev set down and up $FLAPS times) counted $e1_err port_err, $e1_act port_active and $e1_rep repeats"
kernel_downed="$(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/link_downed)"
hw_series rxe0 link_downed
same "rxe0 link_downed" "$kernel_downed" "$HW" &&
  ok "link_downed of rxe0 is $kernel_downed in the kernel and in the agent"

check link_flap.real_flaps
A="$(scrape /api/v1/anomalies)"
save anomalies-flaps.json "$A"
flap="$(json_get "$A" '[a for a in d["anomalies"] if a["detector"] == "link_flap" and a["entity"].get("device") == "rxe0"]')"
if [[ "$flap" == "[]" ]]; then
  fail_later "no link_flap finding names rxe0: $(json_get "$A" '[(a["detector"], a["entity"]) for a in d["anomalies"]]')"
else
  ent="$(json_get "$A" '[a["entity"] for a in d["anomalies"] if a["detector"] == "link_flap" and a["entity"].get("device") == "rxe0"][0]')"
  [[ "$ent" == *"'port': '1'"* && "$ent" == *"'netdev': 'veth0'"* ]] &&
    ok "link_flap names rxe0 port 1 and veth0: $ent" || fail_later "the link_flap finding names $ent"
  reason="$(json_get "$A" '[a.get("reason", "") for a in d["anomalies"] if a["detector"] == "link_flap" and a["entity"].get("device") == "rxe0"][0]')"
  # The count and every source that saw the downs, each exactly once per down.
  # (The hard window of 10 s may hold 5 or all 6 of the downs, as the emulated CPU allows.)
  n=0
  [[ "$reason" =~ ([0-9]+)\ link-down\ events ]] && n="${BASH_REMATCH[1]}"
  if ((n >= 5 && n <= FLAPS)) && [[ "$reason" == *"netlink carrier events $n/$n"* &&
        "$reason" == *"verbs port_err events $n/$n"* ]]; then
    ok "its reason: $reason"
  else
    fail_later "its reason does not give 5 to $FLAPS downs, each seen once by netlink carrier and verbs port_err events: '$reason'"
  fi
fi
if grep -q 'anomaly raised detector=link_flap severity=critical device=rxe0 port=1 netdev=veth0' "$AGENT_LOG"; then
  ok "it was critical (hard flapping) on the way"
else
  fail_later "no critical link_flap was raised for rxe0: $(grep 'detector=link_flap' "$AGENT_LOG" | head -3)"
fi
check link_flap.clears
# No link_flap left in an answer of the agent (an agent that stopped answering is no clearing).
flap_gone() { local a; a="$(curl -fsS --max-time 5 "$(url /api/v1/anomalies)")" || return 1; [[ "$a" != *'"detector":"link_flap"'* ]]; }
if wait_until 45 flap_gone; then
  ok "link_flap cleared by itself after the quiet period"
else
  fail_later "link_flap still active 45 s after the last flap: $(scrape /api/v1/anomalies)"
fi

# ------------------------------------------------------------------ the InfiniBand MTU
check rdma.ib_mtu
ibv_mtu() { ibv_devinfo -d "$1" | awk -v k="$2:" '$1 == k {print $2; exit}'; }
bad=0
for dev in rxe0 rxe1 rxe2; do
  same "$dev active_mtu" "$(ibv_mtu "$dev" active_mtu)" "fabric_rdma_port_active_mtu_bytes{device=\"$dev\",port=\"1\"}" || bad=1
  same "$dev max_mtu" "$(ibv_mtu "$dev" max_mtu)" "fabric_rdma_port_max_mtu_bytes{device=\"$dev\",port=\"1\"}" || bad=1
done
((bad == 0)) && ok "active_mtu and max_mtu of 3 ports equal ibv_devinfo (4096 on veths at 9000)"
ip link set veth2 mtu 1500
drift() { curl -s "$(url /api/v1/anomalies)" | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if any(a["detector"] == "config_drift" and a["entity"].get("setting") == "ib_mtu"
                  and a["entity"].get("device") == "rxe2" for a in d["anomalies"]) else 1)'; }
if wait_until 30 drift; then
  A="$(scrape /api/v1/anomalies)"
  save anomalies-mtu.json "$A"
  load
  ok "veth2 at 1500: rxe2 active_mtu $(value 'fabric_rdma_port_active_mtu_bytes{device="rxe2",port="1"}') (ibv_devinfo $(ibv_mtu rxe2 active_mtu)), and config_drift says: $(json_get "$A" '[a["reason"] for a in d["anomalies"] if a["entity"].get("setting") == "ib_mtu"][0]')"
else
  fail_later "no config_drift ib_mtu finding for rxe2 within 30 s of veth2 at MTU 1500: $(scrape /api/v1/anomalies)"
fi
ip link set veth2 mtu 9000

# ------------------------------------------------------------------ the kernel's own log
check kmsg.real_log
load
records="$(total fabric_kernel_log_records_total '')"
dmesg | grep -E 'rxe|infiniband' | tail -5 >"$E2E_TMP/dmesg.txt" || true
A="$(scrape /api/v1/anomalies)"
driver="$(json_get "$A" 'len([a for a in d["anomalies"] if a["detector"] == "driver_fault"])')"
if ((records > 0)) && [[ "$driver" == 0 ]]; then
  ok "the agent read $records records of the real /dev/kmsg, rdma_rxe's own among them ($(wc -l <"$E2E_TMP/dmesg.txt") such lines), and raised nothing for them"
else
  fail_later "kernel log: $records records read, $driver driver_fault findings: $A"
fi

# ------------------------------------------------------------------ hot unplug and re-add
check rdma.hot_unplug
log_lines_before="$(wc -l <"$AGENT_LOG")"
# rxe cannot detach a user context: a context the agent kept open would hold the delete.
t0=$(now_ms)
timeout 30 rdma link delete rxe1 || fail "rdma link delete rxe1 did not return within 30 s (a verbs context held open?)"
ok "rdma link delete rxe1 returned in $(($(now_ms) - t0)) ms while the agent runs"
gone() { local m; m="$(curl -fsS --max-time 5 "$(url /metrics)")" || return 1; [[ "$m" != *'device="rxe1"'* ]]; }
if wait_until 40 gone; then
  ok "rdma link delete rxe1: every series of rxe1 left /metrics"
else
  fail_later "rxe1 still in /metrics 40 s after rdma link delete: $(scrape /metrics | grep 'device="rxe1"' | head -5)"
fi
# Findings are logged at warning; anything else at warning or worse after the unplug is noise.
noise="$(tail -n +"$((log_lines_before + 1))" "$AGENT_LOG" | grep -E 'level=(warn|error)' | grep -v 'logger=anomalies' || true)"
[[ -z "$noise" ]] && ok "not one warning in the agent's log about the unplug" ||
  fail_later "warnings after the unplug: $(head -5 <<<"$noise")"
A="$(scrape /api/v1/anomalies)"
stale="$(json_get "$A" '[a["detector"] for a in d["anomalies"] if a["entity"].get("device") == "rxe1"]')"
[[ "$stale" == "[]" ]] && ok "no finding names the deleted rxe1" || fail_later "findings name the deleted rxe1: $stale"
rdma link add rxe1 type rxe netdev veth1
wait_for_metric /metrics 'fabric_rdma_port_state{device="rxe1",port="1"}' 40 4 &&
  ok "rdma link add rxe1: back in /metrics, ACTIVE" || fail_later "rxe1 did not come back within 40 s"

echo "---- agent log"; cat "$AGENT_LOG"
finish
