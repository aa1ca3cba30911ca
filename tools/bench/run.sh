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
#
# What it measures, per preset (see README "Performance" for the method and the figures):
#   1. fabricbench (in-process): CPU, heap allocations and file reads per steady-state sample of
#      each collector, each sample one default interval later on its clock; render time of the
#      whole exposition.
#   2. strace -c on fabricbench: syscalls per sample against file reads per sample (the floor).
#   3. the agent at its default cadence (1 s counters): CPU share of one core from
#      /proc/<pid>/stat over a window, resident memory (VmRSS, VmHWM), exposition size, and the
#      detectors' evaluation time per round (their own gauge).
#   4. wrk with 16 concurrent connections on /metrics: p50/p99 latency.
#   5. Debian's prometheus-node-exporter with --path.sysfs on the same tree and only its
#      infiniband + netclass collectors, against fabricwatch's equivalent collectors (rdma +
#      netdev): CPU per collection and RSS, as ratios, both running in the same window.
#      node_exporter is scraped at 10 Hz and fabricwatch samples at 10 Hz (both cold, as a
#      periodic job runs); node_exporter scraped back to back (warm) is reported beside it.
#      The files each reads per collection (strace for node_exporter, fabricbench for fabricwatch)
#      give the CPU per file read; the comparison runs again on a copy of the tree without the
#      kinds of files only fabricwatch reads (hw_counters, netdev statistics).
# Nothing is downloaded; it needs wrk, strace, jq and prometheus-node-exporter (tools/install-deps.sh
# test installs them).
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BENCH_BUILD_DIR:-$repo/build-bench}"
smoke=0
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
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
if ((${#presets[@]} == 0 && ${#replays[@]} == 0)); then
  if ((smoke)); then presets=(roce-small); else presets=(hgx-ib hgx-roce stress-64); fi
fi
if ((smoke)); then
  samples=20; renders=20; agent_window=3; wrk_seconds=2; ne_scrapes=10
else
  samples=300; renders=500; agent_window=30; wrk_seconds=10; ne_scrapes=200
fi

for tool in wrk strace prometheus-node-exporter curl jq; do
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
  ((${#presets[@]} == 0)) || targets+=(fabricsim)
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
  floor="$(sed -n 's/.*"file_reads_per_sample": \([0-9.]*\).*/\1/p' "$work/counters.json" | tail -1)"
  netdevs_with_stats="$(sed -n '/"ethtool": {/,/}/ s/.*"opens_per_sample": \([0-9.]*\).*/\1/p' "$work/counters.json")"
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

  # 3. The agent at its default cadence.
  port="$(free_port)"
  "$agent" --path.sysfs="$sysfs" ${ethtool:+--path.ethtool="$ethtool"} --web.listen-address="127.0.0.1:$port" \
    --log.level=warn 2>"$report/$preset.agent.log" &
  apid=$!; pids+=("$apid")
  wait_http "http://127.0.0.1:$port/metrics"
  sleep 2  # discovery and the first samples of every collector
  t0="$(cpu_ns "$apid")"; sleep "$agent_window"; t1="$(cpu_ns "$apid")"
  agent_core_pct="$(awk -v a="$t0" -v b="$t1" -v w="$agent_window" -v hz=1e9 'BEGIN{printf "%.3f", (b-a)/hz/w*100}')"
  # Detector cost: the engine's own gauge of each detector's last evaluation, summed over the
  # detectors, read 10 times half a second apart (after the CPU window: scrapes cost CPU too).
  detector_eval_us="$(for _ in $(seq 10); do
      curl -s "http://127.0.0.1:$port/metrics" |
        awk '/^fabricwatch_detector_evaluation_duration_seconds\{/ {s += $NF} END {printf "%.9f\n", s}'
      sleep 0.5
    done | awk '{s += $1; n++} END {if (n) printf "%.1f", s / n * 1e6}')"
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
  reads="$(sed -n 's/.*"file_reads_per_sample": \([0-9.]*\).*/\1/p' "$report/$preset.fabricbench.json" | tail -1)"
  allocs="$(sed -n 's/.*"allocations_per_sample": \([0-9.]*\).*/\1/p' "$report/$preset.fabricbench.json" | tail -1)"
  # The 1 s counter collectors' allocations per sample (the zero-allocation target), apart from
  # optics (5 s) and topology (a 60 s rescan, a rediscovery by design), and all of them per second.
  counter_allocs="$(jq '[.collectors | to_entries[] | select(.key == "netdev" or .key == "rdma" or .key == "ethtool") | .value.allocations_p50] | add // 0' "$report/$preset.fabricbench.json")"
  counter_allocs_mean="$(jq '[.collectors | to_entries[] | select(.key == "netdev" or .key == "rdma" or .key == "ethtool") | .value.allocations_per_sample] | add // 0' "$report/$preset.fabricbench.json")"
  optics_allocs="$(jq '.collectors.optics.allocations_p50 // 0' "$report/$preset.fabricbench.json")"
  optics_allocs_mean="$(jq '.collectors.optics.allocations_per_sample // 0' "$report/$preset.fabricbench.json")"
  allocs_per_second="$(jq '.per_second.allocations' "$report/$preset.fabricbench.json")"
  cpu_sample="$(sed -n 's/.*"cpu_us_per_sample": \([0-9.]*\).*/\1/p' "$report/$preset.fabricbench.json" | tail -1)"
  cpu_second="$(sed -n 's/.*"cpu_us": \([0-9.]*\).*/\1/p' "$report/$preset.fabricbench.json" | tail -1)"

  # Every figure must have been measured: a benchmark that silently reports nothing is a bug.
  for figure in series exposition_bytes agent_core_pct detector_eval_us agent_rss cpu_sample cpu_second reads \
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
    echo "| agent CPU at default cadence | $agent_core_pct % of one core |"
    echo "| detector evaluation per round, all $detectors_evaluated detectors (mean of 10 readings) | $detector_eval_us µs |"
    echo "| agent RSS (now, peak) | $((agent_rss / 1024)) MiB, $((agent_hwm / 1024)) MiB |"
    echo "| CPU per sample, all collectors (in-process) | $(num "$cpu_sample") µs |"
    echo "| sampling CPU per second at default cadences (in-process) | $(num "$cpu_second") µs = $(awk -v c="$cpu_second" 'BEGIN{printf "%.3f", c/1e4}') % of one core |"
    echo "| file reads per sample | $(num "$reads") |"
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
    echo "Per collector (fabricbench):"
    echo
    cat "$report/$preset.fabricbench.md"
    echo
  } >>"$summary"

  ((first)) || echo "," >>"$json_all"
  first=0
  cat >>"$json_all" <<JSON
  "$preset": {"series": $series, "exposition_bytes": $exposition_bytes, "agent_core_percent": $agent_core_pct, "detector_evaluation_us_per_round": $detector_eval_us,
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
echo "}" >>"$json_all"
cat "$summary"
echo "report: $report" >&2
