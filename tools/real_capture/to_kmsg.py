#!/usr/bin/env python3
"""Converts a real kernel-log capture to the /dev/kmsg replay format (issue 38, item 4).

A capture is kept as it was posted (tests/fixtures/real/kmsg/<name>.log, sources in
tests/fixtures/real/SOURCES.md). This script changes ONLY the transport prefix of each line,
never the message, and writes <name>.kmsg next to it: one record per line,

    <syslog prio>,<seq>,<usec>,-;<message>

as collectors/kmsg/kmsg_parse.h reads it (facility 0, the kernel's; flags '-').

Transport prefixes recognised, per line (first that fits; see PREFIXES below):
  pdsh/clush    "node01: " before any of the forms below
  logread       "Tue Aug 12 16:40:43 2025 kern.crit kernel: " (OpenWrt)
  journald      short-iso "2024-01-01T00:00:00+0000 host kernel: "
  syslog        RFC 3164 / journald short, short-precise "Jan  1 00:00:00[.123456] host kernel: "
  dmesg -x      "kern  :err   : "
  dmesg -T      "[Mon Jan  1 00:00:00 2024] ", also with a syslog host tag after it,
                "[Sun Dec  1 14:54:40 2024] host kernel: " (a syslog file shown with dmesg -T dates)
  dmesg -H      "[  +0.000844] " (relative) and "[Aug29 20:09] "
  printk level  "<3>" (console/netconsole)
  dmesg         "[   12.345678] " (also after any of the above, as syslog daemons keep it)
  bare          leading blanks only (a line quoted in a mail or commit message)
Priority: the level the transport carries (dmesg -x, logread, "<N>"), else 6 (info) when the
message has none of FAULT_WORDS, else 3 (err). The conformance test does not read the
priority; it only has to be plausible for a replay.
Timestamp: dmesg seconds when present (relative ones summed), else the previous record's
plus 1 s. Escaping: as the kernel does for /dev/kmsg (printk.c: bytes < 0x20, >= 0x7f and
the backslash as \\xNN).

Usage: to_kmsg.py CAPTURE.log...      write CAPTURE.kmsg next to each
       to_kmsg.py --check [DIR]       every DIR/*.kmsg (default: the corpus) is what this
                                      script makes of its .log; exit 1 naming any that differ
"""

import argparse
import pathlib
import re
import sys

CORPUS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "real" / "kmsg"

LEVELS = {"emerg": 0, "alert": 1, "crit": 2, "err": 3, "warn": 4, "warning": 4,
          "notice": 5, "info": 6, "debug": 7}

# Words of a line that reports trouble; a line with none is taken as informational.
FAULT_WORDS = re.compile(
    r"error|fail|fatal|timeout|timed out|warn|bad|can't|unable|insufficient|limited|"
    r"down|recover|compromised|synd|safe mode|unavailable|bogus|invalid|cut here",
    re.IGNORECASE)

_DATE = r"[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}"
# (name, regex); a regex may name the groups `level` (syslog level word or digit).
PREFIXES = [
    ("logread", re.compile(_DATE + r" \w+\.(?P<level>[a-z]+) kernel: ")),
    ("journald-iso", re.compile(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? \S+ kernel: ")),
    ("syslog", re.compile(r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ kernel: ")),
    ("dmesg-x", re.compile(
        r"(?:kern|user|mail|daemon|auth|syslog|lpr|news) *:"
        r"(?P<level>emerg|alert|crit|err|warn|notice|info|debug) *: ")),
    ("dmesg-T", re.compile(r"\[" + _DATE + r"\] ")),
    ("dmesg-H", re.compile(r"\[[A-Z][a-z]{2}\d\d \d\d:\d\d\] ")),
    ("printk-level", re.compile(r"<(?P<level>[0-7])>")),
]
# The "host kernel: " a syslog daemon writes, when it follows a dmesg -T date.
HOST_KERNEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]* kernel: ")
DMESG_SECONDS = re.compile(r"\[ *(?P<plus>\+)?(?P<sec>\d+)\.(?P<frac>\d{6})\] ")
PDSH = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*: (?=\[|<\d>|[A-Z][a-z]{2} |\d{4}-)")


def escape(message):
    out = []
    for byte in message.encode("utf-8", "surrogateescape"):
        if byte < 0x20 or byte >= 0x7F or byte == 0x5C:
            out.append("\\x%02x" % byte)
        else:
            out.append(chr(byte))
    return "".join(out)


def strip_transport(line):
    """(level or None, seconds or None, relative, message) of one captured line."""
    level = None
    rest = line.lstrip(" \t")
    pdsh = PDSH.match(rest)
    if pdsh:
        rest = rest[pdsh.end():]
    for name, regex in PREFIXES:
        match = regex.match(rest)
        if match:
            word = match.groupdict().get("level")
            if word is not None:
                level = int(word) if word.isdigit() else LEVELS.get(word)
            rest = rest[match.end():]
            if name == "dmesg-T":
                host = HOST_KERNEL.match(rest)
                if host:
                    rest = rest[host.end():]
            break
    seconds, relative = None, False
    match = DMESG_SECONDS.match(rest)
    if match:
        seconds = int(match.group("sec")) * 1_000_000 + int(match.group("frac"))
        relative = match.group("plus") is not None
        rest = rest[match.end():]
    return level, seconds, relative, rest


def convert(text):
    records = []
    usec = 0
    for seq, line in enumerate(text.splitlines()):
        level, seconds, relative, message = strip_transport(line.rstrip("\r"))
        if seconds is None:
            usec += 1_000_000
        elif relative:
            usec += seconds
        else:
            usec = seconds
        if level is None:
            level = 3 if FAULT_WORDS.search(message) else 6
        records.append("%d,%d,%d,-;%s\n" % (level, seq, usec, escape(message)))
    return "".join(records)


def kmsg_path(capture):
    return capture.with_suffix(".kmsg")


def read(path):
    return path.read_bytes().decode("utf-8", "surrogateescape")


def check(directory):
    stale = []
    captures = sorted(directory.glob("*.log"))
    for capture in captures:
        target = kmsg_path(capture)
        if not target.exists() or read(target) != convert(read(capture)):
            stale.append(target.name)
    for orphan in sorted(directory.glob("*.kmsg")):
        if not orphan.with_suffix(".log").exists():
            stale.append(orphan.name + " (no .log)")
    if not captures:
        print("to_kmsg: no captures in %s" % directory, file=sys.stderr)
        return 1
    for name in stale:
        print("to_kmsg: %s is not what tools/real_capture/to_kmsg.py makes; rerun it" % name,
              file=sys.stderr)
    print("to_kmsg: %d captures, %d stale" % (len(captures), len(stale)))
    return 1 if stale else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("paths", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    if args.check:
        return check(args.paths[0] if args.paths else CORPUS)
    for capture in args.paths or sorted(CORPUS.glob("*.log")):
        kmsg_path(capture).write_bytes(
            convert(read(capture)).encode("utf-8", "surrogateescape"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
