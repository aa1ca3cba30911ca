#!/usr/bin/env bash
# The fabricwatch benchmark: one command, figures as ratios against node_exporter.
#
#   tools/bench/run.sh                 full run on the simulator's hgx-ib, hgx-roce and stress-64
#                                      presets (about 8 minutes); report in build-bench/report/
#   tools/bench/run.sh --smoke         seconds-long run on the small preset (what `make test` runs:
#                                      it checks the benchmark works, it asserts no timing)
#   tools/bench/run.sh --preset NAME   one preset (repeatable)
#   tools/bench/run.sh --bin-dir DIR   use the binaries of an existing build tree instead of
#                                      building build-bench (the smoke test in `make test` does)
#   tools/bench/run.sh --replay NAME=SYSFS[:ETHTOOL]   any replay root, e.g. one captured on a
#                                      real host (repeatable; no simulator involved)
#   tools/bench/run.sh --flood-only    only the kernel log flood (6. below), about 90 s
#   tools/bench/run.sh --no-flood      everything but the kernel log flood
#   tools/bench/run.sh --flood-preset NAME --flood-rate N --flood-seconds S   the flood's
#                                      workload (default hgx-roce, 10000 records/s, 60 s; smoke:
#                                      the smoke preset, 3 s)
#
# What it measures, per preset (see README "Performance" for the method and the figures):
#   1. fabricbench (in-process): CPU, heap allocations and file reads per steady-state sample of
#      each collector, each sample one default interval later on its clock; render time of the
#      whole exposition.
#   2. strace -c on fabricbench: syscalls per sample against file reads per sample (the floor).
#   3. the agent as a user installs it (every default collector and detector, every source the
#      workload has: a simulator root's kernel log, /proc, SMP and LLDP replays too), measured by
#      footprint.sh from /proc over a window (60 s): CPU and wake-ups per thread (the agent names
#      its threads fw-...), RSS, PSS, anonymous memory, threads, shared libraries; the CPU of kmsg,
#      peer and jobs on the idle node; exposition size and series; each detector's evaluation
#      time per round (their own gauge); fabricbench's reads that reach a NIC's driver or
#      firmware per second, by kind (fabricwatch_collector_device_reads).
#   4. wrk with 16 concurrent connections on /metrics: p50/p99 latency.
#   5. Debian's prometheus-node-exporter with --path.sysfs on the same tree and only its
#      infiniband + netclass collectors, against fabricwatch's equivalent collectors (rdma +
#      netdev): CPU per collection and RSS, as ratios, both running in the same window.
#      node_exporter is scraped at 10 Hz and fabricwatch samples at 10 Hz (both cold, as a
#      periodic job runs); node_exporter scraped back to back (warm) is reported beside it.
#      The files each reads per collection (strace for node_exporter, fabricbench for fabricwatch)
#      give the CPU per file read; the comparison runs again on a copy of the tree without the
#      kinds of files only fabricwatch reads (hw_counters, netdev statistics).
#   6. Kernel log flood (issue 23, "Flood safety"): two agents at their default cadence on one
#      simulator root, detectors on, one reading a --path.kmsg file that tools/bench/kmsg_flood.py
#      appends 10,000 ACCESS_REG failure records per second to for 60 s (one mlx5 function with an
#      RDMA device, the ConnectX-7 flood of gpud #1164), the other an empty one: CPU share and RSS
#      of both before, during and after the flood; the kmsg collection's wall time; whether the
#      other collectors keep their cadence (the longest time between successive
#      fabricwatch_collector_last_sample_timestamp_seconds, scraped every 500 ms so that no 1 s
#      snapshot is missed: 1 s when on time); records written against fabric_kernel_events_total,
#      lost and skipped; the driver_fault finding (one for the device, its log lines), the size of
#      /api/v1/anomalies and of the state file. It checks that nothing was lost and that the
#      evidence stayed bounded; it asserts no timing.
# Nothing is downloaded; it needs wrk, strace, jq and prometheus-node-exporter (tools/install-deps.sh
# test installs them).
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BENCH_BUILD_DIR:-$repo/build-bench}"
smoke=0
flood=yes
flood_preset=""
flood_rate=10000
flood_seconds=""
bin_dir=""
presets=()
replays=()
while (($#)); do
  case "$1" in
    --smoke) smoke=1 ;;
    --preset) presets+=("$2"); shift ;;
    --replay) replays+=("$2"); shift ;;
    --build-dir) build="$2"; shift ;;
    --bin-dir) bin_dir="$2"; shift ;;
    --flood-only) flood=only ;;
    --no-flood) flood=no ;;
    --flood-preset) flood_preset="$2"; shift ;;
    --flood-rate) flood_rate="$2"; shift ;;
    --flood-seconds) flood_seconds="$2"; shift ;;
    -h|--help) sed -n '2,52p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
