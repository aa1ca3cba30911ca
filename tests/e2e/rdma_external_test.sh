#!/usr/bin/env bash
# The rdma collector against real sysfs captures made by others, cross-checked against the peer
# exporter: Debian's prometheus-node-exporter (1.5) reading the same trees.
#
# Corpus: $FABRICWATCH_SOURCE_DIR/../shared/fixtures/external/sysfs/<capture>/sys (provenance in
# ../shared/fixtures/external/SOURCES.md). Skips (77) when that directory does not exist. The
# files are never copied into the repository: each tree is materialised into a temp dir, where the
# symlinks that this copy of the corpus flattened into regular files (content = the relative link
# target, e.g. class/infiniband/mlx4_0 holding "../../devices/pci0000:80/.../infiniband/mlx4_0")
# are turned back into real symlinks. Links whose targets the capture lacks stay dangling.
#
# Per tree with a class/infiniband:
#   - --config.check: the rdma line says ok (or no-data when no device directory resolves), 0 errors;
#   - the agent: fabricwatch_collector_success{collector="rdma"} 1 and errors_total 0 (no-data is
#     accepted only when no device directory resolves);
#   - every counter file under class/infiniband/*/ports/*/{counters,counters_ext,hw_counters} (and
#     <dev>/hw_counters) holding a number has its series with the file's value: curated files via
#     the tables in collectors/rdma/rdma_counters.cc (parsed here, data words x4, a counters/ file
#     superseded by its counters_ext twin), the others in fabric_rdma_port_pma_stat_total /
#     fabric_rdma_port_hw_stat_total / fabric_rdma_device_hw_stat_total{counter="<file>"}; a file
#     holding "N/A (no PMA)" has no series; fabric_rdma_port_saturated matches the counter width;
#     no counter series exists that no file explains;
#   - state, phys_state and rate of every port, and fabric_rdma_device_info's fw_ver, board_id,
#     node_guid, sys_image_guid, hca_type, node_desc, node_type against the files;
#   - promtool check metrics is clean;
#   - node_exporter --collector.infiniband on the same tree: every node_infiniband_* sample has a
#     counterpart with the same value. A sample of a counters/ file that fabricwatch supersedes
#     with its counters_ext twin may differ only when the two files disagree (both values are
#     checked against the files; reported as "superseded"). Families without a mapping are listed
#     as "unmapped" (not a failure). node_exporter 1.5 drops the whole class when one device link
#     dangles or a device lacks fw_ver; it is then rerun on an adapted copy (dangling device links
#     removed, missing board_id/fw_ver/hca_type created empty) and the adaptation is printed.
#
# Usage: FABRICWATCH_SOURCE_DIR=<repo> bash tests/e2e/rdma_external_test.sh <fabricwatch binary>
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_init rdma_external_test "$@"
# Agents run with --metrics.all: this test checks the collectors' series, not the series
# budget (e2e.series_budget_test).
T0_MS=$(now_ms)

CORPUS="$FABRICWATCH_SOURCE_DIR/../shared/fixtures/external/sysfs"
[[ -d "$CORPUS" ]] ||
  skip "rdma_external_test: external sysfs corpus not found at $CORPUS (it lives outside the repository, in ../shared/fixtures/external; nothing to check)"
CORPUS="$(cd "$CORPUS" && pwd)"
COUNTERS_CC="$FABRICWATCH_SOURCE_DIR/collectors/rdma/rdma_counters.cc"
[[ -f "$COUNTERS_CC" ]] || fail "not found: $COUNTERS_CC (the curated counter tables)"
command -v python3 >/dev/null || fail "python3 is not installed"
command -v promtool >/dev/null ||
  fail "promtool not found: install it with 'apt-get install prometheus' (make test installs it)"
NODE_EXPORTER="$(command -v prometheus-node-exporter || command -v node_exporter || true)"
if [[ -n "$NODE_EXPORTER" ]]; then
  printf '# peer: %s (%s)\n' "$NODE_EXPORTER" "$("$NODE_EXPORTER" --version 2>&1 | head -n1)"
else
  fail_later "prometheus-node-exporter not installed: the cross-check cannot run (tools/install-deps.sh test, or apt-get install prometheus-node-exporter)"
fi

CHECK_PY="$E2E_TMP/rdma_check.py"
cat >"$CHECK_PY" <<'PY'
"""Checks for rdma_external_test.sh. Prints one line per result: ok|fail|note|summary<TAB>text."""
import os
import re
import sys

IB = "class/infiniband"
GENERIC_PMA = "fabric_rdma_port_pma_stat_total"
GENERIC_HW = "fabric_rdma_port_hw_stat_total"
GENERIC_DEV = "fabric_rdma_device_hw_stat_total"
SATURATED = "fabric_rdma_port_saturated"


def out(kind, text):
    print(f"{kind}\t{text}")


# ---------------------------------------------------------------------------------------------
# Materialising a corpus tree.

