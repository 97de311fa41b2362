"""The judge gateway: an OpenAI-compatible endpoint that every metric calls.

Each cell gets its own base URL, ``http://127.0.0.1:PORT/cell/<run>/<case>/<metric>/v1``, so every
call is attributed to its case and metric. The gateway forwards to the upstream judge (reference or
HTTP) through the cache and the harness's retry policy (transport faults only: a judge's reply is
handed on as it came, its fit to the requested format recorded as an observation), and keeps a
ledger per cell. One plain async function answers every request of every endpoint, :meth:`Gateway.handle`:
what differs by endpoint (the request's check, its cache key, its step label, how its reply's usage and fit
are read, which upstream serves it) is one entry of the route table :data:`ROUTES`; the cell's time budget,
fault injection, retries, the pace, the cache and the ledger are the same for all. It is reached two ways:

- in-process (a run): :meth:`Gateway.attach` binds the gateway to the runner's event loop and the
  vendors' clients carry :class:`harness.judge.transport.GatewayTransport`, so a judge call is a function
  call, no socket; synchronous vendor code (TruLens, from worker threads) and async vendor code
  (Ragas, DeepEval) both use it;
- over loopback HTTP (``harness judge serve``, and wherever a real URL is needed):
  :meth:`Gateway.start` serves aiohttp routes on its own event loop in a daemon thread. It binds
  127.0.0.1 only and never logs a key.

Routes: chat completions, the Responses API (``/v1/responses``: forwarded as the vendor sent it, the
judge's answer handed back as it came, a chat-only server's 404 or 400 included, so the vendor's own
probing and fallbacks decide; :mod:`harness.judge.responses_api`), embeddings (:mod:`harness.judge.embeddings`)
and models. Vendors that take a base URL and no client reach it through the loopback face
(:mod:`harness.judge.loopback`). In batch mode
(``--judge-batch``) the upstream is a :class:`harness.judge.batch.BatchUpstream`: a call the cache cannot answer
waits for the provider's batch that answers it; the reference judge's server also serves the files and
batches routes.

The standalone reference judge (``harness judge serve``) is the same server with the reference
upstream; it also accepts ``POST /v1/<endpoint>`` attributed by the ``X-Harness-Cell`` header, which is how a run pointed at it through ``--judge-url`` names its cells.
"""
from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import quote, unquote

from harness.cases.load import load_cases
from harness.core.records import Ledger
from harness.judge import embeddings as embed
from harness.judge import template
from harness.judge.accounting import EMBEDDINGS_STEP, add_call, usage_of
from harness.judge.batch import mark
from harness.judge.budget import CellBudgets
from harness.judge.cache import MODES, JudgeCache, is_sampled, request_key
from harness.judge.replies import reply_fit
from harness.judge.responses_api import ROUTE as RESPONSES
from harness.judge.responses_api import chat_view, is_refusal, is_responses
from harness.judge.upstream import Cell, ReferenceUpstream, RetryPolicy, UpstreamError, call_with_retries

CLOSED_KEPT = 10_000
"""How many finished cells the gateway remembers in order to refuse a late request of one (a vendor's
background task outliving its cell comes within seconds, not ten thousand cells later)."""


class ReplayMiss(Exception):
    pass


REFUSED = "x_harness_refused"
"""The cache entry of a judge's refusal of the Responses API (``{REFUSED: {status, error, body}}``): the
one error the cache keeps, because it is what the server is (chat-only), not a fault, and a replayed run
must see it to take the same fallback as the recorded one."""