if ((${#presets[@]} == 0 && ${#replays[@]} == 0)); then
  if ((smoke)); then presets=(roce-small); else presets=(hgx-ib hgx-roce stress-64); fi
fi
if ((smoke)); then
  samples=20; renders=20; agent_window=3; wrk_seconds=2; ne_scrapes=10
  flood_window=2; : "${flood_seconds:=3}"; : "${flood_preset:=${presets[0]:-roce-small}}"
else
  samples=300; renders=500; agent_window=60; wrk_seconds=10; ne_scrapes=200
  flood_window=10; : "${flood_seconds:=60}"; : "${flood_preset:=hgx-roce}"
fi
[[ "$flood" != only ]] || { presets=(); replays=(); }

for tool in wrk strace prometheus-node-exporter curl jq python3; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool not found (tools/install-deps.sh test)" >&2; exit 1; }
done

if [[ -n "$bin_dir" ]]; then
  build="$bin_dir"
else
  # Release build of exactly what is measured; a tree configured before is reused.
  if [[ ! -f "$build/CMakeCache.txt" ]]; then
    cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
  fi
  targets=(fabricwatch fabricbench)
  ((${#presets[@]} == 0)) && [[ "$flood" == no ]] || targets+=(fabricsim)
  cmake --build "$build" --target "${targets[@]}" -j "$(nproc)" >/dev/null
fi
agent="$build/exporter/fabricwatch"
bench="$build/tools/bench/fabricbench"
sim="$build/tools/fabricsim/fabricsim"

report="${BENCH_REPORT_DIR:-$build/report}"
mkdir -p "$report"
work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# CPU time of a process in nanoseconds: the sum of its threads' on-CPU time from schedstat
# (/proc/<pid>/stat ticks are 10 ms, too coarse for an agent that uses a few ms a second).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f", s}'; }
rss_kb() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }
# A port below the ephemeral range: one inside it can be the local port of a connection curl or
# wrk just made, and the listener then fails to bind (seen once: "address already in use").
free_port() {
  local p low
  low="$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)"
  ((low > 12000)) || low=32768
  for p in $(shuf -i "10000-$((low - 1))" -n 50); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  echo "run.sh: no free port" >&2; exit 1
}
wait_http() {
  for _ in $(seq 100); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done
  echo "run.sh: $1 did not answer" >&2; return 1
}
stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
# URL COUNT: one scrape every 100 ms (a scrape that takes longer starts the next at once).
paced_scrapes() {
  local next now
  next="${EPOCHREALTIME/./}"
  for _ in $(seq "$2"); do
    curl -s -o /dev/null "$1"
    next=$((next + 100000)); now="${EPOCHREALTIME/./}"
    if ((next > now)); then sleep "$(awk -v d=$((next - now)) 'BEGIN{printf "%.6f", d / 1e6}')"; fi
  done
}

summary="$report/summary.md"
json_all="$report/summary.json"
{
  echo "# fabricwatch benchmark"
  echo
  echo "$(date -u +%FT%TZ), $(nproc) cores, $(uname -r), $("$agent" --version 2>&1 | head -1)"
  echo "node_exporter: $(prometheus-node-exporter --version 2>&1 | head -1)"
  echo
} >"$summary"
echo "{" >"$json_all"
first=1

# compare_with_node_exporter SYSFS REPORT_PREFIX: sets ne_ms, ne_tight_ms, fw_collect_ms,
# fw_scrape_ms, ne_rss, ne_hwm, fw_rss, ne_series, ne_files and fw_files for the tree SYSFS.
compare_with_node_exporter() {
  local sysfs="$1" prefix="$2"
  local ne_port npid fw_port fpid n0 n1 f0 f1 g0 g1 w0 w1
  # node_exporter against fabricwatch's equivalent collectors, same tree, in the same window:
  #    whatever else the machine does then costs both alike. node_exporter is scraped at 10 Hz
  #    while fabricwatch (rdma + netdev only, no detectors: node_exporter has none) samples at
  #    10 Hz, so both run with the caches a periodic job finds (cold); node_exporter scraped back
  #    to back (warm) is reported beside it.
  ne_port="$(free_port)"
  prometheus-node-exporter --path.sysfs="$sysfs" --collector.disable-defaults \
    --collector.infiniband --collector.netclass --web.listen-address="127.0.0.1:$ne_port" \
    2>"$report/$prefix.node_exporter.log" &
  npid=$!; pids+=("$npid")
  fw_port="$(free_port)"
  "$agent" --path.sysfs="$sysfs" --web.listen-address="127.0.0.1:$fw_port" --log.level=warn \
    --no-collector.ethtool --no-collector.optics --no-collector.topology \
    $(for d in $("$agent" --help 2>&1 | grep -o -- '--no-detector\.[a-z_]*' | sort -u); do echo "$d"; done) \
    --collector.rdma.interval=100ms --collector.netdev.interval=100ms 2>/dev/null &
  fpid=$!; pids+=("$fpid")
  wait_http "http://127.0.0.1:$ne_port/metrics"
  wait_http "http://127.0.0.1:$fw_port/metrics"
  for _ in 1 2 3; do curl -s -o /dev/null "http://127.0.0.1:$ne_port/metrics"; done
  sleep 1
  n0="$(cpu_ns "$npid")"; f0="$(cpu_ns "$fpid")"; w0="${EPOCHREALTIME/./}"
  paced_scrapes "http://127.0.0.1:$ne_port/metrics" "$ne_scrapes"
  n1="$(cpu_ns "$npid")"; f1="$(cpu_ns "$fpid")"; w1="${EPOCHREALTIME/./}"
  ne_ms="$(awk -v a="$n0" -v b="$n1" -v n="$ne_scrapes" -v hz=1e9 'BEGIN{printf "%.3f", (b-a)/hz/n*1000}')"
  # Collections of both collectors at 10 Hz in the window (µs of wall time).
  fw_collect_ms="$(awk -v a="$f0" -v b="$f1" -v w=$((w1 - w0)) -v hz=1e9 'BEGIN{printf "%.3f", (b-a)/hz/(w/1e6*10)*1000}')"
  n0="$(cpu_ns "$npid")"
  for _ in $(seq "$ne_scrapes"); do curl -s -o /dev/null "http://127.0.0.1:$ne_port/metrics"; done
  n1="$(cpu_ns "$npid")"
  ne_tight_ms="$(awk -v a="$n0" -v b="$n1" -v n="$ne_scrapes" -v hz=1e9 'BEGIN{printf "%.3f", (b-a)/hz/n*1000}')"
  ne_rss="$(rss_kb "$npid" VmRSS)"; ne_hwm="$(rss_kb "$npid" VmHWM)"
  ne_series="$(curl -s "http://127.0.0.1:$ne_port/metrics" | grep -v '^#' | grep -cE '^node_(infiniband|network)_')"
  # Files node_exporter opens for one scrape (directories left out), from strace.
  strace -f -e trace=openat -o "$work/ne.openat" -p "$npid" 2>/dev/null &
  local spid=$!
  sleep 0.5
  curl -s -o /dev/null "http://127.0.0.1:$ne_port/metrics"
  sleep 0.2
  kill "$spid" 2>/dev/null || true; wait "$spid" 2>/dev/null || true
  ne_files="$(grep -o "\"$sysfs/[^\"]*\", [^)]*) = [0-9]" "$work/ne.openat" | cut -d'"' -f2 |
    while read -r f; do [[ -f "$f" ]] && echo; done | wc -l)"
  stop "$npid"
  # fabricwatch's cost per scrape: the same number of scrapes as node_exporter got (render +
  # HTTP, with the 10 Hz sampling going on).
  g0="$(cpu_ns "$fpid")"
  for _ in $(seq "$ne_scrapes"); do curl -s -o /dev/null "http://127.0.0.1:$fw_port/metrics"; done
  g1="$(cpu_ns "$fpid")"
  fw_scrape_ms="$(awk -v a="$g0" -v b="$g1" -v n="$ne_scrapes" -v hz=1e9 'BEGIN{printf "%.3f", (b-a)/hz/n*1000}')"
  fw_rss="$(rss_kb "$fpid" VmRSS)"
  stop "$fpid"
  # Files fabricwatch's rdma and netdev read per collection (fabricbench counts them).
  "$bench" --path.sysfs "$sysfs" --collectors rdma,netdev --samples 5 --renders 0 \
    --json "$work/files.json" >/dev/null
  fw_files="$(jq '.total.file_reads_per_sample' "$work/files.json")"
  return 0
}

workloads=()
for preset in "${presets[@]}"; do workloads+=("$preset=sim"); done
workloads+=("${replays[@]}")
for workload in "${workloads[@]}"; do
  preset="${workload%%=*}"
  spec="${workload#*=}"
  if [[ "$spec" == sim ]]; then
    root="$work/$preset"
    "$sim" build --preset "$preset" --root "$root" >/dev/null
    sysfs="$root/sys"; ethtool="$root/ethtool"
  else
    sysfs="$(realpath "${spec%%:*}")"; ethtool=""
    [[ "$spec" == *:* ]] && ethtool="$(realpath "${spec#*:}")"
  fi
  echo "== $preset" >&2

  # 1. In-process figures per collector.
  "$bench" --path.sysfs "$sysfs" ${ethtool:+--path.ethtool "$ethtool"} --samples "$samples" \
    --renders "$renders" --json "$report/$preset.fabricbench.json" >"$report/$preset.fabricbench.md"

  # 2. Syscalls per sample of the 1 s counter collectors (netdev, rdma, ethtool), against the
  #    floor: one pread per counter file, plus one read of the statistics per netdev (GSTATS from
  #    the kernel; a replay directory opens and reads a file instead). Two runs that differ only in
  #    the number of samples, so discovery and process start cancel out.
  counters=netdev,rdma,ethtool
  "$bench" --path.sysfs "$sysfs" ${ethtool:+--path.ethtool "$ethtool"} --collectors "$counters" \
    --samples 20 --renders 0 --json "$work/counters.json" >/dev/null
  floor="$(jq '.total.file_reads_per_sample' "$work/counters.json")"
  netdevs_with_stats="$(jq '.collectors.ethtool.opens_per_sample // 0' "$work/counters.json")"
  floor="$(awk -v a="$floor" -v b="${netdevs_with_stats:-0}" 'BEGIN{printf "%.1f", a + b}')"
  syscalls_for() {
    strace -f -c -o "$work/strace.$1" "$bench" --path.sysfs "$sysfs" ${ethtool:+--path.ethtool "$ethtool"} \
      --collectors "$counters" --samples "$1" --renders 0 >/dev/null
    # fabricbench's own CLOCK_THREAD_CPUTIME_ID reads (not in the vDSO) are not the agent's cost.
    awk '$NF == "total" {t = $(NF-2)} $NF == "clock_gettime" {c = $4} END {print t - c}' \
      "$work/strace.$1"
  }
  low=5; high=$((5 + samples))
  s_low="$(syscalls_for $low)"; s_high="$(syscalls_for $high)"
  syscalls_per_sample="$(awk -v a="$s_low" -v b="$s_high" -v n="$samples" 'BEGIN{printf "%.1f", (b-a)/n}')"
  syscall_ratio="$(awk -v s="$syscalls_per_sample" -v f="$floor" 'BEGIN{ if (f > 0) printf "%.2f", s/f; else print "n/a" }')"
  cp "$work/strace.$high" "$report/$preset.strace.txt"

  # 3. The agent as a user installs it: every default collector and detector at its default
  #    cadence, on every source the workload has (a simulator root also holds a kernel log, /proc,
  #    SMP and LLDP replays, so kmsg, jobs and peer do their work as on a node), with a state
  #    file. footprint.sh measures it from /proc over the window: CPU and wake-ups per thread,
  #    RSS, PSS, anonymous memory, threads, libraries.
  agent_paths=(--path.sysfs="$sysfs")
  [[ -n "$ethtool" ]] && agent_paths+=(--path.ethtool="$ethtool")
  if [[ "$spec" == sim ]]; then
    for source in kmsg:kmsg procfs:proc smp:smp lldp:lldp; do
      [[ -e "$root/${source#*:}" ]] && agent_paths+=("--path.${source%%:*}=$root/${source#*:}")
    done
  fi
  port="$(free_port)"
  "$agent" "${agent_paths[@]}" --state.file="$work/state.$preset.json" \
    --web.listen-address="127.0.0.1:$port" --log.level=warn 2>"$report/$preset.agent.log" &
  apid=$!; pids+=("$apid")
  wait_http "http://127.0.0.1:$port/metrics"
  sleep 3  # discovery and the first samples of every collector
  bash "$repo/tools/bench/footprint.sh" "$apid" "$agent_window" "$report/$preset.footprint.json" \
    "$report/$preset.threads.md"
  agent_core_pct="$(jq '.cpu_percent' "$report/$preset.footprint.json")"
  wakeups="$(jq '.wakeups_per_second' "$report/$preset.footprint.json")"
  agent_pss="$(jq '.pss_kib' "$report/$preset.footprint.json")"
  agent_anon="$(jq '.anon_kib' "$report/$preset.footprint.json")"
  agent_threads="$(jq '.threads' "$report/$preset.footprint.json")"
  agent_libraries="$(jq '.libraries' "$report/$preset.footprint.json")"
  # The collectors added after node_exporter's set (kmsg, peer, jobs) on this idle node: their
  # threads' CPU (the agent names a collector's thread fw-c-<collector>; 0 for a build that did
  # not name them).
  new_collectors_pct="$(jq '[.per_thread | to_entries[] | select(.key == "fw-c-kmsg" or .key == "fw-c-peer" or .key == "fw-c-jobs") | .value.cpu_percent] | add // 0' "$report/$preset.footprint.json")"
  # Detector cost: the engine's own gauge of each detector's last evaluation, summed over the
  # detectors, read 10 times half a second apart (after the CPU window: scrapes cost CPU too).
  for _ in $(seq 10); do
    curl -s "http://127.0.0.1:$port/metrics" |
      awk '/^fabricwatch_detector_evaluation_duration_seconds\{/ {
        d = $1; sub(/.*detector="/, "", d); sub(/".*/, "", d); print d, $NF }'
    sleep 0.5
  done >"$work/detectors.$preset"
  # Per detector: the mean of the 10 readings (µs per round); all of them: the mean round.
  awk '{s[$1] += $2; n[$1]++} END {for (d in s) printf "%s %.1f\n", d, s[d] / n[d] * 1e6}' \
    "$work/detectors.$preset" | sort -k2,2gr >"$report/$preset.detectors.txt"
  detector_eval_us="$(awk '{s += $2} END {printf "%.1f", s}' "$report/$preset.detectors.txt")"
  detectors_evaluated="$(curl -s "http://127.0.0.1:$port/metrics" | grep -c '^fabricwatch_detector_evaluation_duration_seconds{' || true)"
  exposition_bytes="$(curl -s "http://127.0.0.1:$port/metrics" | wc -c)"
  exposition_gzip="$(curl -s -H 'Accept-Encoding: gzip' "http://127.0.0.1:$port/metrics" | wc -c)"
  series="$(curl -s "http://127.0.0.1:$port/metrics" | grep -vc '^#')"

  # 4. 16 concurrent scrapers.
  wrk -t2 -c16 -d"${wrk_seconds}s" --latency "http://127.0.0.1:$port/metrics" >"$report/$preset.wrk.txt"
  p50="$(awk '$1 == "50%" {print $2}' "$report/$preset.wrk.txt")"
  p99="$(awk '$1 == "99%" {print $2}' "$report/$preset.wrk.txt")"
  rps="$(awk '/Requests\/sec/ {print $2}' "$report/$preset.wrk.txt")"
  agent_rss="$(rss_kb "$apid" VmRSS)"; agent_hwm="$(rss_kb "$apid" VmHWM)"
  stop "$apid"

  # 5. node_exporter against fabricwatch's equivalent collectors on the same tree, and again on
  #    a copy of the tree that holds only the kinds of files node_exporter reads (no hw_counters,
  #    no netdev statistics: node_exporter's infiniband and netclass collectors read neither), so
  #    that both read about the same files and the ratio is the cost of reading them.
  same_root="$work/$preset-same-files"
  rm -rf "$same_root"; cp -a "$sysfs" "$same_root"
  find "$same_root" -type f \( -path '*/hw_counters/*' -o -path '*/statistics/*' \) -delete
  compare_with_node_exporter "$same_root" "$preset.same-files"
  same_ne_ms="$ne_ms"; same_fw_ms="$fw_collect_ms"; same_ne_files="$ne_files"; same_fw_files="$fw_files"
  rm -rf "$same_root"
  compare_with_node_exporter "$sysfs" "$preset"

  ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.1f", a/b; else print "n/a" }'; }
  cpu_ratio="$(ratio "$ne_ms" "$fw_collect_ms")"
  cpu_ratio_tight="$(ratio "$ne_tight_ms" "$fw_collect_ms")"
  cpu_ratio_same="$(ratio "$same_ne_ms" "$same_fw_ms")"
  # CPU per file read: each exporter's cost per collection over the files it reads.
  ne_us_per_file="$(awk -v c="$ne_ms" -v f="$ne_files" 'BEGIN{ if (f > 0) printf "%.2f", c*1000/f; else print "n/a" }')"
  fw_us_per_file="$(awk -v c="$fw_collect_ms" -v f="$fw_files" 'BEGIN{ if (f > 0) printf "%.2f", c*1000/f; else print "n/a" }')"
  cpu_ratio_per_file="$(ratio "$ne_us_per_file" "$fw_us_per_file")"
  rss_ratio="$(ratio "$ne_rss" "$fw_rss")"
  num() { printf "%.${2:-1}f" "$1"; }
  mib_of() { awk -v k="$1" 'BEGIN{printf "%.1f", k / 1024}'; }
  reads="$(sed -n 's/.*"file_reads_per_sample": \([0-9.]*\).*/\1/p' "$report/$preset.fabricbench.json" | tail -1)"
  allocs="$(sed -n 's/.*"allocations_per_sample": \([0-9.]*\).*/\1/p' "$report/$preset.fabricbench.json" | tail -1)"
  # The 1 s counter collectors' allocations per sample (the zero-allocation target), apart from
  # optics (5 s) and topology (a 60 s rescan, a rediscovery by design), and all of them per second.
  counter_allocs="$(jq '[.collectors | to_entries[] | select(.key == "netdev" or .key == "rdma" or .key == "ethtool") | .value.allocations_p50] | add // 0' "$report/$preset.fabricbench.json")"
  counter_allocs_mean="$(jq '[.collectors | to_entries[] | select(.key == "netdev" or .key == "rdma" or .key == "ethtool") | .value.allocations_per_sample] | add // 0' "$report/$preset.fabricbench.json")"
  optics_allocs="$(jq '.collectors.optics.allocations_p50 // 0' "$report/$preset.fabricbench.json")"
  optics_allocs_mean="$(jq '.collectors.optics.allocations_per_sample // 0' "$report/$preset.fabricbench.json")"
  allocs_per_second="$(jq '.per_second.allocations' "$report/$preset.fabricbench.json")"
  device_reads_per_second="$(jq '[.device_reads_per_second // {} | .[]] | add // 0' "$report/$preset.fabricbench.json")"
  cpu_sample="$(sed -n 's/.*"cpu_us_per_sample": \([0-9.]*\).*/\1/p' "$report/$preset.fabricbench.json" | tail -1)"
  cpu_second="$(sed -n 's/.*"cpu_us": \([0-9.]*\).*/\1/p' "$report/$preset.fabricbench.json" | tail -1)"

  # Every figure must have been measured: a benchmark that silently reports nothing is a bug.
  for figure in series exposition_bytes agent_core_pct wakeups agent_pss agent_anon agent_threads agent_libraries \
      new_collectors_pct device_reads_per_second detector_eval_us agent_rss cpu_sample cpu_second reads \
      syscalls_per_sample floor allocs counter_allocs counter_allocs_mean optics_allocs optics_allocs_mean allocs_per_second \
      ne_files fw_files same_ne_ms same_fw_ms same_ne_files same_fw_files ne_ms ne_tight_ms fw_collect_ms fw_scrape_ms ne_rss fw_rss; do
    [[ "${!figure:-}" =~ ^[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$ ]] || {
      echo "run.sh: $preset: figure $figure was not measured (got '${!figure:-}')" >&2; exit 1; }
  done
  [[ -n "$p50" && -n "$p99" ]] || { echo "run.sh: $preset: wrk gave no latency" >&2; exit 1; }
  if grep -q '"partial_errors": [1-9]' "$report/$preset.fabricbench.json"; then
    echo "run.sh: $preset: collectors reported errors on the workload" >&2; exit 1
  fi
  {
    echo "## $preset"
    echo
    echo "| figure | value |"
    echo "|---|---|"
    echo "| series on /metrics | $series |"
    echo "| exposition size | $exposition_bytes bytes ($exposition_gzip gzip) |"
    echo "| agent CPU at the default configuration, every default collector and detector | $agent_core_pct % of one core |"
    echo "| wake-ups per second (context switches of all threads) | $wakeups |"
    echo "| kmsg, peer and jobs together on this idle node | $new_collectors_pct % of one core |"
    echo "| detector evaluation per round, all $detectors_evaluated detectors (mean of 10 readings) | $detector_eval_us µs ($(awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2} END {print ""}' "$report/$preset.detectors.txt")) |"
    echo "| agent RSS, PSS, anonymous at the end of the window (before the scrapers below) | $(mib_of "$(jq '.rss_kib' "$report/$preset.footprint.json")") MiB, $(mib_of "$agent_pss") MiB, $(mib_of "$agent_anon") MiB |"
    echo "| agent RSS after 16 concurrent scrapers (now, peak) | $(mib_of "$agent_rss") MiB, $(mib_of "$agent_hwm") MiB |"
    echo "| threads, shared libraries mapped | $agent_threads, $agent_libraries |"
    echo "| CPU per sample, all collectors (in-process) | $(num "$cpu_sample") µs |"
    echo "| sampling CPU per second at default cadences (in-process) | $(num "$cpu_second") µs = $(awk -v c="$cpu_second" 'BEGIN{printf "%.3f", c/1e4}') % of one core |"
    echo "| file reads per sample | $(num "$reads") |"
    echo "| reads that reach a NIC's driver or firmware per second at default cadences (fabricwatch_collector_device_reads), all kinds | $(num "$device_reads_per_second") ($(jq -r '.device_reads_per_second // {} | to_entries | sort_by(-.value) | map("\(.key) \(.value * 10 | round / 10)") | join(", ")' "$report/$preset.fabricbench.json")) |"
    echo "| hw_counters by RDMA netlink (a live kernel ≥ 5.3): requests instead of file reads per sample | $(jq -r 'if .rdma_hw_counters_netlink then "\(.rdma_hw_counters_netlink.netlink_requests_per_sample) instead of \(.rdma_hw_counters_netlink.file_reads_per_sample) on \(.rdma_hw_counters_netlink.ports) ports" else "n/a" end' "$report/$preset.fabricbench.json") |"
    echo "| syscalls per 1 s counter sample (netdev+rdma+ethtool, strace) | $syscalls_per_sample = ${syscall_ratio}× the floor of $floor (counter files + statistics reads) |"
    echo "| heap allocations per steady-state sample of the 1 s counter collectors (netdev+rdma+ethtool; median) | $(num "$counter_allocs" 0) |"
    echo "| the same, mean over the samples (with the re-listing and re-choice every 60 s) | $(num "$counter_allocs_mean" 1) |"
    echo "| heap allocations per steady-state sample of optics (its share of the modules read and decoded; median, mean) | $(num "$optics_allocs" 0), $(num "$optics_allocs_mean" 1) |"
    echo "| heap allocations per sample of all collectors (optics 5 s, topology 60 s included) | $(num "$allocs" 0) |"
    echo "| heap allocations per second at default cadences | $(num "$allocs_per_second" 0) |"
    echo "| /metrics, 16 concurrent scrapers | p50 $p50, p99 $p99, $rps req/s |"
    echo "| node_exporter (infiniband+netclass) CPU per scrape, scraped at 10 Hz | $ne_ms ms |"
    echo "| node_exporter CPU per scrape, scraped back to back (warm caches) | $ne_tight_ms ms |"
    echo "| fabricwatch (rdma+netdev) CPU per collection | $fw_collect_ms ms |"
    echo "| fabricwatch (rdma+netdev) CPU per scrape (render + HTTP + concurrent 10 Hz sampling) | $fw_scrape_ms ms |"
    echo "| CPU ratio node_exporter / fabricwatch (per collection, both at 10 Hz) | ${cpu_ratio}× |"
    echo "| CPU ratio with node_exporter scraped back to back | ${cpu_ratio_tight}× |"
    echo "| files read per collection, node_exporter / fabricwatch | $ne_files / $(num "$fw_files" 0) |"
    echo "| CPU per file read, node_exporter / fabricwatch | $ne_us_per_file µs / $fw_us_per_file µs = ${cpu_ratio_per_file}× |"
    echo "| on a copy holding only the kinds of files node_exporter reads (no hw_counters, no statistics): files $same_ne_files / $(num "$same_fw_files" 0), CPU per collection | $same_ne_ms ms / $same_fw_ms ms = ${cpu_ratio_same}× |"
    echo "| RSS node_exporter / fabricwatch (same collectors) | $((ne_rss / 1024)) MiB / $((fw_rss / 1024)) MiB = ${rss_ratio}× |"
    echo "| node_exporter series (infiniband+netclass) | $ne_series |"
    echo
    echo "Per thread, the agent at the default configuration over $agent_window s:"
    echo
    cat "$report/$preset.threads.md"
    echo
    echo "Per collector (fabricbench):"
    echo
    cat "$report/$preset.fabricbench.md"
    echo
  } >>"$summary"

  ((first)) || echo "," >>"$json_all"
  first=0
  cat >>"$json_all" <<JSON
  "$preset": {"series": $series, "exposition_bytes": $exposition_bytes, "agent_core_percent": $agent_core_pct, "detector_evaluation_us_per_round": $detector_eval_us,
    "default_configuration": $(cat "$report/$preset.footprint.json"), "new_collectors_core_percent": $new_collectors_pct,
    "device_reads_per_second": $(jq -c '.device_reads_per_second // {}' "$report/$preset.fabricbench.json"), "rdma_hw_counters_netlink": $(jq -c '.rdma_hw_counters_netlink // null' "$report/$preset.fabricbench.json"),
    "agent_rss_kib": $agent_rss, "agent_peak_rss_kib": $agent_hwm, "cpu_us_per_sample": $cpu_sample, "sampling_cpu_us_per_second": $cpu_second,
    "file_reads_per_sample": $reads, "syscalls_per_sample": $syscalls_per_sample, "syscall_floor": $floor,
    "allocations_per_sample": $allocs, "counter_allocations_per_sample": $counter_allocs, "counter_allocations_per_sample_mean": $counter_allocs_mean,
    "optics_allocations_per_sample": $optics_allocs, "optics_allocations_per_sample_mean": $optics_allocs_mean,
    "node_exporter_files_per_scrape": $ne_files, "fabricwatch_files_per_collection": $fw_files, "cpu_ratio_per_file": "$cpu_ratio_per_file",
    "same_files": {"node_exporter_cpu_ms_per_scrape": $same_ne_ms, "fabricwatch_cpu_ms_per_collection": $same_fw_ms, "node_exporter_files": $same_ne_files, "fabricwatch_files": $same_fw_files},
    "allocations_per_second": $allocs_per_second, "scrape16_p50": "$p50", "scrape16_p99": "$p99",
    "node_exporter_cpu_ms_per_scrape": $ne_ms, "node_exporter_cpu_ms_per_scrape_back_to_back": $ne_tight_ms, "fabricwatch_cpu_ms_per_collection": $fw_collect_ms,
    "fabricwatch_cpu_ms_per_scrape": $fw_scrape_ms, "node_exporter_rss_kib": $ne_rss,
    "fabricwatch_rss_kib": $fw_rss}
JSON
done

# 6. Kernel log flood (issue 23, "Flood safety"): the same agent twice on one simulator root, one
#    reading a --path.kmsg file that a writer floods with ACCESS_REG failures of one function, the
#    other an empty one, both sampled twice a second through the three phases (twice, so that
#    every 1 s snapshot is seen and the spacing of successive snapshots is the cadence kept).
# flood_sample PORT OUT [ANOMALIES]: appends one line to OUT: the last sample timestamps of netdev,
# rdma, ethtool and kmsg (1-4), their ages at the scrape (5-8, s), the kmsg collection's wall time
# (9, s) and driver_fault's last evaluation (10, s); with ANOMALIES, the size of /api/v1/anomalies
# (11, bytes) and the most log lines of one driver_fault finding (12).
flood_sample() {
  local body now line
  body="$(curl -s "http://127.0.0.1:$1/metrics")"
  now="$EPOCHREALTIME"
  line="$(awk -v now="$now" '
    /^fabricwatch_collector_last_sample_timestamp_seconds\{/ {
      c = $1; sub(/.*collector="/, "", c); sub(/".*/, "", c); ts[c] = $2 }
    /^fabricwatch_collector_duration_seconds\{collector="kmsg"\}/ { dur = $2 }
    /^fabricwatch_detector_evaluation_duration_seconds\{detector="driver_fault"/ { ev = $2 }
    END {
      printf "%.6f %.6f %.6f %.6f", ts["netdev"], ts["rdma"], ts["ethtool"], ts["kmsg"]
      printf " %.3f %.3f %.3f %.3f", now - ts["netdev"], now - ts["rdma"], now - ts["ethtool"], now - ts["kmsg"]
      printf " %.6f %.6f", dur, ev }' <<<"$body")"
  if [[ -n "${3:-}" ]]; then
    curl -s "http://127.0.0.1:$1/api/v1/anomalies" >"$work/anomalies.json"
    line+=" $(wc -c <"$work/anomalies.json") $(jq '[.anomalies[] | select(.detector == "driver_fault") | (.log | length)] | max // 0' "$work/anomalies.json")"
  fi
  echo "$line" >>"$2"
}
# flood_phase NAME SECONDS|pid:PID: samples both agents every 500 ms for SECONDS, or while PID
# runs; sets <NAME>_cpu_flood and <NAME>_cpu_quiet (% of one core over the phase), <NAME>_rss_flood
# and <NAME>_rss_quiet (KiB at its end).
flood_phase() {
  local name="$1" until="$2" f0 q0 w0 f1 q1 w1 next now
  f0="$(cpu_ns "$fl_pid")"; q0="$(cpu_ns "$ql_pid")"; w0="${EPOCHREALTIME/./}"
  next="$w0"
  while :; do
    if [[ "$until" == pid:* ]]; then
      kill -0 "${until#pid:}" 2>/dev/null || break
    else
      ((${EPOCHREALTIME/./} - w0 < until * 1000000)) || break
    fi
    flood_sample "$fl_port" "$work/flood.$name.flood" anomalies
    flood_sample "$ql_port" "$work/flood.$name.quiet"
    next=$((next + 500000)); now="${EPOCHREALTIME/./}"
    if ((next > now)); then sleep "$(awk -v d=$((next - now)) 'BEGIN{printf "%.6f", d / 1e6}')"; fi
  done
  f1="$(cpu_ns "$fl_pid")"; q1="$(cpu_ns "$ql_pid")"; w1="${EPOCHREALTIME/./}"
  printf -v "${name}_cpu_flood" '%s' "$(awk -v a="$f0" -v b="$f1" -v w=$((w1 - w0)) 'BEGIN{printf "%.2f", (b-a)/1e9/(w/1e6)*100}')"
  printf -v "${name}_cpu_quiet" '%s' "$(awk -v a="$q0" -v b="$q1" -v w=$((w1 - w0)) 'BEGIN{printf "%.2f", (b-a)/1e9/(w/1e6)*100}')"
  printf -v "${name}_rss_flood" '%s' "$(rss_kb "$fl_pid" VmRSS)"
  printf -v "${name}_rss_quiet" '%s' "$(rss_kb "$ql_pid" VmRSS)"
}
# column_stat FILE COLUMN max|mean: over the samples of a phase.
column_stat() {
  awk -v c="$2" -v how="$3" '{v = $c + 0; s += v; n++; if (n == 1 || v > m) m = v}
    END {if (!n) exit; if (how == "max") printf "%.6g", m; else printf "%.6g", s / n}' "$1"
}
# largest_gap FILE COLUMN [SINCE]: the longest time between two successive snapshots (timestamps
# in COLUMN): the interval when every collection is on time. With SINCE (epoch seconds), only
# snapshots taken from then on: kmsg collects when records arrive, so its snapshot from before the
# flood is as old as the quiet time before it, which says nothing about the flood.
largest_gap() {
  awk -v c="$2" -v since="${3:-0}" '{v = $c + 0; if (v < since) next; if (p && v != p && v - p > m) m = v - p; p = v}
    END {printf "%.3f", m}' "$1"
}
# largest_age FILE TS_COLUMN AGE_COLUMN SINCE: the oldest snapshot seen at a scrape, among the
# snapshots taken from SINCE on.
largest_age() {
  awk -v t="$2" -v a="$3" -v since="$4" '$t + 0 >= since {v = $a + 0; if (!n++ || v > m) m = v}
    END {printf "%.6g", n ? m : 0}' "$1"
}
# flood_metric PORT SERIES: its value (awk reads to the end: an early exit would fail curl's write).
flood_metric() { curl -s "http://127.0.0.1:$1/metrics" | awk -v s="$2" '$1 == s && !n++ {print $2}'; }

if [[ "$flood" != no ]]; then
  echo "== kernel log flood ($flood_preset, $flood_rate records/s for $flood_seconds s)" >&2
  froot="$work/flood-$flood_preset"
  "$sim" build --preset "$flood_preset" --root "$froot" >/dev/null
  : >"$froot/kmsg"  # the flood alone (older simulators write no file: this makes it)
  : >"$work/kmsg.quiet"
  # One function with an RDMA device: its BDF, device and netdev label the events.
  fdir=""
  for d in "$froot"/sys/bus/pci/devices/*/infiniband; do
    [[ -d "$d" ]] && { fdir="$(dirname "$d")"; break; }
  done
  [[ -n "$fdir" ]] || { echo "run.sh: $flood_preset has no PCI function with an RDMA device" >&2; exit 1; }
  fbdf="$(basename "$fdir")"
  fdevice="$(find "$fdir/infiniband/" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort | head -1)"
  fnetdev="$(find "$fdir/net/" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort | head -1)"
  fseries="fabric_kernel_events_total{device=\"$fdevice\",netdev=\"$fnetdev\",event=\"access_reg_failed\"}"
  fl_port="$(free_port)"
  "$agent" --path.sysfs="$froot/sys" --path.ethtool="$froot/ethtool" --path.kmsg="$froot/kmsg" \
    --state.file="$work/state.flood.json" --web.listen-address="127.0.0.1:$fl_port" --log.level=warn \
    2>"$report/kmsg_flood.agent.log" &
  fl_pid=$!; pids+=("$fl_pid")
  ql_port="$(free_port)"
  "$agent" --path.sysfs="$froot/sys" --path.ethtool="$froot/ethtool" --path.kmsg="$work/kmsg.quiet" \
    --state.file="$work/state.quiet.json" --web.listen-address="127.0.0.1:$ql_port" --log.level=warn \
    2>"$report/kmsg_flood.quiet.log" &
  ql_pid=$!; pids+=("$ql_pid")
  wait_http "http://127.0.0.1:$fl_port/metrics"
  wait_http "http://127.0.0.1:$ql_port/metrics"
  sleep 2  # discovery and the first samples of every collector
  rm -f "$work"/flood.*

  flood_phase before "$flood_window"
  flood_start="$EPOCHREALTIME"
  python3 "$repo/tools/bench/kmsg_flood.py" --file "$froot/kmsg" --bdf "$fbdf" --rate "$flood_rate" \
    --seconds "$flood_seconds" --json "$work/writer.json" >/dev/null &
  wpid=$!; pids+=("$wpid")
  flood_phase during "pid:$wpid"
  wait "$wpid"
  flood_end="${EPOCHREALTIME/./}"
  flood_hwm="$(rss_kb "$fl_pid" VmHWM)"
  written="$(jq '.records' "$work/writer.json")"
  # The records still unread when the writer stopped are read by the next collections. Not a
  # timing check: 30 s bounds a stuck reader; the figure is how long it took.
  counted=""
  for _ in $(seq 300); do
    counted="$(flood_metric "$fl_port" "$fseries")"
    [[ "${counted:-0}" == "$written" ]] && break
    sleep 0.1
  done
  drained_s="$(awk -v d=$((${EPOCHREALTIME/./} - flood_end)) 'BEGIN{printf "%.1f", d / 1e6}')"
  metrics="$(curl -s "http://127.0.0.1:$fl_port/metrics")"
  records_total="$(awk '$1 == "fabric_kernel_log_records_total" {print $2}' <<<"$metrics")"
  lost="$(awk '$1 == "fabric_kernel_log_lost_records_total" {print $2}' <<<"$metrics")"
  skipped="$(awk '/^fabric_kernel_log_skipped_records_total\{/ {s += $2} END {print s + 0}' <<<"$metrics")"
  curl -s "http://127.0.0.1:$fl_port/api/v1/anomalies" >"$report/kmsg_flood.anomalies.json"
  anomalies_bytes="$(wc -c <"$report/kmsg_flood.anomalies.json")"
  findings() { jq -r --arg d "$fdevice" "[.anomalies[] | select(.detector == \"driver_fault\" and .entity.device == \$d)] | $1" "$report/kmsg_flood.anomalies.json"; }
  device_findings="$(findings length)"
  finding_log="$(findings '[.[].log | length] | max // 0')"
  finding_value="$(findings '[.[].value] | max // 0')"
  finding_severity="$(findings '[.[].severity] | first // "none"')"
  flood_phase after "$flood_window"
  after_hwm="$(rss_kb "$fl_pid" VmHWM)"; quiet_hwm="$(rss_kb "$ql_pid" VmHWM)"
  stop "$fl_pid"; stop "$ql_pid"
  state_bytes="$(wc -c <"$work/state.flood.json")"; state_quiet_bytes="$(wc -c <"$work/state.quiet.json")"

  d_flood="$work/flood.during.flood"; d_quiet="$work/flood.during.quiet"
  ms() { awk -v v="$1" -v p="${2:-2}" 'BEGIN{printf "%.*f", p, v * 1000}'; }
  kmsg_mean_ms="$(ms "$(column_stat "$d_flood" 9 mean)")"
  kmsg_max_ms="$(ms "$(column_stat "$d_flood" 9 max)")"
  kmsg_quiet_ms="$(ms "$(column_stat "$d_quiet" 9 mean)" 3)"
  eval_max_us="$(awk -v v="$(column_stat "$d_flood" 10 max)" 'BEGIN{printf "%.0f", v * 1e6}')"
  eval_quiet_us="$(awk -v v="$(column_stat "$d_quiet" 10 max)" 'BEGIN{printf "%.0f", v * 1e6}')"
  for c in netdev:1 rdma:2 ethtool:3 kmsg:4; do
    printf -v "gap_${c%%:*}" '%s' "$(largest_gap "$d_flood" "${c#*:}")"
    printf -v "gap_${c%%:*}_quiet" '%s' "$(largest_gap "$d_quiet" "${c#*:}")"
    printf -v "age_${c%%:*}" '%s' "$(column_stat "$d_flood" "$((${c#*:} + 4))" max)"
    printf -v "age_${c%%:*}_quiet" '%s' "$(column_stat "$d_quiet" "$((${c#*:} + 4))" max)"
  done
  # kmsg during the flood: from its first snapshot of flood records on (largest_gap).
  gap_kmsg="$(largest_gap "$d_flood" 4 "$flood_start")"
  age_kmsg="$(largest_age "$d_flood" 4 8 "$flood_start")"
  anomalies_max_bytes="$(column_stat "$d_flood" 11 max)"
  log_max="$(column_stat "$d_flood" 12 max)"
  writer_rate="$(jq '.rate' "$work/writer.json")"; writer_bytes="$(jq '.bytes' "$work/writer.json")"
  writer_late="$(jq '.max_batch_late_ms' "$work/writer.json")"
  samples_during="$(wc -l <"$d_flood")"

  for figure in before_cpu_flood before_cpu_quiet during_cpu_flood during_cpu_quiet after_cpu_flood after_cpu_quiet \
      before_rss_flood during_rss_flood after_rss_flood before_rss_quiet during_rss_quiet after_rss_quiet flood_hwm \
      after_hwm quiet_hwm kmsg_mean_ms kmsg_max_ms kmsg_quiet_ms eval_max_us eval_quiet_us gap_netdev gap_rdma \
      gap_ethtool gap_kmsg gap_netdev_quiet gap_rdma_quiet gap_ethtool_quiet age_netdev age_rdma age_ethtool age_kmsg \
      age_netdev_quiet age_rdma_quiet age_ethtool_quiet anomalies_bytes anomalies_max_bytes log_max written counted \
      records_total lost skipped drained_s writer_rate writer_bytes finding_value state_bytes state_quiet_bytes; do
    [[ "${!figure:-}" =~ ^[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$ ]] || {
      echo "run.sh: kernel log flood: figure $figure was not measured (got '${!figure:-}')" >&2; exit 1; }
  done
  # What the flood must not break (correctness, not timing): every record counted, none lost or
  # skipped, one finding for the device with at most 5 log lines.
  ((counted == written && lost == 0 && skipped == 0)) || {
    echo "run.sh: kernel log flood: wrote $written records, counted $counted (lost $lost, skipped $skipped)" >&2; exit 1; }
  ((device_findings == 1 && finding_log <= 5 && log_max <= 5)) || {
    echo "run.sh: kernel log flood: $device_findings driver_fault findings for $fdevice, log of $finding_log lines (max seen $log_max)" >&2; exit 1; }
  mib() { awk -v k="$1" 'BEGIN{printf "%.1f", k / 1024}'; }
  # The per-phase figures are set by flood_phase and the loop above through printf -v.
  # shellcheck disable=SC2154
  {
    echo "## kernel log flood ($flood_preset)"
    echo
    echo "$written ACCESS_REG failure records of $fbdf ($fdevice, $fnetdev) appended to --path.kmsg at $writer_rate/s for $flood_seconds s ($((writer_bytes / 1048576)) MiB in 100 ms batches, the latest batch $writer_late ms behind), against the same agent reading an empty file in the same window: both at the default cadence with detectors on and a state file, scraped twice a second ($samples_during samples during the flood); before and after: $flood_window s each."
    echo
    echo "| figure | flood | no flood |"
    echo "|---|---|---|"
    echo "| agent CPU before / during / after the flood | $before_cpu_flood / **$during_cpu_flood** / $after_cpu_flood % of one core | $before_cpu_quiet / $during_cpu_quiet / $after_cpu_quiet % |"
    echo "| agent RSS before / during / after (peak) | $(mib "$before_rss_flood") / **$(mib "$during_rss_flood")** / $(mib "$after_rss_flood") MiB (peak $(mib "$after_hwm")) | $(mib "$before_rss_quiet") / $(mib "$during_rss_quiet") / $(mib "$after_rss_quiet") MiB (peak $(mib "$quiet_hwm")) |"
    echo "| kmsg collection wall time during the flood, mean / max | $kmsg_mean_ms / $kmsg_max_ms ms | $kmsg_quiet_ms ms |"
    echo "| longest time between successive samples during the flood (1 s cadence; kmsg, which collects when records arrive and once a minute without: from its first flood sample on): netdev / rdma / ethtool / kmsg | **$gap_netdev / $gap_rdma / $gap_ethtool** / $gap_kmsg s | $gap_netdev_quiet / $gap_rdma_quiet / $gap_ethtool_quiet / $gap_kmsg_quiet s |"
    echo "| oldest sample at a scrape during the flood: netdev / rdma / ethtool / kmsg | $age_netdev / $age_rdma / $age_ethtool / $age_kmsg s | $age_netdev_quiet / $age_rdma_quiet / $age_ethtool_quiet / $age_kmsg_quiet s |"
    echo "| driver_fault evaluation, max during the flood | $eval_max_us µs | $eval_quiet_us µs |"
    echo "| records written / counted in fabric_kernel_events_total / read / lost / skipped | $written / **$counted** / $records_total / $lost / $skipped | |"
    echo "| records not yet read when the writer stopped, all read within | $drained_s s | |"
    echo "| driver_fault findings for $fdevice / log lines shown (most seen during the flood) | **$device_findings** $finding_severity (value $finding_value lines in the window) / **$finding_log** ($log_max) | |"
    echo "| /api/v1/anomalies size after / largest during the flood | $anomalies_bytes / $anomalies_max_bytes bytes | |"
    echo "| state file after the flood | $state_bytes bytes | $state_quiet_bytes bytes |"
    echo
  } >>"$summary"
  ((first)) || echo "," >>"$json_all"
  first=0
  # shellcheck disable=SC2154
  cat >>"$json_all" <<JSON
  "kmsg_flood": {"preset": "$flood_preset", "bdf": "$fbdf", "device": "$fdevice", "netdev": "$fnetdev",
    "rate": $writer_rate, "seconds": $flood_seconds, "written": $written, "counted": $counted, "records_read": $records_total,
    "lost": $lost, "skipped": $skipped, "backlog_read_within_s": $drained_s,
    "cpu_percent": {"before": $before_cpu_flood, "during": $during_cpu_flood, "after": $after_cpu_flood},
    "cpu_percent_no_flood": {"before": $before_cpu_quiet, "during": $during_cpu_quiet, "after": $after_cpu_quiet},
    "rss_kib": {"before": $before_rss_flood, "during": $during_rss_flood, "after": $after_rss_flood, "peak": $after_hwm, "peak_at_flood_end": $flood_hwm},
    "rss_kib_no_flood": {"before": $before_rss_quiet, "during": $during_rss_quiet, "after": $after_rss_quiet, "peak": $quiet_hwm},
    "kmsg_duration_ms": {"mean": $kmsg_mean_ms, "max": $kmsg_max_ms, "no_flood_mean": $kmsg_quiet_ms},
    "largest_sample_gap_s": {"netdev": $gap_netdev, "rdma": $gap_rdma, "ethtool": $gap_ethtool, "kmsg": $gap_kmsg},
    "largest_sample_gap_s_no_flood": {"netdev": $gap_netdev_quiet, "rdma": $gap_rdma_quiet, "ethtool": $gap_ethtool_quiet, "kmsg": $gap_kmsg_quiet},
    "max_sample_age_s": {"netdev": $age_netdev, "rdma": $age_rdma, "ethtool": $age_ethtool, "kmsg": $age_kmsg},
    "max_sample_age_s_no_flood": {"netdev": $age_netdev_quiet, "rdma": $age_rdma_quiet, "ethtool": $age_ethtool_quiet, "kmsg": $age_kmsg_quiet},
    "driver_fault_evaluation_us_max": $eval_max_us, "driver_fault_evaluation_us_max_no_flood": $eval_quiet_us,
    "driver_fault_findings": $device_findings, "finding_severity": "$finding_severity", "finding_value": $finding_value,
    "finding_log_lines": $finding_log, "log_lines_max_during": $log_max,
    "anomalies_bytes": $anomalies_bytes, "anomalies_bytes_max_during": $anomalies_max_bytes,
    "state_file_bytes": $state_bytes, "state_file_bytes_no_flood": $state_quiet_bytes}
JSON
fi
echo "}" >>"$json_all"
cat "$summary"
echo "report: $report" >&2
