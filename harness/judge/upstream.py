"""Upstream judges behind the gateway, and the retry policy the harness owns.

Two upstreams: the in-process reference judge and any OpenAI-compatible HTTP endpoint. The gateway
calls :func:`call_with_retries`, which retries what a transport retry would, and nothing else:
connection errors, timeouts, HTTP 429 (honouring ``Retry-After``) and 5xx, bounded, with exponential
backoff, under a per-call timeout. A 200 reply is handed on as it came, whatever its content: whether
it fits the requested ``response_format`` is the vendor's parser's business (its re-asks and
fallbacks run as in stock use); the gateway only records the fit, as an observation
(:func:`harness.judge.replies.content_problem`). Vendor SDK retries are off, so every attempt is visible in
the ledger.
"""
from __future__ import annotations

import asyncio
import codecs
import contextvars
import email.utils
import itertools
import json
import os
import random
import socket
import time
from dataclasses import dataclass, field

from harness.cases.load import case_digest
from harness.core import redact
from harness.core.threads import plain_thread_pool
from harness.judge.cache import judge_identity
from harness.judge.cell import REPEAT_SEP, Cell, UpstreamError, repeat_label, repeat_of  # noqa: F401 - the gateway's names
from harness.judge.pace import PACE, PaceTimeout, estimate_tokens
from harness.judge.reference import REFERENCE_VERSION, ReferenceJudge
from harness.judge.replycap import ACCEPT_ENCODING, HELD, RepliesHeld, ReplyTooLarge, UndecodableReply, read_capped
from harness.judge.responses_api import ROUTE as RESPONSES
from harness.judge.responses_api import chat_view, error_body, is_responses, response_of
from harness.metric import registry
from harness.metric.protocol import UnrecognisedRequest

DEFAULT_MAX_REPLY_BYTES = 8 * 2**20
"""The largest reply body an HTTP judge or embedding endpoint may send (``--max-reply-mb``): far above
any real chat completion, far below what would hurt the run's memory."""
ERROR_BODY_BYTES = 64 * 1024
"""How much of an error reply's body is read (its reason keeps only its start)."""


