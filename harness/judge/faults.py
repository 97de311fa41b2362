"""Fault injection: an upstream wrapper that makes the judge fail the way real judges fail.

``harness run --faults 500=0.05,429=0.05,timeout=0.01,malformed=0.02,truncated=0.02,schema=0.02
--fault-seed 7`` wraps the run's upstream (the reference judge or an HTTP judge) in
:class:`FaultyUpstream`. Each upstream attempt independently becomes one of:

- ``500``: the judge answers HTTP 500 (retryable);
- ``429``: the judge answers HTTP 429 with ``Retry-After`` (``retry_after=S``, default 1 s);
- ``timeout``: the judge hangs longer than the per-call timeout (the gateway cancels the attempt);
- ``malformed``: the reply's content is prose around single-quoted JSON (neither JSON nor a Python
  literal);
- ``truncated``: the reply's content is cut in half, with ``finish_reason: "length"``;
- ``schema``: the reply is valid JSON of the wrong shape: the first key missing, or its value of the
  wrong type (a text-mode reply becomes an unrelated JSON object);

or passes through untouched. The decision is a pure function of ``(seed, case, metric, request key,
occurrence, attempt)`` hashed with SHA-256 (:func:`decide`), never a shared random generator, so
concurrency and timing cannot change which calls fault: two runs with the same seed and cases fault
the same attempts of the same requests, and a failing run can be replayed. The run id is deliberately
not part of the hash, so a replay under a new run id sees the same faults. The request key is the cache
key of the body (:func:`harness.judge.cache.request_key` without a scope); the occurrence counts identical
requests within a cell (0 for the first), so a vendor's own re-ask of the same request draws afresh,
as it would from a real judge whose faults are transient (identical concurrent requests are
interchangeable, so their arrival order does not matter). The attempt number comes from
:data:`harness.judge.upstream.ATTEMPT`, set by the gateway's retry loop.

Which faults the harness absorbs: HTTP faults and timeouts are transport faults, retried by the
gateway (:func:`harness.judge.upstream.call_with_retries`). Content faults are not: the gateway hands the
reply on as it came and only records whether it fit the requested format
(:func:`harness.judge.replies.reply_fit`, ``calls.reply_fit``), so each vendor's own handling runs, as in
stock use: Ragas's instructor re-asks, DeepEval's validation fails the cell with a reason, TruLens
reformats or parses what it can (a sentence it cannot score is left out of its mean, flagged), its
trivial filter keeps every sentence on a reply it cannot parse (flagged), and the in-house scorer
declines to score an unreadable reply. Either way the cell ends scored, unscored (by the vendor) or
errored with a reason: never lost, never silently 0.
A resumed run with the same ``--faults`` and seed meets the same faults again; resume without them to
recompute errored cells cleanly.

Cache hits are not faulted (only live upstream attempts are), and a corrupted reply is never cached:
it carries the top-level key ``x_harness_injected_fault``, which the gateway's record mode checks.
"""
from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import time
from collections import Counter, deque
from dataclasses import dataclass, field

from harness.judge.cache import request_key
from harness.judge.upstream import ATTEMPT, Cell, UpstreamError

KINDS: tuple[str, ...] = ("500", "429", "timeout", "malformed", "truncated", "schema")
"""Fault kinds, in the order their probability bands are laid out by :func:`decide`."""

HTTP_KINDS = ("500", "429", "timeout")
EVENTS_KEPT = 10_000
"""How many of the most recent attempts an injector keeps as :class:`FaultEvent` records (its counts
cover every attempt): a million-cell run does not hold a million events."""
CONTENT_KINDS = ("malformed", "truncated", "schema")


