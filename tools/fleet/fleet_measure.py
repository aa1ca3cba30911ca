#!/usr/bin/env python3
"""The fleet rig's measurements (issue 26 item 3), from Prometheus's own metrics and HTTP API.

  fleet_measure.py measure --prom URL --plan DIR/plan.json --dashboard dashboards/fleet-overview.json
                           --minutes 5 --interval 15 --out N.json [--until-alerts]
  fleet_measure.py check --prom URL --plan DIR/plan.json --timeout 60 [--targets-of SHARD_URL]
                         (federation: the global's fleet alerts; the shard's targets)
  fleet_measure.py quiet --prom URL --result N.json --dashboard ...   (after the targets stop)

measure watches a running Prometheus for --minutes, reading its /metrics every --interval:
head series (prometheus_tsdb_head_series), resident memory (process_resident_memory_bytes, the
largest seen), ingestion (prometheus_tsdb_head_samples_appended_total over the window after
the first two scrape rounds), and each rule group's evaluation time
(prometheus_rule_group_last_duration_seconds: median and largest over the window; missed
iterations; the slowest rules by their last evaluationTime from /api/v1/rules). Then, through the HTTP API, it times every query of the dashboard (panels and
template variables; $instance and the other multi-value variables as "All", i.e. .*, the fleet
scope) as an instant query and as a range query over the window at the scrape interval (median
of three, client side), counts up and down targets (every misbehaving node of the plan must be
down, every other node up), series per node from scrape_samples_scraped, and the firing and
pending alerts of the fleet rule group against the plan's must_fire and may_fire.
With --until-alerts the window ends early once every must_fire alert fires (the smoke).
Exit status 0 when it measured, whatever the figures; 1 when --check is given and the fleet
alerts or the targets are not what the plan says (the smoke test's assertion).
"""

import argparse
import json
import re
import statistics
import sys
import time
import urllib.parse
import urllib.request

kFleetGroup = "fabricwatch-fleet"
kRepeats = 3
kBestOf = 5
# Grafana's built-in variables, as Grafana would expand them at a 15 s scrape interval.
kBuiltins = {"$__rate_interval": "1m", "$__interval": "15s", "$__range": "1h"}


def http_get(url, timeout=120):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def api(prom, path, **params):
    url = prom + path + ("?" + urllib.parse.urlencode(params, doseq=True) if params else "")
    d = json.loads(http_get(url))
    if d.get("status") != "success":
        raise RuntimeError("%s: %s" % (path, d))
    return d["data"]


def self_metrics(prom):
    """Prometheus's own /metrics as {name: [(labels dict, value)]} (what it exports is plain
    text format without exemplars; a label value with a comma or brace is not expected)."""
    out = {}
    for line in http_get(prom + "/metrics", timeout=30).decode().splitlines():
        if not line or line.startswith("#"):
            continue
        head, _, value = line.rpartition(" ")
        name, _, rest = head.partition("{")
        labels = {}
        for pair in rest.rstrip("}").split('",'):
            k, sep, v = pair.partition('="')
            if sep:
                labels[k] = v.rstrip('"')
        try:
            out.setdefault(name, []).append((labels, float(value)))
        except ValueError:
            pass
    return out


def first(metrics, name):
    return metrics.get(name, [({}, float("nan"))])[0][1]


def watch(prom, minutes, interval, until, plan):
    """Samples Prometheus's own metrics for the window; returns the series of samples."""
    samples = []
    start = time.time()
    deadline = start + minutes * 60
    while True:
        m = self_metrics(prom)
        samples.append({
            "t": time.time(), "rss": first(m, "process_resident_memory_bytes"),
            "head_series": first(m, "prometheus_tsdb_head_series"),
            "appended": sum(v for _, v in m.get("prometheus_tsdb_head_samples_appended_total", [])),
            "groups": {l.get("rule_group", "?").split(";")[-1]: v
                       for l, v in m.get("prometheus_rule_group_last_duration_seconds", [])},
            "missed": sum(v for _, v in m.get("prometheus_rule_group_iterations_missed_total", [])),
        })
        if time.time() >= deadline:
            return samples
        if until and not missing_alerts(fleet_alerts(prom), plan["must_fire"]):
            return samples
        time.sleep(min(interval, max(0.5, deadline - time.time())))


