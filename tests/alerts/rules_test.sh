#!/usr/bin/env bash
# Static checks of alerts/ and runbooks/: promtool check + unit tests, one unit test per alert,
# a runbook section per runbook_url, rate()/increase() only (no delta()), severities, and the
# Alertmanager example (amtool check-config, routing by severity).
# Usage: bash tests/alerts/rules_test.sh [REPO_ROOT]
set -euo pipefail
ROOT="${1:-${FABRICWATCH_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}}"
cd "$ROOT"
fails=0
ok() { printf 'ok - %s\n' "$*"; }
bad() { printf 'not ok - %s\n' "$*"; fails=$((fails + 1)); }
for t in promtool amtool; do
  command -v "$t" >/dev/null || { echo "FAIL: $t not installed (tools/install-deps.sh test)"; exit 1; }
done

rules=(alerts/*.rules.yml)
((${#rules[@]} > 0)) || { echo "FAIL: no alerts/*.rules.yml"; exit 1; }
if out="$(promtool check rules "${rules[@]}" 2>&1)"; then
  ok "promtool check rules: $(grep -o '[0-9]* rules found' <<<"$out" | awk '{s+=$1} END {print s}') rules in ${#rules[@]} files"
else
  bad "promtool check rules:"$'\n'"$out"
fi
if out="$(cd alerts/tests && promtool test rules ./*.test.yml 2>&1)"; then
  ok "promtool test rules: $(ls alerts/tests/*.test.yml | wc -l) files, $(grep -c '^  - interval:' alerts/tests/*.test.yml | awk -F: '{s+=$2} END {print s}') test groups"
else
  bad "promtool test rules:"$'\n'"$out"
fi

alerts="$(grep -ho '^ *- alert: [A-Za-z0-9]*' "${rules[@]}" | awk '{print $3}' | sort -u)"
for a in $alerts; do
  # Each alert needs a test that expects it to fire (exp_labels under its alertname) ...
  if ! awk -v a="$a" '$1 == "alertname:" { cur = $2 } $1 == "-" && $2 == "alertname:" { cur = $3 } cur == a && /exp_labels:/ { found = 1 } END { exit !found }' \
      alerts/tests/*.test.yml; then
    bad "$a: no promtool test expects it to fire"
  fi
  grep -q "^## $a\$" runbooks/README.md || bad "$a: no section '## $a' in runbooks/README.md"
done
ok "$(wc -w <<<"$alerts") alerts, each with a firing unit test and a runbook section"

# Every runbook_url points at an existing section (GitHub anchors: lower-case heading).
while read -r anchor; do
  grep -qi "^## ${anchor}\$" runbooks/README.md || bad "runbook_url anchor #$anchor has no section"
done < <(grep -ho 'runbook_url: .*#[A-Za-z0-9]*' "${rules[@]}" | sed 's/.*#//' | sort -u)

if grep -hv '^ *#' "${rules[@]}" | grep -nE '\b(i?delta)\('; then bad "delta()/idelta() used on counters: use rate()/increase()"; fi
bad_sev="$(grep -hE '^ +severity: ' "${rules[@]}" | awk '{print $2}' | sort -u | grep -vxE 'critical|warning|info|none' || true)"
[[ -z "$bad_sev" ]] || bad "unknown severities: $bad_sev"
ok "no delta(); severities within critical/warning/info/none"

# Issue 24: every anomaly alert joins the peer tables and falls back to the finding alone, so an
# alert without a known neighbour still fires (alerts/tests/peer.test.yml tests the behaviour).
A=alerts/fabricwatch-anomaly.rules.yml
n_alerts="$(grep -c '^ *- alert: ' "$A")"
n_fallback="$(grep -c '^ *or ignoring (peer_name, peer_port)$' "$A")"
if [[ "$n_alerts" == "$n_fallback" ]]; then
  ok "$A: $n_alerts alerts, each with the peer join and its no-peer fallback"
else
  bad "$A: $n_alerts alerts but $n_fallback 'or ignoring (peer_name, peer_port)' fallbacks"
fi

AM=alerts/alertmanager.example.yml
if out="$(amtool check-config "$AM" 2>&1)"; then ok "amtool check-config $AM"; else bad "amtool check-config:"$'\n'"$out"; fi
route() { amtool config routes test --config.file="$AM" "$@" 2>/dev/null; }
check_route() {
  local want="$1"; shift
  local got; got="$(route "$@")"
  [[ "$got" == "$want" ]] && ok "route $* -> $got" || bad "route $*: got '$got', want '$want'"
}
check_route pager severity=critical alertname=FabricPfcStormSource instance=n1:9868 fabric=f leaf=l
check_route ticket severity=warning alertname=FabricBerGrowth instance=n1:9868
check_route pager severity=critical alertname=FabricLinkDegraded instance=n1:9868 device=mlx5_0 port=1
check_route ticket severity=warning alertname=FabricLinkDegraded instance=n1:9868 netdev=eth0
check_route ticket severity=warning alertname=FabricwatchTargetDown instance=n1:9868
check_route pager severity=critical alertname=FabricDriverFault instance=n1:9868 device=mlx5_0 netdev=eth0
check_route ticket severity=warning alertname=FabricwatchKernelLogRecordsLost instance=n1:9868
check_route null severity=info alertname=FabricwatchKernelLogUnavailable instance=n1:9868 collector=kmsg
check_route null severity=info alertname=FabricAnomalyInfo
check_route heartbeat severity=none alertname=FabricwatchWatchdog
check_route pager severity=critical alertname=FabricPeerSwitchSuspect scope=switch peer_name=leaf07
check_route null severity=none alertname=FabricwatchDrainPeerSuspect drain_gate=peer_suspect instance=n1:9868 peer_name=leaf07
# The switch alert mutes the per-port alerts facing it by peer_name (alertmanager cannot test
# inhibition offline: check that the rule is there, with the labels the rules set).
if awk '/source_matchers: \[.alertname="FabricPeerSwitchSuspect".\]/ { n = NR }
         n && NR == n + 1 && /target_matchers:.*FabricLinkFlapping/ { t = 1 }
         n && NR == n + 2 && t && /equal: \[fabric, peer_name\]/ { found = 1 }
         END { exit !found }' "$AM"
then ok "inhibit: FabricPeerSwitchSuspect mutes the per-port alerts by [fabric, peer_name]"
else bad "inhibit: no FabricPeerSwitchSuspect rule with equal [fabric, peer_name]"; fi

if ((fails > 0)); then echo "FAIL: rules_test: $fails failed"; exit 1; fi
echo "PASS: rules_test"
