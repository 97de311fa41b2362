"""Batch mode (``harness run --judge-batch``): every vendor's judge calls of a round go through the
provider's batch API (OpenAI's files and batches endpoints), at the provider's batch price.

The vendors see nothing of it. Their calls reach the gateway as usual; a call that the judge cache
cannot answer goes to :class:`BatchUpstream` instead of straight to the judge. It joins the open batch
and waits. The open batch is sent when one of these comes first:

- every open cell of the gateway is waiting on the judge and every request in flight is waiting on a
  batch (a *round*: nothing else will come until the judge answers);
- ``max_requests`` requests have gathered (OpenAI takes at most 50,000 per batch);
- ``window_s`` seconds have passed since the batch's first request.

Sending a batch: the requests are written as a batch input file, one JSON line each
(``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``, the body exactly as the
vendor sent it; Responses API requests go in a batch of their own, ``url`` ``/v1/responses``),
uploaded (``POST /v1/files``, ``purpose=batch``), and the batch created (``POST /v1/batches``,
``completion_window`` 24h). The batch id and each ``custom_id``'s cell and request key are then written
to the run store (tables ``judge_batches`` and ``judge_batch_requests``) before any waiting, and the
batch is polled (``GET /v1/batches/{id}``, every ``poll_s`` seconds) until it ends. Its output file
(``GET /v1/files/{id}/content``) gives each request's reply, handed back to the waiting call as the
judge gave it (status and body).

Resuming: a run killed while a batch is in flight leaves the batch's rows in the store. The resumed
run's cells send the same requests again; a request whose cell and request key match a waiting row is
attached to that batch (polled again, never sent again). A batch the provider no longer knows
(HTTP 404: the embedded reference judge's batches end with its process) has its requests sent afresh.

Failures are the cell's, never a score: a request's error line in the output, a reply missing from it,
or a batch that ends ``failed``, ``expired`` or ``cancelled`` is that call's error (in the cell's ledger;
the cell is ERROR, and a rerun with the same ``--run-id`` computes it again, in a new batch). A batch's
rows are marked ended once its outcome is handed out, so a rerun never re-attaches to it.

Money: the run's price table is read at the batch price (:func:`harness.judge.accounting.batch_prices`:
a model's ``batch_input``/``batch_output`` where the table gives them, else the list price times
``--batch-price-factor``, 0.5 by default); each call record says which batch answered it (``batch``).

The provider's side is here too (:class:`BatchService`): an in-memory files and batches API over any
function that answers one request. The reference judge (in-process, and ``harness judge serve``) and the
test judges serve it, so batch mode runs and is tested offline.
"""
from __future__ import annotations

import asyncio
import contextvars
import email.parser
import email.policy
import itertools
import json
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from urllib.parse import unquote

from harness.core import redact
from harness.judge.cache import request_key
from harness.judge.cell import Cell, UpstreamError
from harness.judge.responses_api import is_responses

CHAT_URL = "/v1/chat/completions"
RESPONSES_URL = "/v1/responses"
EMBEDDINGS_URL = "/v1/embeddings"
URLS = (CHAT_URL, RESPONSES_URL, EMBEDDINGS_URL)
TERMINAL = ("completed", "failed", "expired", "cancelled")
"""A batch's statuses once it has ended (OpenAI's)."""
COMPLETION_WINDOW = "24h"
OPENAI_MAX_REQUESTS = 50_000
"""OpenAI's limit on the requests of one batch."""
POLL_ERRORS_MAX = 20
"""Polls in a row that may fail (the provider unreachable) before the batch's calls become errors."""


