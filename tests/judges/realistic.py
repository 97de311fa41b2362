"""The realistic test judge: a deterministic stand-in for a real LLM, served OpenAI-compatibly.

It never reads annotations. It recognises each vendor's step from the prompt
(:mod:`tests.judges.steps`, :mod:`tests.judges.steps_trulens`), reads the answer and the contexts
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
  honour ``response_format`` (:mod:`tests.judges.formats`: a json_schema constrains the reply,
  json_object gives JSON, none lets the noise through), and, as a real model samples differently under
  a decoding constraint, the judge's free choices (paraphrases, quotes) depend on the format asked; ``POST /v1/responses`` answers 404 (llama.cpp's
  "File Not Found") or 400 ("not supported").
- ``openai``: an OpenAI-like server: the same chat completions, and the Responses API
  (:mod:`tests.judges.responses_api`) with ``text.format`` honoured the same way.

Serve it: ``python -m tests.judges.realistic --port 0 [--mode openai]`` prints ``{"url": ..., "model":
...}``; in tests, ``with serve(mode=...) as judge: judge.url, judge.stats()``. ``GET /stats`` returns the
books, ``POST /stats/reset`` clears them.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import random
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.judges import steps, steps_azure, steps_minicheck, steps_mlflow, steps_more, steps_trulens
from tests.judges.formats import format_of, render_formatted
from tests.judges.responses_api import messages_of, response_object
from tests.judges.text import count_tokens

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
    steps: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def as_dict(self) -> dict:
        with self._lock:
            return {k: (dict(v) if isinstance(v, dict) else v) for k, v in self.__dict__.items() if k != "_lock"}


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
                 logprobs: bool = False):
        if mode not in MODES:
            raise ValueError(f"unknown realistic-judge mode {mode!r}; known: {', '.join(MODES)}")
        self.logprobs = logprobs   # log-probabilities where a request asks (OpenAI, vLLM), or never (chat-only)
        self.noise = noise or Noise()
        self.mode = mode
        self.sampling = sampling
        """``tests.judges.sampling.Sampling``: seeded variation between repeats of a request (None: none)."""
        self.books = Books()

    def answer(self, msgs: list[tuple[str, str]], salt: str = "") -> steps.Answer | None:
        """What the judge means. ``salt`` (the server modes: the requested format) joins the seed of its
        free choices (paraphrases, quotes, echoes), as a real model samples differently under a decoding
        constraint; the verdicts themselves follow from the text alone."""
        h = digest(msgs) + salt
        rng, quotes = random.Random(h + ":content"), random.Random(h + ":quotes")
        for handler in (steps.ragas, steps.deepeval, steps_more.phoenix, steps_mlflow.mlflow, steps_more.opik, steps_azure.azure):
            a = handler(msgs, rng)
            if a is not None:
                return a
        return (steps.inhouse(msgs, rng, quotes) or steps_trulens.trulens(msgs, rng, quotes)
                or steps_minicheck.minicheck(msgs))

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
        resp = {"id": f"chatcmpl-rj-{h[:16]}", "object": "chat.completion", "created": 1764547200,
                "model": body.get("model") or MODEL,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "logprobs": steps_minicheck.logprobs(msgs, body) if self.logprobs else None,
                             "message": {"role": "assistant", "content": content, "refusal": None}}]}
        if usage:
            resp["usage"] = usage
        return resp

    def respond(self, body: dict) -> dict | None:
        """A ``response`` for a Responses API request (None: its ``input`` is not readable)."""
        msgs = messages_of(body)
        if msgs is None:
            return None
        content, _, h, usage = self._reply(body, flatten(msgs))
        return response_object(f"rj{h[:16]}", body.get("model") or MODEL, content, usage)

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
            if self.sampling is not None:
                a = self.sampling.vary(a, h, body)
        except Exception:  # noqa: BLE001 - a judge bug: answered like an unknown prompt, counted
            a = None
            with self.books._lock:
                self.books.crashed += 1
        content = self.write(a, h, body)
        pt = count_tokens(" ".join(t for _, t in msgs)) + 3 * len(msgs)
        ct = count_tokens(content)
        usage = random.Random(h + ":usage").random() >= self.noise.no_usage_rate
        b = self.books
        with b._lock:
            b.calls += 1
            b.prompt_tokens += pt
            b.completion_tokens += ct
            step = a.step if a else "unrecognised"
            b.steps[step] = b.steps.get(step, 0) + 1
            b.unrecognised += a is None
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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 5   # an idle keep-alive connection (and its thread) ends after 5 s
    judge: RealisticJudge = None

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

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            return self._send(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        if self.path.rstrip("/") == "/stats":
            return self._send(200, self.judge.books.as_dict())
        self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self):
        body = self._body()
        path = self.path.rstrip("/")
        if path == "/stats/reset":
            self.judge.books = Books()
            return self._send(200, {})
        if path.endswith("/responses"):
            self.judge.asked("responses", body)
            return self._responses(body)
        if not path.endswith("/chat/completions"):
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return self._send(400, {"error": {"message": "body needs a 'messages' list"}})
        self.judge.asked("chat", body)
        self._send(200, self.judge.complete(body))

    def _responses(self, body) -> None:
        mode = self.judge.mode
        if mode != "openai":
            status = 404 if mode == "chat-404" else 400
            with self.judge.books._lock:
                self.judge.books.refused += 1
            return self._send(status, REFUSALS[status])
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

    @property
    def mode(self) -> str:
        return self.judge.mode



def start(port: int = 0, noise: Noise | None = None, mode: str = "legacy", sampling=None,
          logprobs: bool = False) -> Served:
    """Start the server in a daemon thread on 127.0.0.1 (port 0: any free port) in ``mode`` (:data:`MODES`),
    with ``sampling`` (``tests.judges.sampling.Sampling``) varying repeats of a request, or not."""
    judge = RealisticJudge(noise, mode, sampling, logprobs)
    handler = type("Handler", (_Handler,), {"judge": judge})
    server_cls = type("Server", (ThreadingHTTPServer,), {"request_queue_size": 256, "daemon_threads": True})
    server = server_cls(("127.0.0.1", port), handler)   # a deep backlog: vendors open many connections at once
    threading.Thread(target=server.serve_forever, name="realistic-judge", daemon=True).start()
    return Served(f"http://127.0.0.1:{server.server_address[1]}/v1", judge, server)


@contextlib.contextmanager
def serve(port: int = 0, noise: Noise | None = None, mode: str = "legacy", sampling=None, logprobs: bool = False):
    """``with serve() as judge:`` a running realistic judge, shut down afterwards."""
    s = start(port, noise, mode, sampling, logprobs)
    try:
        yield s
    finally:
        s.server.shutdown()
        s.server.server_close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.judges.realistic", description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port)")
    p.add_argument("--quiet-model", action="store_true", help="no noise: clean JSON, usage always")
    p.add_argument("--mode", choices=MODES, default="legacy", help="the kind of server (module docstring)")
    args = p.parse_args(argv)
    s = start(args.port, Noise.none() if args.quiet_model else None, args.mode)
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