def materialise(root):
    """Turns flattened symlinks back into symlinks: a small regular file without NUL whose whole
    content is one line starting with "../" (or "/sys/", rewritten to stay inside the tree)."""
    restored = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > 4096:
                continue
            if "/gid_attrs/ndevs/" in path:  # netdev names, never links
                continue
            with open(path, "rb") as f:
                data = f.read()
            if b"\0" in data:
                continue
            text = data.decode("utf-8", "replace")
            if text.endswith("\n"):
                text = text[:-1]
            if not text or "\n" in text or not (text.startswith("../") or text.startswith("/sys/")):
                continue
            target = text
            if target.startswith("/sys/"):
                sys_root = path[: path.index("/sys/") + 4]
                target = os.path.relpath(os.path.join(sys_root, target[5:]), dirpath)
            os.unlink(path)
            os.symlink(target, path)
            restored += 1
    print(restored)


def adapt_for_node_exporter(sysfs):
    """node_exporter 1.5 (procfs) gives up on the whole class when a device link dangles or a
    device lacks board_id/fw_ver/hca_type: remove the former, create the latter empty."""
    changes = []
    ib = os.path.join(sysfs, IB)
    for dev in sorted(os.listdir(ib)):
        path = os.path.join(ib, dev)
        if not os.path.isdir(os.path.join(path, "ports")):
            os.unlink(path) if os.path.islink(path) else None
            changes.append(f"removed dangling {dev}")
            continue
        for attr in ("board_id", "fw_ver", "hca_type"):
            if not os.path.exists(os.path.join(path, attr)):
                open(os.path.join(path, attr), "w").close()
                changes.append(f"created empty {dev}/{attr}")
    print("; ".join(changes) if changes else "nothing to adapt")


# ---------------------------------------------------------------------------------------------
# Exposition parsing.

def parse_exposition(text):
    """{(name, ((label, value), ...)): float}; label tuples sorted."""
    samples = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        m = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line)
        if not m:
            raise ValueError(f"bad exposition line: {line!r}")
        name, i, labels = m.group(0), m.end(), {}
        if i < len(line) and line[i] == "{":
            i += 1
            while True:
                while line[i] in " ,":
                    i += 1
                if line[i] == "}":
                    i += 1
                    break
                lm = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="').match(line, i)
                if not lm:
                    raise ValueError(f"bad labels: {line!r}")
                i, value = lm.end(), []
                while line[i] != '"':
                    if line[i] == "\\":
                        i += 1
                        value.append({"n": "\n", "\\": "\\", '"': '"'}.get(line[i], "\\" + line[i]))
                    else:
                        value.append(line[i])
                    i += 1
                labels[lm.group(1)] = "".join(value)
                i += 1
        fields = line[i:].split()
        samples[(name, tuple(sorted(labels.items())))] = float(fields[0])
    return samples


def key(name, **labels):
    return (name, tuple(sorted(labels.items())))


def fmt(k):
    name, labels = k
    return name + "{" + ",".join(f'{n}="{v}"' for n, v in labels) + "}"


def series(samples, name, **want):
    """Samples of NAME whose labels include WANT: [(labels dict, value)]."""
    found = []
    for (n, labels), v in samples.items():
        d = dict(labels)
        if n == name and all(d.get(a) == b for a, b in want.items()):
            found.append((d, v))
    return found


def same(a, b):
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def num(v):
    return str(int(v)) if float(v).is_integer() else repr(v)


# ---------------------------------------------------------------------------------------------
# The curated tables, read from rdma_counters.cc so that the test follows the code.

def load_tables(path):
    src = open(path).read()
    # The hw_counters table (every vendor's) is in rdma_hw_counters.cc beside it; the families
    # others read (and their saturation widths) live in rdma_metrics.h, the data families both
    # tables share in rdma_counters.h.
    hw_src = open(os.path.join(os.path.dirname(path), "rdma_hw_counters.cc")).read()
    header = open(os.path.join(os.path.dirname(path), "rdma_metrics.h")).read()
    shared = open(os.path.join(os.path.dirname(path), "rdma_counters.h")).read()
    # A family is declared as a MetricDesc or, in a contract header, as its collector's Family
    # (collectors/core/collector_family.h).
    names = dict(re.findall(r'constexpr (?:MetricDesc|Family) (k\w+)\{\s*"(fabric_\w+)"',
                            src + hw_src + header + shared))
    widths = {}
    for desc, body in re.findall(r'constexpr (?:MetricDesc|Family) (k\w+)\{(.*?)\};', header, re.S):
        m = re.search(r'CounterOverflow::kSaturates, (\d+)', body)
        if m:
            widths[desc] = int(m.group(1))
    row = re.compile(r'\{"([A-Za-z0-9_]+)",\s*&(k\w+),\s*([0-9.]+),\s*(\d+|k\w+\.range\.bits)'
                     r'(?:,\s*(true|false))?\}')

    def bits(text):
        return int(text) if text.isdigit() else widths[text.split(".")[0]]

    pma_at, hw_at = src.find("kPmaCounters[]"), hw_src.find("kHwCounters[]")
    if pma_at < 0 or hw_at < 0:
        raise ValueError(f"{path}: kPmaCounters[] or rdma_hw_counters.cc kHwCounters[] not found")
    tables = {"pma": {}, "hw": {}}
    for table, text, at in (("pma", src, pma_at), ("hw", hw_src, hw_at)):
        end = text.find("};", at)
        for m in row.finditer(text, at, end):
            # (metric, scale, saturating bits, widened by the PortCountersExtended table)
            tables[table][m.group(1)] = (names[m.group(2)], float(m.group(3)), bits(m.group(4)),
                                         m.group(5) == "true")
    # Guard against the parser drifting from the source.
    assert tables["pma"].get("symbol_error") == ("fabric_rdma_port_symbol_errors_total", 1.0, 16, False), tables["pma"].get("symbol_error")
    assert tables["pma"].get("port_xmit_data", (0, 0, 0, False))[3] is True
    assert tables["pma"].get("port_xmit_data_64", (0, 0))[1] == 4.0
    assert "out_of_buffer" in tables["hw"] and len(tables["pma"]) >= 20, tables
    return tables


