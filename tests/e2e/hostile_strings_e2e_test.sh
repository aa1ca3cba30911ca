#!/usr/bin/env bash
# Outputs safe for hostile input (README "Strings from devices", docs/design.md §5.6): the real
# agent on a fabricsim replay root where every string a collector reads (node_desc, fw_ver,
# board_id, hca_type, GUIDs, link layer, rate, operstate, duplex, address, local_cpulist, IOMMU
# group type, hwmon labels, one netdev name, ethtool statistic names, module EEPROM vendor, part,
# revision, serial and date code, the LLDP neighbour's system and port names) holds <script>, quotes, backslashes, newlines, a 10 KB string
# (refused by the sysfs reader: over one page), a 3 KB one (cut by the sink) or invalid UTF-8
# (tests/e2e/hostile_tree.py). The replay root itself sits under a path that
# contains "<script>alert(1)</script>" (the status page shows it).
# The ethtool passthrough is on, so hostile statistic names become metric names and HELP text.
# Checks: /metrics passes `promtool check metrics` and a strict parse of text format 0.0.4, is
# valid UTF-8, every label value is at most 1024 bytes, no metric name is over 200 bytes, no
# HELP text over 1024, and the hostile strings did reach it (HTML,
# an escaped quote, backslash and newline, U+FFFD, a truncation marker); the status page has no
# unescaped markup from them and shows the hostile netdev as text; both JSON endpoints parse; every log line is one valid JSON object;
# the agent is still alive and serving after it all.
#
# Needs the simulator (build target fabricsim) and promtool.
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/hostile_strings_e2e_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init hostile_strings_e2e_test "$@"

for tool in python3 promtool; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (make test installs it)"
done
FABRICSIM="${FABRICSIM_BIN:-$(dirname "$FABRICWATCH_BIN")/../tools/fabricsim/fabricsim}"
[[ -x "$FABRICSIM" ]] || fail "the simulator is not built ($FABRICSIM): cmake --build build --target fabricsim"

ROOT="$E2E_TMP/<script>alert(1)</script>/node"
mkdir -p "$ROOT"
"$FABRICSIM" build --preset roce-small --root "$ROOT" >/dev/null 2>"$E2E_TMP/fabricsim.err" ||
  fail "fabricsim build failed: $(cat "$E2E_TMP/fabricsim.err")"
summary="$(python3 "$(dirname "${BASH_SOURCE[0]}")/hostile_tree.py" "$ROOT")" ||
  fail "hostile_tree.py failed: $summary"
ok "hostile replay root: $summary"

# Passthrough on: hostile statistic names become metric names and HELP text too.
start_agent --path.sysfs="$ROOT/sys" --path.ethtool="$ROOT/ethtool" --path.lldp="$ROOT/lldp" \
  --log.format=json \
  --collector.optics.module-interval=1s --collector.ethtool.metrics-include='.*'
for c in netdev rdma ethtool optics topology peer; do
  wait_for_metric /metrics "fabricwatch_collector_last_sample_timestamp_seconds{collector=\"$c\"}" 15 ||
    fail "collector $c never ran; log:
$(tail -n 20 "$AGENT_LOG")"
done
# The first sample of every collector is in; give a second collection of each a chance to run
# over the same strings (a steady-state pass through the sink's storage).
wait_for_metric /metrics 'fabricwatch_collector_success{collector="optics"}' 10 ||
  fail "optics collector not reporting"
body="$E2E_TMP/metrics.txt"
# On a loaded machine (ctest -j2) the first scrape can precede the ethtool collection that
# carries the passthrough statistics: scrape until it is in (at most 10 s), then judge.
for _ in $(seq 1 50); do
  scrape /metrics >"$body"
  grep -q '^# HELP fabric_ethtool_[^ ]* Driver statistic "<script>' "$body" && break
  sleep 0.2
done
ok "agent serves /metrics on the hostile root ($(wc -c <"$body") bytes)"

# promtool parses, then lints names. The passthrough keeps mlx5's own statistic names, and two of
# them (rx_bits_phy, rx_corrected_bits_phy) draw its "base unit" lint: a naming note on the
# driver's names, not a parse problem. Anything else, a parse error above all, fails.
promtool_out="$(promtool check metrics <"$body" 2>&1)" || true
unexpected="$(grep -Ev '^fabric_ethtool_[a-z0-9_]+ use base unit "bytes" instead of "bits"$' <<<"$promtool_out" || true)"
[[ -z "$unexpected" ]] || fail "promtool check metrics:
$(head -c 2000 <<<"$unexpected")"
ok "promtool check metrics: parses; no lint but the driver's own bit-counter names"

parse_out="$(python3 - "$body" <<'PY'
import re, sys
data = open(sys.argv[1], "rb").read()
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit(f"exposition is not UTF-8: {e}")
name = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
value = r'"((?:[^"\\\n]|\\[\\"n])*)"'
label = rf"([a-zA-Z_][a-zA-Z0-9_]*)={value}"
sample = re.compile(rf"^({name})(?:\{{({label}(?:,{label})*)?\}})? (\S+)( -?\d+)?$")
label_re = re.compile(label)
problems, values = [], []
for n, line in enumerate(text.split("\n")[:-1], 1):
    if line.startswith("# HELP ") or line.startswith("# TYPE "):
        family = line.split(" ", 3)[2]
        if len(family) > 200:
            problems.append(f"line {n}: a {len(family)}-byte metric name")
        if line.startswith("# HELP ") and len(line.encode()) > 8 + len(family) + 2 * 1024:
            problems.append(f"line {n}: HELP of {family} is {len(line.encode())} bytes")
        continue
    m = sample.match(line)
    if not m:
        problems.append(f"line {n} does not parse: {line[:160]!r}")
        continue
    for lm in label_re.finditer(m.group(2) or ""):
        raw = lm.group(2)
        v = re.sub(r"\\(.)", lambda e: "\n" if e.group(1) == "n" else e.group(1), raw)
        values.append((m.group(1), lm.group(1), v))
        if len(v.encode()) > 1024:
            problems.append(f"line {n}: {lm.group(1)} is {len(v.encode())} bytes (> 1024)")
