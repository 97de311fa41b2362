"""The judge response cache: SQLite, keyed by a hash of the canonical request.

The key covers what can change the judge's answer and nothing else:

- the upstream model id (pin dated ids: an alias can change under a cache);
- the messages;
- output-affecting parameters (``OUTPUT_PARAMS``: temperature, top_p, max_tokens, seed, stop,
  response_format, tools, ...), not timeouts, retries, ``user`` or headers;
- a scope: the judge's identity. For a real judge, :func:`judge_identity`: the normalised base URL
  (scheme and host lower-cased, default port, credentials, fragment and trailing ``/`` dropped) and
  the model id, so a cache recorded from one judge never answers for another, even under the same
  ``--judge-model``; for the reference judge, its table version, the metric and its version, and a
  digest of the case (its answers come from the annotation);
- a repeat index for sampled calls (temperature missing or above 0): the n-th identical sampled
  request of a cell gets index n, so a replay returns the same sequence and never collapses samples;
  with ``harness run --repeats K``, repeat k > 0 of a cell adds ``r<k>`` to it, for every call
  (temperature 0 included), so a repeat never replays another repeat's answers.

Modes: ``live`` (no cache), ``record`` (answer from the cache, else call live and store),
``replay`` (cache only; a miss is an error naming the cell). Errors are never cached, nor is a reply
or request holding a secret (``harness.core.redact``). No key or header is ever written: only the request
body's key fields and the response body.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from urllib.parse import urlsplit, urlunsplit

from harness.core.redact import has_secret
from harness.judge.responses_api import is_responses, key_fields

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


def judge_identity(url: str, model: str) -> str:
    """Which real judge answers: ``http|<normalised base URL>|<model id>`` (the cache scope).

    >>> judge_identity("HTTP://User:pw@LocalHost:80/v1/", "qwen2.5:7b")
    'http|http://localhost/v1|qwen2.5:7b'
    >>> judge_identity("https://api.openai.com:443/v1#x", "m") == judge_identity("https://api.openai.com/v1", "m")
    True
    >>> judge_identity("http://127.0.0.1:8001/v1", "m") == judge_identity("http://127.0.0.1:8002/v1", "m")
    False
    """

    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and port != {"http": 80, "https": 443}.get(scheme):
        host = f"{host}:{port}"
    path = parts.path.rstrip("/")
    return f"http|{urlunsplit((scheme, host, path, parts.query, ''))}|{model}"


def request_key(body: dict, scope: str = "", repeat: int | str = 0) -> str:
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
    if is_responses(body):   # a Responses API request: its own fields (chat requests' keys are unchanged)
        canon.update(key_fields(body))
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

    def put(self, key: str, body: dict, response: dict) -> bool:
        """Store a response; False (nothing stored) when the request or the reply holds a secret
        (a judge that echoes the Authorization header): such a reply is never cached."""

        req = {k: body[k] for k in ("model", "messages", *OUTPUT_PARAMS) if k in body}
        req_text, resp_text = json.dumps(req, ensure_ascii=False), json.dumps(response, ensure_ascii=False)
        if has_secret(resp_text) or has_secret(req_text):
            return False
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, request, response, created) VALUES (?, ?, ?, ?, ?)",
                (key, body.get("model"), req_text, resp_text, time.time()))
        return True

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