@dataclass(frozen=True)
class FaultSpec:
    """Per-attempt fault rates, parsed from ``500=0.05,429=0.05,...`` by :meth:`parse`."""

    rates: tuple[tuple[str, float], ...]
    """(kind, probability) in ``KINDS`` order; kinds not given have rate 0."""
    retry_after_s: float = 1.0
    """The ``Retry-After`` a 429 fault carries, in seconds."""

    @classmethod
    def parse(cls, text: str) -> "FaultSpec":
        """Parse a spec; ValueError naming the bad item otherwise.

        >>> FaultSpec.parse("500=0.05,timeout=0.01").describe()
        '500=0.05,timeout=0.01'
        >>> FaultSpec.parse("429=0.5,retry_after=2").retry_after_s
        2.0
        >>> FaultSpec.parse("404=0.1")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: --faults: unknown fault kind '404'; known: 500, 429, timeout, ..., retry_after
        """
        rates: dict[str, float] = {}
        retry_after = 1.0
        items = [p.strip() for p in (text or "").split(",") if p.strip()]
        if not items:
            raise ValueError("--faults: empty spec; expected e.g. 500=0.05,429=0.05,timeout=0.01")
        for item in items:
            name, sep, value = item.partition("=")
            name = name.strip()
            if not sep:
                raise ValueError(f"--faults: {item!r} is not KIND=RATE")
            if name not in KINDS and name != "retry_after":
                raise ValueError(f"--faults: unknown fault kind {name!r}; known: {', '.join(KINDS)}, retry_after")
            try:
                v = float(value)
            except ValueError:
                raise ValueError(f"--faults: {name}={value!r} is not a number") from None
            if name == "retry_after":
                if not 0 <= v <= 3600:
                    raise ValueError(f"--faults: retry_after={value} must be between 0 and 3600 seconds")
                retry_after = v
                continue
            if not 0 <= v <= 1:
                raise ValueError(f"--faults: {name}={value} is not a probability between 0 and 1")
            if name in rates:
                raise ValueError(f"--faults: {name} given twice")
            rates[name] = v
        total = sum(rates.values())
        if total > 1 + 1e-9:
            raise ValueError(f"--faults: the rates add up to {total:g}; they must add up to at most 1")
        return cls(tuple((k, rates[k]) for k in KINDS if k in rates), retry_after)

    @property
    def total(self) -> float:
        """Probability that an attempt faults at all."""
        return sum(r for _, r in self.rates)

    def describe(self) -> str:
        out = ",".join(f"{k}={r:g}" for k, r in self.rates)
        if self.retry_after_s != 1.0:
            out += f",retry_after={self.retry_after_s:g}"
        return out


def _uniforms(seed: int, case: str, metric: str, key: str, attempt: int, occurrence: int = 0) -> tuple[float, float]:
    blob = "\x1f".join((str(seed), case, metric, key, str(occurrence), str(attempt))).encode()
    h = hashlib.sha256(blob).hexdigest()
    return int(h[:13], 16) / 16 ** 13, int(h[13:26], 16) / 16 ** 13


def decide(spec: FaultSpec, seed: int, case: str, metric: str, key: str, attempt: int,
           occurrence: int = 0) -> str | None:
    """The fault for one attempt, or None: a pure function of its arguments.

    >>> s = FaultSpec.parse("500=0.5")
    >>> decide(s, 7, "c", "m", "k", 1) == decide(s, 7, "c", "m", "k", 1)
    True
    >>> sum(decide(s, 7, "c", "m", "k", a) == "500" for a in range(1, 1001))
    508
    >>> decide(FaultSpec.parse("schema=1"), 0, "c", "m", "k", 3)
    'schema'
    """
    u, _ = _uniforms(seed, case, metric, key, attempt, occurrence)
    edge = 0.0
    for kind, rate in spec.rates:
        edge += rate
        if u < edge:
            return kind
    return None


