"""A cheaper readiness check for the upstream client's idle connections (CPU per judge call).

``httpcore``'s connection pool, on every request it sends and every response it closes, asks each idle
connection whether the server has closed it (``has_expired`` -> ``get_extra_info("is_readable")``). On
asyncio its streams are ``anyio`` streams, whose ``extra()`` rebuilds a dict of the socket's attributes
and calls ``getpeername()`` every time it is asked. With the 30-100 connections a run keeps open to the
judge that was ~40 ``getpeername`` system calls and dict builds per judge call: the largest single part
of the harness's own CPU per call (profile in bench/README.md, "CPU per judge call").

:func:`install` wraps the pool's network backend so each stream looks its socket up once and then
answers ``is_readable`` from it with the same check ``httpcore`` makes (``httpcore._utils``'s
``is_socket_readable``). It also sends a request's head and body in one write (``httpcore`` writes them
apart: two ``send()`` system calls per call, each waking the judge's side of the loopback). The bytes
sent and their order are unchanged. If a later
``httpx``/``httpcore`` lays its objects out differently, :func:`install` does nothing and the client
works as it always did.
"""
from __future__ import annotations

from httpcore._utils import is_socket_readable

_MISSING = object()


class _Stream:
    """An ``httpcore`` network stream, its raw socket looked up once, a request's head held back until the
    next write (its body) or read, so head and body leave in one ``send()``: nothing is ever read before
    what was written is sent."""

    __slots__ = ("_inner", "_sock", "_held")

    def __init__(self, inner):
        self._inner = inner
        self._sock = _MISSING
        self._held = b""

    async def _flush(self, timeout):
        if self._held:
            held, self._held = self._held, b""
            await self._inner.write(held, timeout)

    async def read(self, max_bytes, timeout=None):
        await self._flush(timeout)
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer, timeout=None):
        if self._held:
            buffer, self._held = self._held + buffer, b""
        elif buffer.endswith(b"\r\n\r\n"):   # a request's head: sent with its body, one send() not two
            self._held = buffer
            return None
        return await self._inner.write(buffer, timeout)

    async def aclose(self):
        self._held = b""   # a request abandoned before its body: never sent, as if the close came first
        return await self._inner.aclose()

    async def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        await self._flush(timeout)
        return _Stream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info):
        if info == "is_readable":
            if self._sock is _MISSING:
                self._sock = self._inner.get_extra_info("socket")
            return is_socket_readable(self._sock)
        return self._inner.get_extra_info(info)


class _Backend:
    """An ``httpcore`` async network backend whose streams are :class:`_Stream`."""

    def __init__(self, inner):
        self._inner = inner

    async def connect_tcp(self, *args, **kwargs):
        return _Stream(await self._inner.connect_tcp(*args, **kwargs))

    async def connect_unix_socket(self, *args, **kwargs):
        return _Stream(await self._inner.connect_unix_socket(*args, **kwargs))

    async def sleep(self, seconds):
        return await self._inner.sleep(seconds)


def install(client) -> bool:
    """Give ``client`` (an ``httpx.AsyncClient``, before its first request) the cheaper readiness check;
    True if it was installed."""
    pool = getattr(getattr(client, "_transport", None), "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is None or isinstance(backend, _Backend) or not hasattr(backend, "connect_tcp"):
        return False
    pool._network_backend = _Backend(backend)
    return True
