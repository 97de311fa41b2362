"""Ctrl-C during ``harness run``: out within a moment, with one line saying how to resume.

A run is safe to stop at any instant: the store writes each cell (with its units and calls) in one
SQLite transaction, so an abrupt end leaves only whole cells, exactly as after SIGKILL (the kill
tests hold it), and the OS drops the run lock. So SIGINT does not unwind the vendors' stacks (a
vendor import takes seconds and ignores a pending KeyboardInterrupt until it is done; TruLens's worker
threads and the HTTP clients print errors while they are torn down): the handler writes the resume
message to stderr and ends the process at once.
"""
from __future__ import annotations

import os
import signal
import sys

MESSAGE = "harness: interrupted; finished cells are kept, rerun with the same --run-id to resume"
EXIT_CODE = 1


def _on_sigint(signum, frame):  # pragma: no cover - runs in a subprocess in the tests
    try:
        sys.stdout.flush()
    except Exception:  # noqa: BLE001 - a write may be in progress; nothing of it matters now
        pass
    os.write(2, (MESSAGE + "\n").encode())
    os._exit(EXIT_CODE)


class ExitOnInterrupt:
    """``with ExitOnInterrupt():`` SIGINT ends the process with :data:`MESSAGE` (main thread only;
    elsewhere, e.g. a run started from a worker thread, it does nothing)."""

    def __enter__(self):
        self._old = None
        try:
            self._old = signal.signal(signal.SIGINT, _on_sigint)
        except ValueError:        # not the main thread
            pass
        return self

    def __exit__(self, *exc):
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
