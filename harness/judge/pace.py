"""One pace for every vendor: the judge's requests and tokens per minute, kept in the gateway.

Every vendor's judge call passes the gateway (:mod:`harness.judge.gateway`), so one limiter there paces
them all: ``harness run --judge-rpm N --judge-tpm N`` (``RunOptions.judge_rpm`` / ``judge_tpm``). Each
attempt sent to the judge first takes its place in a sliding one-minute window (requests, and tokens
estimated before sending from the prompt's size plus the request's ``max_tokens``, corrected by the
reply's ``usage``); a call that does not fit waits, in order of arrival. The limits are the provider's,
as it states them; the pace is adaptive below them (AIMD, as MLflow's adaptive limiter, PR #20940):

- an HTTP 429 halves the share of the limits in use and blocks every call until its ``Retry-After``;
- each answered call adds back one request's worth (1/rpm of the limits; 2 % with ``--judge-tpm``
  alone), up to the stated limits;
- the provider's headers are read on every reply: ``x-ratelimit-remaining-requests: 0`` (or
  ``-remaining-tokens`` below the next call's estimate) blocks until ``x-ratelimit-reset-requests``
  (``-reset-tokens``).

A throttled call waits; it never drops a cell. A call that could not be sent within its cell's time budget
(``--cell-timeout``) ends as an error of that cell (HTTP 504 in its ledger): the cell is ERROR, never a
score, and a rerun with the same ``--run-id`` computes it. With several worker processes (or Ray actors)
each worker paces its own share: the limits divided by the number of workers (docs/pace.md).
"""
from __future__ import annotations

import asyncio
import contextvars
import re
import time
from collections import deque
from dataclasses import dataclass

DEFAULT_COMPLETION_TOKENS = 256
"""Completion tokens assumed for a request that sets no ``max_tokens`` (corrected by the reply's usage)."""
CHARS_PER_TOKEN = 4.0
"""The prompt estimate's ratio (OpenAI's rule of thumb for English text)."""
MIN_SHARE = 1 / 64
"""The adaptive share of the limits never falls below this."""

PACE: contextvars.ContextVar = contextvars.ContextVar("harness_judge_pace", default=None)
"""The pace of the call in progress (set by :func:`harness.judge.upstream.call_with_retries`): the HTTP
upstream reports the provider's rate-limit headers to it."""


class PaceTimeout(Exception):
    """The call could not be sent within its cell's budget (the wait it would need, in seconds, in ``args[0]``)."""


def estimate_tokens(body: dict) -> int:
    """Tokens a request will count against a tokens-per-minute limit, before it is sent: its prompt's
    characters / 4, plus the completion cap it sets (``max_tokens``, ``max_completion_tokens`` or
    ``max_output_tokens``; :data:`DEFAULT_COMPLETION_TOKENS` when none).

    >>> estimate_tokens({"messages": [{"role": "user", "content": "x" * 400}], "max_tokens": 50})
    150
    >>> estimate_tokens({"input": "x" * 40})
    266
    """
    chars = 0

    def walk(v):
        nonlocal chars
        if isinstance(v, str):
            chars += len(v)
        elif isinstance(v, dict):
            for k in ("content", "text", "input", "instructions"):
                if k in v:
                    walk(v[k])
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(body.get("messages") or [])
    walk({k: body[k] for k in ("input", "instructions") if k in body})
    cap = next((body[k] for k in ("max_tokens", "max_completion_tokens", "max_output_tokens")
                if isinstance(body.get(k), int) and body[k] > 0), DEFAULT_COMPLETION_TOKENS)
    return int(chars / CHARS_PER_TOKEN) + cap


def parse_reset(value: str | None) -> float | None:
    """Seconds in a ``x-ratelimit-reset-*`` header (OpenAI's ``1s``, ``6m0s``, ``20ms``; or plain seconds).

    >>> parse_reset("6m0s"), parse_reset("20ms"), parse_reset("1.5"), parse_reset("1h2m3s"), parse_reset("soon")
    (360.0, 0.02, 1.5, 3723.0, None)
    """
    if not value:
        return None
    v = value.strip()
    try:
        return max(0.0, float(v))
    except ValueError:
        pass
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", v)
    if not parts or "".join(a + b for a, b in parts) != v:
        return None
    unit = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    return sum(float(a) * unit[b] for a, b in parts)


@dataclass(eq=False)
class Ticket:
    """One sent attempt: when (sent, then answered), and the tokens it counts (the estimate, then the usage)."""

    at: float
    tokens: int


