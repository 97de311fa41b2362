"""Peak memory of a process whose HTTP judge answers with compression bombs (issue 33.2).

    .venv/bin/python bench/reply_bombs.py zstd      # one 16 KB zstd reply (1 MB frames of zeros)
    .venv/bin/python bench/reply_bombs.py gzip16    # 16 gzip bombs (64 MB of zeros each) in flight at once

Each scenario runs in its own process (this one): a loopback server in a thread sends the bomb as a 200
reply with ``Content-Encoding`` set, the harness's :class:`harness.judge.upstream.HttpUpstream` (8 MB cap,
the default) calls it, and the process's peak RSS (``ru_maxrss``) is printed with the call outcomes. Run it
with ``PYTHONPATH`` pointing at another checkout to measure that checkout's code.
"""
from __future__ import annotations

import asyncio
import http.server
import json
import resource
import sys
import threading
import zlib

ZERO_MB = b"\0" * 2**20


def gzip_bomb(mb: int) -> bytes:
    """A gzip stream of ``mb`` MB of zeros, made of fully flushed 1 MB blocks (its trailer's CRC is wrong:
    a reader that stops at its cap never gets there)."""
    c = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    first = c.compress(ZERO_MB) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(ZERO_MB) + c.flush(zlib.Z_FULL_FLUSH)
    return first + block * (mb - 2) + c.compress(ZERO_MB) + c.flush()


def zstd_bomb(size: int) -> bytes:
    """About ``size`` bytes of zstd: frames of 1 MB of zeros, one after another."""
    import zstandard

    frame = zstandard.ZstdCompressor(level=19).compress(ZERO_MB)
    return frame * (size // len(frame))


def serve(body: bytes, encoding: str) -> str:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", encoding)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


async def calls(url: str, n: int) -> list[str]:
    from harness.judge.upstream import Cell, HttpUpstream, UpstreamError

    up = HttpUpstream(url, "m", None)

    async def one(i):
        try:
            await up.complete(Cell("r", f"c{i}", "m"), {"messages": [{"role": "user", "content": "hi"}]})
            return "answered"
        except UpstreamError as e:
            return str(e)[:90]
        except MemoryError:
            return "MemoryError"

    try:
        return await asyncio.gather(*(one(i) for i in range(n)))
    finally:
        await up.aclose()


def main(scenario: str) -> None:
    if scenario == "zstd":
        body, encoding, n = zstd_bomb(16 * 1024), "zstd", 1
    elif scenario == "gzip16":
        body, encoding, n = gzip_bomb(64), "gzip", 16
    else:
        raise SystemExit(f"unknown scenario {scenario!r}; known: zstd, gzip16")
    url = serve(body, encoding)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    outcomes = asyncio.run(calls(url, n))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"scenario": scenario, "reply_bytes": len(body), "calls": n,
                      "peak_rss_mib_before_calls": round(base), "peak_rss_mib": round(peak),
                      "outcomes": sorted(set(outcomes))}))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "zstd")