def dashboard_queries(path):
    """(title, expr) of every panel target and template variable query of a dashboard."""
    with open(path) as f:
        d = json.load(f)
    out = []

    def panels(items):
        for p in items:
            yield p
            yield from panels(p.get("panels", []))

    for p in panels(d.get("panels", [])):
        for t in p.get("targets", []):
            if t.get("expr"):
                out.append((p.get("title", "?"), t["expr"]))
    for v in d.get("templating", {}).get("list", []):
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if v.get("type") == "query" and q:
            out.append(("variable $" + v["name"], q))
    variables = [v["name"] for v in d.get("templating", {}).get("list", []) if v.get("type") == "query"]
    return out, variables


def expand(expr, variables):
    for name, value in kBuiltins.items():
        expr = expr.replace(name, value)
    for name in variables:
        expr = expr.replace("${%s}" % name, ".*").replace("$" + name, ".*")
    return expr


def timed(fn, best_of=0):
    """Median of kRepeats runs; with best_of, the fastest of that many (the quiet figures: on a
    shared machine the fastest run is the one least disturbed by other work)."""
    times, result = [], None
    for _ in range(best_of or kRepeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return (min(times) if best_of else statistics.median(times)), result


def time_query(prom, title, expr, start, end, step, best_of=0):
    """Median latency of the expression as an instant and as a range query; label_values(...)
    variables go to the label values API, as Grafana sends them."""
    row = {"title": title, "expr": expr}
    try:
        if expr.startswith("label_values("):
            inner = expr[len("label_values("):-1]
            selector, _, label = inner.rpartition(",")
            row["instant_s"], res = timed(lambda: api(
                prom, "/api/v1/label/%s/values" % label.strip(), **{"match[]": selector.strip(),
                                                                     "start": start, "end": end}), best_of)
            row["series"] = len(res)
            return row
        row["instant_s"], res = timed(lambda: api(prom, "/api/v1/query", query=expr, time=end), best_of)
        row["series"] = len(res["result"])
        row["range_s"], res = timed(lambda: api(prom, "/api/v1/query_range", query=expr,
                                                start=start, end=end, step=step), best_of)
        row["range_series"] = len(res["result"])
    except (OSError, RuntimeError, ValueError) as e:
        row["error"] = str(e)[:300]
    return row


def fleet_alerts(prom):
    names = set()
    for g in api(prom, "/api/v1/rules")["groups"]:
        if g["name"] == kFleetGroup:
            names.update(r["name"] for r in g["rules"] if r.get("type") == "alerting")
    return [a for a in api(prom, "/api/v1/alerts")["alerts"] if a["labels"]["alertname"] in names]


def slowest_rules(prom, count=6):
    """The rules with the longest last evaluation (Prometheus's /api/v1/rules evaluationTime)."""
    rules = [{"group": g["name"], "rule": r["name"], "s": r.get("evaluationTime", 0)}
             for g in api(prom, "/api/v1/rules")["groups"] for r in g["rules"]]
    return sorted(rules, key=lambda r: -r["s"])[:count]


def findings_by_peer(prom, plan):
    """What the peer rules saw in the last 10 minutes, per peer switch: the profiles and
    findings of the nodes counted (the evidence behind FabricPeerSwitchSuspect, expected or not)."""
    profile = {n["instance"]: n["profile"] for n in plan["nodes"]}
    out = {}
    query = 'max_over_time(port:fabric_anomaly_active:peer[10m])'
    for r in api(prom, "/api/v1/query", query=query)["result"]:
        m = r["metric"]
        key = "%s %s/%s/%s" % (profile.get(m.get("instance"), "?"), m.get("detector"), m.get("severity"),
                               m.get("role", ""))
        peer = out.setdefault(m.get("peer_name", ""), {})
        peer[key] = peer.get(key, 0) + 1
    return out


def matches(alert, want):
    """want: label values, or, where the name ends in ~, a regular expression (plan.json)."""
    return all(re.fullmatch(v, alert["labels"].get(k[:-1], "")) if k.endswith("~")
               else alert["labels"].get(k) == v for k, v in want.items())


def missing_alerts(alerts, must):
    firing = [a for a in alerts if a["state"] == "firing"]
    return [w for w in must if not any(matches(a, w) for a in firing)]


def judge_alerts(alerts, plan):
    """Every must_fire firing; nothing firing or pending that is neither must nor may."""
    allowed = plan["must_fire"] + plan["may_fire"]
    unexpected = [{"state": a["state"], **a["labels"]} for a in alerts
                  if not any(matches(a, w) for w in allowed)]
    return {"missing": missing_alerts(alerts, plan["must_fire"]), "unexpected": unexpected,
            "seen": [{"state": a["state"], **{k: v for k, v in a["labels"].items()
                                               if k in ("alertname", "fabric", "leaf", "peer_name", "shard")}}
                     for a in alerts]}


def judge_targets(prom, plan):
    kinds = {n["instance"]: n["kind"] for n in plan["nodes"]}
    wrong, health = [], {"up": 0, "down": 0, "unknown": 0}
    for t in api(prom, "/api/v1/targets", state="active")["activeTargets"]:
        if t["labels"].get("job") != "fabricwatch":
            continue
        inst = t["labels"].get("instance")
        health[t["health"]] = health.get(t["health"], 0) + 1
        want = "up" if kinds.get(inst) == "ok" else "down"
        if t["health"] != want:
            wrong.append({"instance": inst, "kind": kinds.get(inst), "health": t["health"],
                          "error": t.get("lastError", "")[:200]})
    return {"health": health, "wrong": wrong}


def series_per_node(prom, plan):
    profile = {n["instance"]: n["profile"] for n in plan["nodes"] if n["kind"] == "ok"}
    per = {}
    for r in api(prom, "/api/v1/query", query='scrape_samples_scraped{job="fabricwatch"}')["result"]:
        p = profile.get(r["metric"].get("instance"))
        if p:
            per.setdefault(p, []).append(float(r["value"][1]))
    return {p: round(statistics.mean(v)) for p, v in sorted(per.items())}


def summarize_window(samples, interval):
    # Ingestion from the third sample on: the first rounds create every series (a burst).
    base = samples[min(2, len(samples) - 1)]
    last = samples[-1]
    dt = last["t"] - base["t"]
    groups = {}
    for g in samples[-1]["groups"]:
        vals = [s["groups"][g] for s in samples[2:] or samples if g in s["groups"]]
        groups[g] = {"median_s": statistics.median(vals), "max_s": max(vals)}
    return {
        "head_series": last["head_series"], "rss_max_bytes": max(s["rss"] for s in samples),
        "rss_end_bytes": last["rss"],
        "samples_per_s": (last["appended"] - base["appended"]) / dt if dt > 0 else None,
        "rule_groups": groups, "iterations_missed": last["missed"], "window_s": last["t"] - samples[0]["t"],
    }


def measure(args):
    with open(args.plan) as f:
        plan = json.load(f)
    samples = watch(args.prom, args.minutes, args.interval, args.until_alerts, plan)
    report = {"nodes": len(plan["nodes"]), **summarize_window(samples, args.interval)}
    report["slowest_rules"] = slowest_rules(args.prom)
    report["rule_queries"] = [{"group": g["name"], "rule": r["name"], "query": r["query"]}
                              for g in api(args.prom, "/api/v1/rules")["groups"] for r in g["rules"]]
    report["findings_by_peer"] = findings_by_peer(args.prom, plan)
    report["targets"] = judge_targets(args.prom, plan)
    report["series_per_node"] = series_per_node(args.prom, plan)
    report["alerts"] = judge_alerts(fleet_alerts(args.prom), plan)
    queries, variables = dashboard_queries(args.dashboard)
    end = time.time()
    start = max(samples[0]["t"], end - 3600)
    report["start"], report["end"] = start, end
    report["queries"] = [time_query(args.prom, title, expand(expr, variables), start, end, args.interval)
                         for title, expr in queries]
    report["build_info"] = [r["metric"] for r in api(args.prom, "/api/v1/query", query="count by (version, revision) (fabricwatch_build_info)")["result"]]
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    return verdict(report, args.check)


def quiet(args):
    """Every rule's and dashboard query's cost with nothing beside it: run after Prometheus has
    reloaded a configuration without targets and rules (run.sh), as instant queries at the end
    of the measured window, when the data was complete; the fastest of kBestOf. Rule evaluation
    time under load (measure) is wall time on a machine whose cores also scrape, parse and serve
    the fleet; this is the part of it that grows with the data, which the growth exponent must
    judge."""
    with open(args.result) as f:
        report = json.load(f)
    at = report["end"]
    rules = []
    for r in report["rule_queries"]:
        latency, _ = timed(lambda: api(args.prom, "/api/v1/query", query=r["query"], time=at), kBestOf)
        rules.append({"group": r["group"], "rule": r["rule"], "s": latency})
    groups = {}
    for r in rules:
        groups[r["group"]] = groups.get(r["group"], 0) + r["s"]
    queries, variables = dashboard_queries(args.dashboard)
    dash = [time_query(args.prom, title, expand(expr, variables), report["start"], at, args.interval, kBestOf)
            for title, expr in queries]
    report["quiet"] = {"rule_groups_s": groups, "rules_total_s": sum(groups.values()),
                       "slowest_rules": sorted(rules, key=lambda r: -r["s"])[:6], "queries": dash}
    with open(args.result, "w") as f:
        json.dump(report, f, indent=1)
    return 0


def verdict(report, check):
    problems = []
    if report["alerts"]["missing"]:
        problems.append("fleet alerts not firing: %s" % report["alerts"]["missing"])
    if report["alerts"]["unexpected"]:
        problems.append("unexpected fleet alerts: %s" % report["alerts"]["unexpected"])
    if report.get("targets", {}).get("wrong"):
        problems.append("targets not as planned: %s" % report["targets"]["wrong"])
    for q in report.get("queries", []):
        if "error" in q:
            problems.append("query %r failed: %s" % (q["expr"], q["error"]))
    for p in problems:
        print("fleet_measure: " + p, file=sys.stderr)
    return 1 if check and problems else 0


def check(args):
    """Alerts only (the global Prometheus of the federation test): waits for must_fire."""
    with open(args.plan) as f:
        plan = json.load(f)
    deadline = time.time() + args.timeout
    while True:
        judged = judge_alerts(fleet_alerts(args.prom), plan)
        if not judged["missing"] or time.time() >= deadline:
            break
        time.sleep(1)
    report = {"alerts": judged}
    if args.targets_of:
        # Each planned node is its own target with its own instance, up or down as planned: a
        # relabelling that clobbered the instance label would show here.
        report["targets"] = judge_targets(args.targets_of, plan)
        print("fleet_measure: %s targets: %s" % (args.targets_of, report["targets"]["health"]))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    print("fleet_measure: %s alerts: %s" % (args.prom, judged["seen"]))
    return verdict(report, True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--prom", required=True)
    m.add_argument("--plan", required=True)
    m.add_argument("--dashboard", required=True)
    m.add_argument("--minutes", type=float, required=True)
    m.add_argument("--interval", type=float, default=15)
    m.add_argument("--until-alerts", action="store_true")
    m.add_argument("--check", action="store_true")
    m.add_argument("--out", required=True)
    c = sub.add_parser("check")
    c.add_argument("--prom", required=True)
    c.add_argument("--plan", required=True)
    c.add_argument("--timeout", type=float, default=60)
    c.add_argument("--out")
    c.add_argument("--targets-of", help="also judge this Prometheus's targets against the plan")
    q = sub.add_parser("quiet")
    q.add_argument("--prom", required=True)
    q.add_argument("--result", required=True, help="measure's output; gains a quiet section")
    q.add_argument("--dashboard", required=True)
    q.add_argument("--interval", type=float, default=15)
    args = ap.parse_args()
    sys.exit({"measure": measure, "check": check, "quiet": quiet}[args.cmd](args))


if __name__ == "__main__":
    main()
