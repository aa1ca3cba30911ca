#!/usr/bin/env bash
# What a running agent costs its node over a window (issue 40, README "Performance"):
#
#   tools/bench/footprint.sh PID SECONDS JSON [MARKDOWN]
#
# Reads only /proc/PID: it measures any process (the agent, node_exporter) as it runs.
#   - CPU: each thread's on-CPU time from /proc/PID/task/*/schedstat (ns; /proc/PID/stat ticks
#     are 10 ms, too coarse for a few ms a second), as % of one core over the window;
#   - wake-ups: each thread's voluntary plus involuntary context switches over the window
#     (proc(5) /proc/PID/status): a thread that sleeps until its next job wakes once per job,
#     one that polls wakes at its poll rate;
#   - both per thread name (/proc/PID/task/*/comm; the agent names its threads, fw-…), threads of
#     one name summed;
#   - memory at the end: VmRSS, VmHWM, RssAnon, RssFile (proc(5)), PSS (smaps_rollup: shared
#     pages divided among their users), the thread count and the shared libraries mapped.
# Writes JSON (one object) to JSON and, with MARKDOWN, a per-thread table there.
set -euo pipefail

(($# >= 3)) || { echo "usage: footprint.sh PID SECONDS JSON [MARKDOWN]" >&2; exit 2; }
pid="$1"; window="$2"; json="$3"; markdown="${4:-}"
[[ -d "/proc/$pid" ]] || { echo "footprint.sh: no process $pid" >&2; exit 1; }

# One line per thread: name, CPU ns, context switches. A thread that ends between the glob and
# the read is skipped.
threads() {
  local t comm cpu sw
  for t in /proc/"$pid"/task/*; do
    comm="$(cat "$t/comm" 2>/dev/null)" || continue
    cpu="$(awk '{print $1}' "$t/schedstat" 2>/dev/null)" || continue
    sw="$(awk '/^(voluntary|nonvoluntary)_ctxt_switches:/ {s += $2} END {print s + 0}' "$t/status" 2>/dev/null)" || continue
    printf '%s\t%s\t%s\n' "${comm// /_}" "$cpu" "$sw"
  done
}

before="$(mktemp)"; after="$(mktemp)"
trap 'rm -f "$before" "$after"' EXIT
threads >"$before"; w0="${EPOCHREALTIME/./}"
sleep "$window"
threads >"$after"; w1="${EPOCHREALTIME/./}"
[[ -d "/proc/$pid" ]] || { echo "footprint.sh: process $pid ended during the window" >&2; exit 1; }

status() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$pid/status"; }
rss="$(status VmRSS)"; hwm="$(status VmHWM)"; anon="$(status RssAnon)"; file="$(status RssFile)"
nthreads="$(status Threads)"
pss="$(awk '$1 == "Pss:" {print $2}' "/proc/$pid/smaps_rollup")"
libraries="$(awk '$6 ~ /\.so(\.|$)/ {print $6}' "/proc/$pid/maps" | sort -u | wc -l)"

# Per name: CPU % of one core and wake-ups per second over the window. Threads present at both
# ends count (a thread born in the window is left out: its whole life would count as the window's).
per_name="$(awk -F'\t' -v w=$((w1 - w0)) '
  NR == FNR {cpu[$1] += $2; sw[$1] += $3; n0[$1]++; next}
  {cpu1[$1] += $2; sw1[$1] += $3; n1[$1]++}
  END {
    for (k in cpu1) if (k in cpu) {
      printf "%s\t%d\t%.4f\t%.2f\n", k, n1[k], (cpu1[k] - cpu[k]) / 1e9 / (w / 1e6) * 100,
        (sw1[k] - sw[k]) / (w / 1e6)
    }
  }' "$before" "$after" | sort -t$'\t' -k3,3gr)"
cpu_pct="$(awk -F'\t' '{s += $3} END {printf "%.4f", s}' <<<"$per_name")"
wakeups="$(awk -F'\t' '{s += $4} END {printf "%.2f", s}' <<<"$per_name")"

{
  printf '{"window_s": %s, "cpu_percent": %s, "wakeups_per_second": %s,\n' \
    "$(awk -v w=$((w1 - w0)) 'BEGIN{printf "%.3f", w / 1e6}')" "$cpu_pct" "$wakeups"
  printf ' "rss_kib": %s, "peak_rss_kib": %s, "pss_kib": %s, "anon_kib": %s, "file_kib": %s,\n' \
    "$rss" "$hwm" "${pss:-0}" "$anon" "$file"
  printf ' "threads": %s, "libraries": %s,\n "per_thread": {' "$nthreads" "$libraries"
  awk -F'\t' '{printf "%s\n  \"%s\": {\"threads\": %d, \"cpu_percent\": %s, \"wakeups_per_second\": %s}",
    (NR > 1 ? "," : ""), $1, $2, $3, $4}' <<<"$per_name"
  printf '}}\n'
} >"$json"

if [[ -n "$markdown" ]]; then
  {
    echo "| thread | threads | CPU, % of one core | wake-ups per second |"
    echo "|---|---|---|---|"
    awk -F'\t' '{printf "| %s | %d | %.3f | %.1f |\n", $1, $2, $3, $4}' <<<"$per_name"
    printf '| all | %s | %.3f | %.1f |\n' "$nthreads" "$cpu_pct" "$wakeups"
  } >"$markdown"
fi
