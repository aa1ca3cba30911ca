#!/usr/bin/env python3
"""No collector or detector is named outside its own folder and the registries (issue 36).

CONTRIBUTING.md says a collector or a detector is its folder plus one registry line. This test
holds the code to it: it reads the names from the two registries (collectors/registry.cc
kCollectors, detectors/registry.cc kDetectors) and fails when a C++ source (*.cc, *.h; tests
excluded) outside collectors/<name>/ or detectors/<name>/ and the two registries holds one of
them as a string literal of its own ("link_flap", "rdma"), unless allowed_names.txt lists it.

Comments are not code and are skipped. A collector name that is also a label name of a family
(`netdev`) is counted only where it is compared with a collector's name (`collector ==
"netdev"`) or looks up a collector's snapshot (`Latest("netdev")`, `families("netdev")`), not
where it names a label.

allowed_names.txt is a ratchet: each line `path name count  # why` allows at most `count`
literals of `name` in `path`. An entry above what the file holds fails too ("stale"), so the list
only shrinks: lower the count or remove the line (`--update` does it, and never adds a line).

Usage: check_names.py [--update] ROOT
"""

import os
import re
import sys

SOURCE_DIRS = ("base", "collectors", "detectors", "exporter", "tools", "bench")
REGISTRIES = ("collectors/registry.cc", "detectors/registry.cc")
ALLOW_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "allowed_names.txt")

STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def strip_comments(text):
    """The text with // and /* */ comments blanked (string and char literals kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):  # raw string: R"delim( ... )delim"
            k = text.find("(", i)
            delim = text[i + 2 : k]
            j = text.find(")" + delim + '"', k)
            j = n if j < 0 else j + len(delim) + 2
            out.append(text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def registry_names(root, path, table):
    text = strip_comments(open(os.path.join(root, path), encoding="utf-8").read())
    start = text.index(table)
    body = text[start : text.index("};", start)]
    # An entry opens with its name, positional or designated: {"rdma", ... or {.name = "rdma", ...
    return re.findall(r'^\s*\{\s*(?:\.name\s*=\s*)?"([a-z0-9_]+)"', body, re.M)


def label_names(root):
    """Every label name a MetricDesc declares (to tell a label `netdev` from the collector)."""
    names = set()
    for path in sources(root):
        text = strip_comments(open(os.path.join(root, path), encoding="utf-8").read())
        for labels in re.findall(r"MetricKind::k\w+\s*,\s*\{([^{}]*)\}", text):
            names.update(re.findall(r'"([a-z0-9_]+)"', labels))
    return names


def sources(root):
    for top in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith((".cc", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def own_folder(path, name, kind):
    return path.startswith(f"{kind}/{name}/")


# Where a collector name that is also a label name refers to the collector: compared with a
# collector's name, or passed alone to a lookup of a collector's snapshot or families.
COLLECTOR_LOOKUP = re.compile(r"\b(?:families|Latest|latest|FindCollector|Snapshot)\(\s*$")
COLLECTOR_COMPARE = re.compile(r"(?:\bcollector|\binfo->name|\binfo\.name)\s*[=!]=\s*$")


def reference_context(text, start, end):
    """A comparison or lookup of the literal at [start, end), not a label name."""
    before = text[max(0, start - 40) : start]
    after = text[end : end + 20]
    return bool(
        COLLECTOR_COMPARE.search(before)
        or re.match(r"\s*[=!]=\s*[\w.>-]*\bcollector\b", after)
        or (COLLECTOR_LOOKUP.search(before) and re.match(r"\s*\)", after))
    )


def find_hits(root):
    collectors = registry_names(root, REGISTRIES[0], "kCollectors[]")
    detectors = registry_names(root, REGISTRIES[1], "kDetectors[]")
    if not collectors or not detectors:
        # A registry this script cannot read would make every name pass unseen.
        sys.exit(f"FAIL: no names read from {REGISTRIES}: {len(collectors)} collectors, "
                 f"{len(detectors)} detectors; teach registry_names() the entry form")
    labels = label_names(root)
    kinds = {n: "collectors" for n in collectors}
    kinds.update({n: "detectors" for n in detectors})
    hits = {}  # (path, name) -> count
    for path in sorted(sources(root)):
        if path in REGISTRIES:
            continue
        text = strip_comments(open(os.path.join(root, path), encoding="utf-8").read())
        for m in STRING.finditer(text):
            name = m.group(0)[1:-1]
            kind = kinds.get(name)
            if kind is None or own_folder(path, name, kind):
                continue
            if name in labels and not reference_context(text, m.start(), m.end()):
                continue
            hits[(path, name)] = hits.get((path, name), 0) + 1
    return collectors, detectors, hits


def read_allowed():
    allowed = {}
    lines = []
    for line in open(ALLOW_FILE, encoding="utf-8"):
        lines.append(line)
        entry = line.split("#", 1)[0].split()
        if not entry:
            continue
        path, name, count = entry
        allowed[(path, name)] = int(count)
    return allowed, lines


def update(allowed_lines, hits):
    out = []
    for line in allowed_lines:
        entry = line.split("#", 1)[0].split()
        if not entry:
            out.append(line)
            continue
        path, name, count = entry
        now = min(int(count), hits.get((path, name), 0))
        if now == 0:
            continue
        out.append(line.replace(f"{path} {name} {count}", f"{path} {name} {now}", 1))
    with open(ALLOW_FILE, "w", encoding="utf-8") as f:
        f.writelines(out)


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    root = args[0] if args else os.getcwd()
    collectors, detectors, hits = find_hits(root)
    allowed, lines = read_allowed()
    if "--update" in argv:
        update(lines, hits)
        allowed, lines = read_allowed()
    failures = []
    for (path, name), count in sorted(hits.items()):
        limit = allowed.get((path, name), 0)
        if count > limit:
            failures.append(
                f'{path}: "{name}" appears {count} time(s) as a string literal (allowed: {limit}). '
                f"Name a collector or detector only in its own folder and the registries: read "
                f"what its declaration says (registry.h, its contract header) instead."
            )
    for (path, name), limit in sorted(allowed.items()):
        count = hits.get((path, name), 0)
        if count < limit:
            failures.append(
                f'{ALLOW_FILE}: stale entry "{path} {name} {limit}": the file holds {count}; '
                f"lower the count or remove the line (check_names.py --update)."
            )
    total = sum(hits.values())
    detector_total = sum(c for (p, n), c in hits.items() if n in detectors)
    print(
        f"names: {len(collectors)} collectors, {len(detectors)} detectors; literals outside "
        f"their folders and the registries: {total} ({detector_total} of detectors, "
        f"{total - detector_total} of collectors) in {len({p for p, _ in hits})} files"
    )
    if "--list" in argv:
        for (path, name), count in sorted(hits.items()):
            print(f"  {path} {name} {count}")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
