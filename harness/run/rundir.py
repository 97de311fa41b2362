"""A run's directory: its id is a plain name, and one process at a time holds it.

A run id names a directory under ``--out``; it must never climb out of it (``../../harness``) or
ignore it (an absolute path), so it is a single path segment of letters, digits, ``.``, ``_`` and
``-``, starting with a letter, digit or ``_``, at most :data:`MAX_RUN_ID` characters.

:class:`RunLock` is an exclusive, non-blocking ``flock`` on ``<run dir>/.lock``, held for the whole
run: a second process given the same ``--run-id`` is refused at once (it would compute every cell a
second time, and with another judge the store and ``spec.json`` could end up naming different judges).
The operating system drops the lock when the holder exits, even by SIGKILL, so a killed run resumes.
"""
from __future__ import annotations

import os
import re

MAX_RUN_ID = 100
"""Longest run id accepted (characters)."""

_RUN_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


class RunLocked(ValueError):
    """Another process holds the run."""


def run_id_problem(run_id: str) -> str | None:
    """Why ``run_id`` cannot name a run directory, or None when it can.

    >>> run_id_problem("run-20261201-0830"), run_id_problem("v1.2_final")
    (None, None)
    >>> run_id_problem("../../harness")
    "'../../harness' is not a plain name: use letters, digits, '.', '_' and '-' (no '/', no leading '.')"
    >>> run_id_problem("x" * 300)
    'is 300 characters; the limit is 100'
    """
    if not run_id:
        return "is empty"
    if len(run_id) > MAX_RUN_ID:
        return f"is {len(run_id)} characters; the limit is {MAX_RUN_ID}"
    if not _RUN_ID.fullmatch(run_id):
        shown = run_id if len(run_id) <= 60 else run_id[:57] + "..."
        return (f"{shown!r} is not a plain name: use letters, digits, '.', '_' and '-' "
                f"(no '/', no leading '.')")
    return None


def check_run_id(run_id: str) -> str:
    """``run_id``, or ValueError naming the problem."""
    problem = run_id_problem(run_id)
    if problem:
        raise ValueError(f"--run-id {problem}")
    return run_id


class RunLock:
    """``with RunLock(run_dir, run_id):`` holds the run, or raises :class:`RunLocked` at once."""

    FILENAME = ".lock"

    def __init__(self, run_dir: str, run_id: str):
        self.path = os.path.join(run_dir, self.FILENAME)
        self.run_id = run_id
        self._fd: int | None = None

    def acquire(self) -> "RunLock":
        try:
            import fcntl  # noqa: PLC0415 - lazy: optional import, its absence is handled here
        except ImportError:          # not POSIX: no lock (documented limitation)
            return self
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise RunLocked(f"run {self.run_id!r} is in use by another harness process (pid {holder}); "
                            f"wait for it to finish, or use another --run-id") from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)        # closing drops the flock
            self._fd = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