# ---------------------------------------------------------------------------------------------
# The tree: what fabricwatch should export.

def read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return None


def listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def numbered(text):
    m = re.match(r"\s*(\d+)\s*:", text or "")
    return int(m.group(1)) if m else None


class Tree:
    def __init__(self, sysfs, tables):
        self.sysfs, self.tables = sysfs, tables
        self.devices, self.dangling = [], []  # resolved device names; unresolved ones
        self.expected = {}  # key -> value
        self.absent = []  # (key, why): series that must not exist
        self.checked = 0  # counter files checked
        self.counter_files = {}  # (dev, port, dir, file) -> raw int or "N/A"
        self.unparsable = []
        ib = os.path.join(sysfs, IB)
        for dev in listdir(ib):
            base = os.path.join(ib, dev)
            if not os.path.isdir(os.path.join(base, "ports")):
                self.dangling.append(dev)
                continue
            self.devices.append(dev)
            self.device(dev, base)

    def value(self, dev, port, sub, name):
        text = read(os.path.join(self.sysfs, IB, dev, "ports", port, sub, name) if port
                    else os.path.join(self.sysfs, IB, dev, sub, name))
        if text is None:
            return None
        if text.startswith("N/A"):
            self.counter_files[(dev, port, sub, name)] = "N/A"
            return "N/A"
        if re.fullmatch(r"\d+", text):
            self.counter_files[(dev, port, sub, name)] = int(text)
            return int(text)
        self.unparsable.append(f"{dev}/ports/{port}/{sub}/{name}={text!r}")
        return None

    def device(self, dev, base):
        for sub_file in listdir(os.path.join(base, "hw_counters")):
            if sub_file == "lifespan":
                continue
            v = self.value(dev, None, "hw_counters", sub_file)
            self.checked += v is not None
            k = key(GENERIC_DEV, device=dev, counter=sub_file)
            if isinstance(v, int):
                self.expected[k] = float(v)
            elif v == "N/A":
                self.absent.append((k, f"{dev}/hw_counters/{sub_file} is N/A"))
        for port in listdir(os.path.join(base, "ports")):
            if port.isdigit():
                self.port(dev, port, os.path.join(base, "ports", port))

    def port(self, dev, port, pdir):
        pma_t, hw_t = self.tables["pma"], self.tables["hw"]
        counters = listdir(os.path.join(pdir, "counters"))
        ext = listdir(os.path.join(pdir, "counters_ext"))
        hw = [f for f in listdir(os.path.join(pdir, "hw_counters")) if f != "lifespan"]
        from_ext = {pma_t[f][0] for f in ext if f in pma_t}
        extended = "unicast_xmit_packets" in counters
        order = []
        for f in counters:
            if f in pma_t and pma_t[f][0] in from_ext:
                # Superseded by the counters_ext twin: never read, so never exported by name.
                v = self.value(dev, port, "counters", f)
                self.checked += v is not None
                for fam in (GENERIC_PMA, SATURATED):
                    self.absent.append((key(fam, device=dev, port=port, counter=f),
                                        f"counters/{f} is superseded by counters_ext"))
                continue
            order.append(("counters", f, pma_t.get(f), extended))
        order += [("counters_ext", f, pma_t.get(f), True) for f in ext]
        order += [("hw_counters", f, hw_t.get(f), False) for f in hw]
        used = set()
        for sub, f, spec, ext_width in order:
            v = self.value(dev, port, sub, f)
            if v is None:
                continue
            self.checked += 1
            generic = GENERIC_HW if sub == "hw_counters" else GENERIC_PMA
            gkey = key(generic, device=dev, port=port, counter=f)
            if v == "N/A":
                self.absent.append((gkey, f"{sub}/{f} is N/A"))
                self.absent.append((key(SATURATED, device=dev, port=port, counter=f), f"{sub}/{f} is N/A"))
                if spec:
                    self.absent.append((key(spec[0], device=dev, port=port), f"{sub}/{f} is N/A"))
                continue
            if spec and spec[0] in used:
                spec = None  # a second file for one metric goes to the generic family
            if not spec:
                self.expected[gkey] = float(v)
                continue
            used.add(spec[0])
            self.expected[key(spec[0], device=dev, port=port)] = v * spec[1]
            bits = spec[2]
            # Data/packet counters come from the 64-bit table when the port has it;
            # port_xmit_wait stays 32-bit (kernel core/sysfs.c pma_attrs_ext).
            if spec[3] and (ext_width or v > 0xFFFFFFFF):
                bits = 0
            if bits:
                self.expected[key(SATURATED, device=dev, port=port, counter=f)] = (
                    1.0 if v == (1 << bits) - 1 else 0.0)
        # An N/A file's curated metric may still come from another file (a twin).
        self.absent = [(k, why) for k, why in self.absent if k not in self.expected]


