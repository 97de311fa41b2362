"""The judge response cache: SQLite, keyed by a hash of the canonical request.

The key covers what can change the judge's answer and nothing else:

- the upstream model id (pin dated ids: an alias can change under a cache);
- the messages;
- output-affecting parameters (``OUTPUT_PARAMS``: temperature, top_p, max_tokens, seed, stop,
  response_format, tools, ...), not timeouts, retries, ``user`` or headers;
- a scope: empty for a real judge; for the reference judge, its table version, the metric and its
  version, and a digest of the case (its answers come from the annotation);
- a repeat index for sampled calls (temperature missing or above 0): the n-th identical sampled
  request of a cell gets index n, so a replay returns the same sequence and never collapses samples.

Modes: ``live`` (no cache), ``record`` (answer from the cache, else call live and store),
``replay`` (cache only; a miss is an error naming the cell). Errors are never cached. No key or
header is ever written: only the request body's key fields and the response body.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time

MODES = ("live", "record", "replay")

OUTPUT_PARAMS = (
    "temperature", "top_p", "max_tokens", "max_completion_tokens", "seed", "n", "stop",
    "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs",
    "reasoning_effort", "response_format", "tools", "tool_choice", "functions", "function_call",
    "parallel_tool_calls",
)


def is_sampled(body: dict) -> bool:
    """A call whose answer may vary between repeats (temperature missing or above 0).

    >>> is_sampled({"temperature": 0.0}), is_sampled({"temperature": 0.01}), is_sampled({})
    (False, True, True)
    """
    t = body.get("temperature")
    return t is None or float(t) > 0


def request_key(body: dict, scope: str = "", repeat: int = 0) -> str:
    """The cache key of a request body.

    >>> b = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}
    >>> request_key(b) == request_key({**b, "timeout": 5, "user": "x"})
    True
    >>> request_key(b) == request_key({**b, "temperature": 0.5})
    False
    >>> len(request_key(b))
    64
    """
    canon = {
        "model": body.get("model"),
        "messages": body.get("messages"),
        "params": {k: body[k] for k in OUTPUT_PARAMS if k in body and body[k] is not None},
        "scope": scope,
        "repeat": repeat,
    }
    blob = json.dumps(canon, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


class JudgeCache:
    """A SQLite table of (key -> response body). Safe to share between threads."""

    def __init__(self, path: str):
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, "
            "request TEXT NOT NULL, response TEXT NOT NULL, created REAL NOT NULL)")

    def get(self, key: str) -> dict | None:
        with self._lock:
            row = self._db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, body: dict, response: dict) -> None:
        req = {k: body[k] for k in ("model", "messages", *OUTPUT_PARAMS) if k in body}
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, request, response, created) VALUES (?, ?, ?, ?, ?)",
                (key, body.get("model"), json.dumps(req, ensure_ascii=False),
                 json.dumps(response, ensure_ascii=False), time.time()))

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
