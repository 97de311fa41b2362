"""The realistic test judge: a deterministic stand-in for a real LLM, served OpenAI-compatibly.

It never reads annotations. It recognises each vendor's step from the prompt (each vendor's handler is
``kit/realistic.py`` in its folder, found through the metrics' entry points: :mod:`tests.helpers.kits`; the shared
parts are :mod:`tests.helpers.judges.steps` and :mod:`tests.helpers.judges.text`), reads the answer and the contexts
out of the prompt, and answers as a model would: its own split and paraphrase of statements,
verdicts by word overlap with the context, evidence quotes of which about half are altered (a
comma, a final stop, an ellipsis) and a few invented; and, like real judges, it wraps some JSON
replies in a code fence (``fence_rate``), puts prose before some (``prose_rate``), drops a key of a
list item now and then (``drop_rate``), answers TruLens's score prompts with a bare number
(``bare_rate``) and leaves ``usage`` out of some responses (``no_usage_rate``).

Every choice is seeded by a hash of the request's messages (role and text; list-of-parts content
is flattened), so a rerun is identical, and two clients sending the same prompt (a vendor's own
model class and the harness adapter) get the same reply whatever their request options.

It counts what it served (calls, prompt and completion tokens, and the part reported in ``usage``)
so tests can compare the harness's ledger with the judge's own books.

Server modes (:data:`MODES`), each a kind of real server:

- ``legacy``: the judge as it was before it honoured formats: every reply is free text with the noise
  above whatever the request asked for; ``POST /v1/responses`` answers 400 "not supported". Existing
  tests that pin its replies use it (the default).
- ``chat-404`` / ``chat-400``: a chat-only server (llama.cpp's server, vLLM, Ollama): chat completions
  honour ``response_format`` (:mod:`tests.helpers.judges.formats`: a json_schema constrains the reply,
  json_object gives JSON, none lets the noise through), and, as a real model samples differently under
  a decoding constraint, the judge's free choices (paraphrases, quotes) depend on the format asked; ``POST /v1/responses`` answers 404 (llama.cpp's
  "File Not Found") or 400 ("not supported").
- ``openai``: an OpenAI-like server: the same chat completions, and the Responses API
  (:mod:`tests.helpers.judges.responses_api`) with ``text.format`` honoured the same way.

What else real servers do (issue 37), each off unless asked, in every mode:

- ``truncate``: the model writes past the request's token limit (``max_tokens``,
  ``max_completion_tokens``, ``max_output_tokens``; a request without one meets the server's own) and the
  server cuts the reply there: what comes back is the reply's start (half its tokens, never more than the
  limit) with ``finish_reason "length"`` (Responses API: ``status "incomplete"``, reason
  ``max_output_tokens``). ``"once"``: only the first time the judge sees a request (its messages and
  format), as a sampling model may ramble once and answer the repeat in full; ``"always"``: every time.
- ``sampling`` (:mod:`tests.helpers.judges.sampling`): repeats of a request that differ.
- ``refuse_rate``: a seeded share of requests refused: OpenAI's structured-output refusal
  (``message.refusal`` set, ``content`` null) where a json_schema was asked, else a refusal in the text.
- ``hold``: a ``threading.Event``; every reply waits until it is set (a slow server), and
  :meth:`RealisticJudge.wait_held` lets a test wait until N requests are waiting (state, not time).
- ``secret``: the server answers only under ``/<secret>/...`` (the URL carries it): a request of another
  process (a stale client of a reused port) gets 404 and is counted apart (``foreign``), never in the books.
- ``lanes``: ``/<secret>/<lane>/v1/...`` is a judge of its own per lane name (its own books, its own memory
  of what it cut once and of repeats), created on first use, so one server holds apart clients that send
  the same prompts (DeepEval's two metrics); ``GET /<secret>/<lane>/stats`` answers that lane's books.

- batch mode (:mod:`harness.judge.batch`): the judge serves OpenAI's files and batches endpoints
  (``POST /v1/files``, ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``GET /v1/files/{id}/content``), each
  batch line answered as the same request sent alone is (and counted in the books alike). ``batch_hold``
  (a ``threading.Event``) keeps every batch ``in_progress`` until it is set; ``batch_end`` makes batches end
  ``failed``/``expired``/``cancelled``; ``batch_error_ids(custom_id)`` gives a request an error line.
  ``judge.batches`` (:class:`harness.judge.batch.BatchService`) counts the batches created and polled.

- ``forget``: vendors whose prompts the judge does not know (a real model that does not follow them): it
  answers their requests with a JSON object that says so, ``{"answer": NOT_UNDERSTOOD}`` (JSON, as a
  server honouring ``json_object`` makes any model write), counted as step ``forgotten.<vendor>``.

The books also keep every request body per vendor (``bodies``: vendor, from the recognised step, ->
sha256 of the body's JSON with keys sorted -> count), so a parity test can compare what two clients sent.

Serve it: ``python -m tests.helpers.judges.realistic --port 0 [--mode openai]`` prints ``{"url": ..., "model":
...}``; in tests, ``with serve(mode=...) as judge: judge.url, judge.stats()``. ``GET /stats`` returns the
books, ``POST /stats/reset`` clears them.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import random
import re
import secrets
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness.judge.batch import BatchService, is_batch_route

from tests.helpers import kits
from tests.helpers.judges import steps
from tests.helpers.judges.formats import format_of, render_formatted
from tests.helpers.judges.responses_api import messages_of, response_object
from tests.helpers.judges.text import count_tokens

MODEL = "realistic-judge"
NOT_UNDERSTOOD = "I'm not sure what you are asking me to do."
MODES = ("legacy", "chat-404", "chat-400", "openai")
"""The server modes (module docstring)."""
SERVER_MODES = ("chat-404", "chat-400", "openai")
"""The modes that behave as a real server does (the stock-parity test runs each)."""
REFUSALS = {
    404: {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}},
    400: {"error": {"message": "The Responses API is not supported by this server; use /v1/chat/completions",
                    "type": "invalid_request_error"}},
}
"""What a chat-only server answers to ``POST /v1/responses``, by status (llama.cpp's 404 body)."""
TRUNCATE = ("never", "once", "always")
REFUSAL = "I'm sorry, but I can't help with that request."
SERVER_LIMIT = 4096
"""The server's own cap on a reply (tokens) for a request that sets none."""


@dataclass
class Noise:
    """How often the judge misbehaves like a real model (per reply, seeded)."""

    fence_rate: float = 0.06
    prose_rate: float = 0.03
    drop_rate: float = 0.015
    bare_rate: float = 0.25
    """TruLens score prompts (abstention, answerability, plain citation) answered with a bare number."""
    bare_cot_rate: float = 0.03
    """TruLens groundedness (CoT JSON asked) answered with a bare number."""
    no_usage_rate: float = 0.01
    """Responses without ``usage`` (DeepEval's own model class raises on one, as in stock use)."""
    stray_rate: float = 0.03
    """``json_object`` replies with a key nobody asked for (server modes only)."""

    @classmethod
    def none(cls) -> "Noise":
        return cls(0, 0, 0, 0, 0, 0, 0)


@dataclass
class Books:
    """What the judge served."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reported_prompt_tokens: int = 0
    """Tokens reported in ``usage`` (what a client can bill)."""
    reported_completion_tokens: int = 0
    calls_without_usage: int = 0
    unrecognised: int = 0
    crashed: int = 0
    """Prompts a step handler failed on (a judge bug; tests expect none)."""
    refused: int = 0
    """Responses API requests a chat-only mode refused (404 or 400)."""
    requests: dict = field(default_factory=dict)
    """``"<route> <format>"`` -> count, e.g. ``"responses json_schema"``, ``"chat none"`` (what clients asked)."""
    truncated: int = 0
    """Replies cut at the token limit (``finish_reason "length"``)."""
    refusals: int = 0
    held: int = 0
    """Requests waiting on ``hold`` now."""
    foreign: int = 0
    """Requests outside the server's secret path (another process's traffic): answered 404, counted only here."""
    bodies: dict = field(default_factory=dict)
    """vendor (the recognised step's prefix, or ``unrecognised``) -> sha256 of the request body's JSON with
    keys sorted (route included) -> count."""
    body_steps: dict = field(default_factory=dict)
    """sha256 of a body (as in ``bodies``) -> ``"<route> <step>"`` (what it asked: a failed parity test names it)."""
    steps: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def as_dict(self) -> dict:
        with self._lock:
            return {k: ({x: (dict(y) if isinstance(y, dict) else y) for x, y in v.items()} if isinstance(v, dict) else v)
                    for k, v in self.__dict__.items() if k != "_lock"}


def flatten(messages) -> list[tuple[str, str]]:
    """(role, text) per message; list-of-parts content joined."""
    out = []
    for m in messages or []:
        c = m.get("content") if isinstance(m, dict) else None
        if isinstance(c, list):
            c = "".join(p.get("text", "") for p in c if isinstance(p, dict))
        out.append((str(m.get("role", "")) if isinstance(m, dict) else "", c or ""))
    return out


def digest(msgs: list[tuple[str, str]]) -> str:
    return hashlib.sha256(json.dumps(msgs, ensure_ascii=False).encode()).hexdigest()


class RealisticJudge:
    """``complete(body) -> chat.completion dict``; thread-safe; keeps :class:`Books`."""

    def __init__(self, noise: Noise | None = None, mode: str = "legacy", sampling=None,
                 logprobs: bool = False, truncate: str = "never", refuse_rate: float = 0.0,
                 hold: threading.Event | None = None, forget: tuple[str, ...] = (), batch_hold=None,
                 batch_end: str | None = None, batch_error_ids=None):
        if mode not in MODES:
            raise ValueError(f"unknown realistic-judge mode {mode!r}; known: {', '.join(MODES)}")
        if truncate not in TRUNCATE:
            raise ValueError(f"unknown truncate {truncate!r}; known: {', '.join(TRUNCATE)}")
        self.truncate, self.refuse_rate, self.hold, self.forget = truncate, refuse_rate, hold, tuple(forget)
        self._seen: set = set()
        self._held = threading.Condition()
        self.logprobs = logprobs   # log-probabilities where a request asks (OpenAI, vLLM), or never (chat-only)
        self.noise = noise or Noise()
        self.mode = mode
        self.sampling = sampling
        """``tests.helpers.judges.sampling.Sampling``: seeded variation between repeats of a request (None: none)."""
        self.books = Books()
        self.handlers = sorted(kits.parts("realistic").values(), key=lambda m: m.ORDER)
        """The vendors' handlers (``kit/realistic.py``), in their ``ORDER``."""
        self.batches = BatchService(self.batch_answer, hold=batch_hold, end=batch_end, error_ids=batch_error_ids)
        """The judge's files and batches endpoints (module docstring)."""

    def batch_answer(self, cid: str, url: str, body) -> tuple[int, dict]:
        """One batch line, answered as the same request sent alone (status, body)."""
        if not isinstance(body, dict):
            return 400, {"error": {"message": "body must be a JSON object"}}
        if url == "/v1/responses":
            self.asked("responses", body)
            self.record("responses", body)
            if self.mode != "openai":
                status = 404 if self.mode == "chat-404" else 400
                return status, REFUSALS[status]
            reply = self.respond(body)
            return (200, reply) if reply is not None else (400, {"error": {"message": "body needs an 'input'"}})
        if not isinstance(body.get("messages"), list):
            return 400, {"error": {"message": "body needs a 'messages' list"}}
        self.asked("chat", body)
        self.record("chat", body)
        return 200, self.complete(body)

    def answer(self, msgs: list[tuple[str, str]], salt: str = "") -> steps.Answer | None:
        """What the judge means. ``salt`` (the server modes: the requested format) joins the seed of its
        free choices (paraphrases, quotes, echoes), as a real model samples differently under a decoding
        constraint; the verdicts themselves follow from the text alone."""
        h = digest(msgs) + salt
        rng, quotes = random.Random(h + ":content"), random.Random(h + ":quotes")
        for kit in self.handlers:
            a = kit.answer(msgs, rng, quotes)
            if a is not None:
                return a
        return None

    def render(self, a: steps.Answer, noise_rng: random.Random) -> str:
        n = self.noise if not a.clean else Noise.none()
        draw = [noise_rng.random() for _ in range(4)]
        if a.kind == "text":
            return ("Here are the important statements:\n" + a.value) if draw[1] < n.prose_rate else a.value
        if a.kind == "score":
            return str(a.value) if draw[2] < n.bare_rate else json.dumps({"score": a.value})
        value = a.value
        if a.step == "trulens.groundedness" and draw[2] < n.bare_cot_rate:
            return str(value["score"])
        if draw[3] < n.drop_rate:
            value = drop_key(value)
        out = json.dumps(value, ensure_ascii=False)
        if draw[0] < n.fence_rate:
            return f"```json\n{out}\n```"
        if draw[0] < n.fence_rate + n.prose_rate:
            return f"Here is the JSON you asked for:\n\n{out}"
        return out

    def write(self, a: steps.Answer | None, h: str, body: dict) -> str:
        """The reply text: the answer written as the request's format allows (free text in ``legacy``)."""
        if a is None:
            return NOT_UNDERSTOOD
        fmt = format_of(body) if self.mode != "legacy" else None
        if fmt is None:
            return self.render(a, random.Random(h + ":noise"))
        return render_formatted(a, fmt, drop_key, random.Random(h + ":noise"), self.noise.stray_rate,
                                self.noise.drop_rate)

    def complete(self, body: dict) -> dict:
        """A ``chat.completion`` for a chat request."""
        content, msgs, h, usage = self._reply(body, flatten(body.get("messages")))
        refusal = None
        if content is REFUSAL_SENT:   # OpenAI's structured-output refusal: no content, the refusal apart
            content, refusal = None, REFUSAL
        cut = isinstance(content, Cut)
        resp = {"id": f"chatcmpl-rj-{h[:16]}", "object": "chat.completion", "created": 1764547200,
                "model": body.get("model") or MODEL,
                "choices": [{"index": 0, "finish_reason": "length" if cut else "stop",
                             "logprobs": self.logprobs_of(msgs, body) if self.logprobs else None,
                             "message": {"role": "assistant", "content": str(content) if cut else content,
                                         "refusal": refusal}}]}
        if usage:
            resp["usage"] = usage
        return resp

    def logprobs_of(self, msgs: list[tuple[str, str]], body: dict) -> dict | None:
        """The reply's ``logprobs`` from the first handler that gives them for this request (None: none does)."""
        for kit in self.handlers:
            lp = kit.logprobs(msgs, body) if hasattr(kit, "logprobs") else None
            if lp is not None:
                return lp
        return None

    def respond(self, body: dict) -> dict | None:
        """A ``response`` for a Responses API request (None: its ``input`` is not readable)."""
        msgs = messages_of(body)
        if msgs is None:
            return None
        content, _, h, usage = self._reply(body, flatten(msgs))
        if content is REFUSAL_SENT:
            content = REFUSAL
        out = response_object(f"rj{h[:16]}", body.get("model") or MODEL, str(content), usage)
        if isinstance(content, Cut):
            out["status"], out["incomplete_details"] = "incomplete", {"reason": "max_output_tokens"}
            out["output"][0]["status"] = "incomplete"
        return out

    def record(self, route: str, body) -> None:
        """Keep the request body (canonical JSON) in the books, under the vendor whose step it is."""
        try:
            msgs = flatten(body.get("messages")) if route == "chat" else flatten(messages_of(body) or [])
            a = self.answer(msgs, "")
            step = a.step if a else "unrecognised"
        except Exception:  # noqa: BLE001 - counted as the judge counts a prompt it cannot read
            step = "unrecognised"
        key = hashlib.sha256(f"{route}\0".encode() + json.dumps(body, sort_keys=True, ensure_ascii=False).encode())
        with self.books._lock:
            per = self.books.bodies.setdefault(step.split(".")[0], {})
            per[key.hexdigest()] = per.get(key.hexdigest(), 0) + 1
            self.books.body_steps[key.hexdigest()] = f"{route} {step}"

    def wait_held(self, n: int, timeout_s: float = 600) -> bool:
        """Wait until ``n`` requests are waiting on ``hold`` (a test waits for that state, then releases)."""
        with self._held:
            return self._held.wait_for(lambda: self.books.held >= n, timeout_s)

    def held(self) -> None:
        """Block the calling request until ``hold`` is set (no-op without one)."""
        if self.hold is None:
            return
        with self._held:
            self.books.held += 1
            self._held.notify_all()
        self.hold.wait()
        with self._held:
            self.books.held -= 1

    def asked(self, route: str, body) -> None:
        """Count a request by its route and the output format it asked for."""
        fmt = (format_of(body) or {}).get("type", "none") if isinstance(body, dict) else "none"
        key = f"{route} {fmt}"
        with self.books._lock:
            self.books.requests[key] = self.books.requests.get(key, 0) + 1

    def _reply(self, body: dict, msgs: list[tuple[str, str]]):
        h = digest(msgs)
        fmt = format_of(body) if self.mode != "legacy" else None
        try:
            a = self.answer(msgs, f":{fmt['type']}:{fmt.get('name')}" if fmt else "")
            if a is not None and a.step.split(".")[0] in self.forget:
                a = steps.Answer(f"forgotten.{a.step.split('.')[0]}", {"answer": NOT_UNDERSTOOD}, clean=True)
            if self.sampling is not None:
                a = self.sampling.vary(a, h, body)
        except Exception:  # noqa: BLE001 - a judge bug: answered like an unknown prompt, counted
            a = None
            with self.books._lock:
                self.books.crashed += 1
        content = self.write(a, h, body)
        key = h + json.dumps(fmt, sort_keys=True)
        with self.books._lock:
            first = key not in self._seen
            self._seen.add(key)
        refused = a is not None and random.Random(h + ":refuse").random() < self.refuse_rate
        if refused:
            content = REFUSAL_SENT if (fmt or {}).get("type") == "json_schema" and self.mode == "openai" else REFUSAL
        elif self.truncate == "always" or (self.truncate == "once" and first):
            content = cut(content, limit_of(body))
        pt = count_tokens(" ".join(t for _, t in msgs)) + 3 * len(msgs)
        ct = count_tokens(str(content)) if isinstance(content, str) else 0
        if isinstance(content, Cut):
            ct = min(limit_of(body), max(ct, count_tokens(content.whole)))   # billed: what was written
        usage = random.Random(h + ":usage").random() >= self.noise.no_usage_rate
        b = self.books
        with b._lock:
            b.calls += 1
            b.prompt_tokens += pt
            b.completion_tokens += ct
            step = a.step if a else "unrecognised"
            b.steps[step] = b.steps.get(step, 0) + 1
            b.unrecognised += a is None
            b.truncated += isinstance(content, Cut)
            b.refusals += refused
            if usage:
                b.reported_prompt_tokens += pt
                b.reported_completion_tokens += ct
            else:
                b.calls_without_usage += 1
        return content, msgs, h, ({"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}
                                  if usage else None)


def drop_key(value: dict) -> dict:
    """The value with the last key of the first dict inside its first list removed (a model that
    forgot a field of one item); unchanged when there is no such dict.

    >>> drop_key({"verdicts": [{"verdict": "yes", "reason": "r"}, {"verdict": "no"}]})
    {'verdicts': [{'verdict': 'yes'}, {'verdict': 'no'}]}
    >>> drop_key({"truths": ["a"]})
    {'truths': ['a']}
    """
    for k, v in value.items():
        if isinstance(v, list) and v and isinstance(v[0], dict) and len(v[0]) > 1:
            first = dict(list(v[0].items())[:-1])
            return {**value, k: [first] + v[1:]}
    return value


class Cut(str):
    """A reply cut at the token limit (the text returned); ``whole`` is what the model was writing."""

    whole: str = ""


REFUSAL_SENT = object()
"""Marker: the reply is a structured-output refusal (``message.refusal``; no content)."""
_TOKEN = re.compile(r"\w+|[^\w\s]")


def limit_of(body: dict) -> int:
    """The request's cap on the reply in tokens (the server's own, :data:`SERVER_LIMIT`, when it sets none)."""
    for k in ("max_completion_tokens", "max_tokens", "max_output_tokens"):
        v = body.get(k) if isinstance(body, dict) else None
        if isinstance(v, int) and v > 0:
            return v
    return SERVER_LIMIT


def cut(text: str, limit: int) -> Cut:
    """``text`` cut as a server cuts a reply that ran past ``limit`` tokens: the model wrote on (this reply
    and more), so what fits is the reply's start, half its tokens and never more than ``limit``.

    >>> str(cut('{"statements": ["Bake at 350 F."]}', 1024))   # 15 tokens: the first 7
    '{"statements": ["'
    >>> str(cut("one two three four", 1))
    'one'
    """
    tokens = list(_TOKEN.finditer(text))
    keep = min(limit, max(1, len(tokens) // 2))
    out = Cut(text[: tokens[keep - 1].end()] if tokens else "")
    out.whole = text
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 5   # an idle keep-alive connection (and its thread) ends after 5 s
    judge: RealisticJudge = None
    prefix: str = ""
    """``/<secret>`` when the server serves only under its secret path, else empty."""
    lanes: dict | None = None
    """lane name -> its own judge (module docstring), or None: one judge."""
    new_lane = None
    """Makes a lane's judge."""
    _lanes_lock = threading.Lock()

    def _route(self) -> str | None:
        """The request's path inside the server's own prefix (None: outside it, counted as foreign); with
        lanes, the lane's judge becomes this request's."""
        path = self.path
        if self.prefix:
            if not (path == self.prefix or path.startswith(self.prefix + "/")):
                with self.judge.books._lock:
                    self.judge.books.foreign += 1
                return None
            path = path[len(self.prefix):] or "/"
        if self.lanes is not None:
            lane, _, rest = path.lstrip("/").partition("/")
            with self._lanes_lock:
                if lane not in self.lanes:
                    self.lanes[lane] = self.new_lane()
                self.judge = self.lanes[lane]
            path = "/" + rest
        return path

    def log_message(self, *args):  # quiet
        pass

    def _send(self, status: int, obj: dict) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        try:
            return json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            return None

    def _batch_api(self, method: str) -> None:
        """The files and batches endpoints (:class:`harness.judge.batch.BatchService`)."""
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)) if method == "POST" else b""
        route = self._route()
        if route is None:
            return self._send(404, {"error": {"message": "no route"}})
        status, out = self.judge.batches.handle(method, route, raw, self.headers.get("Content-Type", ""))
        if isinstance(out, dict):
            return self._send(status, out)
        self.send_response(status)
        self.send_header("Content-Type", "application/jsonl")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def do_GET(self):
        if is_batch_route(self.path):
            return self._batch_api("GET")
        route = self._route()
        if route is None:
            return self._send(404, {"error": {"message": "no route"}})
        if route.rstrip("/").endswith("/models"):
            return self._send(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        if route.rstrip("/") == "/stats":
            return self._send(200, self.judge.books.as_dict())
        self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self):
        if is_batch_route(self.path):
            return self._batch_api("POST")
        body = self._body()
        route = self._route()
        if route is None:
            return self._send(404, {"error": {"message": "no route"}})
        path = route.rstrip("/")
        if path == "/stats/reset":
            self.judge.books = Books()
            return self._send(200, {})
        if path.endswith("/responses"):
            self.judge.asked("responses", body)
            if isinstance(body, dict):
                self.judge.record("responses", body)
            return self._responses(body)
        if not path.endswith("/chat/completions"):
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return self._send(400, {"error": {"message": "body needs a 'messages' list"}})
        self.judge.asked("chat", body)
        self.judge.record("chat", body)
        self.judge.held()
        self._send(200, self.judge.complete(body))

    def _responses(self, body) -> None:
        mode = self.judge.mode
        if mode != "openai":
            status = 404 if mode == "chat-404" else 400
            with self.judge.books._lock:
                self.judge.books.refused += 1
            return self._send(status, REFUSALS[status])
        self.judge.held()
        reply = self.judge.respond(body) if isinstance(body, dict) else None
        if reply is None:
            return self._send(400, {"error": {"message": "body needs an 'input'", "type": "invalid_request_error"}})
        self._send(200, reply)


@dataclass
class Served:
    """A running server: ``url`` (``http://127.0.0.1:PORT/v1``), the judge, and its books."""

    url: str
    judge: RealisticJudge
    server: ThreadingHTTPServer

    def stats(self) -> dict:
        return self.judge.books.as_dict()

    def reset(self) -> None:
        self.judge.books = Books()

    def lane(self, name: str) -> str:
        """The base URL of lane ``name`` (a server started with ``lanes=True``)."""
        return f"{self.url.removesuffix('/v1')}/{name}/v1"

    def lane_stats(self, name: str) -> dict:
        lanes = self.server.RequestHandlerClass.lanes
        return lanes[name].books.as_dict() if name in lanes else Books().as_dict()

    @property
    def mode(self) -> str:
        return self.judge.mode



def start(port: int = 0, noise: Noise | None = None, mode: str = "legacy", sampling=None,
          logprobs: bool = False, truncate: str = "never", refuse_rate: float = 0.0,
          hold: threading.Event | None = None, secret: bool = False, lanes: bool = False,
          forget: tuple[str, ...] = (), **batch) -> Served:
    """Start the server in a daemon thread on 127.0.0.1 (port 0: any free port) in ``mode`` (:data:`MODES`),
    with ``sampling`` (``tests.helpers.judges.sampling.Sampling``) varying repeats of a request, or not, and the
    server behaviours of the module docstring (``secret``: served only under a fresh secret path)."""
    judge = RealisticJudge(noise, mode, sampling, logprobs, truncate, refuse_rate, hold, forget, **batch)
    prefix = f"/{secrets.token_hex(8)}" if secret else ""
    def new_lane():
        return RealisticJudge(noise, mode, type(sampling)(sampling.rate, sampling.seed, sampling.mode) if sampling
                              else None, logprobs, truncate, refuse_rate, hold, forget, **batch)

    handler = type("Handler", (_Handler,), {"judge": judge, "prefix": prefix, "lanes": {} if lanes else None,
                                            "new_lane": staticmethod(new_lane)})
    server_cls = type("Server", (ThreadingHTTPServer,), {"request_queue_size": 256, "daemon_threads": True})
    server = server_cls(("127.0.0.1", port), handler)   # a deep backlog: vendors open many connections at once
    threading.Thread(target=server.serve_forever, name="realistic-judge", daemon=True).start()
    return Served(f"http://127.0.0.1:{server.server_address[1]}{prefix}/v1", judge, server)


@contextlib.contextmanager
def serve(port: int = 0, noise: Noise | None = None, mode: str = "legacy", sampling=None, logprobs: bool = False,
          **behaviour):
    """``with serve() as judge:`` a running realistic judge, shut down afterwards (``behaviour``: the keyword
    arguments of :func:`start` after ``logprobs``)."""
    s = start(port, noise, mode, sampling, logprobs, **behaviour)
    try:
        yield s
    finally:
        s.server.shutdown()
        s.server.server_close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.helpers.judges.realistic", description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port)")
    p.add_argument("--quiet-model", action="store_true", help="no noise: clean JSON, usage always")
    p.add_argument("--mode", choices=MODES, default="legacy", help="the kind of server (module docstring)")
    p.add_argument("--usage-always", action="store_true", help="usage in every reply (the noise otherwise as usual)")
    p.add_argument("--truncate", choices=TRUNCATE, default="never", help="cut replies at the token limit")
    p.add_argument("--sampling-rate", type=float, default=0.0, help="repeats of a request differ (seeded)")
    p.add_argument("--secret", action="store_true", help="serve only under a fresh secret path (in the URL)")
    p.add_argument("--lanes", action="store_true", help="a judge of its own per first path segment (docstring)")
    args = p.parse_args(argv)
    noise = Noise.none() if args.quiet_model else (Noise(no_usage_rate=0) if args.usage_always else None)
    sampling = None
    if args.sampling_rate:
        from tests.helpers.judges.sampling import Sampling

        sampling = Sampling(rate=args.sampling_rate)
    s = start(args.port, noise, args.mode, sampling, truncate=args.truncate, secret=args.secret, lanes=args.lanes)
    print(json.dumps({"url": s.url, "model": MODEL}), flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        s.server.shutdown()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
