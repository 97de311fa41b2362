"""The gateway's OpenAI-compatible ``POST /v1/embeddings`` route and its upstreams.

Embedding requests (the similarity baseline's and the cascade's) pass through the same gateway as
chat completions, per cell, with the same cache and ledger. Two upstreams serve them:

- :class:`LocalEmbeddings` (the default, offline, with any judge): the embedded all-MiniLM-L6-v2
  int8 ONNX model of :mod:`harness.judge.minilm`;
- :class:`HttpEmbeddings`: any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, Ollama, vLLM, a
  proxy), chosen with ``harness run --embed-url URL --embed-model ID [--embed-key-env NAME]``; the key
  is read from the environment at start-up and kept in memory only.

Whichever serves, the model id sent upstream is the configured one (the adapters do not know it), and
the reply names it. The cache key covers the model, the input and the output-affecting parameters
(``dimensions``, ``encoding_format``), scoped by the upstream's identity. Transport faults (connection
errors, timeouts, 429 and 5xx) are retried under the run's :class:`~harness.judge.upstream.RetryPolicy`; a
reply without one vector per input is an error of that call, never cached.
"""
from __future__ import annotations

import asyncio
import base64
import contextvars
import hashlib
import json
import struct
import time
from dataclasses import dataclass

from harness.judge.minilm import MODEL_ID, MODEL_SHA256, ModelUnavailable, shared
from harness.judge.reference import approx_tokens
from harness.judge.upstream import ATTEMPT, CALL_NUMBERS, Attempts, Cell, HttpEndpoint, RetryPolicy, UpstreamError

EMBED_PARAMS = ("dimensions", "encoding_format")


@dataclass(frozen=True)
class EmbedConfig:
    """Which embedding model serves the run. ``url`` None means the embedded MiniLM."""

    url: str | None = None
    """OpenAI-compatible base URL (``.../v1``); None: the embedded model, offline."""
    model: str | None = None
    """Model id sent upstream (required with ``url``)."""
    key_env: str | None = None
    """NAME of the environment variable that holds the key (the key itself is never stored)."""

    def describe(self) -> str:
        if self.url is None:

            return f"{MODEL_ID} (embedded, offline)"
        return f"{self.model} at {self.url}" + (f" (key from ${self.key_env})" if self.key_env else " (no key)")

    def as_spec(self) -> dict:

        if self.url is None:
            return {"kind": "embedded", "model": MODEL_ID, "sha256": MODEL_SHA256}
        return {"kind": "http", "url": self.url, "model": self.model, "key_env": self.key_env}


