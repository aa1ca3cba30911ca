#!/usr/bin/env python3
"""Turns a fabricsim replay root into a hostile one (tests/e2e/hostile_strings_e2e_test.sh).

Every string a collector reads from a file gets hostile content: HTML (<script>), quotes,
backslashes, newlines, a 10 KB string, a 3 KB one and invalid UTF-8, in turn, so each kind reaches each
collector. One netdev is renamed to a name the kernel would allow (no '/', ':' or whitespace,
at most 15 bytes) but that needs escaping everywhere. Module EEPROM images get the same in their
fixed-width ASCII fields (vendor, part number, revision, serial, date code: SFF-8472 Table 4-1,
SFF-8636 Table 6-15, CMIS Table 8-27 offsets, as tools/fabricsim/module.cc writes them).

usage: hostile_tree.py ROOT   (ROOT holds sys/ and ethtool/ from `fabricsim build`)
prints the new netdev name and the number of files changed.
"""
import os
import re
import sys

SCRIPT = b"<script>alert(1)</script>"
PAYLOADS = [
    SCRIPT,
    b'quote" backslash\\ apostrophe\' amp& <b>bold</b>',
    b"first line\nsecond line\r\nthird " + SCRIPT,
    # Over one page: sysfs attributes never are, and the reader refuses it (collectors/sys/sysfs.h).
    b"A" * 10240 + SCRIPT,
    # Under a page but over the label bound: cut to 1024 bytes by the sink (docs/design.md §5.6).
    b"B" * 3000 + SCRIPT,
    b"bad utf8 \xff\xfe \xc3( \xed\xa0\x80 \xf4\x90\x80\x80 " + SCRIPT + b" \xe2\x82",
]
LONG = PAYLOADS[4]
# A legal netdev name (net/core/dev.c dev_valid_name): < 16 bytes, no '/', ':' or whitespace.
HOSTILE_NETDEV = b"<b>\"x'\\&\xe9"  # ends in a Latin-1 byte: invalid UTF-8

# Attributes read as strings (exported as labels or parsed); files under these names anywhere in
# the tree are rewritten.
STRING_FILES = {
    "node_desc", "fw_ver", "board_id", "hca_type", "node_guid", "sys_image_guid", "node_type",
    "link_layer", "rate", "operstate", "duplex", "address", "local_cpulist", "type", "name",
    "temp1_label", "temp2_label", "hw_rev",
}


def rename_netdev(root):
    """Renames the first class/net symlink's netdev everywhere it appears; returns (old, new)."""
    root = os.fsencode(root)
    net = os.path.join(root, b"sys/class/net")
    for old in sorted(os.listdir(net)):
        link = os.path.join(net, old)
        if not os.path.islink(link) or not os.path.isdir(os.path.join(root, b"ethtool", old)):
            continue
        target = os.readlink(link)
        real = os.path.normpath(os.path.join(net, target))
        os.rename(real, os.path.join(os.path.dirname(real), HOSTILE_NETDEV))
        os.unlink(link)
        os.symlink(os.path.join(os.path.dirname(target), HOSTILE_NETDEV),
                   os.path.join(net, HOSTILE_NETDEV))
        os.rename(os.path.join(root, b"ethtool", old), os.path.join(root, b"ethtool", HOSTILE_NETDEV))
        return old, HOSTILE_NETDEV
    raise SystemExit("no netdev with an ethtool directory in " + os.fsdecode(root))


def rewrite_ndevs(root, old, new):
    """gid_attrs/ndevs/* name the netdev of a RoCE GID: follow the rename."""
    count = 0
    for dirpath, _, files in os.walk(os.path.join(root, "sys")):
        if not dirpath.endswith("gid_attrs/ndevs"):
            continue
        for f in files:
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                text = fh.read()
            if text.strip() == old:
                with open(p, "wb") as fh:
                    fh.write(new + b"\n")
                count += 1
    return count