@dataclass
class CallRecord:
    """One request as the ledger keeps it (no prompt text, no headers)."""

    cell: Cell
    seq: int
    started: float
    latency_ms: float
    ok: bool
    cached: bool
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    key: str
    step: str
    error: str | None = None
    usage: bool = True
    """The reply carried a readable ``usage`` (False: its tokens are unknown)."""
    reply_fit: str | None = None
    """Did the reply fit the requested ``response_format``: ``fits``, ``not asked`` or the misfit (an
    observation; the reply is handed on as it came); None when there was no reply."""
    prompt_hash: str = ""
    """The hash of the prompt template sent, case text taken out (:func:`harness.judge.template.template_hash`)."""
    reply_hash: str = ""
    """The hash of the judge's reply text ("" without a reply: :func:`harness.judge.template.reply_hash`)."""
    judge: str = ""
    """The judge's fingerprint: the reply's model, and its system_fingerprint where the server gives one."""
    sampling: str = ""
    """The sampling settings the request asked for (:func:`harness.judge.template.sampling`)."""
    judge_ms: float = 0.0
    """Time in the judge (:attr:`harness.judge.upstream.Attempts.judge_ms`): the request's attempts from leaving
    the gateway to the reply, with the pace's waits and the backoff left out; 0 for a cache hit (``cached``),
    which the judge never saw. For the embedded embedding model, its compute time."""
    refused: bool = False
    """The judge refused a Responses API request (a chat-only server: 404, or 400 "not supported":
    :func:`harness.judge.responses_api.is_refusal`). The refusal went back to the vendor as it came, and the vendor's own fallback decides
    (stock TruLens falls back to chat completions); it is a call, not a judge failure."""
    batch: str = ""
    """The id of the provider's batch that answered the call (batch mode, :mod:`harness.judge.batch`); "" for none."""


@dataclass
class _CellBook:
    ledger: Ledger = field(default_factory=Ledger)
    calls: list = field(default_factory=list)
    repeats: dict = field(default_factory=lambda: defaultdict(int))
    pieces: list | None = None
    """The cell's case-specific strings (its case's texts, then what the judge said in the cell), taken
    out of its prompts before the template hash (:mod:`harness.judge.template`)."""


def step_hint(body: dict) -> str:
    """A short label for the request, for the ledger: the json_schema name, else the start of the
    last user message (a Responses API request read as the chat request it amounts to)."""
    if is_responses(body):
        body = chat_view(body)
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        name = (rf.get("json_schema") or {}).get("name")
        if name:
            return str(name)[:60]
    for m in reversed(body.get("messages") or []):
        c = m.get("content")
        if isinstance(c, list):
            c = "".join(p.get("text", "") for p in c if isinstance(p, dict))
        if c:
            return " ".join(str(c).split())[:60]
    return ""


CHAT = "chat/completions"


def _chat_problem(body) -> str | None:
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return "request body needs a 'messages' list"
    return None


def _responses_problem(body) -> str | None:
    if not is_responses(body) or not isinstance(body.get("input"), (str, list)):
        return "request body needs an 'input' (a string or a list of messages)"
    return None


def _embedded_reply_problem(body: dict, resp: dict) -> str | None:
    problem = embed.response_problem(resp, len(embed.inputs_of(body)))
    return None if problem is None else f"embedding reply unusable: {problem}"


@dataclass(frozen=True)
class Route:
    """What one endpoint of the gateway does its own way. Everything else is the one request path
    (:meth:`Gateway.handle`): the finished-cell check, the cache, the cell's time budget, the retries and
    fault injection (:func:`harness.judge.upstream.call_with_retries`), the pace, the batch, the ledger."""

    name: str
    """The path after ``/v1/``."""
    problem: Callable[[object], str | None]
    """Why a parsed body is not a request of this endpoint (answered 400), None when it is one."""
    key: Callable[[dict, str, int | str], str]
    """The cache key of a request: (body, the upstream's scope, the repeat index)."""
    step: Callable[[dict], str]
    """The ledger's label of a request."""
    usage: Callable[[dict | None], tuple[int, int, bool]]
    """(prompt tokens, completion tokens, usage readable) of a reply (None: the call failed)."""
    fit: Callable[[dict, dict | None], str | None]
    """Did the reply fit what the request asked (:attr:`CallRecord.reply_fit`)."""
    judge: bool = True
    """Served by the judge (``Gateway.upstream``: paced, batched, a repeat keeps its own answers); False: by
    the embedding endpoint (``Gateway.embeddings``, its ``embed``)."""
    reply_problem: Callable[[dict, dict], str | None] | None = None
    """Why a 200 reply is unusable (the call's error, 502, not retried and never cached), None when it is not."""
    refusals: bool = False
    """The judge may refuse the endpoint itself (:func:`harness.judge.responses_api.is_refusal`): the refusal
    is cached and replayed, and recorded as a call, not a failure."""


