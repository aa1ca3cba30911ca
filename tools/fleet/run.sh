#!/usr/bin/env bash
# The fleet rig (issue 26 items 2-4): what fabricwatch costs a real Prometheus at fleet scale.
#
#   tools/fleet/run.sh                          N = 100, 300 and 1,000 nodes, 5 minutes each
#                                               (about 20 minutes); report in build-fleet/report/
#   tools/fleet/run.sh --nodes 100,300 --minutes 3
#   tools/fleet/run.sh --smoke                  what `make test` runs (ctest e2e.fleet_smoke, about
#                                               a minute): 20 nodes at a 2 s scrape interval with the
#                                               rules' for: shortened to 10 s; asserts the fleet
#                                               alerts, the down targets and every dashboard query
#                                               on the rig's Prometheus, and the fleet alerts on the
#                                               shipped pair: a shard running
#                                               deploy/prometheus/fleet/shard-by-fabric.yml and a
#                                               global running global.yml federating it; exit 77
#                                               without Debian's prometheus
#   --bin-dir DIR        the build tree with exporter/fabricwatch and tools/fabricsim/fabricsim
#                        (default build/)
#   --leaf-size S        nodes per leaf switch (default 16; smoke 4)
#   --rss-cap-gib G      stop a run whose Prometheus grows past G GiB resident (default 12), and
#                        run no larger N: the machine's other users come first
#
# How (tools/fleet/fleet_server.py says why one server and a few agents): four real agents,
# one per profile (healthy-roce, healthy-ib, flap-roce, storm-roce), each on its own fabricsim
# root animated by tools/fleet/scenarios/<profile>.yaml, whose LLDP or SMP replays name the
# neighbours after the leaf FLEETLEAF. Per N: fleet_server.py serves the N nodes (one leaf flapping, a few
# storm sources, three nodes answering garbage, stalling and 404) and writes the file_sd targets;
# a fresh Debian Prometheus scrapes them at 15 s with every shipped rule file; after --minutes,
# fleet_measure.py reads Prometheus's own metrics and times every query of
# dashboards/fleet-overview.json through the HTTP API, then, with the fleet server stopped,
# every rule and query again with nothing ingesting beside them (fleet_measure.py says what it
# measures).
# fleet_report.py writes report.md: the per-N table, series per node per profile, the
# extrapolation to 4,096 and 16,384 nodes and the growth exponent of each figure. Everything
# listens on 127.0.0.1; every process it starts is stopped on exit. The full run asserts nothing
# (it reports the alerts' verdict); the smoke fails when the alerts or targets are wrong.
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
here="$repo/tools/fleet"
nodes_list="100,300,1000"
minutes=5
leaf_size=16
smoke=0
bin_dir="$repo/build"
report="${FLEET_REPORT_DIR:-$repo/build-fleet/report}"
rss_cap_gib=12
while (($#)); do
  case "$1" in
    --nodes) nodes_list="$2"; shift ;;
    --minutes) minutes="$2"; shift ;;
    --leaf-size) leaf_size="$2"; shift ;;
    --smoke) smoke=1 ;;
    --bin-dir) bin_dir="$2"; shift ;;
    --report-dir) report="$2"; shift ;;
    --rss-cap-gib) rss_cap_gib="$2"; shift ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
interval=15 timeout=10 for_override="" settle_s=20
if ((smoke)); then
  nodes_list=20 leaf_size=4 interval=2 timeout=1 for_override=10s minutes=1.2 settle_s=3
fi
PROMETHEUS="${PROMETHEUS:-/usr/bin/prometheus}"
if [[ ! -x "$PROMETHEUS" ]] || ! command -v promtool >/dev/null; then
  echo "run.sh: $PROMETHEUS or promtool not found (apt-get install prometheus)" >&2
  ((smoke)) && exit 77
  exit 1