def check_ours(sysfs, prom, config_check, counters_cc, tree_name):
    tables = load_tables(counters_cc)
    tree = Tree(sysfs, tables)
    ours = parse_exposition(open(prom).read())
    what = f"{tree_name}:"
    fails = []

    # Health.
    success = ours.get(key("fabricwatch_collector_success", collector="rdma"))
    errors = ours.get(key("fabricwatch_collector_errors_total", collector="rdma"))
    line = next((l for l in open(config_check).read().splitlines() if l.startswith("rdma ")), "")
    cc = line.split()
    if tree.dangling:
        out("note", f"{what} device links that do not resolve (the capture lacks their targets): {', '.join(tree.dangling)}")
    if tree.devices:
        if success == 1 and errors == 0:
            out("ok", f"{what} rdma collector success 1, errors_total 0 ({len(tree.devices)} devices: {', '.join(tree.devices)})")
        else:
            fails.append(f"{what} rdma collector success={success} errors_total={errors}, want 1 and 0")
        if len(cc) >= 4 and cc[1] == "ok" and cc[3] == "0":
            out("ok", f"{what} --config.check: rdma ok, {cc[2]} series, 0 errors")
        else:
            fails.append(f"{what} --config.check rdma line is {line!r}, want 'rdma ok <series> 0 ...'")
    else:
        if errors == 0 and success in (0, 1) and len(cc) >= 4 and cc[1] in ("no-data", "ok") and cc[3] == "0":
            out("ok", f"{what} no device directory resolves: no-data accepted (success={num(success)}, errors_total 0, config.check {cc[1]})")
        else:
            fails.append(f"{what} no device resolves: want no-data without errors, got success={success} errors_total={errors}, config.check {line!r}")
    if tree.unparsable:
        out("note", f"{what} counter files that are neither a number nor N/A: {', '.join(tree.unparsable)}")

    # Counters.
    bad = []
    for k, v in sorted(tree.expected.items()):
        got = ours.get(k)
        if got is None:
            bad.append(f"missing {fmt(k)} (want {num(v)})")
        elif not same(got, v):
            bad.append(f"{fmt(k)} = {num(got)}, want {num(v)}")
    for k, why in tree.absent:
        if k in ours:
            bad.append(f"unexpected {fmt(k)} = {num(ours[k])} ({why})")
    families = {spec[0] for t in tables.values() for spec in t.values()}
    families |= {GENERIC_PMA, GENERIC_HW, GENERIC_DEV, SATURATED}
    for k, v in sorted(ours.items()):
        if k[0] in families and k not in tree.expected and k not in dict(tree.absent):
            bad.append(f"unexplained series {fmt(k)} = {num(v)} (no counter file yields it)")
    na = sum(1 for v in tree.counter_files.values() if v == "N/A")
    if bad:
        fails += [f"{what} counter: {b}" for b in bad]
    else:
        out("ok", f"{what} {tree.checked} counter files checked ({na} N/A without series), "
                  f"{len(tree.expected)} counter/saturated series match, none unexplained")

    # Port state, phys_state, rate.
    bad, n = [], 0
    for dev in tree.devices:
        for port in listdir(os.path.join(sysfs, IB, dev, "ports")):
            if not port.isdigit():
                continue
            pdir = os.path.join(sysfs, IB, dev, "ports", port)
            want = {}
            for f, metric in (("state", "fabric_rdma_port_state"), ("phys_state", "fabric_rdma_port_phys_state")):
                if numbered(read(os.path.join(pdir, f))) is not None:
                    want[metric] = float(numbered(read(os.path.join(pdir, f))))
            rate = read(os.path.join(pdir, "rate"))
            m = re.fullmatch(r"([0-9.]+) G[bB]/sec(?: \((\d+)X ?([A-Za-z0-9]*)\))?", rate or "")
            speed = ""
            if m:
                want["fabric_rdma_port_rate_bytes_per_second"] = float(m.group(1)) * 1e9 / 8
                if m.group(2):
                    want["fabric_rdma_port_lanes"] = float(m.group(2))
                    speed = m.group(3) or "SDR"  # the kernel prints no suffix for SDR
            link_layer = read(os.path.join(pdir, "link_layer")) or ""
            if link_layer == "InfiniBand":  # LIDs only mean something there; hex in sysfs
                for f, metric in (("lid", "fabric_rdma_port_lid"), ("sm_lid", "fabric_rdma_port_sm_lid")):
                    text = read(os.path.join(pdir, f))
                    if text is not None:
                        want[metric] = float(int(text, 0))
            for metric, v in want.items():
                n += 1
                got = ours.get(key(metric, device=dev, port=port))
                if got is None or not same(got, v):
                    bad.append(f"{metric}{{device={dev},port={port}}} = {got}, want {num(v)}")
            info = series(ours, "fabric_rdma_port_info", device=dev, port=port)
            if len(info) != 1:
                bad.append(f"{dev}/{port}: {len(info)} fabric_rdma_port_info series, want 1")
            elif (info[0][0].get("link_layer"), info[0][0].get("speed")) != (link_layer, speed):
                bad.append(f"fabric_rdma_port_info{{device={dev},port={port}}}: link_layer="
                           f"{info[0][0].get('link_layer')!r} speed={info[0][0].get('speed')!r}, "
                           f"want {link_layer!r} and {speed!r} (rate {rate!r})")
            else:
                n += 1
    if bad:
        fails += [f"{what} port: {b}" for b in bad]
    else:
        out("ok", f"{what} port state/phys_state/rate/lanes/lid/sm_lid/port_info: {n} series match the files")

    # Device info.
    bad = []
    for dev in tree.devices:
        info = series(ours, "fabric_rdma_device_info", device=dev)
        if len(info) != 1:
            bad.append(f"{dev}: {len(info)} fabric_rdma_device_info series, want 1")
            continue
        labels = info[0][0]
        base = os.path.join(sysfs, IB, dev)
        for attr in ("fw_ver", "board_id", "node_guid", "sys_image_guid", "hca_type", "node_desc"):
            want = read(os.path.join(base, attr)) or ""
            if labels.get(attr) != want:
                bad.append(f"{dev}: {attr}={labels.get(attr)!r}, file says {want!r}")
        pci = ""
        if os.path.islink(os.path.join(base, "device")):
            pci = os.path.basename(os.readlink(os.path.join(base, "device")).rstrip("/"))
            pci = pci if re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", pci) else ""
        netdevs = ",".join(listdir(os.path.join(base, "device", "net")))
        for attr, want in (("pci_address", pci), ("netdevs", netdevs)):
            if labels.get(attr) != want:
                bad.append(f"{dev}: {attr}={labels.get(attr)!r}, want {want!r} (device link, device/net)")
        node_type = read(os.path.join(base, "node_type"))
        want = node_type.split(":", 1)[1].strip() if node_type and ":" in node_type else ""
        if labels.get("node_type") != want:
            bad.append(f"{dev}: node_type={labels.get('node_type')!r}, file says {node_type!r}")
    for dev in tree.dangling:
        if series(ours, "fabric_rdma_device_info", device=dev):
            bad.append(f"{dev}: device info exported for a device link that does not resolve")
    if bad:
        fails += [f"{what} device_info: {b}" for b in bad]
    elif tree.devices:
        out("ok", f"{what} fabric_rdma_device_info labels (fw_ver, board_id, node_guid, sys_image_guid, hca_type, node_desc, node_type, pci_address, netdevs) match the files ({', '.join(tree.devices)})")
    for f in fails:
        out("fail", f)
    out("summary", f"{tree_name}: {len(tree.devices)} devices ({len(tree.dangling)} dangling), "
                   f"{tree.checked} counter files checked")


