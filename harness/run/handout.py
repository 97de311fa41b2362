"""How the cells left to compute are handed out (``--workers N``): one ordered source shared by the runner, the
early worker's thread and the workers' feeder (:class:`Source`), and the runner's own share while the vendor
stacks import (:class:`Lead`)."""
from __future__ import annotations

import threading
import time


class Source:
    """The cells left to compute (the iterable ``tasks``, walked once, in order), shared by every process that
    scores them: :meth:`take` hands out the next cell if the taker can score it, else nothing (the cell stays
    first in line for the next taker: the order is kept). Thread-safe."""

    def __init__(self, tasks):
        self._tasks = iter(tasks)
        self._head: list = []
        self._lock = threading.Lock()

    def _next(self) -> bool:
        """Is there a next cell (read into the head, under the lock)?"""
        if not self._head:
            try:
                self._head.append(next(self._tasks))
            except StopIteration:
                return False
        return True

    def take(self, accept=None):
        """The next cell, or None: none is left, or ``accept(cell)`` is false for it."""
        with self._lock:
            if not self._next() or (accept is not None and not accept(self._head[0])):
                return None
            return self._head.pop()

    def empty(self) -> bool:
        with self._lock:
            return not self._next()

    def rest(self):
        """Every cell left, in order."""
        while (task := self.take()) is not None:
            yield task


class Lead:
    """The leading cells of ``source`` that this process may score while the workers are not forked yet:
    cells of metrics outside ``vendored``, until the first cell of a vendored metric, until ``started`` is set
    (the workers are forked) or until ``early`` is set (the early worker has come: it takes the cells from
    there, within its share of ``--concurrency``). The cell that ended it stays first in line."""

    def __init__(self, source: Source, vendored: set, started: threading.Event, early: threading.Event | None = None):
        self.source, self.vendored, self.started, self.early = source, vendored, started, early
        self.count = 0
        self.first = None
        self.ended_by = "cells"

    def _ours(self, task) -> bool:
        return (task.metric not in self.vendored and not self.started.is_set()
                and not (self.early is not None and self.early.is_set()))

    def __iter__(self):
        while (task := self.source.take(self._ours)) is not None:
            self.count += 1
            if self.first is None:
                self.first = time.time()
            yield task
        self.ended_by = ("workers" if self.started.is_set() else
                         "early worker" if self.early is not None and self.early.is_set() else
                         "cells" if self.source.empty() else "vendor cell")
