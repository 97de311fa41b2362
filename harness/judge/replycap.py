"""The reply cap counts what a reply decodes to, per call and over every reply being read at once.

A judge (or an embedding endpoint) may compress its reply (``Content-Encoding``): 16 KB of zstd can
decode to a gigabyte, and an HTTP client that decodes each chunk as it arrives holds all of it before
any size check sees it (issue 33: one 16 KB zstd reply took a call to 1.1 GB; 16 gzip bombs in flight
to 1.63 GB). So :func:`read_capped` reads the reply's raw bytes (``aiter_raw``: the client decodes
nothing) and decodes them itself, a piece of at most :data:`PIECE` bytes at a time, counting:

- per call: the raw body and the decoded body are each refused (:class:`ReplyTooLarge`) as soon as
  they pass the call's cap (``--max-reply-mb``), whatever the encoding: gzip, deflate (zlib or raw),
  zstd, and several of them stacked; ``br`` is never asked for and is refused unread (no bounded
  decoder is installed), as is any other coding;
- in total: every byte a read holds (raw and decoded) is taken from one budget of the process,
  :data:`HELD`, for the time of the read. A read that would take the budget past its limit is refused
  with :class:`RepliesHeld` (retryable: it is a moment's crowding, not the judge's fault), so 16 bombs
  in flight hold at most the budget together, not 16 caps.

The harness asks only for what it decodes boundedly (:data:`ACCEPT_ENCODING`); a server that sends
something else anyway is read under the same rules.
"""
from __future__ import annotations

import io
import threading
import zlib

ACCEPT_ENCODING = "gzip, deflate"
"""What the harness's judge client asks for (a client's default would add ``br``/``zstd`` when their
decoders are installed)."""
PIECE = 64 * 1024
"""The most a decoder is asked to produce at once."""
IN_FLIGHT_BYTES = 64 * 2**20
"""The budget of bytes held by all reply reads of the process at once (raised, never lowered, to twice
the largest per-call cap in use: :meth:`Held.at_least`)."""
IDENTITY = {"", "identity", "none"}


class ReplyTooLarge(Exception):
    """A reply body (raw or decoded) over the cap."""


class RepliesHeld(Exception):
    """The replies being read at once would hold more than :data:`HELD` allows."""


class UndecodableReply(Exception):
    """A reply whose ``Content-Encoding`` the harness does not decode, or whose body does not decode."""


class Held:
    """A byte budget shared by every reply read in flight (thread-safe)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.held = 0
        self.peak = 0
        """The most held at once (for tests and the bench)."""
        self._lock = threading.Lock()

    def at_least(self, limit: int) -> None:
        """Raise the limit to ``limit`` if it is lower."""
        with self._lock:
            self.limit = max(self.limit, limit)

    def take(self, n: int) -> None:
        """Hold ``n`` more bytes, or :class:`RepliesHeld` (nothing taken)."""
        with self._lock:
            if self.held + n > self.limit:
                raise RepliesHeld(self.limit)
            self.held += n
            self.peak = max(self.peak, self.held)

    def give(self, n: int) -> None:
        with self._lock:
            self.held -= n


HELD = Held(IN_FLIGHT_BYTES)
"""The process's budget for reply reads in flight."""


def codings(header: str | None) -> list[str]:
    """The content codings of a ``Content-Encoding`` value, in the order they were applied.

    >>> codings("gzip"), codings(" GZip , zstd "), codings("identity"), codings(None)
    (['gzip'], ['gzip', 'zstd'], [], [])
    """
    return [c.strip().lower() for c in (header or "").split(",") if c.strip().lower() not in IDENTITY]


class _Budget:
    """One read's share of :data:`HELD` and of its own cap."""

    def __init__(self, held: Held, limit: int, cut: bool):
        self.held, self.limit, self.cut, self.taken = held, limit, cut, 0

    def take(self, n: int) -> None:
        self.held.take(n)
        self.taken += n

    def release(self) -> None:
        self.held.give(self.taken)
        self.taken = 0


