"""The reply cap counts decoded bytes (issue 33.2): a 16 KB zstd reply took one call to 1.1 GB and 16 gzip
bombs in flight took a run to 1.63 GB, because the HTTP client decoded each chunk whole before the cap saw
it. Now the raw body is read undecoded and decoded a bounded piece at a time, per call and under one budget
for every reply being read at once (:mod:`harness.judge.replycap`)."""
import asyncio
import http.server
import json
import threading
import tracemalloc
import zlib

from harness.judge import replycap
from harness.judge.upstream import Cell, HttpUpstream, UpstreamError

import pytest

from bench.reply_bombs import gzip_bomb, zstd_bomb

CELL = Cell("r", "c", "inhouse.span")
REPLY = json.dumps({"choices": [{"message": {"role": "assistant", "content": "ok " * 2000}}]}).encode()


def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


def _raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


def _gzip(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    return c.compress(data) + c.flush()


BODIES = {
    "gzip": ("gzip", lambda: _gzip(REPLY)),
    "deflate-zlib": ("deflate", lambda: zlib.compress(REPLY)),
    "deflate-raw": ("deflate", lambda: _raw_deflate(REPLY)),
    "zstd": ("zstd", lambda: _zstd(REPLY)),
    "gzip-then-zstd": ("gzip, zstd", lambda: _zstd(_gzip(REPLY))),
    "gzip-two-members": ("gzip", lambda: _gzip(REPLY[:100]) + _gzip(REPLY[100:])),
    "bomb-gzip": ("gzip", lambda: gzip_bomb(64)),
    "bomb-deflate": ("deflate", lambda: zlib.compress(b"\0" * 2**20) * 1),
    "bomb-zstd": ("zstd", lambda: zstd_bomb(4096)),
    "bomb-gzip-in-zstd": ("gzip, zstd", lambda: _zstd(gzip_bomb(16))),
    "br": ("br", lambda: b"\x1b\x00\x00"),
}


class _Judge(http.server.BaseHTTPRequestHandler):
    """Sends the body named by the path's first part with its Content-Encoding."""

    protocol_version = "HTTP/1.1"
    bodies: dict = {}

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length") or 0))
        name = self.path.strip("/").split("/")[0]
        encoding, body = self.bodies[name]
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


@pytest.fixture(scope="module")
def judge():
    _Judge.bodies = {name: (enc, make()) for name, (enc, make) in BODIES.items()}
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Judge)
    server.daemon_threads = True
    server.handle_error = lambda *a: None   # a client that stopped reading a bomb resets the connection
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _calls(url: str, n: int, cap: int):
    up = HttpUpstream(url, "m", None, max_reply_bytes=cap)

    async def one():
        try:
            return await up.complete(CELL, {"messages": [{"role": "user", "content": "hi"}]})
        except UpstreamError as e:
            return e

    async def all_():
        try:
            return await asyncio.gather(*(one() for _ in range(n)))
        finally:
            await up.aclose()

    tracemalloc.start()
    try:
        out = asyncio.run(all_())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, peak


@pytest.mark.parametrize("name", ["gzip", "deflate-zlib", "deflate-raw", "zstd", "gzip-then-zstd", "gzip-two-members"])
def test_a_compressed_reply_under_the_cap_is_decoded_as_sent(judge, name):
    (reply,), _ = _calls(f"{judge}/{name}/v1", 1, 2**20)
    assert reply == json.loads(REPLY)


@pytest.mark.parametrize("name", ["bomb-gzip", "bomb-zstd", "bomb-gzip-in-zstd"])
def test_a_compression_bomb_is_refused_at_the_cap_of_its_decoded_size(judge, name):
    (err,), peak = _calls(f"{judge}/{name}/v1", 1, 2 * 2**20)
    assert isinstance(err, UpstreamError) and err.retryable is False
    assert "reply is larger than the 2 MB cap (--max-reply-mb), counted decoded" in str(err)
    assert peak < 12 * 2**20, peak            # 16 to 64 MB decode from these; a few MB were held


def test_deflate_is_counted_decoded_too(judge):
    (err,), _ = _calls(f"{judge}/bomb-deflate/v1", 1, 64 * 1024)
    assert "larger than the 0.0625 MB cap" in str(err)


def test_sixteen_gzip_bombs_in_flight_hold_a_few_caps_not_a_gigabyte(judge):
    replycap.HELD.peak = 0
    errors, peak = _calls(f"{judge}/bomb-gzip/v1", 16, 8 * 2**20)   # 16 x 64 MB = 1 GB if decoded whole
    assert all(isinstance(e, UpstreamError) and "larger than the 8 MB cap" in str(e) for e in errors)
    assert peak < 64 * 2**20, peak
    assert replycap.HELD.peak <= replycap.HELD.limit and replycap.HELD.held == 0


def test_br_is_never_asked_for_and_refused_unread(judge):
    (err,), _ = _calls(f"{judge}/br/v1", 1, 2**20)
    assert "Content-Encoding does not decode: br" in str(err) and err.retryable is False
    assert "br" not in replycap.ACCEPT_ENCODING and "zstd" not in replycap.ACCEPT_ENCODING


def test_replies_in_flight_share_one_budget():
    """Two 2 MB replies, each under its 4 MB cap, read at once under a 3 MB budget: the server sends 1.6 MB
    of each and holds the rest until one read was refused; the other then completes; nothing stays held."""
    go = threading.Event()
    part, rest = b"x" * (1600 * 1024), b"y" * (400 * 1024)

    class Slow(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", str(len(part) + len(rest)))
            self.end_headers()
            try:
                self.wfile.write(part)
                self.wfile.flush()
                go.wait()
                self.wfile.write(rest)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    server.daemon_threads = True
    server.handle_error = lambda *a: None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    held = replycap.Held(3 * 2**20)

    async def read(client):
        try:
            async with client.stream("POST", url, content=b"{}") as r:
                return len(await replycap.read_capped(r, 4 * 2**20, held=held))
        except replycap.RepliesHeld as e:
            go.set()
            return e

    async def both():
        import httpx

        async with httpx.AsyncClient(trust_env=False) as client:
            return await asyncio.gather(read(client), read(client))

    try:
        out = asyncio.run(both())
    finally:
        go.set()
        server.shutdown()
    assert sorted(type(x).__name__ for x in out) == ["RepliesHeld", "int"]
    assert len(part) + len(rest) in out and held.peak <= held.limit and held.held == 0
