#!/usr/bin/env python3
"""The fleet rig's target server (issue 26 item 2): N simulated nodes on one loopback port.

  fleet_server.py --nodes 300 --profile healthy-roce=http://127.0.0.1:9901/metrics ...
                  --out DIR --port-file DIR/port --lifetime 900

Why one process and not N agents: an agent on the hgx-roce preset holds tens of MB and wakes
every second; 1,000 of them (plus 1,000 simulators animating their trees) do not fit 2 cores
beside Prometheus, and what Prometheus pays for depends only on what it scrapes. So a few real
agents, one per profile, each on its own fabricsim root and scenario, produce the expositions,
and this server hands each node the latest exposition of its profile. The only per-node rewrite
is the peer switch: fabricsim --leaf FLEETLEAF names each port's neighbour after that leaf (on
the HGX presets, cabled rail-optimised, port i faces FLEETLEAF-rail<i+1>), and FLEETLEAF becomes
the node's own leaf (leaf-07, leaf-07-rail4), so that the peer join (fabric_port_peer_info ->
peer:fabric_faulty_nodes:count) sees the nodes of a leaf-wide fault facing one sick switch. instance, leaf, fabric
and partition are target labels from the targets file this server writes (file_sd), as the
shipped scrape configurations set them (deploy/prometheus/).

The fleet (deterministic, from --nodes and --leaf-size):
  leaves of --leaf-size nodes, leaf-00, leaf-01, ...; every fourth leaf (leaf-03, leaf-07, ...)
  is InfiniBand (fabric ib-a, profile healthy-ib), the others RoCE (fabric roce-a);
  leaf-01 flaps: every node under it serves the flap-roce profile (a port flapping);
  a few RoCE nodes elsewhere are PFC storm sources (storm-roce): about 3 % of the RoCE nodes,
  at least one, at most one per leaf;
  three nodes misbehave: one answers garbage (200, not the text format), one stalls past any
  scrape timeout, one answers 404. They must show as down targets and nothing else.
  partition: train for the first half of the leaves, infer for the rest.

Writes DIR/targets.json (file_sd), DIR/plan.json (every node, and the fleet alerts the faults
must raise and may raise: label values, or regular expressions where the name ends in ~) and DIR/port; serves GET /node/<i>/metrics (HTTP/1.1, keep-alive)
until --lifetime seconds have passed or SIGTERM. 127.0.0.1 only. Standard library only.
"""

import argparse
import asyncio
import json
import math
import os
import re
import signal
import sys
import time
import urllib.request

kPeerPlaceholder = b"FLEETLEAF"
kFlapLeafIndex = 1
kIbLeafEvery = 4  # leaf index % 4 == 3 is InfiniBand
kStormShare = 0.03
# The misbehaving nodes; what each answers is in NodeServer.answer.
kBadKinds = ("garbage", "stall", "notfound")
kGarbage = b"this is { not the text format\n\x00\x01 fabric_x{=} 1 2 3 4\n"
# FabricManyNodesCritical: more than this share of a fabric's up nodes with a critical anomaly
# (alerts/fabricwatch-fleet.rules.yml).
kCriticalShare = 0.05


def leaf_name(index):
    return "leaf-%02d" % index


