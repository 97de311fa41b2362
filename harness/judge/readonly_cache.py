"""The judge cache as a worker process sees it: read-only, its new entries handed back to the runner.

The runner is the single writer of the judge cache (harness/run/cellwork.py explains why and how); a worker
opens the cache's SQLite file with ``mode=ro`` (WAL: it reads while the runner writes) and keeps what
it would have stored until its next finished cell takes it back.
"""
from __future__ import annotations

import json
import os
import sqlite3
from urllib.parse import quote


class ReadOnlyCache:
    """The run's judge cache as a worker process sees it: lookups read the SQLite file read-only; a put
    is kept for the runner (:meth:`drain`), which is the only writer."""

    def __init__(self, path: str):
        self.path = path
        self._db = None
        self._pending: list = []

    def _conn(self):
        if self._db is None:
            self._db = sqlite3.connect(f"file:{path_uri(self.path)}?mode=ro", uri=True, check_same_thread=False)
        return self._db

    def get(self, key: str) -> dict | None:
        try:
            db = self._conn()
        except sqlite3.OperationalError:   # not reachable from this machine (a Ray node elsewhere): a miss
            return None
        # the runner's JudgeCache writes this table (harness/judge/cache.py); a read needs only key -> response
        row = db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, body: dict, response: dict) -> None:
        self._pending.append((key, body, response))

    def drain(self) -> list:
        out, self._pending = self._pending, []
        return out

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def path_uri(path: str) -> str:
    """A filesystem path quoted for an SQLite ``file:`` URI.

    >>> path_uri("/tmp/a b?.sqlite")
    '/tmp/a%20b%3F.sqlite'
    """

    return quote(os.path.abspath(path))