def embedding_key(body: dict, scope: str) -> str:
    """Cache key of an embeddings request.

    >>> a = embedding_key({"model": "m", "input": ["x"]}, "s")
    >>> a == embedding_key({"model": "m", "input": ["x"], "user": "u"}, "s"), a == embedding_key({"model": "m", "input": ["y"]}, "s")
    (True, False)
    """
    canon = {"kind": "embeddings", "model": body.get("model"), "input": body.get("input"), "scope": scope,
             "params": {k: body[k] for k in EMBED_PARAMS if body.get(k) is not None}}
    return hashlib.sha256(json.dumps(canon, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def inputs_of(body: dict) -> list[str]:
    """The request's input as a list of strings; ValueError for anything else (token arrays included).

    >>> inputs_of({"input": "a"}), inputs_of({"input": ["a", "b"]})
    (['a'], ['a', 'b'])
    """
    x = body.get("input")
    if isinstance(x, str):
        return [x]
    if isinstance(x, list) and x and all(isinstance(t, str) for t in x):
        return list(x)
    raise ValueError("'input' must be a string or a non-empty list of strings")


def response_problem(resp: dict, n: int) -> str | None:
    """Why an embeddings reply is unusable for ``n`` inputs, or None.

    >>> response_problem({"data": [{"index": 0, "embedding": [0.1]}]}, 1) is None
    True
    >>> response_problem({"data": []}, 2)
    'reply has 0 embeddings for 2 inputs'
    """
    data = resp.get("data") if isinstance(resp, dict) else None
    if not isinstance(data, list) or len(data) != n:
        return f"reply has {len(data) if isinstance(data, list) else 'no'} embeddings for {n} inputs"
    for d in data:
        vec = d.get("embedding") if isinstance(d, dict) else None
        if isinstance(vec, str) and vec:
            continue   # encoding_format base64
        if not isinstance(vec, list) or not vec or not all(isinstance(v, (int, float)) for v in vec):
            return "reply has an embedding that is not a list of numbers"
    return None


def as_base64(vector: list[float]) -> str:
    """A vector as OpenAI's ``encoding_format: base64`` sends it (little-endian float32).

    >>> as_base64([1.0])
    'AACAPw=='
    """

    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()


def reply(vectors: list[list[float]], model: str, texts: list[str], encoding: str | None = None) -> dict:
    """An OpenAI ``list`` of embeddings, with usage (tokens counted as characters / 4)."""

    tokens = sum(approx_tokens(t) for t in texts)
    enc = as_base64 if encoding == "base64" else list
    return {"object": "list", "model": model,
            "data": [{"object": "embedding", "index": i, "embedding": enc(v)} for i, v in enumerate(vectors)],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


COMPUTE: contextvars.ContextVar[list | None] = contextvars.ContextVar("harness_embed_compute", default=None)
"""Set by :func:`call` to a list per attempt: the embedded model appends its compute time (ms) to it, which is
the call's time in the judge (the model runs in this process: its wait for a thread and for the model's lock
is queueing, not the metric's own time)."""


COSTS_KEPT = 100_000
"""How many texts' compute times :func:`_embed_timed` remembers (then it starts again: memory stays flat)."""
_COSTS: dict[int, float] = {}


def _embed_timed(texts: list[str]) -> tuple[list[list[float]], float]:
    """(vectors, CPU ms of computing them): the model's one-time load left out, and CPU time of this thread
    rather than wall time, so other cells' work on the same cores does not count as this call's. The model
    keeps the vectors it computed, so a text another metric of the run embedded first comes back at once; it
    is charged what computing it cost then, so each metric shows its own compute whichever ran first."""
    model = shared()
    model.load()
    vectors, total = [], 0.0
    for text in texts:
        t0 = time.thread_time()
        vectors.extend(model.embed([text]))
        spent = (time.thread_time() - t0) * 1000.0
        key = hash(text)
        known = _COSTS.get(key)
        if known is None or spent > known:
            if len(_COSTS) >= COSTS_KEPT:
                _COSTS.clear()
            _COSTS[key] = known = spent
        total += known
    return vectors, total


class LocalEmbeddings:
    """The embedded MiniLM (offline); the vectors are computed off the gateway's event loop."""

    kind = "embedded"

    def __init__(self):

        self.model, self._scope = MODEL_ID, f"embedded|{MODEL_ID}|{MODEL_SHA256[:16]}"

    def scope(self) -> str:
        return self._scope

    async def embed(self, cell: Cell, body: dict) -> dict:

        texts = inputs_of(body)
        try:
            vectors, cpu_ms = await asyncio.to_thread(_embed_timed, texts)
        except ModelUnavailable as e:
            raise UpstreamError(f"embedded embedding model unavailable: {e}", status=500, retryable=False) from None
        timer = COMPUTE.get()
        if timer is not None:
            timer.append(cpu_ms)
        return reply(vectors, self.model, texts, body.get("encoding_format"))

    async def aclose(self):
        return None


class HttpEmbeddings(HttpEndpoint):
    """Any OpenAI-compatible ``/embeddings`` endpoint."""

    what = "embedding endpoint"

    def scope(self) -> str:
        return f"http|{self.url}"

    async def embed(self, cell: Cell, body: dict) -> dict:
        return await self._post(cell, "embeddings", body, bad_body_retryable=True)


def make_upstream(config: EmbedConfig | None, timeout_s: float = 120.0):
    """The upstream for a config (None: the embedded model)."""
    if config is None or config.url is None:
        return LocalEmbeddings()
    return HttpEmbeddings(config.url, config.model, config.key_env, timeout_s)


async def call(upstream, cell: Cell, body: dict, policy: RetryPolicy) -> Attempts:
    """The reply, attempts, error and time in the judge (:class:`~harness.judge.upstream.Attempts`): retries
    transport faults only, bounded by ``policy``; each attempt is numbered for fault injection as a chat
    call's is (:data:`harness.judge.upstream.ATTEMPT`). Time in the judge: an HTTP endpoint's attempts from
    sent to answered; the embedded model's compute time."""
    n = len(inputs_of(body))
    out = Attempts()
    call_no = next(CALL_NUMBERS)
    for attempt in range(1, policy.max_attempts + 1):
        ATTEMPT.set((call_no, attempt))
        out.attempts = attempt
        timer: list[float] = []
        COMPUTE.set(timer)
        sent = time.perf_counter()
        try:
            resp = await asyncio.wait_for(upstream.embed(cell, body), timeout=policy.timeout_s)
            problem = response_problem(resp, n)
            if problem is None:
                out.response, out.error = resp, None
                return out
            out.error = UpstreamError(f"embedding reply unusable: {problem}", status=502, retryable=False)
            return out
        except asyncio.TimeoutError:
            out.error = UpstreamError(f"embedding call timed out after {policy.timeout_s:g}s", status=504)
        except UpstreamError as e:
            out.error = e
            if not e.retryable:
                return out
        finally:
            out.judge_ms += sum(timer) if timer else (time.perf_counter() - sent) * 1000.0
        if attempt < policy.max_attempts:
            await asyncio.sleep(policy.delay(attempt, out.error.retry_after))
    return out


async def answer(gw, cell: Cell, body, record_type, error_reply) -> tuple[int, dict]:
    """Serve one (parsed) embeddings request of a cell for the gateway ``gw``: cache, upstream, ledger;
    ``(HTTP status, JSON body)``. The gateway hands in its ledger record type and its error reply
    (``CallRecord``, ``_error``), so this module does not import the gateway."""

    CallRecord, _error = record_type, error_reply
    started, t0 = time.time(), time.perf_counter()
    if not isinstance(body, dict):
        return _error(400, "request body must be a JSON object")
    try:
        inputs_of(body)
    except ValueError as e:
        return _error(400, str(e))
    up = gw.embeddings
    body = {**body, "model": up.model}   # the configured embedding model, whatever the adapter named
    key = embedding_key(body, up.scope())
    resp, cached, attempts, error, status, judge_ms = None, False, 0, None, 200, 0.0
    if gw.mode in ("record", "replay"):
        resp = gw.cache.get(key)
        cached = resp is not None
    if resp is None and gw.mode == "replay":
        error, status = f"replay miss: no cached embeddings for cell {cell.label} (request {key[:12]})", 400
    elif resp is None:
        got = await gw.budgets.call(cell, call(up, cell, body, gw.policy))   # within the cell's time budget
        resp, attempts, err, judge_ms = got.response, got.attempts, got.error, got.judge_ms   # (or the budget's end)
        if err is not None:
            error, status = str(err), err.status
        elif gw.mode == "record":
            gw.cache.put(key, body, resp)
    usage = (resp or {}).get("usage") or {}
    gw._record(cell, CallRecord(
        cell=cell, seq=0, started=started, latency_ms=(time.perf_counter() - t0) * 1000.0, ok=error is None,
        cached=cached, attempts=max(attempts, 1 if not cached else 0), judge_ms=judge_ms,
        prompt_tokens=int(usage.get("prompt_tokens") or 0), completion_tokens=0, key=key, step="embeddings",
        error=error, usage=resp is None or "prompt_tokens" in usage,
        reply_fit=None if resp is None else "not asked", **gw.observe(cell, "embeddings", body, resp)))
    if error is not None:
        return _error(status, error)
    return 200, resp