if not text.endswith("\n"):
    problems.append("exposition does not end in a newline")
reached = {
    "html": any("<script>" in v or "<b>" in v for _, _, v in values),
    "quote": any('"' in v for _, _, v in values),
    "backslash": any("\\" in v for _, _, v in values),
    "newline": any("\n" in v for _, _, v in values),
    "replacement": any("\ufffd" in v for _, _, v in values),
    "truncated": any(v.endswith("\u2026[truncated]") for _, _, v in values),
    "module_vendor": any(f == "fabric_optics_info" and l == "vendor" and v.strip() for f, l, v in values),
    "hostile_netdev": any(l == "netdev" and "<b>" in v for _, l, v in values),
    "hostile_peer": any(l == "peer_name" and v == "<b>leaf\"x'\\&01" for _, l, v in values),
    "passthrough_help": re.search(r'^# HELP fabric_ethtool_\S+ Driver statistic "<script>', text, re.M) is not None,
}
for what, seen in reached.items():
    if not seen:
        problems.append(f"no label value shows the hostile {what} strings (did they reach the sink?)")
print(f"{len(values)} label values")
for p in problems[:20]:
    print(p)
PY
)" || fail "exposition parse: $parse_out"
[[ "$(wc -l <<<"$parse_out")" -eq 1 ]] || fail "exposition:
$parse_out"
ok "strict 0.0.4 parse: $parse_out, all valid UTF-8 and <= 1024 bytes; HTML, quotes, backslashes, newlines, U+FFFD and truncation reached the labels"

# The status page (README "Status page"): its one <script> element is its own refresh script;
# the hostile sysfs path and the hostile netdev name (in the port grid) are text.
page="$(scrape /)"
[[ "$(grep -o '<script' <<<"$page" | wc -l)" == 1 ]] && grep -q '<script>(function(){var busy' <<<"$page" ||
  fail "status page holds a <script> element that is not its own:
$(grep -o '.\{40\}<script.\{40\}' <<<"$page" | head -n 5)"
grep -q '<b>' <<<"$page" && fail "status page holds unescaped markup:
$(grep -o '.\{40\}<b>.\{40\}' <<<"$page" | head -n 5)"
grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' <<<"$page" ||
  fail "status page does not show the (escaped) hostile sysfs path"
grep -q 'data-netdev="&lt;b&gt;&quot;x&#39;\\&amp;�"' <<<"$page" ||
  fail "status page port grid does not show the (escaped) hostile netdev: $(grep -o 'data-netdev="[^"]*"' <<<"$page" | head -n 3)"
grep -q 'leaf&quot;x&#39;\\&amp;01 Ethernet0&lt;script&gt;alert(2)&lt;/script&gt;' <<<"$page" ||
  fail "status page does not show the (escaped) hostile LLDP neighbour: $(grep -o '.\{20\}leaf&quot;.\{60\}' <<<"$page" | head -n 2)"
python3 -c 'import sys; sys.stdin.buffer.read().decode("utf-8")' <<<"$page" ||
  fail "status page is not UTF-8"
ok "status page: the hostile path, netdev and LLDP neighbour are shown escaped, no <script> element but its own"

for api in /api/v1/anomalies /api/v1/link-events; do
  json="$(scrape "$api")"
  python3 -c 'import json, sys; json.loads(sys.stdin.buffer.read().decode("utf-8"))' <<<"$json" ||
    fail "$api is not valid JSON: $(head -c 300 <<<"$json")"
  [[ "$(http_code "$api")" == 200 ]] || fail "$api: HTTP $(http_code "$api")"
done
ok "JSON API: /api/v1/anomalies and /api/v1/link-events parse"

# Log lines carry the hostile strings too (collector errors quote what they read): each line
# must stay one JSON object.
bad_lines="$(python3 - "$AGENT_LOG" <<'PY'
import json, sys
bad = 0
for raw in open(sys.argv[1], "rb").read().split(b"\n"):
    if not raw:
        continue
    try:
        json.loads(raw.decode("utf-8"))
    except Exception:
        bad += 1
        print(repr(raw[:160]), file=sys.stderr)
print(bad)
PY
)"
[[ "$bad_lines" == 0 ]] || fail "$bad_lines log lines are not single JSON objects"
ok "every log line is one valid JSON object ($(grep -c . "$AGENT_LOG") lines)"

# Still alive and serving after all of it, a second time from the same (reused) storage.
kill -0 "$AGENT_PID" || fail "the agent died"
[[ "$(http_code /healthz)" == 200 ]] || fail "/healthz does not answer 200"
later="$(promtool check metrics <<<"$(scrape /metrics)" 2>&1 |
  grep -Ev '^fabric_ethtool_[a-z0-9_]+ use base unit "bytes" instead of "bits"$' || true)"
[[ -z "$later" ]] || fail "a later scrape fails promtool: $(head -c 1000 <<<"$later")"
stop_agent
((STOP_RC == 0)) || fail "exit $STOP_RC on SIGTERM"
ok "agent alive, /healthz 200, later scrape clean, clean exit"

finish