def plan_fleet(nodes, leaf_size):
    """Every node's identity, profile and kind; the fleet alerts expected of the faults."""
    leaves = max(1, math.ceil(nodes / leaf_size))
    if leaves <= kFlapLeafIndex:
        raise SystemExit("fleet_server: need at least %d leaves (nodes > leaf size)" % (kFlapLeafIndex + 1))
    plan = []
    for i in range(nodes):
        leaf = i // leaf_size
        ib = leaf % kIbLeafEvery == kIbLeafEvery - 1
        profile = "healthy-ib" if ib else "healthy-roce"
        if leaf == kFlapLeafIndex:
            profile = "flap-roce"
        plan.append({
            "index": i, "instance": "node-%05d" % i, "leaf": leaf_name(leaf),
            "fabric": "ib-a" if ib else "roce-a",
            "partition": "train" if leaf < (leaves + 1) // 2 else "infer",
            "profile": profile, "kind": "ok",
        })
    # One storm source per RoCE leaf, from the last leaf back: storms are each node's own fault,
    # and a handful under one leaf would be a (different) fault of that leaf. Then the bad nodes,
    # healthy RoCE nodes from the end.
    roce = sum(1 for n in plan if n["fabric"] == "roce-a")
    storms = max(1, int(roce * kStormShare))
    last_of_leaf = {}
    for n in plan:
        if n["profile"] == "healthy-roce":
            last_of_leaf[n["leaf"]] = n
    storm_nodes = [last_of_leaf[leaf] for leaf in sorted(last_of_leaf, reverse=True)][:storms]
    for n in storm_nodes:
        n["profile"] = "storm-roce"
    spare = [n for n in reversed(plan) if n["profile"] == "healthy-roce"]
    if len(storm_nodes) < storms or len(spare) < len(kBadKinds):
        raise SystemExit("fleet_server: too few RoCE leaves or nodes for %d storms and %d bad nodes"
                         % (storms, len(kBadKinds)))
    for n, kind in zip(spare, kBadKinds):
        n["kind"] = kind
    return plan


def expected_alerts(plan):
    """The fleet alerts the faults must raise, and those they may raise (by the rule's own
    arithmetic, not because the rig tolerates noise)."""
    flap = [n for n in plan if n["profile"] == "flap-roce"]
    leaf, fabric = flap[0]["leaf"], flap[0]["fabric"]
    # The flapping port faces the leaf itself or, rail-optimised, one of its rail switches.
    must = [{"alertname": "FabricLeafFlapping", "fabric": fabric, "leaf": leaf},
            {"alertname": "FabricPeerSwitchSuspect", "fabric": fabric,
             "peer_name~": re.escape(leaf) + r"(-rail[0-9]+)?"}]
    may = []
    for fab in sorted({n["fabric"] for n in plan}):
        up = [n for n in plan if n["fabric"] == fab and n["kind"] == "ok"]
        critical = sum(1 for n in up if n["profile"] == "storm-roce")
        if up and critical / len(up) > kCriticalShare:
            may.append({"alertname": "FabricManyNodesCritical", "fabric": fab})
    return must, may


def targets_file(plan, port):
    """file_sd groups, one per node: the node's path on this server and its target labels."""
    return [{"targets": ["127.0.0.1:%d" % port],
             "labels": {"__metrics_path__": "/node/%d/metrics" % n["index"],
                        "instance": n["instance"], "leaf": n["leaf"], "fabric": n["fabric"],
                        "partition": n["partition"]}} for n in plan]


class Profiles:
    """The latest exposition of each profile's agent, fetched every --refresh seconds; a failed
    fetch keeps the previous body (and is counted), so one slow agent does not empty a profile."""

    def __init__(self, urls, refresh_s):
        self.urls = urls
        self.refresh_s = refresh_s
        self.bodies = {name: b"" for name in urls}
        self.generation = {name: 0 for name in urls}
        self.fetch_errors = {name: 0 for name in urls}

    @staticmethod
    def _get(url):
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read()

    async def refresh_once(self):
        for name, url in self.urls.items():
            try:
                body = await asyncio.to_thread(self._get, url)
            except OSError as e:
                self.fetch_errors[name] += 1
                print("fleet_server: fetch %s (%s): %s" % (name, url, e), file=sys.stderr)
                continue
            if body != self.bodies[name]:
                self.bodies[name] = body
                self.generation[name] += 1

    async def run(self):
        while True:
            await asyncio.sleep(self.refresh_s)
            await self.refresh_once()