@dataclass
class RetryPolicy:
    """Bounded retries with exponential backoff and jitter; Retry-After wins when given."""

    max_attempts: int = 4
    """Attempts per request, the first included."""
    base_delay_s: float = 0.5
    """Backoff before attempt n+1 is base * 2**(n-1), with up to 25 % jitter."""
    max_delay_s: float = 30.0
    """No single wait is longer (Retry-After included)."""
    timeout_s: float = 120.0
    """Per-attempt timeout."""
    seed: int | None = None
    """Seed for the jitter (None: random)."""
    _rng: random.Random = field(default=None, repr=False)

    def __post_init__(self):
        self._rng = random.Random(self.seed)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(0.0, retry_after), self.max_delay_s)
        d = self.base_delay_s * (2 ** (attempt - 1))
        return min(d * (1 + 0.25 * self._rng.random()), self.max_delay_s)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or HTTP-date).

    >>> parse_retry_after("2"), parse_retry_after(None), parse_retry_after("soon")
    (2.0, None, None)
    """
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class ReferenceUpstream:
    """The in-process reference judge, with optional injected latency."""

    kind = "reference"

    def __init__(self, cases: dict[tuple[str, str], object] | None = None, latency_ms: float = 0.0):

        self.judge = ReferenceJudge(latency_ms=latency_ms)
        self.cases = cases if cases is not None else {}
        self.model = "reference-judge"
        self._digests: dict[tuple[str, str], str] = {}

    def scope(self, cell: Cell) -> str:

        digest = self._digests.get((cell.run, cell.case))
        if digest is None:   # a memo of the cases in flight (a digest costs ~0.1 ms), not of the whole run

            if len(self._digests) > 4096:
                self._digests.clear()
            digest = self._digests[(cell.run, cell.case)] = case_digest(self._case(cell))
        try:
            version = getattr(registry.get(cell.metric), "version", "?")
        except registry.UnknownMetric as e:   # e.g. Azure's metric asking a `judge serve` of the main environment
            raise UpstreamError(f"reference judge: no rubric for this request: {e}", status=400,
                                retryable=False) from None
        return f"reference-v{REFERENCE_VERSION}|{cell.metric}@{version}|{digest}"

    def _case(self, cell: Cell):
        try:
            return self.cases[(cell.run, cell.case)]
        except KeyError:
            raise UpstreamError(f"reference judge: no case {cell.case!r} registered for run {cell.run!r}",
                                status=400, retryable=False) from None

    async def complete(self, cell: Cell, body: dict) -> dict:
        """A ``chat.completion``; for a Responses API request, the same answer as a ``response`` (the
        reference judge serves the Responses API as an OpenAI-like server: :mod:`harness.judge.responses_api`)."""
        if self.judge.latency_ms:
            await asyncio.sleep(self.judge.latency_ms / 1000.0)
        try:
            if is_responses(body):
                return response_of(self.judge.reply(cell.metric, self._case(cell), chat_view(body)))
            return self.judge.reply(cell.metric, self._case(cell), body)
        except UnrecognisedRequest as e:
            raise UpstreamError(str(e), status=400, retryable=False) from None

    def batch_service(self):
        """The reference judge's files and batches API, in this process (batch mode: :mod:`harness.judge.batch`);
        each request's cell comes from its ``custom_id``. Its batches end with the process."""
        if getattr(self, "_batches", None) is None:
            from harness.judge.batch import BatchService  # noqa: PLC0415 - lazy: batch mode only

            self._batches = BatchService(self.batch_answer)
        return self._batches

    def batch_answer(self, cid: str, url: str, body) -> tuple[int, dict]:
        """One batch line's reply (status, body), as :meth:`complete` answers the same request."""
        from harness.judge.batch import CHAT_URL, RESPONSES_URL, cell_of_custom_id  # noqa: PLC0415 - lazy: batch mode only

        cell = cell_of_custom_id(cid)
        if cell is None or url not in (CHAT_URL, RESPONSES_URL) or not isinstance(body, dict):
            return 400, {"error": {"message": f"reference judge: cannot answer batch line {cid!r} ({url})",
                                   "type": "invalid_request_error", "code": 400}}
        try:
            if url == RESPONSES_URL:
                return 200, response_of(self.judge.reply(cell.metric, self._case(cell), chat_view(body)))
            return 200, self.judge.reply(cell.metric, self._case(cell), body)
        except (UnrecognisedRequest, UpstreamError) as e:
            return 400, {"error": {"message": str(e), "type": "invalid_request_error", "code": 400}}

    async def aclose(self):
        return None


