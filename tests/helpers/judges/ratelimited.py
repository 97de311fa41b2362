"""The realistic test judge with a provider's rate limit: requests and tokens per minute, enforced.

A request that would pass the budget in the last window is answered as OpenAI answers it: HTTP 429 with
``Retry-After`` (seconds until room) and the ``x-ratelimit-*`` headers (limit, remaining and reset of
requests and tokens; reset as OpenAI writes it, e.g. ``1.5s``). Every answered request carries the same
headers. Tokens are counted as the provider bills them, from the reply's ``usage`` (prompt + completion),
at the time the request came in. The clock is injectable (``clock``: a function returning seconds), so a
test can run it on a virtual clock; ``headers=False`` leaves the ``x-ratelimit-*`` headers out (a server
that sends only ``Retry-After``).

``with serve(rpm=6) as judge: judge.url, judge.budget.stats()``; ``python -m tests.helpers.judges.ratelimited
--rpm 6000`` serves one (the bench's judge at 100 requests per second: ``GET /v1/budget`` gives its counts,
``POST /v1/budget/reset`` starts them again).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import threading
import time
from collections import deque
from http.server import ThreadingHTTPServer

from tests.helpers.judges.realistic import MODEL, Noise, RealisticJudge, Served, _Handler


class Budget:
    """A provider's sliding-window budget (thread-safe): ``admit(tokens)`` -> (ok, headers)."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None, window_s: float = 60.0,
                 clock=time.monotonic, headers: bool = True):
        self.rpm, self.tpm, self.window_s, self.clock, self.headers = rpm, tpm, window_s, clock, headers
        self.r = int(rpm * window_s / 60.0) if rpm else None
        self.t = int(tpm * window_s / 60.0) if tpm else None
        self._log: deque[tuple[float, int]] = deque()
        self._tokens = 0
        self._lock = threading.Lock()
        self.received = 0
        """Requests that reached the budget (answered or refused)."""
        self.answered = 0
        self.refused = 0
        """429s sent."""
        self.tokens = 0
        """Tokens of the answered requests."""
        self.max_requests = 0
        self.max_tokens = 0
        """Most requests and tokens ever in one window (answered ones)."""

    def admit(self, tokens: int) -> tuple[bool, dict]:
        with self._lock:
            now = self.clock()
            self.received += 1
            while self._log and self._log[0][0] <= now - self.window_s:
                self._tokens -= self._log.popleft()[1]
            wait_r = wait_t = 0.0
            if self.r is not None and len(self._log) + 1 > self.r:
                wait_r = self._log[len(self._log) - self.r][0] + self.window_s - now
            if self.t is not None and self._tokens + tokens > self.t and self._log:
                over = self._tokens + tokens - self.t
                for at, n in self._log:
                    wait_t = at + self.window_s - now
                    over -= n
                    if over <= 0:
                        break
            ok = wait_r <= 0 and wait_t <= 0
            if ok:
                self._log.append((now, tokens))
                self._tokens += tokens
                self.answered += 1
                self.tokens += tokens
                self.max_requests = max(self.max_requests, len(self._log))
                self.max_tokens = max(self.max_tokens, self._tokens)
            else:
                self.refused += 1
            head = self._headers(now, max(wait_r, wait_t)) if self.headers else {}
            if not ok:
                head["Retry-After"] = f"{max(wait_r, wait_t):.3f}"
            return ok, head

    def _headers(self, now: float, wait: float) -> dict:
        out = {}
        first = self._log[0][0] + self.window_s - now if self._log else 0.0
        if self.r is not None:
            out.update({"x-ratelimit-limit-requests": str(self.r),
                        "x-ratelimit-remaining-requests": str(max(0, self.r - len(self._log))),
                        "x-ratelimit-reset-requests": f"{max(first, wait):.3f}s"})
        if self.t is not None:
            out.update({"x-ratelimit-limit-tokens": str(self.t),
                        "x-ratelimit-remaining-tokens": str(max(0, self.t - self._tokens)),
                        "x-ratelimit-reset-tokens": f"{max(first, wait):.3f}s"})
        return out

    def reset(self) -> None:
        """Forget the window and the counts (a new scenario of the bench)."""
        with self._lock:
            self._log.clear()
            self._tokens = self.received = self.answered = self.refused = self.max_requests = self.max_tokens = 0
            self.tokens = 0

    def stats(self) -> dict:
        with self._lock:
            return {"received": self.received, "answered": self.answered, "refused": self.refused, "tokens": self.tokens,
                    "max_requests": self.max_requests, "max_tokens": self.max_tokens}


def used(reply: dict) -> int:
    """Prompt + completion tokens of a reply (estimated from its text when it has no usage)."""
    u = reply.get("usage") or {}
    if isinstance(u.get("total_tokens"), int):
        return u["total_tokens"]
    return math.ceil(len(json.dumps(reply)) / 4)


class _Limited(_Handler):
    budget: Budget = None

    def _send_with(self, status: int, obj: dict, headers: dict) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/budget"):
            return self._send(200, self.budget.stats())
        return super().do_GET()

    def do_POST(self):
        if self.path.rstrip("/").endswith("/budget/reset"):
            self.budget.reset()
            return self._send(200, {})
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return super().do_POST()
        body = self._body()
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return self._send(400, {"error": {"message": "body needs a 'messages' list"}})
        reply = self.judge.complete(body)
        ok, headers = self.budget.admit(used(reply))
        if not ok:
            return self._send_with(429, {"error": {"message": "Rate limit reached for requests", "type": "requests",
                                                   "code": "rate_limit_exceeded"}}, headers)
        self.judge.record("chat", body)
        self._send_with(200, reply, headers)


def start(rpm: float | None = None, tpm: float | None = None, window_s: float = 60.0, clock=time.monotonic,
          headers: bool = True, port: int = 0) -> Served:
    """Start a rate-limited realistic judge (clean replies, usage always) on 127.0.0.1 in a daemon thread;
    ``served.budget`` is its :class:`Budget`."""
    budget = Budget(rpm, tpm, window_s, clock, headers)
    judge = RealisticJudge(Noise.none())
    handler = type("Handler", (_Limited,), {"judge": judge, "prefix": "", "lanes": None, "budget": budget})
    server_cls = type("Server", (ThreadingHTTPServer,), {"request_queue_size": 256, "daemon_threads": True})
    server = server_cls(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, name="ratelimited-judge", daemon=True).start()
    served = Served(f"http://127.0.0.1:{server.server_address[1]}/v1", judge, server)
    served.budget = budget
    return served


@contextlib.contextmanager
def serve(**kw):
    """``with serve(rpm=..., tpm=..., window_s=..., clock=...) as judge:`` (:func:`start`), shut down after."""
    s = start(**kw)
    try:
        yield s
    finally:
        s.server.shutdown()
        s.server.server_close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.helpers.judges.ratelimited", description=__doc__.split("\n")[0])
    p.add_argument("--rpm", type=float, help="requests per minute")
    p.add_argument("--tpm", type=float, help="tokens per minute")
    p.add_argument("--window", type=float, default=60.0, help="seconds the per-minute budget is kept over")
    p.add_argument("--port", type=int, default=0)
    args = p.parse_args(argv)
    s = start(args.rpm, args.tpm, args.window, port=args.port)
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