# ---------------------------------------------------------------------------------------------
# Cross-check with node_exporter.

# node_exporter family -> (our family, the counters/ file node_exporter reads or None).
PORT_MAP = {
    "node_infiniband_state_id": ("fabric_rdma_port_state", None),
    "node_infiniband_physical_state_id": ("fabric_rdma_port_phys_state", None),
    "node_infiniband_rate_bytes_per_second": ("fabric_rdma_port_rate_bytes_per_second", None),
    "node_infiniband_link_downed_total": ("fabric_rdma_port_link_downed_total", "link_downed"),
    "node_infiniband_link_error_recovery_total": ("fabric_rdma_port_link_error_recoveries_total", "link_error_recovery"),
    "node_infiniband_symbol_error_total": ("fabric_rdma_port_symbol_errors_total", "symbol_error"),
    "node_infiniband_port_data_received_bytes_total": ("fabric_rdma_port_receive_bytes_total", "port_rcv_data"),
    "node_infiniband_port_data_transmitted_bytes_total": ("fabric_rdma_port_transmit_bytes_total", "port_xmit_data"),
    "node_infiniband_port_packets_received_total": ("fabric_rdma_port_receive_packets_total", "port_rcv_packets"),
    "node_infiniband_port_packets_transmitted_total": ("fabric_rdma_port_transmit_packets_total", "port_xmit_packets"),
    "node_infiniband_port_errors_received_total": ("fabric_rdma_port_receive_errors_total", "port_rcv_errors"),
    "node_infiniband_port_receive_remote_physical_errors_total": ("fabric_rdma_port_receive_remote_physical_errors_total", "port_rcv_remote_physical_errors"),
    "node_infiniband_port_receive_switch_relay_errors_total": ("fabric_rdma_port_receive_switch_relay_errors_total", "port_rcv_switch_relay_errors"),
    "node_infiniband_port_discards_transmitted_total": ("fabric_rdma_port_transmit_discards_total", "port_xmit_discards"),
    "node_infiniband_port_discards_received_total": ((GENERIC_PMA, "port_rcv_discards"), "port_rcv_discards"),
    "node_infiniband_port_transmit_wait_total": ("fabric_rdma_port_transmit_wait_total", "port_xmit_wait"),
    "node_infiniband_vl15_dropped_total": ("fabric_rdma_port_vl15_dropped_total", "VL15_dropped"),
    "node_infiniband_excessive_buffer_overrun_errors_total": ("fabric_rdma_port_excessive_buffer_overrun_errors_total", "excessive_buffer_overrun_errors"),
    "node_infiniband_local_link_integrity_errors_total": ("fabric_rdma_port_local_link_integrity_errors_total", "local_link_integrity_errors"),
    "node_infiniband_port_constraint_errors_received_total": ("fabric_rdma_port_receive_constraint_errors_total", "port_rcv_constraint_errors"),
    "node_infiniband_port_constraint_errors_transmitted_total": ("fabric_rdma_port_transmit_constraint_errors_total", "port_xmit_constraint_errors"),
    "node_infiniband_unicast_packets_received_total": ("fabric_rdma_port_unicast_receive_packets_total", "unicast_rcv_packets"),
    "node_infiniband_unicast_packets_transmitted_total": ("fabric_rdma_port_unicast_transmit_packets_total", "unicast_xmit_packets"),
    "node_infiniband_multicast_packets_received_total": ("fabric_rdma_port_multicast_receive_packets_total", "multicast_rcv_packets"),
    "node_infiniband_multicast_packets_transmitted_total": ("fabric_rdma_port_multicast_transmit_packets_total", "multicast_xmit_packets"),
    # counters_ext/ (node_exporter's "legacy" families); fabricwatch folds them into the curated
    # metrics, superseding the counters/ twin.
    "node_infiniband_legacy_data_received_bytes_total": ("fabric_rdma_port_receive_bytes_total", None),
    "node_infiniband_legacy_data_transmitted_bytes_total": ("fabric_rdma_port_transmit_bytes_total", None),
    "node_infiniband_legacy_packets_received_total": ("fabric_rdma_port_receive_packets_total", None),
    "node_infiniband_legacy_packets_transmitted_total": ("fabric_rdma_port_transmit_packets_total", None),
    "node_infiniband_legacy_unicast_packets_received_total": ("fabric_rdma_port_unicast_receive_packets_total", None),
    "node_infiniband_legacy_unicast_packets_transmitted_total": ("fabric_rdma_port_unicast_transmit_packets_total", None),
    "node_infiniband_legacy_multicast_packets_received_total": ("fabric_rdma_port_multicast_receive_packets_total", None),
    "node_infiniband_legacy_multicast_packets_transmitted_total": ("fabric_rdma_port_multicast_transmit_packets_total", None),
}
INFO_MAP = {"board_id": "board_id", "firmware_version": "fw_ver", "hca_type": "hca_type"}