class HttpEndpoint:
    """An OpenAI-compatible HTTP endpoint: its key is read from an env var at start-up and kept in memory
    only, and every error text is scrubbed of it. :class:`HttpUpstream` (the judge) and
    :class:`harness.judge.embeddings.HttpEmbeddings` are the two."""

    kind = "http"
    what = "endpoint"
    """How its errors name it."""

    def __init__(self, url: str, model: str, key_env: str | None, timeout_s: float = 120.0,
                 max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES, key_confined: bool = False):
        self.url = url.rstrip("/")
        self.model = model
        self.key_env = key_env
        self.__key = os.environ.get(key_env, "") if key_env else ""
        redact.register(self.__key, judge_only=key_confined)
        self.key_confined = key_confined or redact.confined(self.__key)
        """The key occurs in the case text: it is removed from each reply here, where it comes from the
        judge, and not from the cases (:mod:`harness.run.keyguard`)."""
        redact.register_url(self.url)
        self._timeout = timeout_s
        self.max_reply_bytes = max_reply_bytes
        """A reply body larger than this, raw or decoded, is refused, read no further
        (:func:`harness.judge.replycap.read_capped`)."""
        HELD.at_least(2 * max_reply_bytes)   # one call holds at most its raw and its decoded body
        self._client = None
        self._aio = None
        import aiohttp  # noqa: F401, PLC0415 - imported now, not inside the first call, where it would be timed as time in the judge

    def __repr__(self):
        return f"{type(self).__name__}(url={self.url!r}, model={self.model!r}, key_env={self.key_env!r})"

    def redact(self, text: str, limit: int | None = None) -> str:
        """``text`` without the key (or any credential, or a fragment of one: error bodies can echo
        headers), cut to ``limit`` characters after it is scrubbed (:func:`harness.core.redact.cut`)."""
        text = redact.scrub_judge(text.replace(self.__key, "***") if self.__key else text)
        return redact.scrub_judge(redact.cut(text, limit)) if limit is not None else redact.scrub(text)

    def _new_client(self, httpx):
        from harness.judge.netbackend import install  # noqa: PLC0415 - lazy, with httpx

        client = httpx.AsyncClient(timeout=self._timeout)
        install(client)   # idle connections checked without a getpeername per check (harness.judge.netbackend)
        return client

    def _aio_session(self, aiohttp):
        """The endpoint's ``aiohttp`` session for the running event loop (a new one for a new loop) and the
        proxy its requests go through. The chat calls go through ``aiohttp``'s client: ~0.35 ms of CPU a
        call against ~1.9 ms through ``httpx`` (bench/README.md, "CPU per judge call"). Bodies are read raw
        (``auto_decompress=False``) and decoded by :func:`harness.judge.replycap.read_capped`, within the
        cap, as before.

        Nothing of a request is handed to the event loop's default executor. ``aiohttp``'s ``trust_env``
        would do that twice a request (a ``.netrc`` lookup and a proxy lookup in worker threads), and its
        DNS lookups run there too; but the sync vendors (TruLens) hold those very threads while they wait
        for their judge calls, so once enough of their cells are in flight the calls they wait for can
        never start: a deadlock, not a slowdown. So the environment's proxy is looked up once, here
        (:func:`_env_proxy`), TLS is set up from the environment as ``httpx`` does, and names resolve in
        threads of the harness's own (:class:`_Lookups`)."""
        loop = asyncio.get_running_loop()
        if self._aio is None or self._aio[0] is not loop or self._aio[1].closed:
            timeout = aiohttp.ClientTimeout(total=None, sock_connect=self._timeout, sock_read=self._timeout)
            connector = aiohttp.TCPConnector(resolver=aiohttp.ThreadedResolver(_Lookups(loop)),   # 100 connections
                                             ssl=_tls_context() if self.url.startswith("https:") else True)  # as httpx
            self._aio = (loop, aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=False,
                                                     trust_env=False), _env_proxy(self.url))
        return self._aio[1], self._aio[2]

    async def _post(self, cell: Cell, route: str, body: dict, bad_body_retryable: bool = False) -> dict:
        """POST ``body`` to ``<url>/<route>``; the JSON reply, or :class:`UpstreamError` (timeouts,
        connection errors, 429 and 5xx retryable; other statuses and a reply over the size cap not; a
        2xx whose body is not JSON as ``bad_body_retryable`` says)."""
        import aiohttp  # noqa: PLC0415 - lazy, as httpx was

        session, (proxy, proxy_auth) = self._aio_session(aiohttp)
        headers = {"Content-Type": "application/json", "X-Harness-Cell": cell.header(),
                   "Accept-Encoding": ACCEPT_ENCODING}
        if self.__key:
            headers["Authorization"] = f"Bearer {self.__key}"
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()  # as httpx's json=
        try:
            async with session.post(f"{self.url}/{route}", data=data, headers=headers, proxy=proxy,
                                    proxy_auth=proxy_auth, allow_redirects=False) as r:   # httpx followed none
                failed = r.status >= 400
                raw = await read_capped(_AioReply(r), ERROR_BODY_BYTES if failed else self.max_reply_bytes, cut=failed)
                status, retry_after = r.status, r.headers.get("retry-after")
                pace = PACE.get()
                if pace is not None:   # the provider's x-ratelimit-* headers
                    pace.observe(r.headers)
                encoding = _charset(r.charset)
        except ReplyTooLarge:
            raise UpstreamError(f"{self.what} reply is larger than the {self.max_reply_bytes / 2**20:g} MB cap "
                                "(--max-reply-mb), counted decoded; refused, read no further", status=502,
                                retryable=False) from None
        except RepliesHeld as e:
            raise UpstreamError(f"{self.what} replies being read at once would hold more than "
                                f"{e.args[0] / 2**20:g} MB; this one was refused, read no further", status=503) from None
        except UndecodableReply as e:
            raise UpstreamError(self.redact(f"{self.what} reply's Content-Encoding does not decode: {e}; refused", 240),
                                status=502, retryable=False) from None
        except (asyncio.TimeoutError, aiohttp.ServerTimeoutError):
            raise UpstreamError(f"{self.what} timed out after {self._timeout:.0f}s", status=504) from None
        except aiohttp.ClientError as e:
            raise UpstreamError(self.redact(f"{self.what} unreachable: {type(e).__name__}: {e}")) from None
        text = raw.decode(encoding, "replace") if status >= 400 else None
        if status == 429 or status >= 500:
            raise UpstreamError(self.redact(f"{self.what} HTTP {status}: {text}", 220), status=status,
                                retry_after=parse_retry_after(retry_after))
        if status >= 400:
            raise UpstreamError(self.redact(f"{self.what} HTTP {status}: {text}", 320), status=status,
                                retryable=False, body=error_body(self.redact(text)))
        try:
            reply = json.loads(raw)
        except (ValueError, RecursionError):
            shown = self.redact(raw[:400].decode(encoding, "replace"), 120)
            raise UpstreamError(f"{self.what} replied with a body that is not JSON: {shown!r}",
                                retryable=bad_body_retryable) from None
        return redact.scrub_judge_obj(reply) if self.key_confined else reply

    async def batch_request(self, method: str, route: str, *, body=None, upload: bytes | None = None):
        """One request of the endpoint's files and batches API (batch mode, :mod:`harness.judge.batch`):
        ``(status, JSON object)``, or the raw bytes of a ``files/{id}/content`` download. ``upload``: a batch
        input file, sent as ``POST files`` (multipart, ``purpose=batch``). Transport failures raise
        :class:`UpstreamError`, scrubbed of the key."""
        import httpx  # noqa: PLC0415 - lazy: httpx costs ~0.1 s to import

        if self._client is None:
            self._client = self._new_client(httpx)
        headers = {"Authorization": f"Bearer {self.__key}"} if self.__key else {}
        kw = {"files": {"file": ("batch.jsonl", upload, "application/jsonl")}, "data": {"purpose": "batch"}} \
            if upload is not None else ({"json": body} if body is not None else {})
        try:
            r = await self._client.request(method, f"{self.url}/{route}", headers=headers, **kw)
            data = await r.aread()
        except httpx.HTTPError as e:
            raise UpstreamError(self.redact(f"{self.what} batch API unreachable: {type(e).__name__}: {e}", 240)) from None
        if r.status_code == 200 and route.endswith("/content"):   # the replies, the key taken out as from any reply
            return 200, redact.scrub_judge(data.decode("utf-8", "replace")).encode() if self.key_confined else data
        try:
            reply = json.loads(data)
        except (ValueError, RecursionError):
            reply = {"error": {"message": self.redact(data[:400].decode("utf-8", "replace"), 200)}}
        return r.status_code, redact.scrub_judge_obj(reply) if self.key_confined else reply

    async def aclose(self):
        if self._client is not None:
            await self._client.aclose()
        if self._aio is not None and self._aio[0] is asyncio.get_running_loop():
            await self._aio[1].close()
        self._aio = None


