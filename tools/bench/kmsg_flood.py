#!/usr/bin/env python3
"""Kernel log flood writer for tools/bench/run.sh (issue 23 item 4, "Flood safety").

Appends /dev/kmsg records (docs/reference.md §9.1, the --path.kmsg replay format) of one mlx5
function's ACCESS_REG failure, the ConnectX-7 flood of gpud #1164, to FILE at RATE records per
second for SECONDS, paced per 100 ms batch, each batch one write():

  3,<seq>,<usec>,-;mlx5_core <bdf>: mlx5_cmd_out_err:838:(pid 1441871): ACCESS_REG(0x805) ...
   SUBSYSTEM=pci
   DEVICE=+pci:<bdf>

Sequence numbers run from --first-seq without a gap (a gap would be counted as lost records);
the µs field is CLOCK_MONOTONIC, as the kernel's would be. A batch is appended whole, but a
reader of a growing regular file can see it cut where the kernel has copied it so far (the file
size grows page by page); the agent takes a record whose last line is complete as complete
(KmsgSplitter::MarkInputEnd), so a cut right after a record's message or SUBSYSTEM= line would
separate it from its continuation lines. The writer keeps every such line end off a 4 KiB
boundary (it pads the pid field by one digit when one would land there); --no-page-guard turns
that off to show the effect.

Prints (and with --json writes) what it wrote: records, bytes, seconds, the achieved rate and the
latest a batch started against its schedule.
"""

import argparse
import json
import os
import sys
import time

PAGE = 4096


def record(seq, usec, bdf, pid):
    message = (
        f"mlx5_core {bdf}: mlx5_cmd_out_err:838:(pid {pid}): ACCESS_REG(0x805) op_mod(0x1) "
        "failed, status bad operation(0x2), syndrome (0x9a6171), err(-22)"
    )
    first = f"3,{seq},{usec},-;{message}\n".encode()
    second = b" SUBSYSTEM=pci\n"
    third = f" DEVICE=+pci:{bdf}\n".encode()
    return first, second, third


def guarded_record(offset, seq, usec, bdf, guard):
    """The record's bytes; with `guard`, no line inside it ends on a page boundary."""
    pid = 1441871
    while True:
        first, second, third = record(seq, usec, bdf, pid)
        ends = (offset + len(first), offset + len(first) + len(second))
        if not guard or all(end % PAGE for end in ends):
            return first + second + third
        pid *= 10  # one more digit: every line end moves one byte


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", required=True, help="replay file to append to")
    parser.add_argument("--bdf", required=True, help="PCI address of an RDMA function of the root")
    parser.add_argument("--rate", type=int, default=10000, help="records per second")
    parser.add_argument("--seconds", type=float, default=60, help="how long to write")
    parser.add_argument("--first-seq", type=int, default=1, help="sequence number of the first")
    parser.add_argument("--no-page-guard", action="store_true", help="let line ends hit pages")
    parser.add_argument("--json", help="write the summary here too")
    args = parser.parse_args()

    fd = os.open(args.file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    offset = os.fstat(fd).st_size
    seq = args.first_seq
    written = 0
    nbytes = 0
    max_late = 0.0
    start = time.monotonic()
    batches = max(1, round(args.seconds * 10))
    for batch in range(batches):
        due = start + batch * 0.1
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        else:
            max_late = max(max_late, now - due)
        # The records due by the end of this batch's 100 ms, so the total is exact.
        target = round(args.rate * (batch + 1) / 10)
        usec = int(time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6)
        chunks = []
        for _ in range(target - written):
            chunk = guarded_record(offset, seq, usec, args.bdf, not args.no_page_guard)
            chunks.append(chunk)
            offset += len(chunk)
            seq += 1
            usec += 1
        data = b"".join(chunks)
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        nbytes += len(data)
        written = target
    # The last batch's 100 ms belongs to the flood too: the caller's window is our lifetime.
    now = time.monotonic()
    if start + batches * 0.1 > now:
        time.sleep(start + batches * 0.1 - now)
    end = time.monotonic()
    os.close(fd)
    summary = {
        "records": written,
        "bytes": nbytes,
        "seconds": round(end - start, 3),
        "rate": round(written / (end - start), 1),
        "max_batch_late_ms": round(max_late * 1000, 1),
        "first_seq": args.first_seq,
        "last_seq": seq - 1,
        "page_guard": not args.no_page_guard,
    }
    text = json.dumps(summary)
    print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
