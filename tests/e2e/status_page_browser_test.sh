#!/usr/bin/env bash
# The status page at / in a real browser (issue 25 item 6, README "Status page"): headless
# Chromium loads the page of an agent on a fabricsim node where a PFC storm (mlx5_0), a hard link
# flap (mlx5_3) and a hot module (mlx5_6) run at once (tools/fabricsim/scenarios/status_page.yaml).
# Through the DOM Chromium dumps after the page's own 10 s refresh has run (virtual time):
#   - every anomaly /api/v1/anomalies lists (before and after the load) is an <article> with its
#     detector, entity and severity, marked in text;
#   - every port of fabric_rdma_port_info is a row of the port grid; the rows an anomaly names
#     say "abnormal" in text, the others "ok"; the storm's PFC cell, the flap's state cell and
#     the hot module's temperature cell carry the text mark;
#   - every row's peer cell names the leaf switch and switch port fabricsim cabled it to (its
#     --path.lldp replay: port i on leaf01-rail<i+1>), as fabric_port_peer_info says;
#   - the page logged nothing to the console (no script error, no Content-Security-Policy
#     refusal), after a probe shows that console lines do reach the log;
#   - every request made for the page went to the agent on 127.0.0.1 (Chromium's net log; its
#     own background requests are not the page's), and the host resolver maps every other name
#     to nothing, so an external load could not succeed anyway.
# Screenshots at desktop (1280x900) and phone (390x844) widths are kept under the build tree
# (tests/artifacts/status-desktop.png, status-phone.png); their paths are printed.
#
# Needs chromium (tools/install-deps.sh test) and the simulator (build target fabricsim).
# Skips (77) where Chromium is not installed or cannot start.
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/status_page_browser_test.sh <fabricwatch>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init status_page_browser_test "$@"

command -v python3 >/dev/null || fail "python3 is not installed (make test installs it)"
CHROMIUM="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
[[ -n "$CHROMIUM" ]] || skip "chromium is not installed (tools/install-deps.sh test installs it)"
FABRICSIM="${FABRICSIM_BIN:-$(dirname "$FABRICWATCH_BIN")/../tools/fabricsim/fabricsim}"
[[ -x "$FABRICSIM" ]] || fail "the simulator is not built ($FABRICSIM): cmake --build build --target fabricsim"
ARTIFACTS="${STATUS_PAGE_ARTIFACTS:-$(cd "$(dirname "$FABRICWATCH_BIN")/.." && pwd)/tests/artifacts}"
mkdir -p "$ARTIFACTS"

# Headless, no sandbox (the test may run as root in a container), a profile of its own, none of
# the browser's own background services, and a resolver that resolves nothing but loopback.
chrome() {
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$E2E_TMP/profile" --no-first-run --no-default-browser-check \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-default-apps --disable-extensions \
    --host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1" \
    --enable-logging=stderr --log-level=0 "$@"
}

# --- Chromium starts, and its console lines reach stderr --------------------------------------
probe="$(chrome --virtual-time-budget=1000 --dump-dom \
  "data:text/html,<script>console.error('status-probe')</script>" 2>&1 >/dev/null)" ||
  skip "chromium cannot start here ($CHROMIUM): $(tail -n 3 <<<"$probe")"
grep -q ':CONSOLE.*"status-probe"' <<<"$probe" ||
  fail "a console.error of a probe page did not reach Chromium's log, so the console check below would see nothing:
$(tail -n 5 <<<"$probe")"
ok "chromium $("$CHROMIUM" --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -n 1) starts headless; console lines reach its log"

# --- the node: three faults at once -------------------------------------------------------------
root="$E2E_TMP/node"
"$FABRICSIM" build --preset hgx-roce --root "$root" >/dev/null 2>"$E2E_TMP/fabricsim.err" ||
  fail "fabricsim build failed: $(cat "$E2E_TMP/fabricsim.err")"
"$FABRICSIM" run --root "$root" \
  --scenario "$FABRICWATCH_SOURCE_DIR/tools/fabricsim/scenarios/status_page.yaml" \
  >"$E2E_TMP/fabricsim.out" 2>&1 &
register_pid $!
# thermal_drift's warning-for and alarm-for shortened (defaults 2m and 1m) so that the hot
# module raises within the test; module EEPROMs read every second.
start_agent --path.sysfs="$root/sys" --path.ethtool="$root/ethtool" --path.kmsg="$root/kmsg" \
  --path.smp="$root/smp" --path.lldp="$root/lldp" \
  --collector.optics.module-interval=1s \
  --detector.thermal_drift.warning-for=3s --detector.thermal_drift.alarm-for=3s