def check_node_exporter(sysfs, prom, ne_prom, counters_cc, tree_name, adapted):
    tables = load_tables(counters_cc)
    tree = Tree(sysfs, tables)
    ours = parse_exposition(open(prom).read())
    theirs = parse_exposition(open(ne_prom).read())
    what = f"{tree_name}:"
    via = f" (node_exporter on an adapted copy: {adapted})" if adapted else ""
    ne = sorted((k, v) for k, v in theirs.items() if k[0].startswith("node_infiniband_"))
    matched, superseded, unmapped, bad = 0, [], {}, []
    for (name, labels), v in ne:
        d = dict(labels)
        dev, port = d.get("device"), d.get("port")
        desc = fmt((name, labels)) + f" = {num(v)}"
        if name == "node_infiniband_info":
            info = series(ours, "fabric_rdma_device_info", device=dev)
            if len(info) != 1:
                bad.append(f"{desc}: no fabric_rdma_device_info{{device=\"{dev}\"}}")
                continue
            diff = [f"{a}={d.get(a)!r} vs our {b}={info[0][0].get(b)!r}"
                    for a, b in INFO_MAP.items() if d.get(a) != info[0][0].get(b)]
            extra = sorted(set(d) - set(INFO_MAP) - {"device"})
            if diff:
                bad.append(f"{desc}: {'; '.join(diff)}")
            elif extra:
                unmapped.setdefault(f"{name} labels {extra}", []).append(desc)
            else:
                matched += 1
            continue
        if name not in PORT_MAP:
            unmapped.setdefault(name, []).append(desc)
            continue
        ours_name, pma_file = PORT_MAP[name]
        if isinstance(ours_name, tuple):
            k = key(ours_name[0], device=dev, port=port, counter=ours_name[1])
        else:
            k = key(ours_name, device=dev, port=port)
        got = ours.get(k)
        if got is not None and same(got, v):
            matched += 1
            continue
        # A counters/ file that fabricwatch replaces by its counters_ext twin.
        spec = tables["pma"].get(pma_file) if pma_file else None
        twin = next((f for f, s in tables["pma"].items()
                     if spec and s[0] == spec[0] and f != pma_file
                     and (dev, port, "counters_ext", f) in tree.counter_files), None)
        if twin and got is not None:
            raw_pma = tree.counter_files.get((dev, port, "counters", pma_file))
            raw_ext = tree.counter_files[(dev, port, "counters_ext", twin)]
            if (isinstance(raw_pma, int) and isinstance(raw_ext, int)
                    and same(v, raw_pma * spec[1]) and same(got, raw_ext * spec[1])):
                superseded.append(f"{desc}: counters/{pma_file}={raw_pma} vs counters_ext/{twin}={raw_ext}; "
                                  f"fabricwatch exports {fmt(k)} = {num(got)} from counters_ext")
                continue
        bad.append(f"{desc}: fabricwatch {fmt(k)} = {'absent' if got is None else num(got)}")
    total = len(ne)
    out("note", f"{what} node_exporter: matched {matched} of {total} node_exporter samples"
                f" ({len(superseded)} superseded, {sum(map(len, unmapped.values()))} unmapped, {len(bad)} mismatched){via}")
    for s in superseded:
        out("note", f"{what} superseded: {s}")
    for fam, samples in sorted(unmapped.items()):
        out("note", f"{what} unmapped: {fam} ({len(samples)} samples, e.g. {samples[0]})")
    for b in bad:
        out("fail", f"{what} node_exporter sample without an equal counterpart: {b}")
    if total == 0:
        out("fail", f"{what} node_exporter exported no node_infiniband_* sample{via}")
    elif not bad:
        out("ok", f"{what} cross-check with node_exporter: {matched} of {total} samples equal, "
                  f"{len(superseded)} superseded by counters_ext, {sum(map(len, unmapped.values()))} unmapped{via}")
    out("summary", f"{tree_name}: node_exporter matched {matched} of {total}"
                   f" (superseded {len(superseded)}, unmapped {sum(map(len, unmapped.values()))}, mismatched {len(bad)}){via}")
    for fam in sorted(unmapped):
        out("unmapped", fam)


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "materialise":
        materialise(*args)
    elif mode == "adapt":
        adapt_for_node_exporter(*args)
    elif mode == "ours":
        check_ours(*args)
    elif mode == "node_exporter":
        check_node_exporter(*args)
    else:
        sys.exit(f"unknown mode {mode}")