@dataclass(frozen=True)
class BatchConfig:
    """Batch mode's settings (``--judge-batch`` and its options; ``RunOptions.judge_batch``)."""

    window_s: float = 5.0
    """Send the open batch at the latest this long after its first request (``--judge-batch-window``)."""
    max_requests: int = OPENAI_MAX_REQUESTS
    """Send the open batch once this many requests have gathered (``--judge-batch-size``)."""
    poll_s: float = 30.0
    """Seconds between two polls of a batch in flight (``--judge-batch-poll``)."""
    wait_s: float = 25 * 3600.0
    """Longest wait for a batch (the 24 h completion window and an hour): the calls' and cells' time
    budgets grow by this much in batch mode."""
    price_factor: float = 0.5
    """The batch price as a share of the list price, for models the price table gives no batch price for."""

    def __post_init__(self):
        for name in ("window_s", "poll_s", "wait_s"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0 <= v < float("inf")):
                raise ValueError(f"judge batch {name} must be a number of seconds >= 0, not {v!r}")
        if not isinstance(self.max_requests, int) or not 1 <= self.max_requests <= OPENAI_MAX_REQUESTS:
            raise ValueError(f"judge batch size must be 1 to {OPENAI_MAX_REQUESTS:,}, not {self.max_requests!r}")
        if not (isinstance(self.price_factor, (int, float)) and 0 <= self.price_factor <= 1):
            raise ValueError(f"batch price factor must be between 0 and 1, not {self.price_factor!r}")

    def as_spec(self) -> dict:
        """As the run spec keeps it.

        >>> BatchConfig().as_spec()["price_factor"]
        0.5
        """
        return {"window_s": self.window_s, "max_requests": self.max_requests, "poll_s": self.poll_s,
                "wait_s": self.wait_s, "price_factor": self.price_factor}


# --- the batch input and output files ---------------------------------------------------------

def custom_id(cell: Cell, n: int) -> str:
    """A request's ``custom_id``: a number unique in the process, then its cell (the reference judge
    answers from the cell's case).

    >>> custom_id(Cell("r", "case/1", "inhouse.span"), 7)
    'h7|r/case%2F1/inhouse.span'
    >>> cell_of_custom_id(custom_id(Cell("r", "case/1", "inhouse.span"), 7))
    Cell(run='r', case='case/1', metric='inhouse.span')
    """
    return f"h{n}|{cell.header()}"


def cell_of_custom_id(cid: str) -> Cell | None:
    """The cell a ``custom_id`` of :func:`custom_id` names (None for any other)."""
    _, sep, rest = str(cid).partition("|")
    parts = rest.split("/")
    return Cell(*(unquote(p) for p in parts)) if sep and len(parts) == 3 else None


def url_of(body: dict) -> str:
    """The batch line's ``url`` for a judge request body.

    >>> url_of({"messages": []}), url_of({"input": "hi"})
    ('/v1/chat/completions', '/v1/responses')
    """
    return RESPONSES_URL if is_responses(body) else CHAT_URL


def input_file(lines) -> bytes:
    """A batch input file (JSONL) of ``(custom_id, url, body)``, each body as it came.

    >>> input_file([("a", CHAT_URL, {"messages": []})])
    b'{"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": {"messages": []}}\\n'
    """
    return b"".join(json.dumps({"custom_id": cid, "method": "POST", "url": url, "body": body},
                               ensure_ascii=False).encode() + b"\n" for cid, url, body in lines)


def read_lines(data: bytes, where: str) -> list[dict]:
    """The JSON objects of a JSONL file (a line that is not a JSON object raises ValueError naming it)."""
    out = []
    for i, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            obj = None
        if not isinstance(obj, dict):
            raise ValueError(f"{where} line {i} is not a JSON object")
        out.append(obj)
    return out