# All three critical at once: the storm source, the hard flap, the module past its alarm.
all_critical() {
  scrape /api/v1/anomalies | python3 -c '
import json, sys
have = {(a["detector"], a["severity"]) for a in json.load(sys.stdin)["anomalies"]}
sys.exit(0 if {("pfc_storm", "critical"), ("link_flap", "critical"),
               ("thermal_drift", "critical")} <= have else 1)'
}
for _ in $(seq 1 200); do
  all_critical && break
  sleep 0.2
done
all_critical || fail "pfc_storm, link_flap and thermal_drift were not all critical within 40 s:
$(scrape /api/v1/anomalies)
$(tail -n 20 "$AGENT_LOG")"
ok "pfc_storm, link_flap and thermal_drift are critical at once"

# --- the page in the browser --------------------------------------------------------------------
url="http://127.0.0.1:$AGENT_PORT/"
scrape /api/v1/anomalies >"$E2E_TMP/anomalies-before.json"
scrape /metrics >"$E2E_TMP/metrics.txt"
# 12 s of virtual time: the page's refresh (every 10 s) fetches / again and swaps <main>, so the
# DOM checked below is the refreshed one.
chrome --virtual-time-budget=12000 --log-net-log="$E2E_TMP/net.json" --dump-dom "$url" \
  >"$E2E_TMP/dom.html" 2>"$E2E_TMP/chrome.log" ||
  fail "chromium --dump-dom failed: $(tail -n 5 "$E2E_TMP/chrome.log")"
scrape /api/v1/anomalies >"$E2E_TMP/anomalies-after.json"

console="$(grep ':CONSOLE' "$E2E_TMP/chrome.log" || true)"
[[ -z "$console" ]] || fail "the page logged to the console:
$console"
ok "no console message from the page (no script error, no Content-Security-Policy refusal)"

requests="$(python3 - "$E2E_TMP/net.json" "$url" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
page_requests, outside = 0, []
for event in log["events"]:
    p = event.get("params", {})
    if names.get(event["type"]) != "URL_REQUEST_START_JOB" or "url" not in p:
        continue
    # The page's own requests run in its top frame's network partition; the browser's own
    # (update checks, account probes) run in none ("null null") or in their own site's.
    if not p.get("network_isolation_key", "").startswith("http://127.0.0.1"):
        continue
    page_requests += 1
    if not p["url"].startswith("http://127.0.0.1:"):
        outside.append(p["url"])
if outside:
    sys.exit("the page loaded from outside: " + " ".join(outside[:5]))
if page_requests < 2:
    sys.exit(f"{page_requests} request(s) for the page: the refresh fetch did not run")
print(page_requests)
PY
)" || fail "net log: $requests"
ok "all $requests requests of the page (the load and its refresh fetch) went to 127.0.0.1"

checks="$(python3 - "$E2E_TMP/dom.html" "$E2E_TMP/anomalies-before.json" \
  "$E2E_TMP/anomalies-after.json" "$E2E_TMP/metrics.txt" <<'PY'
import json, re, sys
from html.parser import HTMLParser

MARK = "\u26a0"

class Dom(HTMLParser):
    """Articles (anomalies) and port-grid rows with their cells' classes and text."""
    def __init__(self):
        super().__init__()
        self.articles, self.rows, self.stack = [], [], []
        self.article = self.row = self.cell = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "article":
            self.article = {"attrs": a, "text": ""}
            self.articles.append(self.article)
        elif tag == "tr" and "data-port" in a:
            self.row = {"attrs": a, "cells": []}
            self.rows.append(self.row)
        elif tag == "td" and self.row is not None:
            self.cell = {"class": a.get("class", ""), "text": ""}
            self.row["cells"].append(self.cell)
    def handle_endtag(self, tag):
        if tag == "article":
            self.article = None
        elif tag == "tr":
            self.row = None
        elif tag == "td":
            self.cell = None
    def handle_data(self, data):
        if self.article is not None:
            self.article["text"] += data
        if self.cell is not None:
            self.cell["text"] += data

dom = Dom()
dom.feed(open(sys.argv[1], encoding="utf-8").read())
problems = []

def key(a):
    return (a["detector"], a["severity"], frozenset(f"{k}={v}" for k, v in a["entity"].items()))

before = {key(a): a for a in json.load(open(sys.argv[2]))["anomalies"]}
after = {key(a) for a in json.load(open(sys.argv[3]))["anomalies"]}
# An anomaly that raised or cleared while the browser loaded may be either way; one active
# before and after must be on the page.
stable = [a for k, a in before.items() if k in after]
for a in stable:
    want = key(a)
    found = [x for x in dom.articles
             if (x["attrs"].get("data-detector"), x["attrs"].get("data-severity"),
                 frozenset(x["attrs"].get("data-entity", "").split())) == want]
    if not found:
        problems.append(f"anomaly {want[0]} {want[1]} {sorted(want[2])} has no article")
    elif MARK + " " + a["severity"] not in found[0]["text"] or a["reason"][:60] not in found[0]["text"]:
        problems.append(f"anomaly {want[0]}: article lacks its mark, severity or reason")