class _AioReply:
    """What :func:`harness.judge.replycap.read_capped` reads of an ``aiohttp`` reply: its headers and its raw
    (undecoded) body in the pieces it arrives in."""

    __slots__ = ("headers", "_r")

    def __init__(self, r):
        self.headers, self._r = r.headers, r

    def aiter_raw(self):
        return self._r.content.iter_any()


def _env_proxy(url: str):
    """``(proxy URL, its credentials)`` the environment names for ``url``, or ``(None, None)``: no proxy. Read as
    ``httpx`` read it: ``HTTP_PROXY`` / ``HTTPS_PROXY`` by the judge URL's scheme, else ``ALL_PROXY``; none when
    ``NO_PROXY`` names the host; credentials from the proxy URL or ``.netrc`` (as ``aiohttp``'s ``trust_env``).
    The client speaks to an ``http://`` proxy only: a proxy of another scheme (``https://``, ``socks5://``) is
    an :class:`UpstreamError` that names the variable, never a silent direct connection.

    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"ALL_PROXY": "http://u:p@proxy.example:3128", "NO_PROXY": ""}, clear=True):
    ...     p, auth = _env_proxy("https://judge.example/v1")
    >>> str(p), auth.login
    ('http://proxy.example:3128', 'u')
    >>> with mock.patch.dict(os.environ, {"ALL_PROXY": "http://proxy.example:3128", "NO_PROXY": "judge.example"},
    ...                      clear=True):
    ...     _env_proxy("https://judge.example/v1")
    (None, None)
    """
    from urllib.request import getproxies, proxy_bypass  # noqa: PLC0415 - lazy, with aiohttp

    from aiohttp.helpers import basicauth_from_netrc, netrc_from_env, strip_auth_from_url  # noqa: PLC0415
    from yarl import URL  # noqa: PLC0415

    target = URL(url)
    if target.host is not None and proxy_bypass(target.host):
        return None, None
    named = getproxies()
    for key in (target.scheme, "all"):
        raw = named.get(key)
        if not raw:
            continue
        if "://" not in raw:   # a bare host:port, as httpx takes it
            raw = "http://" + raw
        proxy, auth = strip_auth_from_url(URL(raw))
        if proxy.scheme != "http":
            raise UpstreamError(f"the environment's {key.upper()}_PROXY names a {proxy.scheme}:// proxy; the judge's "
                                "client goes through http:// proxies only (name one, or leave the variable out)",
                                status=502, retryable=False)
        if auth is None and proxy.host is not None:
            rc = netrc_from_env()
            if rc:
                try:
                    auth = basicauth_from_netrc(rc, proxy.host)
                except LookupError:
                    auth = None
        return proxy, auth
    return None, None