@dataclass
class PaceStats:
    """What the pace did (its own accounting)."""

    sent: int = 0
    """Attempts sent."""
    waited: int = 0
    """Attempts that waited for room."""
    wait_s: float = 0.0
    """Seconds spent waiting, summed over the attempts (by the pace's clock)."""
    answered: int = 0
    """Attempts answered (a reply other than a 429, or a transport error)."""
    throttled: int = 0
    """429 replies seen."""
    gave_up: int = 0
    """Calls that could not be sent within their cell's budget (ERROR cells, resumable)."""
    max_requests: int = 0
    """Most attempts ever in one window (the stated rpm is the bound)."""
    max_tokens: int = 0
    """Most tokens ever counted in one window, by estimate when sent (the stated tpm is the bound)."""


class Pace:
    """A sliding-window limiter of requests and tokens per minute, kept over windows of ``window_s``
    (default 60; a provider that enforces its per-minute limits over shorter windows, as Azure OpenAI does
    over 10 s, gets ``window_s`` = 10 and a tenth of each limit per window), adaptive below the stated
    limits. ``clock`` and ``sleep`` are injectable (tests use a virtual clock).

    One instance serves one event loop (the gateway's); calls wait in order of arrival.
    """

    def __init__(self, rpm: float | None = None, tpm: float | None = None, *, window_s: float = 60.0,
                 clock=time.monotonic, sleep=asyncio.sleep):
        if rpm is None and tpm is None:
            raise ValueError("a pace needs a requests or a tokens per minute limit")
        for name, v in (("rpm", rpm), ("tpm", tpm)):
            if v is not None and not v > 0:
                raise ValueError(f"judge {name} must be > 0, not {v!r}")
        self.rpm, self.tpm, self.window_s = rpm, tpm, window_s
        self.clock, self.sleep = clock, sleep
        self.share = 1.0
        """The part of the stated limits in use (adaptive: halved on a 429, raised on each answer)."""
        self.per_window = window_s / 60.0
        """The part of a minute's limits one window holds (Azure OpenAI, for one, enforces them per 10 s)."""
        self.step = 1.0 / max(1.0, rpm * self.per_window) if rpm else 0.02
        self._window: deque[Ticket] = deque()
        """Answered attempts of the last window, in order of their answer."""
        self._tokens = 0
        """Tokens of :attr:`_window`."""
        self.inflight: set[Ticket] = set()
        """Attempts sent and not answered yet: they count until their answer, and a window after it."""
        self._inflight_tokens = 0
        self._blocked_until = 0.0
        self._lock: asyncio.Lock | None = None
        self._changed: asyncio.Event | None = None
        self.stats = PaceStats()
        self.log: list[Ticket] | None = None
        """Every ticket as sent, when set to a list (tests and the bench check the window from it)."""

    def __repr__(self):
        return f"Pace(rpm={self.rpm!r}, tpm={self.tpm!r}, share={self.share:.3f})"

    # --- the window ----------------------------------------------------------------------------
    # An attempt counts from the moment it is sent until a window after its answer: the provider saw it
    # at some time in between, so whatever that time, the provider's window never holds more attempts
    # than the pace's (for a provider keeping the same window). The price is the call's latency per
    # window of each slot (3 % of a minute for a 2 s call).

    def _expire(self, now: float) -> None:
        while self._window and self._window[0].at <= now - self.window_s:
            self._tokens -= self._window.popleft().tokens

    def _limits(self) -> tuple[int | None, float | None]:
        r = max(1, int(self.rpm * self.per_window * self.share + 1e-9)) if self.rpm else None
        t = max(1.0, self.tpm * self.per_window * self.share) if self.tpm else None
        return r, t

    def _wait(self, cost: int, now: float) -> float:
        """Seconds until an attempt of ``cost`` tokens fits (0: now; a window at least while the attempts
        in flight alone fill it: one of them must be answered first)."""
        wait = self._blocked_until - now
        r, t = self._limits()
        flying = len(self.inflight)
        if r is not None and flying + len(self._window) >= r:
            drop = flying + len(self._window) - r   # the answered attempts that must leave the window first
            wait = max(wait, self.window_s if drop >= len(self._window) else
                       self._window[drop].at + self.window_s - now)
        if t is not None and (self._window or self.inflight):
            over = self._tokens + self._inflight_tokens + min(cost, t) - t   # a call larger than t goes alone
            for tk in self._window:
                if over <= 0:
                    break
                over -= tk.tokens
                wait = max(wait, tk.at + self.window_s - now)
            if over > 0:
                wait = max(wait, self.window_s)
        return wait

    async def acquire(self, cost: int, deadline: float | None = None) -> Ticket:
        """Wait until an attempt of ``cost`` estimated tokens fits, and count it as sent (until
        :meth:`finish`, and a window after). ``deadline`` (by the pace's clock): raise :class:`PaceTimeout`
        at once when the wait would pass it."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        waited = False
        async with self._lock:   # in order of arrival
            while True:
                now = self.clock()
                self._expire(now)
                wait = self._wait(cost, now)
                if wait <= 0:
                    break
                if deadline is not None and now + wait > deadline:
                    self.stats.gave_up += 1
                    raise PaceTimeout(wait)
                if not waited:
                    self.stats.waited += 1
                    waited = True
                await self._until(wait)
                self.stats.wait_s += max(0.0, self.clock() - now)
            tk = Ticket(now, cost)
            self.inflight.add(tk)
            self._inflight_tokens += cost
            s = self.stats
            s.sent += 1
            s.max_requests = max(s.max_requests, len(self._window) + len(self.inflight))
            s.max_tokens = max(s.max_tokens, self._tokens + self._inflight_tokens)
            if self.log is not None:
                self.log.append(Ticket(tk.at, tk.tokens))
            return tk

    def finish(self, ticket: Ticket, used: int | None = None) -> None:
        """The attempt is over (answered, refused, failed or cancelled): it counts a window from now, with
        ``used`` tokens (None: its estimate). Idempotent: only the first call counts."""
        if ticket not in self.inflight:
            return
        self.inflight.discard(ticket)
        self._inflight_tokens -= ticket.tokens
        ticket.at = self.clock()
        if used is not None and used >= 0:
            ticket.tokens = used
        self._window.append(ticket)
        self._tokens += ticket.tokens
        if self._changed is not None:
            self._changed.set()

    async def _until(self, wait: float) -> None:
        """Sleep ``wait`` seconds, or less when an answer comes back first (its usage may give tokens back)."""
        self._changed = self._changed or asyncio.Event()
        self._changed.clear()
        sleeping = asyncio.ensure_future(self.sleep(wait))
        changed = asyncio.ensure_future(self._changed.wait())
        try:
            await asyncio.wait({sleeping, changed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (sleeping, changed):
                t.cancel()

    # --- what the judge said -------------------------------------------------------------------

    def settle(self, ticket: Ticket, used: int | None) -> None:
        """The call was answered: it counts the tokens the reply's usage says (None: the estimate stands),
        and the share grows by one step (additive increase)."""
        self.stats.answered += 1
        self.finish(ticket, used)
        self.share = min(1.0, self.share + self.step)

    def throttled(self, retry_after: float | None) -> None:
        """The judge answered 429: halve the share, and send nothing until ``retry_after`` seconds have passed
        (a window's share of one request when the judge gave none)."""
        self.stats.throttled += 1
        self.share = max(MIN_SHARE, self.share / 2)
        r, _ = self._limits()
        pause = retry_after if retry_after is not None else self.window_s / (r or 60)
        self._blocked_until = max(self._blocked_until, self.clock() + pause)

    def observe(self, headers) -> None:
        """The provider's rate-limit headers of a reply (any mapping, case-insensitive keys as httpx gives):
        none left of requests (or fewer tokens than the average call) blocks until its reset."""
        def get(name):
            v = headers.get(name)
            try:
                return float(v) if v is not None else None
            except ValueError:
                return None

        now = self.clock()
        left = get("x-ratelimit-remaining-requests")
        if left is not None and left < 1:
            reset = parse_reset(headers.get("x-ratelimit-reset-requests"))
            if reset is not None:
                self._blocked_until = max(self._blocked_until, now + reset)
        left = get("x-ratelimit-remaining-tokens")
        if left is not None and self._window and left < self._tokens / len(self._window):
            reset = parse_reset(headers.get("x-ratelimit-reset-tokens"))
            if reset is not None:
                self._blocked_until = max(self._blocked_until, now + reset)


def for_workers(rpm: float | None, tpm: float | None, workers: int) -> tuple[float | None, float | None]:
    """Each worker's share of the run's limits (``workers`` processes or Ray actors pace apart).

    >>> for_workers(600, None, 4)
    (150.0, None)
    """
    n = max(1, workers)
    return (rpm / n if rpm else None), (tpm / n if tpm else None)
