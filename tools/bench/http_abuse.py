#!/usr/bin/env python3
"""HTTP abuse benchmark: a well-behaved scraper's /metrics latency while hostile clients hold
connections to the agent (issue 19, "bounded HTTP").

  tools/bench/http_abuse.py --port 9868 --hostile 1000 --mode idle
  tools/bench/http_abuse.py --port 9868 --hostile 1000 --mode partial --scrapes 200
  tools/bench/http_abuse.py --port 9868 --hostile 1000 --mode tls --tls   # server speaks TLS
  tools/bench/http_abuse.py --port 9868 --hostile 300 --mode slowread --source 10.9.0.3
  tools/bench/http_abuse.py --port 9868 --tls --keep-alive --path /healthz --scrapes 50

Hostile modes (each hostile connection reconnects when the server closes it, as an attacker
would, so evicting one only makes room for a moment):
  idle     connect and send nothing;
  partial  send a request line and one header, then trickle one more header byte every
           --trickle seconds and never finish the head (slowloris);
  tls      send the first bytes of a TLS ClientHello record and nothing more;
  slowread send a complete `GET --slow-path` and never read the answer (a receive buffer of
           4 KB): over a real link the response outgrows the server's send buffer and the
           connection stays in the writing state (issue 39 item 3). A slow reader notices a
           close only by a reset, and reconnects --reconnect seconds later.
--source ADDR[,ADDR...] binds the hostile connections to these local addresses, round robin (a
spread of source addresses, as attackers on many hosts would have; one address alone is held to
--web.max-connections-per-address). On loopback any 127/8 address will do.
--hold S keeps the hostile connections for S seconds before scraping (with --scrapes 0, to
let another client scrape meanwhile). The scraper opens a new connection per scrape (Connection: close), GETs --path, reads the whole
response and records the latency from connect to the last byte; a scrape fails when it takes
longer than --timeout, the connection is refused or reset, or the status is not 200. With
--keep-alive the scraper keeps one connection (HTTP/1.1 keep-alive, TLS with --tls) and records
each request's latency from its write to the last byte of its answer: what a Prometheus reusing
its connection sees (issue 39 item 8: head and body in two TLS records waited ~40 ms for the
delayed ACK).

Prints one line: mode, hostile count, hostile connections actually open when scraping began,
scrapes, errors, p50, p99 and max in milliseconds. --json prints the same as JSON. Exit status 0
whatever the figures (it measures, it asserts nothing) unless --require-success is given, in
which case it is 1 when no scrape succeeded.
"""

import argparse
import asyncio
import errno
import json
import resource
import select
import socket
import ssl
import statistics
import sys
import threading
import time

# The first 9 bytes of a TLS 1.2 ClientHello record (RFC 8446 §5.1: content type 22, legacy
# version 3.1, length), then the handshake header announcing more bytes than ever come.
PARTIAL_CLIENT_HELLO = bytes([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC])


def raise_fd_limit(needed):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, needed))
    if want > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return want


class Hostiles:
    def __init__(self, args):
        self.args = args
        self.open = 0
        self.reconnects = 0
        self.stopping = False
        self.sources = [a for a in (args.source or "").split(",") if a]
        self.turn = 0

    def next_source(self):
        if not self.sources:
            return None
        self.turn += 1
        return (self.sources[self.turn % len(self.sources)], 0)

    async def one(self):
        args = self.args
        first = True
        while not self.stopping:
            if not first:
                self.reconnects += 1
                await asyncio.sleep(0.05)
            first = False
            try:
                reader, writer = await asyncio.open_connection(
                    args.host, args.port, local_addr=self.next_source()
                )
            except OSError:
                await asyncio.sleep(0.2)
                continue
            self.open += 1
            try:
                if args.mode == "partial":
                    writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
                    await writer.drain()
                elif args.mode == "tls":
                    writer.write(PARTIAL_CLIENT_HELLO)
                    await writer.drain()
                while not self.stopping:
                    # Wake up to trickle (partial) or to notice a close (reader hits EOF).
                    try:
                        data = await asyncio.wait_for(reader.read(4096), timeout=args.trickle)
                        if not data:
                            break  # the server closed it: reconnect
                    except asyncio.TimeoutError:
                        if args.mode == "partial":
                            writer.write(b"a")  # one byte of a header that never ends
                            await writer.drain()
            except (OSError, ConnectionError):
                pass
            finally:
                self.open -= 1
                writer.close()


