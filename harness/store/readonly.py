"""Open a run store read-only so that the reader sees every committed cell, whatever the directory allows.

A run store is a SQLite database in WAL mode: a committed cell may still sit in ``store.sqlite-wal``
(a run in progress, or one killed before it closed the store), with ``store.sqlite-shm`` indexing it.
The reader's ways in, tried in this order:

1. ``mode=ro``: SQLite reads the WAL through the ``-shm`` index (creating both files when the
   directory lets it, or using a ``-shm`` that is there even when it cannot write it).
2. When that fails (a directory the reader cannot write holds a WAL but no ``-shm``, or no ``-wal``
   and no ``-shm`` at all), and the WAL is absent or empty, ``immutable=1``: the main file then holds
   every committed cell, so reading it alone loses nothing.
3. A WAL with frames that cannot be read in place: the database and its WAL are copied into a private
   temporary directory and opened there, where SQLite replays the WAL's committed frames; the copy
   is taken again if the store changed while it was being copied, and removed when the connection
   is closed.

A file that is not a run store is ``ValueError`` naming it.
"""
from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from urllib.parse import quote

COPY_TRIES = 3
"""Times a WAL snapshot is copied again when the store changed during the copy."""

WAL_HEADER = 32
"""Bytes of the WAL header; its salts change when a writer restarts the WAL after a checkpoint."""


class SnapshotConnection(sqlite3.Connection):
    """A connection to a private copy of a store; closing it removes the copy."""

    snapshot_dir: str | None = None

    def close(self) -> None:
        super().close()
        if self.snapshot_dir is not None:
            shutil.rmtree(self.snapshot_dir, ignore_errors=True)
            self.snapshot_dir = None


def _check(db: sqlite3.Connection) -> sqlite3.Connection:
    db.execute("PRAGMA busy_timeout=10000")
    db.execute("SELECT value FROM meta LIMIT 1").fetchall()
    return db


def _open_uri(path: str, flags: str) -> sqlite3.Connection:
    uri = f"file:{quote(os.path.abspath(path))}?{flags}"
    db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    try:
        return _check(db)
    except BaseException:
        db.close()
        raise


def wal_frames(path: str) -> bool:
    """True when ``path``'s WAL file exists and holds more than its header (committed frames, maybe)."""
    try:
        return os.path.getsize(path + "-wal") > WAL_HEADER
    except OSError:
        return False


def _state(path: str) -> tuple:
    """What changes when a writer commits or checkpoints: the WAL's header and size, the database's
    size and modification time."""
    try:
        with open(path + "-wal", "rb") as fh:
            head = fh.read(WAL_HEADER)
        wal = (head, os.path.getsize(path + "-wal"))
    except OSError:
        wal = None
    st = os.stat(path)
    return wal, st.st_size, st.st_mtime_ns


def _snapshot(path: str) -> sqlite3.Connection:
    """A connection to a private copy of the database and its WAL (see the module's point 3)."""
    for _ in range(COPY_TRIES):
        tmp = tempfile.mkdtemp(prefix="harness-store-")
        copy = os.path.join(tmp, os.path.basename(path))
        try:
            before = _state(path)
            shutil.copyfile(path + "-wal", copy + "-wal")   # the WAL first: a checkpoint after it only
            shutil.copyfile(path, copy)                     # moves its frames into the main file
            if _state(path) != before:
                shutil.rmtree(tmp, ignore_errors=True)
                continue
            db = sqlite3.connect(copy, isolation_level=None, check_same_thread=False, factory=SnapshotConnection)
            db.snapshot_dir = tmp
            try:
                return _check(db)
            except BaseException:
                db.close()
                raise
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    raise sqlite3.OperationalError(f"the store changed each of the {COPY_TRIES} times its WAL was copied")


def connect_readonly(path: str) -> sqlite3.Connection:
    """A read-only connection to the run store at ``path`` that sees every committed cell (module doc);
    ValueError when the file is not a run store."""
    try:
        return _open_uri(path, "mode=ro")
    except sqlite3.DatabaseError as e:
        err = e
    try:
        if not wal_frames(path):
            return _open_uri(path, "mode=ro&immutable=1")
        return _snapshot(path)
    except (sqlite3.DatabaseError, OSError) as e:
        err = e
    raise ValueError(f"{path}: cannot be read as a run store ({err})")
