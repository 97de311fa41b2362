"""A bounded total time per cell: a hung judge costs a cell its budget, not hours.

Each attempt has its timeout and the retries are bounded, but with the defaults a judge that never
answers used to hold a call for about 8 minutes (4 attempts x 120 s plus backoff): about 3 hours
for the 184 cells of the canonical set. The runner opens each cell with a budget
(``--cell-timeout``, default :data:`DEFAULT_CELL_TIMEOUT_S`); every judge call of the cell, its
retries and waits included, must end by then. A call still unanswered at the deadline ends as an
error (HTTP 504, in the cell's ledger), so the vendor fails the cell and a rerun recomputes it.
"""
from __future__ import annotations

import asyncio
import threading
import time

from harness.judge.upstream import Attempts, UpstreamError

DEFAULT_CELL_TIMEOUT_S = 300.0
"""Default total seconds per cell (every judge call, retry and backoff included)."""


class CellBudgets:
    """Deadlines of the open cells (thread-safe). A cell with no budget is unbounded."""

    def __init__(self):
        self._deadlines: dict = {}
        self._seconds: dict = {}
        self._lock = threading.Lock()

    def open(self, cell, seconds: float | None) -> None:
        """Start ``cell``'s clock: its judge calls must end within ``seconds`` from now."""
        with self._lock:
            if seconds is None:
                self._deadlines.pop(cell, None)
            else:
                self._deadlines[cell] = time.monotonic() + seconds
                self._seconds[cell] = seconds

    def close(self, cell) -> None:
        with self._lock:
            self._deadlines.pop(cell, None)
            self._seconds.pop(cell, None)

    def remaining(self, cell) -> float | None:
        """Seconds left for ``cell`` (None: no budget)."""
        with self._lock:
            deadline = self._deadlines.get(cell)
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    async def call(self, cell, coro):
        """Await ``coro`` (a :func:`harness.judge.upstream.call_with_retries`) within the cell's budget; when
        the budget runs out first, an ``Attempts`` whose error says so."""

        left = self.remaining(cell)
        if left is None:
            return await coro
        try:
            if left <= 0:
                raise asyncio.TimeoutError
            return await asyncio.wait_for(coro, timeout=left)
        except asyncio.TimeoutError:
            if asyncio.iscoroutine(coro):
                coro.close()
            with self._lock:
                seconds = self._seconds.get(cell, 0.0)
            return Attempts(attempts=1, error=UpstreamError(
                f"the cell's time budget ({seconds:g}s, --cell-timeout) ran out before the judge answered",
                status=504, retryable=False))