def _zlib_pieces(data: bytes, wbits: int):
    """Decoded pieces of a zlib-family stream (gzip members one after another), each at most :data:`PIECE`."""
    while data:
        d = zlib.decompressobj(wbits)
        buf = data
        while True:
            out = d.decompress(buf, PIECE)   # max_length >= 1: never unbounded
            if out:
                yield out
            buf = d.unconsumed_tail
            if d.eof or (not out and not buf):
                break
        more = d.unused_data if d.eof and wbits > 16 else b""
        data = more if more[:2] == b"\x1f\x8b" else b""   # a following gzip member (else trailing bytes, ignored)


def _deflate_pieces(data: bytes):
    """``deflate``: a zlib stream, or a raw deflate stream (what some servers send), as HTTP clients read it."""
    try:
        first = zlib.decompressobj().decompress(data[:2], 1) if data else b""
    except zlib.error:
        first = None
    return _zlib_pieces(data, zlib.MAX_WBITS if first is not None else -zlib.MAX_WBITS)


def _zstd_pieces(data: bytes):
    try:
        import zstandard  # noqa: PLC0415 - optional: only a server that sends zstd needs it
    except ImportError:
        raise UndecodableReply("zstd (no zstd decoder is installed)") from None
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
    try:
        while True:
            out = reader.read(PIECE)
            if not out:
                return
            yield out
    except zstandard.ZstdError as e:
        raise UndecodableReply(f"zstd ({e})") from None


def _gzip_pieces(data: bytes):
    return _zlib_pieces(data, zlib.MAX_WBITS | 16)


DECODERS = {"gzip": _gzip_pieces, "x-gzip": _gzip_pieces, "deflate": _deflate_pieces, "zstd": _zstd_pieces}
"""Content coding -> a generator of bounded decoded pieces."""


def _decode(coding: str, data: bytes, budget: _Budget) -> bytes:
    parts, size = [], 0
    try:
        for piece in DECODERS[coding](data):
            if size + len(piece) > budget.limit:
                if not budget.cut:
                    raise ReplyTooLarge(size + len(piece))
                piece = piece[:budget.limit - size]
            budget.take(len(piece))
            parts.append(piece)
            size += len(piece)
            if size >= budget.limit and budget.cut:
                break
    except zlib.error as e:
        if not budget.cut:
            raise UndecodableReply(f"{coding} ({e})") from None
    except UndecodableReply:
        if not budget.cut:
            raise
    return b"".join(parts)


async def read_capped(response, limit: int, *, cut: bool = False, held: Held = HELD) -> bytes:
    """The decoded body of an ``httpx`` streaming response, never more than ``limit`` bytes of it, raw or
    decoded, held: :class:`ReplyTooLarge` as soon as it is larger (announced by ``Content-Length`` or
    counted), :class:`RepliesHeld` when the reads in flight would pass ``held``'s limit,
    :class:`UndecodableReply` for a coding the harness does not decode. With ``cut`` (an error body, of
    which only the start is kept) the body is cut at ``limit`` instead and a decoding fault keeps what
    decoded.

    The refusal is raised with no traceback into the read: a kept error (a retry's last error, 16 of them
    in flight) must not keep the bytes read so far alive through its frames."""
    out = await _read(response, limit, cut, held)
    if isinstance(out, Exception):
        out.__traceback__ = out.__context__ = out.__cause__ = None
        raise out
    return out


async def _read(response, limit: int, cut: bool, held: Held) -> bytes | Exception:
    steps = codings(response.headers.get("content-encoding"))
    unknown = [c for c in steps if c not in DECODERS]
    if unknown:
        return UndecodableReply(f"{unknown[0]} (the harness asks for {ACCEPT_ENCODING} or none)")
    declared = response.headers.get("content-length", "")
    if not cut and declared.isdigit() and int(declared) > limit:
        return ReplyTooLarge(int(declared))
    budget = _Budget(held, limit, cut)
    try:
        parts, size = [], 0
        async for chunk in response.aiter_raw():
            if size + len(chunk) > limit:
                if not cut:
                    return ReplyTooLarge(size + len(chunk))
                chunk = chunk[:limit - size]
            budget.take(len(chunk))
            parts.append(chunk)
            size += len(chunk)
            if size >= limit and cut:
                break
        body = b"".join(parts)
        del parts
        for coding in reversed(steps):   # the last coding applied is undone first
            body = _decode(coding, body, budget)
        return body
    except (ReplyTooLarge, RepliesHeld, UndecodableReply) as e:
        return e
    finally:
        budget.release()