def outcome_of(line: dict, batch_id: str):
    """One output (or error file) line as the waiting call gets it: the reply body (a dict, status 200),
    or an :class:`UpstreamError` (the judge's error status and body as it gave them; an error line's
    code and message)."""
    resp, err = line.get("response"), line.get("error")
    if isinstance(resp, dict) and isinstance(resp.get("status_code"), int):
        status, body = resp["status_code"], resp.get("body")
        if status == 200 and isinstance(body, dict):
            return body
        text = redact.cut(json.dumps(body, ensure_ascii=False) if body is not None else "", 240)
        return UpstreamError(f"judge HTTP {status} in batch {batch_id}: {text}", status=status, retryable=False,
                             body=body if 400 <= status < 500 and isinstance(body, dict) else None)
    if isinstance(err, dict):
        what = f"{err.get('code') or 'error'}: {err.get('message') or ''}".strip()
        return UpstreamError(f"batch {batch_id}: the judge's batch gave an error for this request ({redact.cut(what, 240)})",
                             status=502, retryable=False)
    return UpstreamError(f"batch {batch_id}: an output line with neither a response nor an error", status=502,
                         retryable=False)


# --- the provider's side: files and batches, in memory -----------------------------------------

class BatchService:
    """OpenAI's files and batches API over ``answer(custom_id, url, body) -> (status, body)``, in memory
    and thread-safe: the reference judge's and the test judges' batch endpoints.

    A batch is answered when it is first looked at (``GET /v1/batches/{id}``), unless ``hold`` (a
    ``threading.Event``) is given and not set: it then stays ``in_progress``. ``end`` makes every batch end
    with that status instead (``failed``, ``expired``, ``cancelled``); ``error_ids(custom_id)`` true gives
    that request an error line. :meth:`wait_created` and :meth:`wait_retrieved` let a test wait until n
batches exist, or a batch was polled n times (state, not time).
    """

    def __init__(self, answer, *, hold: threading.Event | None = None, end: str | None = None, error_ids=None):
        self.answer, self.hold, self.end, self.error_ids = answer, hold, end, error_ids
        self.files: dict[str, dict] = {}
        self.batches: dict[str, dict] = {}
        self.created = 0
        """Batches created."""
        self.retrieved: dict[str, int] = {}
        """Batch id -> times it was looked at."""
        self._cond = threading.Condition()
        self._ids = itertools.count(1)

    def _id(self, kind: str) -> str:
        return f"{kind}-{secrets.token_hex(6)}{next(self._ids)}"

    def wait_created(self, n: int, timeout_s: float = 600) -> bool:
        """Wait until ``n`` batches have been created (False: not within ``timeout_s``)."""
        with self._cond:
            return self._cond.wait_for(lambda: self.created >= n, timeout_s)

    def wait_retrieved(self, bid: str, n: int, timeout_s: float = 600) -> bool:
        """Wait until batch ``bid`` has been looked at ``n`` times (False: not within ``timeout_s``)."""
        with self._cond:
            return self._cond.wait_for(lambda: self.retrieved.get(bid, 0) >= n, timeout_s)

    # the four calls, each (status, JSON object or bytes)

    def upload(self, data: bytes, purpose: str, filename: str = "batch.jsonl") -> tuple[int, dict]:
        if purpose != "batch":
            return _err(400, f"purpose must be 'batch', not {purpose!r}")
        with self._cond:
            fid = self._id("file")
            self.files[fid] = {"data": bytes(data), "purpose": purpose, "filename": filename}
        return 200, {"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                     "filename": filename, "purpose": purpose}

    def create(self, req) -> tuple[int, dict]:
        if not isinstance(req, dict):
            return _err(400, "body must be a JSON object")
        fid, endpoint = req.get("input_file_id"), req.get("endpoint")
        if req.get("completion_window") != COMPLETION_WINDOW:
            return _err(400, "completion_window must be '24h'")
        if endpoint not in URLS:
            return _err(400, f"endpoint must be one of {', '.join(URLS)}")
        with self._cond:
            f = self.files.get(fid)
            if f is None:
                return _err(404, f"no file {fid!r}")
            try:
                lines = read_lines(f["data"], f"file {fid}")
            except ValueError as e:
                return _err(400, str(e))
            if any(x.get("url") != endpoint or x.get("method") != "POST" for x in lines):
                return _err(400, f"every line must be a POST to {endpoint}")
            bid = self._id("batch")
            self.batches[bid] = {"id": bid, "object": "batch", "endpoint": endpoint, "input_file_id": fid,
                                 "completion_window": COMPLETION_WINDOW, "status": "in_progress",
                                 "output_file_id": None, "error_file_id": None, "created_at": int(time.time()),
                                 "completed_at": None, "metadata": req.get("metadata"),
                                 "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
            self.created += 1
            self._cond.notify_all()
            return 200, dict(self.batches[bid])

    def retrieve(self, bid: str) -> tuple[int, dict]:
        with self._cond:
            b = self.batches.get(bid)
            if b is None:
                return _err(404, f"no batch {bid!r}")
            self.retrieved[bid] = self.retrieved.get(bid, 0) + 1
            self._cond.notify_all()
            if b["status"] == "in_progress" and (self.hold is None or self.hold.is_set()):
                self._run(b)
            return 200, dict(b)

    def content(self, fid: str) -> tuple[int, bytes | dict]:
        with self._cond:
            f = self.files.get(fid)
        return (200, f["data"]) if f is not None else _err(404, f"no file {fid!r}")

    def _run(self, b: dict) -> None:
        if self.end is not None:
            b["status"] = self.end
            return
        out, errs = [], []
        for x in read_lines(self.files[b["input_file_id"]]["data"], "input"):
            cid = x.get("custom_id")
            if self.error_ids is not None and self.error_ids(cid):
                errs.append({"id": self._id("req"), "custom_id": cid, "response": None,
                             "error": {"code": "server_error", "message": "the batch could not answer this request"}})
                continue
            try:
                status, body = self.answer(cid, x.get("url"), x.get("body"))
            except Exception as e:  # noqa: BLE001 - that request's 500, as a server would answer
                status, body = _err(500, f"{type(e).__name__}: {e}")
            out.append({"id": self._id("req"), "custom_id": cid, "error": None,
                        "response": {"status_code": status, "request_id": self._id("req"), "body": body}})
        for name, rows in (("output_file_id", out), ("error_file_id", errs)):
            if rows:
                fid = self._id("file")
                self.files[fid] = {"data": b"".join(json.dumps(r).encode() + b"\n" for r in rows),
                                   "purpose": "batch_output", "filename": f"{name}.jsonl"}
                b[name] = fid
        b["status"], b["completed_at"] = "completed", int(time.time())
        b["request_counts"] = {"total": len(out) + len(errs), "completed": len(out), "failed": len(errs)}

    def handle(self, method: str, path: str, body: bytes, content_type: str = "") -> tuple[int, bytes | dict]:
        """One HTTP request to the files and batches routes (``path`` from ``/v1/``, query ignored)."""
        parts = path.split("?", 1)[0].strip("/").split("/")
        if parts[:1] == ["v1"]:
            parts = parts[1:]
        if method == "POST" and parts == ["files"]:
            try:
                form = parse_multipart(body, content_type)
            except ValueError as e:
                return _err(400, str(e))
            if "file" not in form:
                return _err(400, "a multipart form with a 'file' part is needed")
            return self.upload(form["file"][1], (form.get("purpose") or (None, b""))[1].decode(), form["file"][0] or "")
        if method == "POST" and parts == ["batches"]:
            try:
                return self.create(json.loads(body or b"null"))
            except ValueError:
                return _err(400, "body is not JSON")
        if method == "GET" and len(parts) == 2 and parts[0] == "batches":
            return self.retrieve(parts[1])
        if method == "GET" and len(parts) == 3 and parts[0] == "files" and parts[2] == "content":
            return self.content(parts[1])
        return _err(404, f"no route {method} {path}")


def is_batch_route(path: str) -> bool:
    """Is a request path one of the files and batches routes (``/v1/files...``, ``/v1/batches...``)?

    >>> is_batch_route("/v1/batches/b1"), is_batch_route("/x/v1/files"), is_batch_route("/v1/chat/completions")
    (True, True, False)
    """
    parts = path.split("?", 1)[0].strip("/").split("/")
    return "v1" in parts and parts[parts.index("v1") + 1:][:1] in (["files"], ["batches"])


def _err(status: int, message: str) -> tuple[int, dict]:
    return status, {"error": {"message": message, "type": "invalid_request_error", "code": status}}


def parse_multipart(body: bytes, content_type: str) -> dict[str, tuple[str | None, bytes]]:
    """The parts of a ``multipart/form-data`` body: name -> (filename, bytes).

    >>> ct = "multipart/form-data; boundary=XX"
    >>> b = b'--XX\\r\\nContent-Disposition: form-data; name="purpose"\\r\\n\\r\\nbatch\\r\\n--XX--\\r\\n'
    >>> parse_multipart(b, ct)
    {'purpose': (None, b'batch')}
    """
    if "multipart/form-data" not in (content_type or ""):
        raise ValueError("expected a multipart/form-data body")
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body)
    out = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if name:
            out[name] = (part.get_filename(), part.get_payload(decode=True) or b"")
    return out


# --- the client's side: the provider as the collector reaches it --------------------------------

class LocalProvider:
    """A :class:`BatchService` in this process (the embedded reference judge)."""

    def __init__(self, service: BatchService):
        self.service = service

    async def call(self, method: str, route: str, *, body=None, upload: bytes | None = None):
        s = self.service
        if upload is not None:
            return s.upload(upload, "batch")
        if route == "batches":
            return s.create(body)
        kind, _, rest = route.partition("/")
        return s.retrieve(rest) if kind == "batches" else s.content(rest.removesuffix("/content"))


class HttpProvider:
    """The HTTP judge's own files and batches endpoints (its key, its URL: :meth:`HttpEndpoint.batch_request`)."""

    def __init__(self, upstream):
        self.upstream = upstream

    async def call(self, method: str, route: str, *, body=None, upload: bytes | None = None):
        return await self.upstream.batch_request(method, route, body=body, upload=upload)


def provider_of(upstream):
    """How batch mode reaches ``upstream``'s batch API (ValueError when it has none)."""
    if callable(getattr(upstream, "batch_request", None)):
        return HttpProvider(upstream)
    service = getattr(upstream, "batch_service", None)
    if callable(service):
        return LocalProvider(service())
    raise ValueError(f"the judge {type(upstream).__name__} has no batch API")


# --- the run store's record of batches in flight ---------------------------------------------

BOOK_SCHEMA = """
CREATE TABLE IF NOT EXISTS judge_batches (
    batch_id TEXT PRIMARY KEY, input_file_id TEXT NOT NULL, endpoint TEXT NOT NULL, requests INTEGER NOT NULL,
    state TEXT NOT NULL, status TEXT, created REAL NOT NULL, ended REAL);
CREATE TABLE IF NOT EXISTS judge_batch_requests (
    batch_id TEXT NOT NULL, custom_id TEXT NOT NULL, run TEXT NOT NULL, case_id TEXT NOT NULL, metric TEXT NOT NULL,
    request_key TEXT NOT NULL, state TEXT NOT NULL, status INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER,
    error TEXT, PRIMARY KEY (batch_id, custom_id));
"""


class BatchBook:
    """The batches of a run, in its store (``store_path``; None: kept in memory only, no resume).

    ``judge_batches``: one row per batch (``state`` ``waiting`` until its outcome is handed out, then
    ``ended``; ``status`` the provider's last word). ``judge_batch_requests``: one row per request
    (``custom_id`` -> cell and request key; ``state`` ``waiting``, ``answered`` or ``error``; the reply's
    usage tokens). Written before each wait, so a killed run's resume finds them."""

    def __init__(self, store_path: str | None):
        self.db = sqlite3.connect(store_path or ":memory:", isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA busy_timeout=10000")
        self.db.executescript(BOOK_SCHEMA)
        self._lock = threading.Lock()

    def waiting(self) -> dict[tuple[str, str], list[tuple[str, str]]]:
        """(cell label, request key) -> [(batch id, custom id)] of the requests of batches still waiting."""
        out: dict = {}
        with self._lock:
            rows = self.db.execute(
                "SELECT r.batch_id, r.custom_id, r.run, r.case_id, r.metric, r.request_key FROM judge_batch_requests r "
                "JOIN judge_batches b USING (batch_id) WHERE b.state = 'waiting' ORDER BY b.created, r.rowid").fetchall()
        for bid, cid, run, case, metric, key in rows:
            out.setdefault((Cell(run, case, metric).label, key), []).append((bid, cid))
        return out

    def sent(self, bid: str, fid: str, endpoint: str, items) -> None:
        """A batch created: its id and requests ``(custom_id, cell, key)``, in one transaction."""
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self.db.execute("INSERT OR REPLACE INTO judge_batches VALUES (?, ?, ?, ?, 'waiting', 'in_progress', ?, NULL)",
                                (bid, fid, endpoint, len(items), time.time()))
                self.db.executemany("INSERT OR REPLACE INTO judge_batch_requests VALUES (?, ?, ?, ?, ?, ?, 'waiting', "
                                    "NULL, NULL, NULL, NULL)",
                                    [(bid, cid, c.run, c.case, c.metric, key) for cid, c, key in items])
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    def ended(self, bid: str, status: str, outcomes: dict) -> None:
        """The batch's outcome handed out: each request's (state, status, tokens, error); never re-attached."""
        rows = []
        for cid, o in outcomes.items():
            if isinstance(o, dict):
                u = o.get("usage") if isinstance(o.get("usage"), dict) else {}
                pt = u.get("prompt_tokens", u.get("input_tokens"))
                ct = u.get("completion_tokens", u.get("output_tokens"))
                rows.append(("answered", 200, pt if isinstance(pt, int) else None, ct if isinstance(ct, int) else None,
                             None, bid, cid))
            else:
                rows.append(("error", o.status, None, None, redact.scrub(str(o))[:400], bid, cid))
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self.db.executemany("UPDATE judge_batch_requests SET state = ?, status = ?, prompt_tokens = ?, "
                                    "completion_tokens = ?, error = ? WHERE batch_id = ? AND custom_id = ?", rows)
                self.db.execute("UPDATE judge_batches SET state = 'ended', status = ?, ended = ? WHERE batch_id = ?",
                                (status, time.time(), bid))
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            self.db.close()


# --- the collector --------------------------------------------------------------------------

MARK: contextvars.ContextVar[list | None] = contextvars.ContextVar("harness_batch_mark", default=None)
"""A list the gateway sets before an upstream call; :class:`BatchUpstream` appends the id of the batch
that answered it (the call record's ``batch``)."""


def mark() -> list:
    """Start a call's batch mark (the gateway, before its upstream call): a list that gets the batch id."""
    m: list = []
    MARK.set(m)
    return m


_IDS = itertools.count(1)


@dataclass
class _Waiting:
    cid: str
    cell: Cell
    key: str
    body: dict
    future: asyncio.Future


class BatchUpstream:
    """The judge, reached through its batch API: ``complete(cell, body)`` waits for the batch that answers it.

    Wraps the upstream judge (its ``scope``, ``model`` and the rest are the judge's). ``quiet(waiting)``,
    set by the gateway (:meth:`harness.judge.gateway.Gateway.batch_quiet`), says whether every open cell is
    waiting on a batch: the round is complete and the open batch goes at once."""

    def __init__(self, inner, config: BatchConfig, store_path: str | None = None, provider=None):
        self.inner, self.config = inner, config
        self.provider = provider or provider_of(inner)
        self.book = BatchBook(store_path)
        self.quiet = None
        self._resumable = self.book.waiting()
        self._open: list[_Waiting] = []
        self._gathering: asyncio.Task | None = None
        self._following: dict[str, dict[str, asyncio.Future]] = {}
        """Batch id -> custom id -> the waiting call, for the batches being polled."""
        self._tasks: set[asyncio.Task] = set()
        self.waiting = 0
        """Calls waiting on a batch, open or sent."""
        self.stats = {"batches": 0, "requests": 0, "attached": 0, "resent": 0}

    def __getattr__(self, name):   # the judge's own attributes (model, kind, forget, ...)
        return getattr(self.inner, name)

    def scope(self, cell: Cell) -> str:
        return self.inner.scope(cell)

    async def aclose(self) -> None:
        for t in list(self._tasks) + ([self._gathering] if self._gathering else []):
            t.cancel()
        self.book.close()
        await self.inner.aclose()

    async def complete(self, cell: Cell, body: dict) -> dict:
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        key = request_key(body, self.inner.scope(cell))
        again = self._resumable.get((cell.label, key))
        self.waiting += 1
        try:
            if again:   # the same request of a batch sent before the run was interrupted: wait for that batch
                bid, cid = again.pop(0)
                if not again:
                    del self._resumable[(cell.label, key)]
                self.stats["attached"] += 1
                self._follow(bid, {cid: fut})
            else:
                self._open.append(_Waiting(custom_id(cell, next(_IDS)), cell, key, body, fut))
                if self._gathering is None or self._gathering.done():
                    self._gathering = loop.create_task(self._gather())
            m = MARK.get()
            out, bid = await fut
            if m is not None:
                m.append(bid)
            if isinstance(out, UpstreamError):
                raise out
            return out
        finally:
            self.waiting -= 1

    async def _gather(self) -> None:
        """Wait for the round to complete (or the window, or the size), then send the open batch."""
        loop = asyncio.get_running_loop()
        first = loop.time()
        while self._open:
            n = len(self._open)
            if (n >= self.config.max_requests or loop.time() - first >= self.config.window_s
                    or (self.quiet is not None and self.quiet(self.waiting))):
                break
            await asyncio.sleep(min(0.02, max(0.0, first + self.config.window_s - loop.time())))
        items = [w for w in self._open if not w.future.done()]   # a cancelled call is not sent
        self._open = []
        for url in dict.fromkeys(url_of(w.body) for w in items):
            part = [w for w in items if url_of(w.body) == url]
            for i in range(0, len(part), self.config.max_requests):
                self._spawn(self._send(url, part[i:i + self.config.max_requests]))

    def _spawn(self, coro) -> None:
        t = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)

    async def _send(self, url: str, items: list[_Waiting]) -> None:
        data = input_file((w.cid, url, w.body) for w in items)
        try:
            status, f = await self.provider.call("POST", "files", upload=data)
            if status != 200 or not isinstance(f, dict) or not f.get("id"):
                raise UpstreamError(f"uploading the batch input file: HTTP {status}: {_said(f)}", status=502)
            status, b = await self.provider.call("POST", "batches", body={
                "input_file_id": f["id"], "endpoint": url, "completion_window": COMPLETION_WINDOW,
                "metadata": {"source": "groundedness-harness"}})
            if status != 200 or not isinstance(b, dict) or not b.get("id"):
                raise UpstreamError(f"creating the batch: HTTP {status}: {_said(b)}", status=502)
            self.book.sent(b["id"], f["id"], url, [(w.cid, w.cell, w.key) for w in items])
        except Exception as e:  # noqa: BLE001 - every waiting call's error, the cells resumable
            err = e if isinstance(e, UpstreamError) else UpstreamError(
                f"batch mode: {type(e).__name__}: {redact.cut(' '.join(str(e).split()), 200)}", status=502)
            err.retryable = False
            for w in items:
                _settle(w.future, err, "")
            return
        self.stats["batches"] += 1
        self.stats["requests"] += len(items)
        self._follow(b["id"], {w.cid: w.future for w in items})

    def _follow(self, bid: str, waiters: dict) -> None:
        """Wait for batch ``bid`` (polling it) on behalf of ``waiters``; a batch already followed takes them on."""
        if bid in self._following:
            self._following[bid].update(waiters)
            return
        self._following[bid] = dict(waiters)
        self._spawn(self._poll(bid))

    async def _poll(self, bid: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.wait_s
        failures, b = 0, None
        while True:
            try:
                status, b = await self.provider.call("GET", f"batches/{bid}")
            except Exception as e:  # noqa: BLE001 - the provider unreachable: polled again, a bounded number of times
                status, b = 599, {"error": {"message": f"{type(e).__name__}: {e}"}}
            if status == 404:   # the provider no longer knows it: its requests go again, in a new batch
                return self._lost(bid)
            if status == 200 and isinstance(b, dict) and b.get("status") in TERMINAL:
                break
            failures = failures + 1 if status != 200 else 0
            if failures > POLL_ERRORS_MAX or loop.time() > deadline:
                why = (f"polling it failed {failures} times in a row: {_said(b)}" if failures
                       else f"it did not end within {self.config.wait_s:g}s")
                return self._fail_all(bid, UpstreamError(f"batch {bid}: {why}", status=504, retryable=False),
                                      mark_ended=False)
            await asyncio.sleep(self.config.poll_s)
        outcomes: dict = {}
        end = b["status"]
        try:
            for field in ("output_file_id", "error_file_id"):
                if b.get(field):
                    status, data = await self.provider.call("GET", f"files/{b[field]}/content")
                    if status != 200 or not isinstance(data, (bytes, bytearray)):
                        raise UpstreamError(f"downloading its {field}: HTTP {status}: {_said(data)}", status=502)
                    for line in read_lines(bytes(data), f"batch {bid} {field}"):
                        outcomes[str(line.get("custom_id"))] = outcome_of(line, bid)
        except Exception as e:  # noqa: BLE001 - the calls' error; the batch stays waiting, a resume fetches it again
            return self._fail_all(bid, UpstreamError(f"batch {bid}: {redact.cut(str(e), 240)}", status=502,
                                                     retryable=False), mark_ended=False)
        waiters = self._following.pop(bid, {})
        missing = UpstreamError(f"batch {bid} ended {end!r} with no reply for this request"
                                + ("" if end == "completed" else f" ({_said(b.get('errors'))})"),
                                status=502, retryable=False)
        for cid in waiters:
            outcomes.setdefault(cid, missing)
        self.book.ended(bid, end, outcomes)
        for cid, fut in waiters.items():
            _settle(fut, outcomes[cid], bid)

    def _fail_all(self, bid: str, err: UpstreamError, mark_ended: bool) -> None:
        waiters = self._following.pop(bid, {})
        if mark_ended:
            self.book.ended(bid, "failed", {cid: err for cid in waiters})
        for fut in waiters.values():
            _settle(fut, err, bid)

    def _lost(self, bid: str) -> None:
        """A batch the provider does not know (HTTP 404: the embedded reference judge's batches end with its
        process): its waiting calls get a retryable error, so the gateway's retry sends each again, in a new
        batch (the store keeps the requests' keys, not their bodies)."""
        waiters = self._following.pop(bid, {})
        self.book.ended(bid, "lost", {})
        for fut in waiters.values():
            self.stats["resent"] += 1
            _settle(fut, UpstreamError(f"batch {bid} is unknown to the judge (HTTP 404); sent again", status=503,
                                       retryable=True), bid)


def _settle(fut: asyncio.Future, outcome, bid: str) -> None:
    """Hand a waiting call its outcome (a reply or an error) and the batch id (a call cancelled meanwhile: no one)."""
    if not fut.done():
        fut.set_result((outcome, bid))


def _said(obj) -> str:
    text = obj.decode("utf-8", "replace") if isinstance(obj, (bytes, bytearray)) else json.dumps(obj, default=str)
    return redact.cut(" ".join(text.split()), 200)