class SlowReaders:
    """--mode slowread: non-blocking sockets on an epoll of their own (a thread), so that a reset
    is seen without ever reading (EPOLLHUP/EPOLLERR; EPOLLIN is not asked for)."""

    def __init__(self, args):
        self.args = args
        self.sources = [a for a in (args.source or "").split(",") if a] or [None]
        self.open = 0
        self.reconnects = 0
        self.stopping = False
        self.request = (
            f"GET {args.slow_path} HTTP/1.1\r\nHost: {args.host}:{args.port}\r\n"
            f"Accept-Encoding: identity\r\n\r\n"
        ).encode()
        self.epoll = select.epoll()
        self.socks = {}  # fd -> (socket, state: "connecting" | "holding")
        self.due = []  # source indexes to (re)connect, with the time they are due
        self.thread = threading.Thread(target=self.run, daemon=True)

    def start(self):
        now = time.monotonic()
        self.due = [(now, i % len(self.sources)) for i in range(self.args.hostile)]
        self.thread.start()

    def connect(self, source_index):
        s = socket.socket(socket.AF_INET6 if ":" in self.args.host else socket.AF_INET,
                          socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: the window
        s.setblocking(False)
        source = self.sources[source_index]
        try:
            if source:
                s.bind((source, 0))
            err = s.connect_ex((self.args.host, self.args.port))
        except OSError:
            s.close()
            return False
        if err not in (0, errno.EINPROGRESS):
            s.close()
            return False
        self.socks[s.fileno()] = (s, "connecting", source_index)
        self.epoll.register(s.fileno(), select.EPOLLOUT | select.EPOLLRDHUP)
        return True

    def drop(self, fd, reconnect=True):
        s, state, source_index = self.socks.pop(fd)
        if state == "holding":
            self.open -= 1
        self.epoll.unregister(fd)
        s.close()
        if reconnect and not self.stopping:
            self.reconnects += 1
            self.due.append((time.monotonic() + self.args.reconnect, source_index))

    def run(self):
        while not self.stopping:
            now = time.monotonic()
            later = []
            for when, source_index in self.due:
                if when > now or not self.connect(source_index):
                    later.append((max(when, now + (0 if when > now else self.args.reconnect)),
                                  source_index))
            self.due = later
            for fd, events in self.epoll.poll(0.05):
                if fd not in self.socks:
                    continue
                s, state, source_index = self.socks[fd]
                if events & (select.EPOLLHUP | select.EPOLLERR | select.EPOLLRDHUP):
                    self.drop(fd)
                elif state == "connecting" and events & select.EPOLLOUT:
                    try:
                        s.send(self.request)
                    except OSError:
                        self.drop(fd)
                        continue
                    self.socks[fd] = (s, "holding", source_index)
                    self.open += 1
                    self.epoll.modify(fd, select.EPOLLRDHUP)  # never EPOLLIN: never read
        for fd in list(self.socks):
            self.drop(fd, reconnect=False)

    def stop(self):
        self.stopping = True
        self.thread.join()


async def scrape_once(args, ssl_context):
    start = time.monotonic()
    request = (
        f"GET {args.path} HTTP/1.1\r\nHost: {args.host}:{args.port}\r\n"
        f"Accept-Encoding: identity\r\nConnection: close\r\n\r\n"
    ).encode()
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(
                args.host,
                args.port,
                ssl=ssl_context,
                server_hostname=args.server_name if ssl_context else None,
            ),
            timeout=args.timeout,
        )
    except (OSError, asyncio.TimeoutError, ssl.SSLError) as e:
        return None, f"connect: {type(e).__name__}"
    try:
        writer.write(request)
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), timeout=args.timeout - (time.monotonic() - start))
    except (OSError, asyncio.TimeoutError, ssl.SSLError, ValueError) as e:
        writer.close()
        return None, f"read: {type(e).__name__}"
    writer.close()
    elapsed = (time.monotonic() - start) * 1000
    status_line = data.split(b"\r\n", 1)[0]
    if not status_line.startswith(b"HTTP/1.1 200"):
        return None, f"status: {status_line[:40]!r}"
    return elapsed, None