PY

SUMMARY=()
UNMAPPED=()

# run_check MODE ARGS...: runs the checker and turns its lines into ok / fail_later / notes.
run_check() {
  local output rc=0 kind msg
  output="$(python3 "$CHECK_PY" "$@" 2>&1)" || rc=$?
  while IFS=$'\t' read -r kind msg; do
    case "$kind" in
      ok) ok "$msg" ;;
      fail) fail_later "$msg" ;;
      note) printf '# %s\n' "$msg" ;;
      summary) SUMMARY+=("$msg") ;;
      unmapped) UNMAPPED+=("$msg") ;;
      "") ;;
      *) printf '# checker: %s%s\n' "$kind" "${msg:+ $msg}" ;;
    esac
  done <<<"$output"
  ((rc == 0)) || fail_later "checker ($1) crashed with exit $rc (output above)"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_first_rdma_sample: polls (10 s) until the rdma collector has published a snapshot.
wait_first_rdma_sample() {
  local deadline=$(($(now_ms) + 10000)) v
  while (($(now_ms) < deadline)); do
    v="$(metric_value "$(curl -s --max-time 5 "$(url /metrics)" || true)" \
      'fabricwatch_collector_last_sample_timestamp_seconds{collector="rdma"}')"
    [[ -n "$v" && "$v" != 0 ]] && return 0
    sleep 0.1
  done
  return 1
}