def rewrite_strings(root):
    count = 0
    for dirpath, dirs, files in os.walk(os.path.join(root, "sys")):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            if f not in STRING_FILES or os.path.islink(p):
                continue
            # `type` is a string only for an IOMMU group (class/net/*/type is the ARPHRD number).
            if f == "type" and "iommu_groups" not in dirpath:
                continue
            # Not the PCI `class`/`vendor` numbers or hwmon inputs: only the names above.
            # node_desc, an info label, always gets the long string that reaches the sink.
            payload = LONG if f == "node_desc" else PAYLOADS[count % len(PAYLOADS)]
            with open(p, "wb") as fh:
                fh.write(payload + b"\n")
            count += 1
    return count


def ascii_field(payload, width):
    return (payload + b" " * width)[:width]


# Field offsets in the flat image of docs/design.md §5.3, by identifier (SFF-8024 Table 4-1).
SFF8472 = {"vendor": (20, 16), "part": (40, 16), "rev": (56, 4), "serial": (68, 16), "date": (84, 8)}
SFF8636 = {"vendor": (148, 16), "part": (168, 16), "rev": (184, 2), "serial": (196, 16), "date": (212, 8)}
CMIS = {"vendor": (129, 16), "part": (148, 16), "rev": (164, 2), "serial": (166, 16), "date": (182, 8)}
FIELD_PAYLOADS = [b'<script>"\\\'&', b"\xff\xfe<b>\n\"x", b"a\\b\"c\nd<i>\xc3(", b"</script>\"'\\", b"\xed\xa0\x80&lt;\""]


def rewrite_eeproms(root):
    count = 0
    for dirpath, _, files in os.walk(os.path.join(root, "ethtool")):
        if "module-eeprom" not in files:
            continue
        p = os.path.join(dirpath, "module-eeprom")
        with open(p, "rb") as fh:
            image = bytearray(fh.read())
        ident = image[0]
        fields = SFF8472 if ident == 0x03 else SFF8636 if ident in (0x0C, 0x0D, 0x11) else CMIS
        for i, (name, (offset, width)) in enumerate(sorted(fields.items())):
            if offset + width <= len(image):
                image[offset:offset + width] = ascii_field(FIELD_PAYLOADS[(i + count) % len(FIELD_PAYLOADS)], width)
        with open(p, "wb") as fh:
            fh.write(image)
        count += 1
    return count


def rewrite_statistics(root):
    """ethtool -S text: a hostile statistic name among the real ones."""
    count = 0
    for dirpath, _, files in os.walk(os.path.join(root, "ethtool")):
        if "statistics" not in files:
            continue
        p = os.path.join(dirpath, "statistics")
        with open(p, "ab") as fh:
            fh.write(b"     <script>alert(1)</script>\"\\\xff: 7\n     " + b"x" * 10240 + b": 1\n")
        count += 1
    return count


def rewrite_lldp(root):
    """The far end's words: the switch's LLDP system name and port name (peer_name, peer_port)
    hold markup, quotes and a backslash; valid UTF-8, as the keyvalue parser only takes that."""
    count = 0
    lldp = os.path.join(root, "lldp")
    for name in sorted(os.listdir(lldp)) if os.path.isdir(lldp) else []:
        p = os.path.join(lldp, name)
        with open(p, "rb") as fh:
            text = fh.read()
        sysname = b"<b>leaf\"x'\\&01"  # <b>leaf"x'\&01
        port = b"Ethernet0<script>alert(2)</script>"
        text = re.sub(rb"(\.chassis\.name=)[^\n]*", lambda m: m.group(1) + sysname, text)
        text = re.sub(rb"(\.port\.ifname=)[^\n]*", lambda m: m.group(1) + port, text)
        with open(p, "wb") as fh:
            fh.write(text)
        count += 1
    return count


def main():
    root = sys.argv[1]
    old, new = rename_netdev(root)
    n = rewrite_ndevs(root, old, new)
    n += rewrite_strings(root)
    eeproms = rewrite_eeproms(root)
    stats = rewrite_statistics(root)
    peers = rewrite_lldp(root)
    print(f"{old} -> {new!r}; {n} string files, {eeproms} module images, {stats} statistics "
          f"files, {peers} LLDP neighbours")
    if eeproms == 0:
        raise SystemExit("no module-eeprom image to make hostile")
    if peers == 0:
        raise SystemExit("no LLDP neighbour replay to make hostile (fabricsim writes DIR/lldp)")


main()
