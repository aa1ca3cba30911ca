#!/usr/bin/env python3
"""The fleet rig's report: fleet_report.py N1/result.json N2/result.json ... > report.md

Per N (from fleet_measure.py): series per node per profile, head series, Prometheus's resident
memory, ingestion, rule-group evaluation time, the slowest dashboard query, targets and the
fleet alerts' verdict; then every dashboard query's latency per N; then the extrapolation.

Extrapolation: each figure y(N) is fitted as y = a + b*N by least squares over the measured N
(a line: a fixed part, Prometheus's own and the rules' constant cost, plus a per-node part), and
read at 4,096 and 16,384 nodes. Beside it, the growth exponent k of y ~ N^k between the smallest
and the largest N measured (log(y2/y1) / log(N2/N1)): k near 1 is linear, k well above 1 (the
report flags k > 1.2 where the figure is large enough to matter) grows worse than linearly and
would need a recording rule or a rewrite. Latencies under 5 ms are mostly HTTP and parsing
overhead, so their exponent says little and is not flagged.
"""

import json
import math
import sys

kTargets = (4096, 16384)
kSuperLinear = 1.2
kNoiseFloorS = 0.005
kGiB = 1024 ** 3


def fit(points):
    """Least-squares line through (n, y); with one point, through the origin."""
    pts = [(n, y) for n, y in points if y is not None and not math.isnan(y)]
    if not pts:
        return None
    if len(pts) == 1:
        return 0.0, pts[0][1] / pts[0][0]
    mx = sum(n for n, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((n - mx) ** 2 for n, _ in pts)
    b = sum((n - mx) * (y - my) for n, y in pts) / sxx
    return my - b * mx, b


def exponent(points):
    pts = sorted((n, y) for n, y in points if y and y > 0)
    if len(pts) < 2:
        return None
    (n1, y1), (n2, y2) = pts[0], pts[-1]
    return math.log(y2 / y1) / math.log(n2 / n1)


def rule_total(r):
    return sum(g["median_s"] for g in r["rule_groups"].values())


def rule_worst(r):
    return max(r["rule_groups"].items(), key=lambda kv: kv[1]["median_s"])


def slowest_query(r):
    ok = [q for q in r["queries"] if "instant_s" in q]
    return max(ok, key=lambda q: max(q.get("instant_s", 0), q.get("range_s", 0)))


def alerts_verdict(r):
    a = r["alerts"]
    fired = sorted({"%s{%s}" % (s["alertname"], s.get("leaf") or s.get("peer_name") or s.get("fabric", ""))
                    for s in a["seen"] if s["state"] == "firing"})
    verdict = "as planned" if not a["missing"] and not a["unexpected"] else (
        "MISSING %d, UNEXPECTED %d" % (len(a["missing"]), len(a["unexpected"])))
    return verdict + ": " + (", ".join(fired) or "none firing")


def per_n_table(results):
    out = ["| N | series/node (profile) | head series | RSS | bytes/series | samples/s | "
           "rule eval (all groups, median) | slowest group | rules, quiet | slowest dashboard query | targets up/down | fleet alerts |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "rss_cap_hit_kb" in r:
            out.append("| %d | stopped: Prometheus passed the RSS cap (%.1f GiB) | | | | | | | | | | |"
                       % (r["nodes"], r["rss_cap_hit_kb"] / 1024 / 1024))
            continue
        spn = ", ".join("%s %d" % (p, v) for p, v in r["series_per_node"].items())
        g, gv = rule_worst(r)
        q = slowest_query(r)
        out.append("| %d | %s | %d | %.2f GiB | %.0f | %.0f | %.1f ms | %s %.1f ms (max %.1f) | %s | %.0f ms (%s) | %d/%d | %s |" % (
            r["nodes"], spn, r["head_series"], r["rss_max_bytes"] / kGiB,
            r["rss_max_bytes"] / r["head_series"], r["samples_per_s"] or 0, rule_total(r) * 1e3,
            g, gv["median_s"] * 1e3, gv["max_s"] * 1e3,
            "%.1f ms" % (r["quiet"]["rules_total_s"] * 1e3) if "quiet" in r else "-",
            max(q.get("instant_s", 0), q.get("range_s", 0)) * 1e3, q["title"],
            r["targets"]["health"].get("up", 0), r["targets"]["health"].get("down", 0),
            alerts_verdict(r)))
    return out


def query_table(results):
    ns = [r["nodes"] for r in results]
    out = ["| dashboard query | " + " | ".join("N=%d instant / range (series)" % n for n in ns) + " | k (range) |",
           "|---|" + "---|" * len(ns) + "---|"]
    titles = []
    for q in results[0]["queries"]:
        if (q["title"], q["expr"]) not in titles:
            titles.append((q["title"], q["expr"]))
    for title, expr in titles:
        cells, pts = [], []
        for r in results:
            pool = r["quiet"]["queries"] if "quiet" in r else r["queries"]
            q = next((x for x in pool if x["title"] == title and x["expr"] == expr), {})
            if "error" in q or not q:
                cells.append("error")
                continue
            cells.append("%.1f / %s ms (%s)" % (q["instant_s"] * 1e3,
                                               "%.1f" % (q["range_s"] * 1e3) if "range_s" in q else "-",
                                               q.get("series", "?")))
            pts.append((r["nodes"], q.get("range_s", q["instant_s"])))
        k = exponent(pts)
        big = max((y for _, y in pts), default=0) >= kNoiseFloorS
        flag = " **super-linear**" if k and big and k > kSuperLinear else ""
        out.append("| %s: `%s` | %s | %s%s |" % (title, expr.replace("|", "\\|"), " | ".join(cells),
                                                "%.2f" % k if k is not None else "-", flag))
    return out


def extrapolation(results):
    figures = [
        ("head series", lambda r: r["head_series"], "%.0f"),
        ("Prometheus RSS (GiB)", lambda r: r["rss_max_bytes"] / kGiB, "%.1f"),
        ("ingestion (samples/s)", lambda r: r["samples_per_s"], "%.0f"),
        ("rule evaluation, all groups (ms per round)", lambda r: rule_total(r) * 1e3, "%.1f"),
        ("rule evaluation, quiet (ms per round)",
         lambda r: r["quiet"]["rules_total_s"] * 1e3 if "quiet" in r else None, "%.1f"),
        ("slowest dashboard query, quiet (ms)",
         lambda r: max(max(q.get("instant_s", 0), q.get("range_s", 0)) for q in r["quiet"]["queries"]) * 1e3
         if "quiet" in r else None, "%.1f"),
        ("slowest dashboard query (ms)",
         lambda r: max(max(q.get("instant_s", 0), q.get("range_s", 0)) for q in r["queries"]) * 1e3, "%.1f"),
    ]
    out = ["| figure | fit a + b*N | N=4,096 | N=16,384 | k (growth exponent) |", "|---|---|---|---|---|"]
    for name, get, fmt in figures:
        pts = [(r["nodes"], get(r)) for r in results]
        ab = fit(pts)
        if not ab:
            continue
        a, b = ab
        k = exponent(pts)
        out.append("| %s | %s + %s*N | %s | %s | %s |" % (
            name, fmt % a, "%.4g" % b, fmt % (a + b * kTargets[0]), fmt % (a + b * kTargets[1]),
            "%.2f" % k if k is not None else "-"))
    return out


def main():
    results = []
    for path in sys.argv[1:]:
        with open(path) as f:
            results.append(json.load(f))
    measured = [r for r in results if "rss_cap_hit_kb" not in r]
    out = ["# fabricwatch fleet rig", ""]
    if measured and measured[0].get("build_info"):
        out.append("Agent: %s" % measured[0]["build_info"])
        out.append("")
    out += per_n_table(results) + [""]
    if measured:
        out += ["## Slowest rules (last evaluation, at each N)", "",
                "| N | rules |", "|---|---|"]
        out += ["| %d | %s |" % (r["nodes"], "; ".join("%s %.1f ms" % (x["rule"], x["s"] * 1e3)
                                                       for x in r.get("slowest_rules", [])))
                for r in measured] + [""]
        out += ["## Slowest rules, quiet (instant query at the window's end, nothing ingesting)", "",
                "| N | rules |", "|---|---|"]
        out += ["| %d | %s |" % (r["nodes"], "; ".join("%s %.1f ms" % (x["rule"], x["s"] * 1e3)
                                                       for x in r["quiet"]["slowest_rules"]))
                for r in measured if "quiet" in r] + [""]
        out += ["## Findings behind the peer rules (last 10 min, per peer switch: nodes by profile and finding)", "",
                "| N | peers |", "|---|---|"]
        out += ["| %d | %s |" % (r["nodes"], "; ".join(
            "%s: %s" % (peer, ", ".join("%s x%d" % kv for kv in sorted(f.items())))
            for peer, f in sorted(r.get("findings_by_peer", {}).items()))) for r in measured] + [""]
        out += ["## Dashboard queries (dashboards/fleet-overview.json, fleet scope; quiet: fastest of 5)", ""]
        out += query_table(measured) + [""]
        out += ["## Extrapolation", ""] + extrapolation(measured) + [""]
    print("\n".join(out))


if __name__ == "__main__":
    main()
