"""Shared HTTP connection pools for adapters.

One async and one sync ``httpx`` client per run: a per-cell URL is a path on a pooled connection,
never a new client, SSL context or process (a new SSL context costs ~25 ms; DeepEval's stock model
builds one per call).
"""
from __future__ import annotations

import threading


class Pools:
    """Lazily built, shared ``httpx`` clients. The async one belongs to the runner's event loop."""

    def __init__(self, max_connections: int = 64, transport=None):
        """``transport``: an ``httpx`` transport for both clients (a run passes the in-process
        :class:`harness.judge.transport.GatewayTransport`); None: real connections."""
        self._max = max_connections
        self._transport = transport
        self._async = None
        self._sync = None
        self._lock = threading.Lock()

    @property
    def transport(self):
        """The transport both clients carry (None: real connections)."""
        return self._transport

    def _limits(self):
        import httpx  # noqa: PLC0415 - lazy: httpx costs ~0.1 s to import

        return httpx.Limits(max_connections=self._max, max_keepalive_connections=self._max)

    def async_client(self):
        import httpx  # noqa: PLC0415 - lazy: httpx costs ~0.1 s to import

        with self._lock:
            if self._async is None:
                self._async = httpx.AsyncClient(limits=self._limits(), timeout=httpx.Timeout(600.0),
                                                trust_env=False, transport=self._transport)
            return self._async

    def sync_client(self):
        import httpx  # noqa: PLC0415 - lazy: httpx costs ~0.1 s to import

        with self._lock:
            if self._sync is None:
                self._sync = httpx.Client(limits=self._limits(), timeout=httpx.Timeout(600.0), trust_env=False,
                                          transport=self._transport)
            return self._sync

    async def aclose(self):
        if self._async is not None:
            await self._async.aclose()
            self._async = None
        if self._sync is not None:
            self._sync.close()
            self._sync = None