class NodeServer:
    def __init__(self, plan, profiles, stall_s):
        self.plan = plan
        self.profiles = profiles
        self.stall_s = stall_s
        self.cache = {}  # (profile, leaf) -> (generation, body)
        self.requests = 0

    def body_for(self, node):
        profile = node["profile"]
        key = (profile, node["leaf"])
        generation = self.profiles.generation[profile]
        cached = self.cache.get(key)
        if cached and cached[0] == generation:
            return cached[1]
        body = self.profiles.bodies[profile].replace(kPeerPlaceholder, node["leaf"].encode())
        self.cache[key] = (generation, body)
        return body

    def node_of(self, path):
        parts = path.split("?", 1)[0].strip("/").split("/")
        if len(parts) != 3 or parts[0] != "node" or parts[2] != "metrics" or not parts[1].isdigit():
            return None
        index = int(parts[1])
        return self.plan[index] if index < len(self.plan) else None

    async def answer(self, path, writer):
        """Writes one response; False when the connection must close."""
        node = self.node_of(path)
        kind = node["kind"] if node else "notfound"
        if kind == "stall":
            # Past any scrape timeout: Prometheus gives up and marks the target down.
            await asyncio.sleep(self.stall_s)
            return False
        if kind == "notfound":
            status, ctype, body = "404 Not Found", "text/plain", b"no such node\n"
        elif kind == "garbage":
            status, ctype, body = "200 OK", "text/plain; version=0.0.4", kGarbage
        else:
            status, ctype, body = "200 OK", "text/plain; version=0.0.4; charset=utf-8", self.body_for(node)
        writer.write(("HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
                      % (status, ctype, len(body))).encode() + body)
        await writer.drain()
        return True

    async def handle(self, reader, writer):
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                fields = line.decode("latin-1").split()
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass
                if len(fields) < 2 or fields[0] != "GET":
                    writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                    break
                self.requests += 1
                if not await self.answer(fields[1], writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the scraper gave up (a stalled node), or the server is stopping
        finally:
            writer.close()


def parse_profiles(items):
    urls = {}
    for item in items:
        name, sep, url = item.partition("=")
        if not sep or not url.startswith("http://127.0.0.1:"):
            raise SystemExit("fleet_server: --profile NAME=http://127.0.0.1:PORT/metrics, got " + item)
        urls[name] = url
    return urls


async def serve(args, plan, urls):
    profiles = Profiles(urls, args.refresh)
    await profiles.refresh_once()
    missing = [name for name in {n["profile"] for n in plan} if not profiles.bodies.get(name)]
    if missing:
        raise SystemExit("fleet_server: no exposition for profile(s) %s" % ", ".join(sorted(missing)))
    nodes = NodeServer(plan, profiles, args.stall)
    server = await asyncio.start_server(nodes.handle, "127.0.0.1", args.port, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    with open(args.out + "/targets.json.tmp", "w") as f:
        json.dump(targets_file(plan, port), f)
    # Renamed into place: Prometheus's file_sd reads it whole or not at all.
    os.replace(args.out + "/targets.json.tmp", args.out + "/targets.json")
    with open(args.out + "/port", "w") as f:
        f.write("%d\n" % port)
    print("fleet_server: %d nodes on 127.0.0.1:%d" % (len(plan), port), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    refresher = asyncio.create_task(profiles.run())
    try:
        await asyncio.wait_for(stop.wait(), timeout=args.lifetime)
    except asyncio.TimeoutError:
        print("fleet_server: lifetime of %d s over, stopping" % args.lifetime, flush=True)
    refresher.cancel()
    server.close()
    print("fleet_server: %d requests served; profile fetch errors %s"
          % (nodes.requests, profiles.fetch_errors), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--leaf-size", type=int, default=16)
    ap.add_argument("--profile", action="append", default=[], help="NAME=URL of an agent's /metrics")
    ap.add_argument("--out", required=True, help="directory for targets.json, plan.json, port")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--refresh", type=float, default=3.0, help="seconds between profile fetches")
    ap.add_argument("--stall", type=float, default=120.0, help="seconds a stalling node holds a scrape")
    ap.add_argument("--lifetime", type=float, default=900.0, help="seconds before it stops itself")
    ap.add_argument("--plan-only", action="store_true", help="write plan.json and exit")
    args = ap.parse_args()
    plan = plan_fleet(args.nodes, args.leaf_size)
    must, may = expected_alerts(plan)
    with open(args.out + "/plan.json", "w") as f:
        json.dump({"nodes": plan, "must_fire": must, "may_fire": may,
                   "created": time.time()}, f, indent=1)
    if args.plan_only:
        return
    asyncio.run(serve(args, plan, parse_profiles(args.profile)))


if __name__ == "__main__":
    main()
