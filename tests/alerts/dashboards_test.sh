#!/usr/bin/env bash
# Static checks of dashboards/*.json: each loads as JSON, has a uid (unique across files) and a
# title, the datasource variable and the instance/device/netdev variables, unique panel ids,
# and every panel and query uses the datasource variable and has a query.
# Usage: bash tests/alerts/dashboards_test.sh [REPO_ROOT]
set -euo pipefail
ROOT="${1:-${FABRICWATCH_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}}"
cd "$ROOT"
command -v jq >/dev/null || { echo "FAIL: jq not installed (tools/install-deps.sh test)"; exit 1; }
fails=0
ok() { printf 'ok - %s\n' "$*"; }
bad() { printf 'not ok - %s\n' "$*"; fails=$((fails + 1)); }
files=(dashboards/*.json)
((${#files[@]} >= 5)) || bad "expected the 5 dashboards, found ${#files[@]}"
uids=()
for f in "${files[@]}"; do
  if ! jq -e . "$f" >/dev/null 2>&1; then bad "$f: not valid JSON"; continue; fi
  uid="$(jq -r '.uid // empty' "$f")"
  [[ -n "$uid" && "$uid" =~ ^[a-zA-Z0-9_-]{1,40}$ ]] || bad "$f: missing or invalid uid '$uid'"
  uids+=("$uid")
  [[ -n "$(jq -r '.title // empty' "$f")" ]] || bad "$f: no title"
  jq -e '.templating.list | any(.name == "datasource" and .type == "datasource" and .query == "prometheus")' "$f" \
    >/dev/null || bad "$f: no prometheus datasource variable"
  for v in instance device netdev; do
    jq -e --arg v "$v" '.templating.list | any(.name == $v and .type == "query")' "$f" >/dev/null ||
      bad "$f: no \$$v variable"
  done
  dup="$(jq -r '[.panels[] | (., (.panels // [])[]) | .id] | group_by(.) | map(select(length > 1)[0]) | .[]' "$f")"
  [[ -z "$dup" ]] || bad "$f: duplicate panel ids: $dup"
  n="$(jq '[.panels[] | select(.type != "row")] | length' "$f")"
  ((n > 0)) || bad "$f: no panels"
  nods="$(jq -r '.panels[] | select(.type != "row") | select(.datasource.uid != "${datasource}"
           or (.targets | length == 0) or any(.targets[]; .datasource.uid != "${datasource}" or (.expr // "") == ""))
           | .title' "$f")"
  [[ -z "$nods" ]] || bad "$f: panels without a query or not on \${datasource}: $nods"
  ok "$f: uid $uid, $n panels, $(jq '[.panels[].targets[]?] | length' "$f") queries"
done
dupuid="$(printf '%s\n' "${uids[@]}" | sort | uniq -d)"
[[ -z "$dupuid" ]] || bad "uid used by several dashboards: $dupuid"
if ((fails > 0)); then echo "FAIL: dashboards_test: $fails failed"; exit 1; fi
echo "PASS: dashboards_test"