ports = set(re.findall(r'^fabric_rdma_port_info\{device="([^"]+)",port="([^"]+)"',
                       open(sys.argv[4]).read(), re.M))
netdev_of = {}
for line in open(sys.argv[4]):
    m = re.match(r'fabric_rdma_port_info\{device="([^"]+)",port="([^"]+)",link_layer="[^"]*",netdev="([^"]*)"', line)
    if m:
        netdev_of[(m[1], m[2])] = m[3]
rows = {tuple(r["attrs"]["data-port"].split("/", 1)): r for r in dom.rows}
if not ports:
    problems.append("no fabric_rdma_port_info in /metrics")
for port in sorted(ports):
    if port not in rows:
        problems.append(f"port {port[0]}/{port[1]} has no row in the port grid")
named = {a["entity"].get("netdev") for a in stable} | {a["entity"].get("device") for a in stable}
header = ["status", "port", "state", "rate", "width", "BER", "PFC pause", "module temp",
          "Rx power", "peer", "jobs", "anomalies"]
for port, row in rows.items():
    cells = {name: c for name, c in zip(header, row["cells"])}
    status = cells["status"]["text"].strip()
    if netdev_of.get(port) in named or port[0] in named:
        if status != MARK + " abnormal" or "bad" not in cells["status"]["class"]:
            problems.append(f"port {'/'.join(port)} is named by an anomaly but its row says {status!r}")
    elif status not in ("\u2713 ok", MARK + " abnormal"):
        problems.append(f"port {'/'.join(port)}: status cell {status!r}")

def expect_mark(device, column, detector):
    row = rows.get((device, "1"))
    if row is None:
        return
    cell = dict(zip(header, row["cells"]))[column]
    if not cell["text"].startswith(MARK) or "bad" not in cell["class"]:
        problems.append(f"{device} ({detector}): {column} cell not marked: {cell['text']!r}")

# Each port's far end: fabric_port_peer_info (fabricsim's LLDP replay) in the row's peer cell,
# and every port has one (the hgx-roce preset is cabled rail-optimised, port i to rail i+1).
peers = {}
for m in re.finditer(r'^fabric_port_peer_info\{([^}]*)\}', open(sys.argv[4]).read(), re.M):
    labels = dict(re.findall(r'(\w+)="([^"]*)"', m[1]))
    peers[(labels["device"], labels["port"])] = (labels["peer_name"], labels["peer_port"])
rails = set()
for port in sorted(ports):
    if port not in peers:
        problems.append(f"port {'/'.join(port)} has no fabric_port_peer_info")
        continue
    name, switch_port = peers[port]
    rails.add(name)
    if not re.fullmatch(r"leaf01-rail[1-8]", name) or not switch_port.startswith("Ethernet"):
        problems.append(f"port {'/'.join(port)}: peer {name} {switch_port} is not fabricsim's leaf")
    cell = dict(zip(header, rows[port]["cells"]))["peer"]["text"] if port in rows else ""
    if not cell.startswith(f"{name} {switch_port}"):
        problems.append(f"port {'/'.join(port)}: peer cell {cell!r}, want {name} {switch_port}")
if len(rails) != len(ports):
    problems.append(f"{len(ports)} ports face {len(rails)} rail leaves: {sorted(rails)}")

expect_mark("mlx5_0", "PFC pause", "pfc_storm")
expect_mark("mlx5_3", "state", "link_flap")
expect_mark("mlx5_6", "module temp", "thermal_drift")
for p in problems:
    print(p)
if problems:
    sys.exit(1)
print(f"{len(stable)} anomalies and {len(ports)} ports on the page with their marks, "
      f"each port's peer on its own rail leaf ({len(rails)} leaves)")
PY
)" || fail "DOM checks:
$checks"
ok "$checks"

# --- screenshots --------------------------------------------------------------------------------
for shot in desktop:1280,900 phone:390,844; do
  name="${shot%%:*}"
  file="$ARTIFACTS/status-$name.png"
  rm -f "$file"
  chrome --virtual-time-budget=2000 --window-size="${shot#*:}" --screenshot="$file" "$url" \
    >/dev/null 2>"$E2E_TMP/shot.log" || fail "screenshot $name: $(tail -n 3 "$E2E_TMP/shot.log")"
  [[ -s "$file" ]] || fail "screenshot $name not written"
  ok "screenshot ($name, ${shot#*:}): $file"
done
finish
