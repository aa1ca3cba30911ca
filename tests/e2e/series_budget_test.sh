#!/usr/bin/env bash
# The series budget (issue 26, README "Series budget"): an 8-port node of either kind exports at
# most SERIES_BUDGET series by default, counted on the simulator's hgx-roce and hgx-ib nodes once
# every module has been read and the count has settled; --metrics.all brings back every family.
# On failure (and always, for the log) it prints the largest families, so the budget cannot rot
# unnoticed: a new family has to declare its rule where it is declared (MetricDesc::budget,
# base/metric_sink.h; exporter/pipeline/series_budget_rules.cc gathers them).
# Usage: bash tests/e2e/series_budget_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init series_budget_test "$@"

SERIES_BUDGET=1200
SIM="${FABRICSIM:-$(dirname "$FABRICWATCH_BIN")/../tools/fabricsim/fabricsim}"
[[ -x "$SIM" ]] || fail "the simulator is not built ($SIM); it is part of the default build"

series() { grep -vc '^#' <<<"$1" || true; }
top_families() {
  # awk, not head, cuts the list: head exits after N lines, and sort's next write then dies of
  # SIGPIPE, which pipefail turns into the script's exit (a CI failure with no message).
  grep -v '^#' <<<"$1" | sed -E 's/[{ ].*//' | sort | uniq -c | sort -rn |
    awk -v n="${2:-12}" 'NR <= n {printf "    %5d %s\n", $1, $2}'
}

# settled PRESET [FLAGS...]: BODY is the exposition once every module has been read (optics reads
# a share of its modules per 5 s run; module-interval=5s reads all of them in each run, which
# changes when, not what, it exports) and the series count has not moved for 4 polls after two
# optics runs. Not in a subshell, so the EXIT trap still stops the agent on a failure.
settled() {
  local preset="$1" root="$E2E_TMP/$1"
  shift
  [[ -d "$root" ]] || "$SIM" build --preset "$preset" --root "$root" >/dev/null
  # Every source fabricsim writes: kernel log, the neighbours (peer), /proc (jobs).
  start_agent --path.sysfs="$root/sys" --path.ethtool="$root/ethtool" --path.kmsg="$root/kmsg" \
    --path.smp="$root/smp" --path.lldp="$root/lldp" --path.procfs="$root/proc" \
    --collector.optics.module-interval=5s "$@"
  local last=-1 same=0 n start deadline
  start=$(date +%s)
  deadline=$((start + 120))
  while ((same < 4 || $(date +%s) - start < 11)); do
    (($(date +%s) < deadline)) || fail "$preset: the series count did not settle in 120 s"
    BODY="$(scrape /metrics)"
    n="$(series "$BODY")"
    if ((n == last)); then same=$((same + 1)); else same=0; fi
    last=$n
    sleep 1
  done
  stop_agent
}

for preset in hgx-roce hgx-ib; do
  settled "$preset"
  body="$BODY"
  n="$(series "$body")"
  log "$preset: $n series by default; the largest families:"
  top_families "$body" >&2
  if ((n > SERIES_BUDGET)); then
    fail_later "$preset exports $n series, over the budget of $SERIES_BUDGET (README \"Series budget\")"
  else
    ok "$preset: $n series, within the budget of $SERIES_BUDGET"
  fi
  # Nothing the agent's own health alerts read is trimmed.
  for family in fabricwatch_collector_success fabricwatch_collector_last_sample_timestamp_seconds \
    fabric_rdma_port_info fabric_netdev_info; do
    grep -q "^$family" <<<"$body" || fail_later "$preset: $family is missing from the default exposition"
  done
  settled "$preset" --metrics.all
  n_all="$(series "$BODY")"
  ((n_all > n)) || fail_later "$preset: --metrics.all exports $n_all series, not more than $n"
  ok "$preset: --metrics.all exports every family: $n_all series"
done

# One family back, by prefix.
settled hgx-roce --metrics.include='fabric_pcie_acs_*'
grep -q '^fabric_pcie_acs_capable{' <<<"$BODY" || fail_later "--metrics.include did not bring fabric_pcie_acs_capable back"
ok "--metrics.include=fabric_pcie_acs_* exports the ACS bits again"
# A typo is an error at start, naming it.
if out="$("$FABRICWATCH_BIN" --path.sysfs="$E2E_TMP/hgx-roce/sys" --config.check \
  --metrics.include=fabric_pcie_acs_capabel 2>&1)"; then
  fail_later "an unknown --metrics.include was accepted"
fi
grep -q 'fabric_pcie_acs_capabel' <<<"$out" || fail_later "the error does not name the family: $out"
ok "an unknown --metrics.include is a configuration error naming it"
finish
