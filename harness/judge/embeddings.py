"""The gateway's OpenAI-compatible ``POST /v1/embeddings`` route and its upstreams.

Embedding requests (the similarity baseline's and the cascade's) take the gateway's one request path
(:meth:`harness.judge.gateway.Gateway.handle`, the ``embeddings`` entry of its route table): the cell's time
budget, fault injection, retries, the cache and the ledger are the chat path's. Two upstreams serve them:

- :class:`LocalEmbeddings` (the default, offline, with any judge): the embedded all-MiniLM-L6-v2
  int8 ONNX model of :mod:`harness.judge.minilm`;
- :class:`HttpEmbeddings`: any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, Ollama, vLLM, a
  proxy), chosen with ``harness run --embed-url URL --embed-model ID [--embed-key-env NAME]``; the key
  is read from the environment at start-up and kept in memory only.

Whichever serves, the model id sent upstream is the configured one (the adapters do not know it), and
the reply names it. The cache key covers the model, the input and the output-affecting parameters
(``dimensions``, ``encoding_format``), scoped by the upstream's identity. Transport faults (connection
errors, timeouts, 429 and 5xx) are retried under the run's :class:`~harness.judge.upstream.RetryPolicy`; a
reply without one vector per input is an error of that call (:func:`response_problem`), never cached. The
judge's pace and batch mode are the judge's: embedding calls go to their own endpoint, unpaced.
"""
from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import struct
import time
from dataclasses import dataclass

from harness.core.threads import plain_thread_pool
from harness.judge.minilm import MODEL_ID, MODEL_SHA256, ModelUnavailable, shared
from harness.judge.reference import approx_tokens
from harness.judge.upstream import OWN_TIME, Cell, HttpEndpoint, UpstreamError

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
    """The embedded MiniLM (offline); the vectors are computed off the gateway's event loop, in threads of its
    own (``harness-embed``), never in the loop's default executor: a vendor's synchronous cells hold that
    executor's threads while they wait for the gateway (TruLens calls the judge through ``asyncio.to_thread``),
    so a cell holding one that waited on an embedding computed there could wait for itself."""

    kind = "embedded"
    THREADS = 2
    """Texts embedded at once (the model's own kernels use the cores; more threads only queue)."""

    def __init__(self):

        self.model, self._scope = MODEL_ID, f"embedded|{MODEL_ID}|{MODEL_SHA256[:16]}"
        self._pool = None   # made on first use, in the process that embeds (a forked worker makes its own)

    def scope(self) -> str:
        return self._scope

    async def embed(self, cell: Cell, body: dict) -> dict:

        texts = inputs_of(body)
        try:
            vectors, cpu_ms = await asyncio.get_running_loop().run_in_executor(self._threads(), _embed_timed, texts)
        except ModelUnavailable as e:
            raise UpstreamError(f"embedded embedding model unavailable: {e}", status=500, retryable=False) from None
        timer = OWN_TIME.get()   # the call's time in the judge is the model's compute
        if timer is not None:
            timer.append(cpu_ms)
        return reply(vectors, self.model, texts, body.get("encoding_format"))

    def _threads(self):
        if self._pool is None:
            self._pool = plain_thread_pool(self.THREADS, "harness-embed")
        return self._pool

    async def aclose(self):
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None


class HttpEmbeddings(HttpEndpoint):
    """Any OpenAI-compatible ``/embeddings`` endpoint."""

    what = "embedding endpoint"

    def scope(self) -> str:
        return f"http|{self.url}"

    async def embed(self, cell: Cell, body: dict) -> dict:
        return await self._post(cell, "embeddings", body, bad_body_retryable=True)


def is_embedded(config: EmbedConfig | None) -> bool:
    """Does ``config`` name the embedded model (no endpoint of its own)?"""
    return config is None or config.url is None


def make_upstream(config: EmbedConfig | None, timeout_s: float = 120.0):
    """The upstream for a config (None: the embedded model)."""
    if is_embedded(config):
        return LocalEmbeddings()
    return HttpEmbeddings(config.url, config.model, config.key_env, timeout_s)


def problem(body) -> str | None:
    """Why a parsed body is not an embeddings request (the gateway answers 400), None when it is.

    >>> problem({"input": ["a"]}), problem({"input": []}), problem([])
    (None, "'input' must be a string or a non-empty list of strings", 'request body must be a JSON object')
    """
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    try:
        inputs_of(body)
    except ValueError as e:
        return str(e)
    return None


def usage(resp) -> tuple[int, int, bool]:
    """(prompt tokens, 0, usage readable) of an embeddings reply; a failed call (None) counts as read.

    >>> usage({"usage": {"prompt_tokens": 3, "total_tokens": 3}}), usage({"data": []}), usage(None)
    ((3, 0, True), (0, 0, False), (0, 0, True))
    """
    got = (resp or {}).get("usage") if isinstance(resp, dict) or resp is None else None
    got = got if isinstance(got, dict) else {}
    n = got.get("prompt_tokens")
    tokens = int(n) if isinstance(n, (int, float)) and not isinstance(n, bool) and n >= 0 else 0
    return tokens, 0, resp is None or "prompt_tokens" in got
