#!/usr/bin/env python3
"""What check_names.py counts and what it does not, on a tree made for it (issue 36)."""

import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_names  # noqa: E402

COLLECTORS = 'const CollectorInfo kCollectors[] = {\n    {"netdev", "x"},\n    {"rdma", "y"},\n};\n'
DETECTORS = 'const DetectorInfo kDetectors[] = {\n    {"link_flap", "z"},\n};\n'
FILES = {
    "collectors/registry.cc": COLLECTORS,
    "detectors/registry.cc": DETECTORS,
    # A family with a label named like a collector.
    "collectors/netdev/netdev_metrics.h": 'MetricDesc k{"n", "h", MetricKind::kGauge, {"netdev"}};\n',
    # Its own folder names it freely.
    "detectors/link_flap/link_flap.cc": 'auto n = "link_flap"; bool r = c == "rdma";\n',
    # Outside: a detector literal and a collector comparison count; a comment, a label and a
    # longer string do not.
    "exporter/page.cc": (
        '// "link_flap" in a comment\n'
        'if (a.detector == "link_flap") {}\n'
        'if (snapshot.collector == "netdev") {}\n'
        'Label<k>(m, "netdev");\n'
        'auto text = "link_flap reports";\n'
        'auto f = families("rdma");\n'
    ),
}


def main():
    with tempfile.TemporaryDirectory() as root:
        for path, text in FILES.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        collectors, detectors, hits = check_names.find_hits(root)
    expected = {
        ("detectors/link_flap/link_flap.cc", "rdma"): 1,
        ("exporter/page.cc", "link_flap"): 1,
        ("exporter/page.cc", "netdev"): 1,
        ("exporter/page.cc", "rdma"): 1,
    }
    ok = collectors == ["netdev", "rdma"] and detectors == ["link_flap"] and hits == expected
    if not ok:
        print(f"FAIL: collectors {collectors}, detectors {detectors}, hits {hits}")
        print(f"      expected hits {expected}")
        return 1
    print("check_names_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