async def read_response(reader):
    """One HTTP/1.1 response with a Content-Length body: (status line, whole response)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    body = await reader.readexactly(length)
    return head.split(b"\r\n", 1)[0], head + body


async def scrape_keep_alive(args, ssl_context, latencies, errors):
    """--keep-alive: every scrape on one connection; the latency of each request alone."""
    request = (
        f"GET {args.path} HTTP/1.1\r\nHost: {args.host}:{args.port}\r\n"
        f"Accept-Encoding: identity\r\n\r\n"
    ).encode()
    connection = None
    for _ in range(args.scrapes):
        try:
            if connection is None:
                connection = await asyncio.wait_for(
                    asyncio.open_connection(
                        args.host,
                        args.port,
                        ssl=ssl_context,
                        server_hostname=args.server_name if ssl_context else None,
                    ),
                    timeout=args.timeout,
                )
                # Warm up: the first answer on a connection also pays for its handshake.
                connection[1].write(request)
                await asyncio.wait_for(read_response(connection[0]), timeout=args.timeout)
            reader, writer = connection
            start = time.monotonic()
            writer.write(request)
            status, _ = await asyncio.wait_for(read_response(reader), timeout=args.timeout)
            elapsed = (time.monotonic() - start) * 1000
            if status.startswith(b"HTTP/1.1 200"):
                latencies.append(elapsed)
            else:
                errors[f"status: {status[:40]!r}"] = errors.get(f"status: {status[:40]!r}", 0) + 1
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ssl.SSLError,
                ValueError) as e:
            errors[f"keep-alive: {type(e).__name__}"] = errors.get(f"keep-alive: {type(e).__name__}", 0) + 1
            if connection is not None:
                connection[1].close()
            connection = None
        if args.interval > 0:
            await asyncio.sleep(args.interval)
    if connection is not None:
        connection[1].close()


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, int(round(p / 100 * (len(ordered) - 1)))))
    return ordered[k]


async def main_async(args):
    ssl_context = None
    if args.tls:
        ssl_context = ssl.create_default_context(cafile=args.cacert)
        if not args.cacert:
            ssl_context.check_hostname = False
            ssl_context.verify_mode = ssl.CERT_NONE
        if args.cert:
            ssl_context.load_cert_chain(args.cert, args.key)
    hostiles = SlowReaders(args) if args.mode == "slowread" else Hostiles(args)
    tasks = []
    if args.mode == "slowread":
        hostiles.start()
    else:
        for _ in range(args.hostile):
            tasks.append(asyncio.create_task(hostiles.one()))
            if len(tasks) % 100 == 0:
                await asyncio.sleep(0)  # let the connects start in batches
    # Give the hostile connections time to be established (bounded).
    deadline = time.monotonic() + args.settle
    while hostiles.open < args.hostile and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    open_at_start = hostiles.open
    if args.hold > 0:
        await asyncio.sleep(args.hold)  # only hold: another client scrapes meanwhile
    latencies, errors = [], {}
    if args.keep_alive:
        await scrape_keep_alive(args, ssl_context, latencies, errors)
    for _ in range(0 if args.keep_alive else args.scrapes):
        ms, err = await scrape_once(args, ssl_context)
        if err:
            errors[err] = errors.get(err, 0) + 1
        else:
            latencies.append(ms)
        if args.interval > 0:
            await asyncio.sleep(args.interval)
    if args.mode == "slowread":
        hostiles.stop()
    hostiles.stopping = True
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return {
        "mode": args.mode,
        "keep_alive": args.keep_alive,
        "hostile": args.hostile,
        "hostile_open": open_at_start,
        "hostile_reconnects": hostiles.reconnects,
        "scrapes": args.scrapes,
        "ok": len(latencies),
        "errors": sum(errors.values()),
        "error_kinds": errors,
        "p50_ms": round(percentile(latencies, 50), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
        "max_ms": round(max(latencies), 2) if latencies else float("nan"),
        "mean_ms": round(statistics.mean(latencies), 2) if latencies else float("nan"),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", default="/metrics")
    parser.add_argument("--hostile", type=int, default=0, help="hostile connections to hold")
    parser.add_argument("--mode", choices=["idle", "partial", "tls", "slowread"], default="idle")
    parser.add_argument("--slow-path", default="/metrics", help="slowread: the path requested")
    parser.add_argument("--source", help="local addresses the hostiles bind, comma-separated")
    parser.add_argument("--reconnect", type=float, default=1.0,
                        help="slowread: s before a reset slow reader reconnects")
    parser.add_argument("--keep-alive", action="store_true",
                        help="scrape over one kept-alive connection, latency per request")
    parser.add_argument("--scrapes", type=int, default=100)
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between scrapes")
    parser.add_argument("--timeout", type=float, default=10.0, help="per-scrape timeout, s")
    parser.add_argument("--trickle", type=float, default=1.0, help="partial: s between bytes")
    parser.add_argument("--settle", type=float, default=10.0, help="max s to open the hostiles")
    parser.add_argument("--hold", type=float, default=0, help="hold the hostiles this many s before scraping")
    parser.add_argument("--tls", action="store_true", help="the scraper speaks TLS")
    parser.add_argument("--cacert")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--server-name", default="localhost")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--require-success", action="store_true")
    args = parser.parse_args()
    raise_fd_limit(args.hostile + 256)
    result = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"mode={result['mode']}{' keep-alive' if args.keep_alive else ''} hostile={result['hostile']} open={result['hostile_open']} "
            f"reconnects={result['hostile_reconnects']} scrapes={result['scrapes']} "
            f"ok={result['ok']} errors={result['errors']} {result['error_kinds'] or ''} "
            f"p50={result['p50_ms']}ms p99={result['p99_ms']}ms max={result['max_ms']}ms"
        )
    if args.require_success and result["ok"] == 0:
        sys.exit(1)


if __name__ == "__main__":
    main()