ROUTES: dict[str, Route] = {r.name: r for r in (
    Route(CHAT, _chat_problem, request_key, step_hint, usage_of, reply_fit),
    Route(RESPONSES, _responses_problem, request_key, step_hint, usage_of, reply_fit, refusals=True),
    Route("embeddings", embed.problem, lambda body, scope, repeat: embed.embedding_key(body, scope),
          lambda body: EMBEDDINGS_STEP, embed.usage, lambda body, resp: "not asked", judge=False,
          reply_problem=_embedded_reply_problem),
)}
"""The gateway's judge endpoints (``POST /v1/<name>``), each answered by :meth:`Gateway.handle`."""


class Gateway:
    """Start with :meth:`start`; get cell URLs with :meth:`cell_url`; collect ledgers with :meth:`take`."""

    def __init__(self, upstream, *, cache: JudgeCache | None = None, mode: str = "live",
                 policy: RetryPolicy | None = None, host: str = "127.0.0.1", port: int = 0,
                 keep_ledger: bool = True, embeddings=None, cases=None, pace=None, batch=None):
        if mode not in MODES:
            raise ValueError(f"unknown cache mode {mode!r}; known: {', '.join(MODES)}")
        if mode != "live" and cache is None:
            raise ValueError(f"cache mode {mode!r} needs a cache")
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"the gateway binds loopback only, not {host!r}")
        self.upstream, self.cache, self.mode = upstream, cache, mode
        self.policy = policy or RetryPolicy()
        self.host, self.port = host, port
        self.keep_ledger = keep_ledger
        """False for a long-lived server (``harness judge serve``): no per-cell ledger is kept, so
        memory does not grow with every request."""
        self.embeddings = embeddings
        """Upstream of ``/v1/embeddings`` (``harness.judge.embeddings``); None: the embedded model, made on first use."""
        self.cases = cases if cases is not None else {}
        """(run, case id) -> Case of the cells in flight, for the prompt template hash (the runner's worker
        fills it; a case missing here only leaves its text in the hash)."""
        self.pace = pace
        """The judge's pace (:class:`harness.judge.pace.Pace`, ``--judge-rpm``/``--judge-tpm``), shared by
        every metric's calls through this gateway; None: unpaced."""
        self.batched = batch is not None
        """Batch mode: the judge is reached through its batch API (``batch``: the
        :class:`harness.judge.batch.BatchUpstream` inside ``upstream``, told when a round is complete)."""
        if batch is not None:
            batch.quiet = self.batch_quiet
        self._books: dict[Cell, _CellBook] = defaultdict(_CellBook)
        self.budgets = CellBudgets()
        """Each open cell's time budget (``harness.judge.budget``): the runner opens it, :meth:`take` closes it."""
        self._inflight: dict[Cell, int] = defaultdict(int)
        self._closed: dict[Cell, None] = {}
        """The most recently closed cells, oldest first (at most :data:`CLOSED_KEPT`)."""
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner = None

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> "Gateway":
        ready = threading.Event()
        err: list[BaseException] = []

        def main():
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            try:
                self._loop.run_until_complete(self._serve())
            except BaseException as e:  # noqa: BLE001 - reported to the starter
                err.append(e)
                ready.set()
                return
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=main, name="judge-gateway", daemon=True)
        self._thread.start()
        ready.wait(30)
        if err:
            raise err[0]
        return self

    async def _serve(self):
        from aiohttp import web  # noqa: PLC0415 - lazy: aiohttp costs ~0.2 s to import

        app = web.Application(client_max_size=64 * 1024 * 1024)
        for name in ROUTES:
            app.router.add_post(f"/cell/{{run}}/{{case}}/{{metric}}/v1/{name}", self._http(name))
            app.router.add_post(f"/v1/{name}", self._http(name))
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/cell/{run}/{case}/{metric}/v1/models", self._models)
        if callable(getattr(self.upstream, "batch_service", None)):   # the reference judge's batch API
            app.router.add_route("*", "/v1/files{rest:.*}", self._batch_api)
            app.router.add_route("*", "/v1/batches{rest:.*}", self._batch_api)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]

    def attach(self) -> "Gateway":
        """Serve in-process only, in the running event loop: no thread, no socket. Requests come in
        through :class:`harness.judge.transport.GatewayTransport` (a run's mode); end with :meth:`aclose`."""
        self._loop = asyncio.get_running_loop()
        return self

    async def aclose(self) -> None:
        """End an attached gateway (closes the upstream's connections)."""
        try:
            await self.upstream.aclose()
            if self.embeddings is not None:
                await self.embeddings.aclose()
        finally:
            self._loop = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop the gateway answers in (its own thread's after :meth:`start`, the caller's
        after :meth:`attach`); None when it is not running."""
        return self._loop

    def stop(self) -> None:
        if self._loop is None:
            return

        async def shutdown():
            await self.upstream.aclose()
            if self.embeddings is not None:
                await self.embeddings.aclose()
            await self._runner.cleanup()

        fut = asyncio.run_coroutine_threadsafe(shutdown(), self._loop)
        try:
            fut.result(10)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    def cell_url(self, run: str, case: str, metric: str) -> str:
        parts = "/".join(quote(p, safe="") for p in (run, case, metric))
        return f"{self.base}/cell/{parts}/v1"

    # --- ledger ------------------------------------------------------------------------------

    def take(self, run: str, case: str, metric: str) -> tuple[Ledger, list[CallRecord]]:
        """Remove and return a cell's ledger and call records (the runner stores them with the cell).

        The cell is then closed: a late request for it (a vendor's background task outliving the cell)
        is refused without reaching the judge, so no call is made that no ledger records."""
        self.budgets.close(Cell(run, case, metric))
        with self._lock:
            self._closed[Cell(run, case, metric)] = None
            if len(self._closed) > CLOSED_KEPT:        # memory stays flat however many cells a run has
                del self._closed[next(iter(self._closed))]
            book = self._books.pop(Cell(run, case, metric), None)
        forget = getattr(self.upstream, "forget", None)   # the upstream's own per-cell state (faults)
        if callable(forget):
            forget(Cell(run, case, metric))
        return (book.ledger, book.calls) if book else (Ledger(), [])

    def inflight(self, run: str, case: str, metric: str) -> int:
        """Requests of a cell the gateway is still answering."""
        with self._lock:
            return self._inflight.get(Cell(run, case, metric), 0)

    async def settle(self, run: str, case: str, metric: str, limit_s: float) -> None:
        """Wait, in the caller's event loop, until none of a cell's requests is in flight (at most
        ``limit_s``). A vendor can end a cell while a sibling call is still being answered (DeepEval sends
        two steps at once and raises on the first failure); that call belongs in the cell's ledger, so the
        runner settles before :meth:`take`."""
        deadline = time.monotonic() + limit_s
        while self.inflight(run, case, metric) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    def peek(self, run: str, case: str, metric: str) -> Ledger:
        with self._lock:
            book = self._books.get(Cell(run, case, metric))
            return book.ledger if book else Ledger()

    def _record(self, cell: Cell, rec: CallRecord) -> None:
        if not self.keep_ledger:
            return
        with self._lock:
            book = self._books[cell]
            book.ledger = add_call(book.ledger, rec)
            book.calls.append(rec)

    def observe(self, cell: Cell, route: str, body: dict, resp: dict | None) -> dict:
        """The drift sentinel's fields of a call record (:mod:`harness.judge.template`): the prompt template
        hash, the reply hash and the judge fingerprint. What the judge says joins the cell's case-specific
        strings, so a later step quoting it hashes to the same template whatever it said."""
        if not self.keep_ledger:
            return {}
        with self._lock:
            book = self._books[cell]
            if book.pieces is None:
                book.pieces = template.case_pieces(self.cases.get((cell.run, cell.case)))
            pieces = book.pieces
        out = {"prompt_hash": template.template_hash(route, body, pieces),
               "reply_hash": template.reply_hash(route, resp), "judge": template.judge_fingerprint(resp),
               "sampling": template.sampling(route, body)}
        more = template.said(route, resp)
        if more:
            with self._lock:
                book.pieces = template.merge(book.pieces, more)
        return out

    def _repeat_index(self, cell: Cell, key: str) -> int:
        with self._lock:
            book = self._books[cell]
            n = book.repeats[key]
            book.repeats[key] = n + 1
            return n

    # --- handlers ----------------------------------------------------------------------------

    async def _models(self, request):
        return _web(await self.models_reply(None, b""))

    async def models_reply(self, cell: Cell | None, body: bytes) -> tuple[int, dict]:
        """``GET /v1/models``: the one model the gateway serves."""
        return 200, {"object": "list", "data": [{"id": self.upstream.model, "object": "model"}]}

    async def _batch_api(self, request):
        """The upstream's files and batches API (``harness judge serve``: :class:`harness.judge.batch.BatchService`)."""
        from aiohttp import web  # noqa: PLC0415 - lazy: aiohttp costs ~0.2 s to import

        status, out = self.upstream.batch_service().handle(request.method, request.path, await request.read(),
                                                           request.headers.get("Content-Type", ""))
        if isinstance(out, (bytes, bytearray)):
            return web.Response(body=out, status=status, content_type="application/jsonl")
        return web.json_response(out, status=status)

    def batch_quiet(self, waiting: int) -> bool:
        """Batch mode: is every open cell waiting on the judge, and every request in flight (``waiting`` of
        them) waiting on a batch? Then the round is complete (:class:`harness.judge.batch.BatchUpstream`)."""
        with self._lock:
            busy, inflight = set(self._inflight), sum(self._inflight.values())
        with self.budgets._lock:
            opened = set(self.budgets._deadlines)
        return 0 < waiting and inflight <= waiting and opened <= busy

    def _http(self, route: str):
        """The aiohttp handler of ``POST /v1/<route>``: the cell from the path, else the ``X-Harness-Cell`` header."""

        async def serve(request):
            mi = request.match_info
            cell = Cell(mi["run"], mi["case"], mi["metric"]) if "run" in mi else \
                cell_of_header(request.headers.get("X-Harness-Cell", ""))
            if cell is None:
                return _web(_error(400, HEADER_NEEDED))
            return _web(await self.handle(cell, await request.read(), route))
        return serve

    async def handle(self, cell: Cell, body: bytes | dict, route: str = CHAT) -> tuple[int, dict]:
        """Answer one request of ``cell`` to ``POST /v1/<route>`` (chat completions unless named; a name of
        :data:`ROUTES`): ``(HTTP status, JSON body)``.

        The one request path: the aiohttp routes and the in-process transport (:mod:`harness.judge.transport`)
        both call it, in the gateway's event loop, for every endpoint. ``body`` is the raw request body
        (parsed here) or an already parsed dict."""
        spec = ROUTES.get(route)
        if spec is None:
            return _error(404, f"the harness gateway serves {', '.join(ROUTES)} and models, not {route!r}")
        if isinstance(body, (bytes, bytearray, str)):
            try:
                body = json.loads(body)
            except (ValueError, UnicodeDecodeError):
                return _error(400, "request body is not JSON")
        with self._lock:
            if cell in self._closed:
                return _error(409, f"cell {cell.label} is finished; no more judge calls for it")
            self._inflight[cell] += 1
        try:
            return await self._answer(cell, body, spec)
        finally:
            with self._lock:
                self._inflight[cell] -= 1
                if not self._inflight[cell]:
                    del self._inflight[cell]

    def _upstream(self, route: Route):
        """The upstream that serves ``route``: the judge, or the embedding endpoint (the embedded model
        unless the run named one, made on first use)."""
        if route.judge:
            return self.upstream
        if self.embeddings is None:
            self.embeddings = embed.LocalEmbeddings()
        return self.embeddings

    async def _answer(self, cell: Cell, body, route: Route):
        started = time.time()
        t0 = time.perf_counter()
        problem = route.problem(body)
        if problem is not None:
            return _error(400, problem)
        if body.get("stream"):
            return _error(400, "streaming is not supported by the harness gateway")
        up = self._upstream(route)
        try:
            scope = up.scope(cell) if route.judge else up.scope()
        except UpstreamError as e:
            return _error(e.status, str(e))
        if not route.judge:
            body = {**body, "model": up.model}   # the configured embedding model, whatever the adapter named
        repeat = 0
        if route.judge:
            if is_sampled(body) and self.mode != "live":   # the repeat index only matters to the cache
                repeat = self._repeat_index(cell, route.key(body, scope, 0))
            if cell.repeat:   # --repeats: a repeat never reads another repeat's answers, temperature 0 included
                repeat = f"r{cell.repeat}.{repeat}"
        key = route.key(body, scope, repeat)
        step = route.step(body)
        resp, cached, attempts, error, status, answered, batch, judge_ms = None, False, 0, None, 200, None, None, 0.0
        if self.mode in ("record", "replay"):
            resp = self.cache.get(key)
            cached = resp is not None
        if cached and REFUSED in resp:   # a recorded refusal of the endpoint, answered again as it came
            error, status, answered, resp = resp[REFUSED]["error"], resp[REFUSED]["status"], resp[REFUSED]["body"], None
        elif resp is None and self.mode == "replay":
            error, status = (f"replay miss: no cached response for cell {cell.label} "
                             f"(request {key[:12]}, step {step!r}); rerun with --cache record"), 400
        elif resp is None:
            batch = mark() if self.batched and route.judge else None
            res = await self.budgets.call(cell, call_with_retries(
                up, cell, body, self.policy, pace=self.pace if route.judge else None,
                left_s=self.budgets.remaining(cell), send=None if route.judge else up.embed))
            attempts, judge_ms = res.attempts, res.judge_ms
            unusable = route.reply_problem(body, res.response) \
                if route.reply_problem and res.response is not None else None
            if unusable is not None:
                error, status = unusable, 502
            elif res.response is not None:
                resp = res.response
                if self.mode == "record" and "x_harness_injected_fault" not in resp:  # never cache a fault
                    self.cache.put(key, body, resp)
            else:
                error, status, answered = str(res.error), res.error.status, res.error.body
                if self.mode == "record" and route.refusals and is_refusal(status, error):
                    self.cache.put(key, body, {REFUSED: {"status": status, "error": error, "body": answered}})
        refused = route.refusals and error is not None and is_refusal(status, error)
        pt, ct, has_usage = route.usage(resp)
        self._record(cell, CallRecord(
            cell=cell, seq=0, started=started, latency_ms=(time.perf_counter() - t0) * 1000.0,
            ok=error is None, cached=cached, attempts=max(attempts, 1 if not cached else 0), judge_ms=judge_ms,
            prompt_tokens=pt, completion_tokens=ct, key=key, step=step, error=error,
            usage=has_usage, reply_fit=route.fit(body, resp) if error is None else None, refused=refused,
            batch=batch[-1] if batch else "",
            **self.observe(cell, route.name, body, resp)))
        if error is not None:   # the judge's own error reply, as it came, when it gave one
            return (status, answered) if answered is not None else _error(status, error)
        return 200, resp


HEADER_NEEDED = ("this endpoint needs the X-Harness-Cell header (run/case/metric, URL-quoted); "
                 "harness runs send it, or use /cell/<run>/<case>/<metric>/v1")


def cell_of_header(raw: str) -> Cell | None:
    """The cell named by an ``X-Harness-Cell`` value, None when it is not ``run/case/metric``.

    >>> cell_of_header("r/case%2F1/m"), cell_of_header("r/c")
    (Cell(run='r', case='case/1', metric='m'), None)
    """
    parts = raw.split("/")
    return Cell(*(unquote(p) for p in parts)) if len(parts) == 3 else None


def _error(status: int, message: str) -> tuple[int, dict]:
    kind = "invalid_request_error" if status < 500 else "upstream_error"
    return status, {"error": {"message": message, "type": kind, "code": status}}


def _web(reply: tuple[int, dict]):
    from aiohttp import web  # noqa: PLC0415 - lazy: aiohttp costs ~0.2 s to import

    return web.json_response(reply[1], status=reply[0])


def serve_reference(cases_path: str, port: int, latency_ms: float = 0.0) -> None:
    """``harness judge serve``: the reference judge as a standalone OpenAI-compatible server.

    Requests are attributed by the ``X-Harness-Cell`` header (``run/case/metric``); any run id is
    accepted, and cases come from ``cases_path``.
    """

    cases = load_cases(cases_path)

    class AnyRun(dict):
        def __missing__(self, key):
            return cases.by_id(key[1])

    up = ReferenceUpstream(AnyRun(), latency_ms=latency_ms)
    gw = Gateway(up, port=port, keep_ledger=False).start()
    print(json.dumps({"url": f"{gw.base}/v1", "model": up.model, "cases": len(cases)}), flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        gw.stop()