def _tls_context():
    """The TLS context ``httpx`` made for the upstream client: ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` when set,
    else certifi's roots."""
    import httpx  # noqa: PLC0415 - lazy

    return httpx.create_ssl_context()


class _Lookups:
    """What ``aiohttp``'s ``ThreadedResolver`` asks of its event loop (``getaddrinfo``, ``getnameinfo``), run
    in threads of the harness's own, never in the loop's default executor (see
    :meth:`HttpEndpoint._aio_session`)."""

    _pool = None

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self._loop = loop

    @classmethod
    def _threads(cls):
        if cls._pool is None:
            cls._pool = plain_thread_pool(2, "harness-dns")
        return cls._pool

    async def getaddrinfo(self, host, port, *, family=0, type=0, proto=0, flags=0):  # noqa: A002 - asyncio's names
        return await self._loop.run_in_executor(self._threads(), socket.getaddrinfo, host, port, family, type,
                                                proto, flags)

    async def getnameinfo(self, sockaddr, flags=0):
        return await self._loop.run_in_executor(self._threads(), socket.getnameinfo, sockaddr, flags)


def _charset(charset: str | None) -> str:
    """The reply's text encoding as ``httpx`` chose it: the Content-Type's charset if Python knows it, else UTF-8."""
    if charset:
        try:
            return codecs.lookup(charset).name
        except LookupError:
            pass
    return "utf-8"


class HttpUpstream(HttpEndpoint):
    """Any OpenAI-compatible ``/chat/completions`` endpoint (the judge)."""

    what = "judge"

    def scope(self, cell: Cell) -> str:
        """The judge's identity (normalised base URL and model id): part of every cache key."""

        return judge_identity(self.url, self.model)

    async def complete(self, cell: Cell, body: dict) -> dict:
        # a 200 with a broken body is not a transport fault, so not retried; a Responses API request
        # goes to the judge's Responses API, as the vendor sent it
        return await self._post(cell, RESPONSES if is_responses(body) else "chat/completions", body)


ATTEMPT: contextvars.ContextVar[tuple[int, int]] = contextvars.ContextVar("harness_upstream_attempt",
                                                                          default=(0, 1))
"""(call number, 1-based attempt) of the upstream call in progress, set by :func:`call_with_retries`;
the call number is unique in the process. ``harness.judge.faults`` reads it, so injected faults depend on
the attempt, not on timing."""
OWN_TIME: contextvars.ContextVar[list | None] = contextvars.ContextVar("harness_upstream_own_time", default=None)
"""Set by :func:`call_with_retries` to a list per attempt: an upstream that computes in this process (the
embedded embedding model) appends its compute time (ms), which is then the attempt's time in the judge
instead of its wall time (its wait for a thread and for the model's lock is queueing)."""
_CALL_NUMBERS = itertools.count(1)
CALL_NUMBERS = _CALL_NUMBERS
"""Call numbers unique in the process (chat and embedding calls alike)."""