def corrupt(kind: str, content: str, u: float = 0.0) -> str:
    """The content a content fault puts in place of ``content`` (``u`` picks the schema variant).

    >>> corrupt("malformed", '{"a": [1]}')
    "Here is the JSON you asked for:\\n{'a': [1]}"
    >>> corrupt("truncated", '{"claims": ["x"]}')
    '{"claims'
    >>> corrupt("schema", '{"a": [1], "b": 2}', 0.2), corrupt("schema", '{"a": [1], "b": 2}', 0.7)
    ('{"b": 2}', '{"a": "1", "b": 2}')
    >>> corrupt("schema", "['a sentence']")
    '{"unexpected": "shape"}'
    """
    if kind == "malformed":
        return "Here is the JSON you asked for:\n" + content.replace('"', "'")
    if kind == "truncated":
        return content[: len(content) // 2]
    if kind == "schema":
        try:
            data = json.loads(content)
        except (TypeError, ValueError):
            data = None
        if not isinstance(data, dict) or not data:
            return json.dumps({"unexpected": "shape"})
        first = next(iter(data))
        if u < 0.5:
            data.pop(first)
        else:
            data[first] = _wrong_type(data[first])
        return json.dumps(data, ensure_ascii=False)
    raise ValueError(f"not a content fault: {kind!r}")


def _wrong_type(v):
    """A value of another JSON type than ``v`` that no lenient parser coerces back: list -> its items
    joined as a string, string, number or bool -> a one-item list, object -> a list, null -> an object."""
    if isinstance(v, list):
        return " ".join(str(x) for x in v)
    if isinstance(v, (str, bool, int, float)):
        return [v]
    if isinstance(v, dict):
        return list(v.values())
    return {}


@dataclass(frozen=True)
class FaultEvent:
    """One upstream attempt as the injector saw it."""

    case: str
    metric: str
    key: str
    """The request key (cache key of the body, no scope)."""
    occurrence: int
    """How many identical requests the cell sent before this one."""
    attempt: int
    kind: str | None
    """The injected fault, or None when the attempt passed through."""
    t: float
    """``time.monotonic()`` when the attempt started."""


class FaultyUpstream:
    """Wraps an upstream (anything with ``kind``, ``model``, ``scope``, ``complete``, ``aclose``)."""

    def __init__(self, inner, spec: FaultSpec, seed: int = 0, *, hang_s: float = 3600.0):
        self.inner, self.spec, self.seed, self.hang_s = inner, spec, seed, hang_s
        self.kind, self.model = inner.kind, inner.model
        self.events: deque[FaultEvent] = deque(maxlen=EVENTS_KEPT)
        """The most recent attempts (at most :data:`EVENTS_KEPT`); :attr:`tally` counts every one."""
        self.tally: Counter = Counter()
        """Attempts seen (``attempts``) and faults injected by kind, since the start."""
        self._cells: dict[tuple[str, str], tuple[dict, dict]] = {}
        """(case, metric) -> (request key -> requests seen, (key, call number) -> occurrence), for the
        cells in flight only: :meth:`forget` drops a cell's when the gateway closes it."""

    def __repr__(self):
        return f"FaultyUpstream({self.inner!r}, {self.spec.describe()!r}, seed={self.seed})"

    def __getattr__(self, name):  # redact() and anything else the inner upstream offers
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def scope(self, *cell) -> str:   # a chat upstream's scope takes the cell, an embedding upstream's none
        return self.inner.scope(*cell)

    async def aclose(self):
        await self.inner.aclose()

    async def _transport(self, cell: Cell, body: dict) -> tuple[str | None, str, int, int]:
        """Decide this attempt's fault and raise the transport ones; (kind, key, attempt, occurrence)."""
        call_no, attempt = ATTEMPT.get()
        key = request_key(body)
        occ = self._occurrence_of((cell.case, cell.metric), key, call_no)
        kind = decide(self.spec, self.seed, cell.case, cell.metric, key, attempt, occ)
        self.events.append(FaultEvent(cell.case, cell.metric, key, occ, attempt, kind, time.monotonic()))
        self.tally["attempts"] += 1
        if kind is not None:
            self.tally[kind] += 1
        if kind == "500":
            raise UpstreamError("injected fault: judge HTTP 500", status=500)
        if kind == "429":
            ra = self.spec.retry_after_s
            raise UpstreamError(f"injected fault: judge HTTP 429 (Retry-After: {ra:g})", status=429,
                                retry_after=ra)
        if kind == "timeout":
            await asyncio.sleep(self.hang_s)
            raise UpstreamError(f"injected fault: the judge hung for {self.hang_s:g}s", status=504)
        return kind, key, attempt, occ

    async def complete(self, cell: Cell, body: dict) -> dict:
        kind, key, attempt, occ = await self._transport(cell, body)
        resp = await self.inner.complete(cell, body)
        if kind is None:
            return resp
        _, u2 = _uniforms(self.seed, cell.case, cell.metric, key, attempt, occ)
        return _with_content(resp, kind, u2)

    async def embed(self, cell: Cell, body: dict) -> dict:
        """An embedding request (``/v1/embeddings``): the same transport faults (500, 429, a hang) as a chat
        request; a content fault has no text to corrupt there, and the vectors pass as they came."""
        await self._transport(cell, body)
        return await self.inner.embed(cell, body)

    def _occurrence_of(self, cell: tuple[str, str], key: str, call_no: int) -> int:
        """0 for the first request with this key in the cell (case, metric), 1 for the next, ...; every
        attempt of one gateway call (``call_no``) keeps its request's number."""
        seen, calls = self._cells.setdefault(cell, ({}, {}))
        occ = calls.get((key, call_no))
        if occ is None:
            occ = seen.get(key, 0)
            seen[key] = occ + 1
            calls[(key, call_no)] = occ
        return occ

    def forget(self, cell: Cell) -> None:
        """Drop a finished cell's occurrence numbers (the gateway calls it when it closes the cell), so
        memory does not grow with the number of cells."""
        self._cells.pop((cell.case, cell.metric), None)

    def faulted(self) -> list[FaultEvent]:
        """The attempts that were faulted, in the order they started."""
        return [e for e in self.events if e.kind is not None]


INJECTED = "x_harness_injected_fault"
"""Top-level key a corrupted response carries (its value: the fault kind); the gateway never caches such
a response, so a ``--faults`` run with ``--cache record`` stores only the judge's real replies."""


def _with_content(resp: dict, kind: str, u: float) -> dict:
    out = copy.deepcopy(resp)
    out[INJECTED] = kind
    out["created"] = 0  # instructor echoes the failed completion's repr in its re-ask: keep that request replayable
    try:
        choice = out["choices"][0]
        msg = choice["message"]
    except (KeyError, IndexError, TypeError):
        return _with_output_text(out, kind, u)
    if isinstance(msg.get("content"), str):
        msg["content"] = corrupt(kind, msg["content"], u)
    if kind == "truncated":
        choice["finish_reason"] = "length"
    return out


def _with_output_text(out: dict, kind: str, u: float) -> dict:
    """The content fault on a Responses API ``response`` (its output text; truncated: status incomplete)."""
    for item in out.get("output") or []:
        for part in (item.get("content") or []) if isinstance(item, dict) else []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                part["text"] = corrupt(kind, part["text"], u)
    if kind == "truncated" and "output" in out:
        out["status"], out["incomplete_details"] = "incomplete", {"reason": "max_output_tokens"}
    return out


@dataclass
class FaultInjector:
    """``RunOptions.upstream_wrapper``: wraps the run's upstream and keeps the wrapper for inspection."""

    spec: FaultSpec
    seed: int = 0
    hang_s: float = 3600.0
    upstreams: list = field(default_factory=list)
    absorbed: deque = field(default_factory=lambda: deque(maxlen=EVENTS_KEPT))
    """The most recent events seen by this injector's copies in worker processes (:meth:`absorb`)."""
    absorbed_tally: Counter = field(default_factory=Counter)
    """Every event absorbed, counted (attempts and faults by kind)."""

    def __call__(self, upstream) -> FaultyUpstream:
        up = FaultyUpstream(upstream, self.spec, self.seed, hang_s=self.hang_s)
        self.upstreams.append(up)
        return up

    def for_worker(self) -> "FaultInjector":
        """A fresh copy to send to a worker process (the decisions are pure, so every copy faults the
        same attempts this one would)."""
        return FaultInjector(self.spec, self.seed, self.hang_s)

    def take_report(self) -> list[FaultEvent]:
        """(In a worker) the events seen since the last call, handed back with a finished cell."""
        out = []
        for up in self.upstreams:
            out.extend(up.events)
            up.events.clear()
        return out

    def absorb(self, events: list[FaultEvent]) -> None:
        """(In the runner) add what a worker's copy saw, so :attr:`events` covers the whole run."""
        self.absorbed.extend(events)
        for e in events:
            self.absorbed_tally["attempts"] += 1
            if e.kind is not None:
                self.absorbed_tally[e.kind] += 1

    @property
    def events(self) -> list[FaultEvent]:
        """The upstream attempts seen, faulted or not (in this process or reported by workers): every
        one of a run of up to :data:`EVENTS_KEPT` attempts, the most recent ones of a longer run
        (:meth:`counts` counts them all)."""
        return [e for up in self.upstreams for e in up.events] + list(self.absorbed)

    def faulted(self) -> list[FaultEvent]:
        """The attempts that were faulted."""
        return [e for e in self.events if e.kind is not None]

    def counts(self) -> dict[str, int]:
        """Attempts seen and faults injected, by kind (``attempts`` counts every attempt)."""
        total = sum((up.tally for up in self.upstreams), Counter()) + self.absorbed_tally
        return {"attempts": total["attempts"], **{k: total[k] for k in KINDS}}