# run_node_exporter SYSFS OUT: scrapes node_exporter's infiniband collector on SYSFS into OUT.
run_node_exporter() {
  local sysfs="$1" dest="$2" port pid log attempt deadline
  for attempt in 1 2 3; do
    port="$(free_port)"
    log="$E2E_TMP/node_exporter.$port.log"
    "$NODE_EXPORTER" --path.sysfs="$sysfs" --collector.disable-defaults --collector.infiniband \
      --web.listen-address="127.0.0.1:$port" >"$log" 2>&1 &
    pid=$!
    register_pid "$pid"
    deadline=$(($(now_ms) + 10000))
    while (($(now_ms) < deadline)) && kill -0 "$pid" 2>/dev/null; do
      if curl -sS --fail --max-time 10 -o "$dest" "http://127.0.0.1:$port/metrics" 2>/dev/null; then
        stop_agent "$pid"
        return 0
      fi
      sleep 0.1
    done
    stop_agent "$pid"
    log "node_exporter attempt $attempt on port $port failed:
$(tail -n 5 "$log")"
  done
  return 1
}

make_tmpdir WORK
shopt -s nullglob
trees=("$CORPUS"/*/sys)
shopt -u nullglob
((${#trees[@]} > 0)) || skip "rdma_external_test: no <capture>/sys tree in $CORPUS"

for src in "${trees[@]}"; do
  name="$(basename "$(dirname "$src")")"
  dest="$WORK/$name"
  cp -a "$(dirname "$src")" "$dest"
  chmod -R u+w "$dest"
  restored="$(python3 "$CHECK_PY" materialise "$dest")" || fail "materialising $name failed"
  sysfs="$dest/sys"
  if [[ ! -d "$sysfs/class/infiniband" ]]; then
    printf '# --- %s: no class/infiniband, skipped\n' "$name"
    continue
  fi
  printf '# --- %s: %s flattened symlinks restored\n' "$name" "$restored"

  set +e
  "$FABRICWATCH_BIN" --config.check --no-collector.netdev --path.sysfs="$sysfs" \
    >"$WORK/$name.config-check" 2>&1
  set -e

  start_agent --metrics.all --path.sysfs="$sysfs" --no-collector.netdev
  wait_first_rdma_sample ||
    fail "$name: the rdma collector published no snapshot within 10 s; log:
$(cat "$AGENT_LOG")"
  ours="$WORK/$name.fabricwatch.prom"
  scrape /metrics >"$ours"
  stop_agent "$AGENT_PID"
  [[ "$STOP_RC" == 0 ]] || fail_later "$name: agent exited $STOP_RC after SIGTERM; log:
$(cat "$AGENT_LOG")"

  set +e
  promtool_out="$(promtool check metrics <"$ours" 2>&1)"
  promtool_rc=$?
  set -e
  if [[ $promtool_rc -eq 0 && -z "$promtool_out" ]]; then
    ok "$name: promtool check metrics clean"
  else
    fail_later "$name: promtool check metrics: exit $promtool_rc: $promtool_out"
  fi

  run_check ours "$sysfs" "$ours" "$WORK/$name.config-check" "$COUNTERS_CC" "$name"

  [[ -n "$NODE_EXPORTER" ]] || continue
  theirs="$WORK/$name.node_exporter.prom"
  if ! run_node_exporter "$sysfs" "$theirs"; then
    printf '# %s: node_exporter did not serve metrics on this tree; cross-check skipped\n' "$name"
    SUMMARY+=("$name: node_exporter failed to serve, not cross-checked")
    continue
  fi
  adapted=""
  if ! grep -q '^node_scrape_collector_success{collector="infiniband"} 1$' "$theirs"; then
    printf '# %s: node_exporter infiniband collector failed or returned no data on the capture as is\n' "$name"
    cp -a "$dest" "$dest.node_exporter"
    adapted="$(python3 "$CHECK_PY" adapt "$dest.node_exporter/sys")"
    if ! run_node_exporter "$dest.node_exporter/sys" "$theirs" ||
      ! grep -q '^node_scrape_collector_success{collector="infiniband"} 1$' "$theirs"; then
      printf '# %s: node_exporter gives no infiniband data even on the adapted copy (%s); not cross-checked\n' \
        "$name" "$adapted"
      SUMMARY+=("$name: node_exporter gives no infiniband data, not cross-checked")
      continue
    fi
  fi
  run_check node_exporter "$sysfs" "$ours" "$theirs" "$COUNTERS_CC" "$name" "$adapted"
done

printf '# ---\n# per tree:\n'
for s in "${SUMMARY[@]}"; do printf '#   %s\n' "$s"; done
if ((${#UNMAPPED[@]} > 0)); then
  printf '# node_exporter families without a fabricwatch mapping (not failures): %s\n' \
    "$(printf '%s\n' "${UNMAPPED[@]}" | sort -u | paste -sd ' ')"
fi
printf '# runtime: %d ms\n' "$(($(now_ms) - T0_MS))"
finish