@dataclass
class Attempts:
    """What :func:`call_with_retries` did."""

    response: dict | None = None
    attempts: int = 0
    error: UpstreamError | None = None
    judge_ms: float = 0.0
    """Time in the judge: from each attempt leaving the gateway to its reply (or failure), summed over the
    attempts; the waits in the pace and the backoff between attempts are left out."""


PACED_429_MAX = 100
"""Under a pace, 429s do not use up the call's attempts (the pace waits them out); at most this many per call."""


async def call_with_retries(upstream, cell: Cell, body: dict, policy: RetryPolicy, *, pace=None,
                            left_s: float | None = None, send=None) -> Attempts:
    """Call the upstream until a response (any 200, handed on as it came), a non-retryable error, or
    ``max_attempts``; only transport faults (timeouts, connection errors, 429, 5xx) are retried.
    ``send``: the upstream's method that answers (``upstream.complete`` unless given; an embedding
    upstream's ``embed``).

    ``pace`` (:class:`harness.judge.pace.Pace`): every attempt waits for its room in the judge's pace first;
    a 429 slows the pace (and does not use up an attempt); an attempt that could not be sent within
    ``left_s`` (the cell's budget left) ends the call with a 504, the cell's error, resumable."""
    out = Attempts()
    call_no = next(_CALL_NUMBERS)
    attempt, throttles = 0, 0
    deadline = pace.clock() + left_s if pace is not None and left_s is not None else None
    PACE.set(pace)
    cost = estimate_tokens(body) if pace is not None else 0
    while attempt < policy.max_attempts:
        attempt += 1
        out.attempts = attempt + throttles
        ATTEMPT.set((call_no, attempt + throttles))
        ticket = None
        if pace is not None:
            try:
                ticket = await pace.acquire(cost, deadline)
            except PaceTimeout as e:
                out.error = UpstreamError(f"the judge's pace (--judge-rpm/--judge-tpm) could not send this call "
                                          f"within the cell's time budget (--cell-timeout): {e.args[0]:.1f}s to wait",
                                          status=504, retryable=False)
                return out
        own: list[float] = []
        OWN_TIME.set(own)
        sent = time.perf_counter()
        try:
            out.response = await asyncio.wait_for((send or upstream.complete)(cell, body), timeout=policy.timeout_s)
            out.error = None
            if ticket is not None:
                pace.settle(ticket, _used_tokens(out.response))
            return out
        except asyncio.TimeoutError:
            out.error = UpstreamError(f"judge call timed out after {policy.timeout_s:g}s", status=504)
        except UpstreamError as e:
            out.error = e
            if ticket is not None and e.status == 429:
                pace.finish(ticket, 0)   # refused: a request of the window, no tokens billed
            if not e.retryable:
                return out
        except Exception as e:  # noqa: BLE001 - an upstream bug is this call's error, kept in the ledger
            msg = redact.cut(" ".join(str(e).split()), 200)
            out.error = UpstreamError(f"judge upstream failed: {type(e).__name__}: {msg}", status=500,
                                      retryable=False)
            return out
        finally:
            out.judge_ms += sum(own) if own else (time.perf_counter() - sent) * 1000.0
            if ticket is not None:   # failed or cancelled (the cell's budget): it still counts, as estimated
                pace.finish(ticket)
        if pace is not None and out.error.status == 429 and throttles < PACED_429_MAX:
            pace.throttled(out.error.retry_after)   # the pace waits it out, for every call alike
            throttles += 1
            attempt -= 1
            continue
        if attempt < policy.max_attempts:
            await asyncio.sleep(policy.delay(attempt, out.error.retry_after))
    return out


def _used_tokens(reply) -> int | None:
    """Prompt plus completion tokens of a reply's ``usage`` (chat or Responses API), None without one."""
    usage = reply.get("usage") if isinstance(reply, dict) else None
    if not isinstance(usage, dict):
        return None
    total = usage.get("total_tokens")
    if isinstance(total, int):
        return total
    parts = [usage.get(k) for k in ("prompt_tokens", "completion_tokens", "input_tokens", "output_tokens")]
    parts = [p for p in parts if isinstance(p, int)]
    return sum(parts) if parts else None