fi
fabricwatch="$bin_dir/exporter/fabricwatch"
fabricsim="$bin_dir/tools/fabricsim/fabricsim"
for b in "$fabricwatch" "$fabricsim"; do
  [[ -x "$b" ]] || { echo "run.sh: $b not built (cmake --build build --target fabricwatch fabricsim)" >&2; exit 1; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/fleet.XXXXXX")"
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$report"
log() { printf 'fleet: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
  done
  return 1
}

# start_profile NAME SEED: a fabricsim root animated by scenarios/NAME.yaml and an agent on it;
# fabricsim writes the neighbour replays (--path.lldp, --path.smp) with the leaf switch FLEETLEAF
# (on the HGX presets, cabled rail-optimised: port i faces FLEETLEAF-rail<i+1>), which the
# fleet server renames per node. Sets PROFILE_URL.
start_profile() {
  local name="$1" seed="$2" root port agent_log
  root="$work/$name"
  "$fabricsim" run --root "$root" --scenario "$here/scenarios/$name.yaml" --loop --seed "$seed" \
    --leaf FLEETLEAF >"$work/$name.sim.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do
    [[ -d "$root/lldp" || -d "$root/smp" ]] && grep -q 'agent flags' "$work/$name.sim.log" && break
    sleep 0.1
  done
  grep -q 'agent flags' "$work/$name.sim.log" ||
    die "fabricsim did not write the $name node: $(tail -n 5 "$work/$name.sim.log")"
  agent_log="$work/$name.agent.log"
  "$fabricwatch" --web.listen-address=127.0.0.1:0 --path.sysfs="$root/sys" \
    --path.ethtool="$root/ethtool" --path.kmsg="$root/kmsg" --path.procfs="$root/proc" \
    --path.lldp="$root/lldp" --path.smp="$root/smp" >"$agent_log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do
    port="$(sed -n 's/.*listening on .*(port \([0-9]*\)).*/\1/p' "$agent_log" | head -n1)"
    [[ -n "$port" ]] && break
    sleep 0.1
  done
  [[ -n "$port" ]] || die "agent of profile $name did not start: $(tail -n 5 "$agent_log")"
  PROFILE_URL="http://127.0.0.1:$port/metrics"
}

# Rules as shipped; the smoke shortens every for: so that a minute is enough.
rules="$work/rules"
mkdir -p "$rules"
for f in "$repo"/alerts/*.rules.yml; do
  if [[ -n "$for_override" ]]; then
    sed "s/^\( *\)for: .*/\1for: $for_override/" "$f" >"$rules/${f##*/}"
  else
    cp "$f" "$rules/"
  fi
done

# start_prometheus NAME CONFIG: sets PROM_URL and PROM_PID (data under $work/NAME).
start_prometheus() {
  local name="$1" config="$2" port attempt logf
  for attempt in 1 2 3 4 5; do
    port="$(free_port)" || die "no free port"
    logf="$work/$name.$attempt.log"
    "$PROMETHEUS" --config.file="$config" --storage.tsdb.path="$work/$name-data" \
      --storage.tsdb.retention.time=2h --web.listen-address="127.0.0.1:$port" \
      --web.console.templates=/usr/share/prometheus/consoles \
      --web.console.libraries=/usr/share/prometheus/console_libraries \
      --web.enable-lifecycle --log.level=warn >"$logf" 2>&1 &
    PROM_PID=$!
    pids+=("$PROM_PID")
    for _ in $(seq 1 300); do
      if curl -sf --max-time 2 "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1; then
        PROM_URL="http://127.0.0.1:$port"
        return 0
      fi
      kill -0 "$PROM_PID" 2>/dev/null || break
      sleep 0.2
    done
    grep -qi 'address already in use' "$logf" || die "prometheus $name did not start: $(tail -n 5 "$logf")"
  done
  die "prometheus $name: no free port after 5 attempts"
}

# start_shipped_shard DIR: the shipped deploy/prometheus/fleet/shard-by-fabric.yml scraping the
# rig's nodes (DIR/targets.json, every fabric of the rig), with its intervals, rule paths, file_sd
# path and Alertmanager rewritten for loopback and nothing else, so its relabelling (a target's
# own instance label is kept) and its choice of rule files are what the global's alerts rest on.
# Sets PROM_URL.
start_shipped_shard() {
  local out="$1/shard-by-fabric.yml"
  sed -e "s/^\( *\)scrape_interval: .*/\1scrape_interval: ${interval}s/" \
    -e "s/^\( *\)scrape_timeout: .*/\1scrape_timeout: ${timeout}s/" \
    -e "s/^\( *\)evaluation_interval: .*/\1evaluation_interval: ${interval}s/" \
    -e "s#^\( *\)- \.\./\.\./\.\./alerts/\(.*\)#\1- $rules/\2#" \
    -e "s#^\( *\)- files: \['targets/.*#\1- files: ['$1/targets.json']#" \
    -e "s#^\( *\)- targets: \['alertmanager:9093'\]#\1- targets: []#" \
    "$repo/deploy/prometheus/fleet/shard-by-fabric.yml" >"$out"
  if grep -Eq '^[^#]*(\.\./alerts/|targets/roce-a|alertmanager:9093)' "$out" ||
    ! grep -q "$rules/fabricwatch-recording" "$out" || ! grep -q "$1/targets.json" "$out"; then
    die "shard-by-fabric.yml: a rule path, file_sd or Alertmanager line moved (see its header)"
  fi
  promtool check config "$out" >"$1/promtool-shard-rig.log" 2>&1 ||
    die "promtool check config (rewritten shard-by-fabric.yml): $(cat "$1/promtool-shard-rig.log")"
  start_prometheus "shard-shipped" "$out"
  log "shipped shard prometheus $PROM_URL (shard-by-fabric.yml) scraping the rig's nodes"
}

# start_global SHARD_ADDR DIR: the shipped deploy/prometheus/fleet/global.yml federating a
# shard, with its interval, targets and rule path rewritten for loopback; every shipped fleet
# configuration passes promtool first. Sets PROM_URL.
start_global() {
  local fleet="$repo/deploy/prometheus/fleet" f
  for f in "$fleet"/*.yml; do
    (cd "$fleet" && promtool check config "${f##*/}") >"$2/promtool-${f##*/}.log" 2>&1 ||
      die "promtool check config $f: $(cat "$2/promtool-${f##*/}.log")"
  done
  sed -e "s/^\( *\)scrape_interval: .*/\1scrape_interval: ${interval}s/" \
    -e "s/^\( *\)scrape_timeout: .*/\1scrape_timeout: ${timeout}s/" \
    -e "s/^\( *\)evaluation_interval: .*/\1evaluation_interval: ${interval}s/" \
    -e "s#^\( *\)- targets: \['prometheus-.*#\1- targets: ['$1']#" \
    -e "s#^\( *\)- .*/alerts/fabricwatch-fleet.rules.yml#\1- $rules/fabricwatch-fleet.rules.yml#" \
    -e "s#^\( *\)- targets: \['alertmanager:9093'\]#\1- targets: []#" \
    "$fleet/global.yml" >"$2/global.yml"
  if ! grep -q "$1" "$2/global.yml" || ! grep -q "$rules/fabricwatch-fleet" "$2/global.yml"; then
    die "global.yml: the federation target or the rule path line moved (see its header)"
  fi
  promtool check config "$2/global.yml" >"$2/promtool-global-rig.log" 2>&1 ||
    die "promtool check config (rewritten global.yml): $(cat "$2/promtool-global-rig.log")"
  start_prometheus "global" "$2/global.yml"
  log "global prometheus $PROM_URL federating $1"
}

# rss_guard PID CAP_KB FLAG: kills PID once its VmRSS passes CAP_KB, and writes FLAG.
rss_guard() {
  local pid="$1" cap="$2" flag="$3" rss
  while kill -0 "$pid" 2>/dev/null; do
    rss="$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)"
    if ((${rss:-0} > cap)); then
      echo "$rss" >"$flag"
      kill "$pid"
      return
    fi
    sleep 2
  done
}

# Everything below runs from main, which bash reads whole before running: editing this file
# while a run is under way does not change (or break) that run.
main() {
log "agent: $("$fabricwatch" --version 2>&1 | head -n1); tree at $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$repo" diff --quiet HEAD -- base collectors detectors exporter 2>/dev/null || echo ' (with uncommitted changes)')"
profile_flags=()
seed=1
for name in healthy-roce healthy-ib flap-roce storm-roce; do
  start_profile "$name" "$seed"
  profile_flags+=(--profile "$name=$PROFILE_URL")
  seed=$((seed + 1))
done
log "profiles up: ${profile_flags[*]}"

status=0
results=()
for n in ${nodes_list//,/ }; do
  dir="$report/n$n"
  rm -rf "$dir" && mkdir -p "$dir"
  window_s="$(awk -v m="$minutes" 'BEGIN {printf "%d", m * 60}')"
  python3 "$here/fleet_server.py" --nodes "$n" --leaf-size "$leaf_size" "${profile_flags[@]}" \
    --out "$dir" --lifetime $((window_s + 900)) >"$dir/server.log" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  for _ in $(seq 1 100); do [[ -s "$dir/port" ]] && break; sleep 0.1; done
  [[ -s "$dir/port" ]] || die "fleet server did not start: $(tail -n 5 "$dir/server.log")"
  cat >"$dir/prometheus.yml" <<EOF
global:
  scrape_interval: ${interval}s
  scrape_timeout: ${timeout}s
  evaluation_interval: ${interval}s
  external_labels: {shard: rig}
rule_files: ['$rules/*.rules.yml']
scrape_configs:
  - job_name: fabricwatch
    file_sd_configs: [{files: ['$dir/targets.json'], refresh_interval: 30s}]
EOF
  promtool check config "$dir/prometheus.yml" >"$dir/promtool.log" 2>&1 ||
    die "promtool rejected the rig's config: $(cat "$dir/promtool.log")"
  start_prometheus "shard-n$n" "$dir/prometheus.yml"
  shard_url="$PROM_URL" shard_pid="$PROM_PID"
  rss_guard "$shard_pid" $((rss_cap_gib * 1024 * 1024)) "$dir/rss_cap_hit" &
  pids+=($!)
  log "N=$n: prometheus $shard_url scraping $n nodes at ${interval}s for ${minutes} min"
  measure_flags=()
  if ((smoke)); then
    measure_flags=(--until-alerts --check)
    # The shipped pair: shard-by-fabric.yml scraping the nodes, global.yml federating it.
    start_shipped_shard "$dir"
    shipped_url="$PROM_URL"
    start_global "${shipped_url#http://}" "$dir"
    python3 "$here/fleet_measure.py" check --prom "$PROM_URL" --plan "$dir/plan.json" \
      --targets-of "$shipped_url" --timeout 80 --out "$dir/global.json" &
    fed_pid=$!
  fi
  rc=0
  python3 "$here/fleet_measure.py" measure --prom "$shard_url" --plan "$dir/plan.json" \
    --dashboard "$repo/dashboards/fleet-overview.json" --minutes "$minutes" \
    --interval "$interval" --out "$dir/result.json" "${measure_flags[@]}" || rc=$?
  if ((smoke)); then
    wait "$fed_pid" || rc=1
  fi
  # The rules and queries again with nothing ingesting or evaluating beside them
  # (fleet_measure.py quiet): Prometheus reloads a configuration without targets and rules
  # (the head keeps the data), and gets settle_s to write the stale markers of the dropped
  # targets (20 s; 3 s for the smoke's 20 nodes).
  if [[ -s "$dir/result.json" && ! -e "$dir/rss_cap_hit" ]]; then
    cp "$dir/prometheus.yml" "$dir/prometheus-scraping.yml"
    printf 'global: {scrape_interval: %ss, evaluation_interval: %ss}\n' "$interval" "$interval" \
      >"$dir/prometheus.yml"
    curl -sf -X POST --max-time 60 "$shard_url/-/reload" >/dev/null || rc=1
    sleep "$settle_s"
  fi
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  if [[ -s "$dir/result.json" && ! -e "$dir/rss_cap_hit" ]]; then
    python3 "$here/fleet_measure.py" quiet --prom "$shard_url" --result "$dir/result.json" \
      --dashboard "$repo/dashboards/fleet-overview.json" --interval "$interval" || rc=1
  fi
  kill "$shard_pid" 2>/dev/null || true
  wait "$shard_pid" 2>/dev/null || true
  rm -rf "$work/shard-n$n-data"
  if [[ -e "$dir/rss_cap_hit" ]]; then
    log "N=$n: prometheus passed ${rss_cap_gib} GiB resident ($(cat "$dir/rss_cap_hit") kB): no larger N"
    printf '{"nodes": %d, "rss_cap_hit_kb": %s}\n' "$n" "$(cat "$dir/rss_cap_hit")" >"$dir/result.json"
    results+=("$dir/result.json")
    break
  fi
  ((rc == 0)) || status=1
  results+=("$dir/result.json")
done
python3 "$here/fleet_report.py" "${results[@]}" >"$report/report.md"
cat "$report/report.md"
log "report: $report/report.md"
exit "$status"
}
main
