"""A loopback HTTP relay into the harness gateway, for MLflow's judge (it takes no client, only a URL).

MLflow's ``openai:/<model>`` judges post with ``requests.post`` to the base URL they read from the
process environment (``OPENAI_API_BASE``, else ``OPENAI_BASE_URL``) on every call; they cannot be
handed the run's ``httpx`` client, and a run's gateway answers in-process, with no socket
(:mod:`harness.judge.transport`). So each process that scores MLflow cells runs one relay:

- a ``ThreadingHTTPServer`` on ``127.0.0.1`` (an ephemeral port, loopback only) in a daemon thread;
- ``POST /v1/chat/completions`` names its cell with the ``X-Harness-Cell`` header (the cell's
  ``run/case/metric`` as in the cell's gateway URL; MLflow sends it through ``extra_headers=``);
- the body goes, byte for byte, to that cell's gateway URL over the cell's own client (the run's
  shared ``httpx`` client, whose transport is the gateway: :meth:`Endpoint.openai` 's path), and the
  gateway's status and body come back byte for byte. No header is passed on: the ``Authorization``
  MLflow sends (whatever ``OPENAI_API_KEY`` holds) is dropped here, never stored or logged; the
  gateway gets the endpoint's placeholder key as every other vendor's client sends it.

A request for a cell that is not open (none registered, or a late one after its cell ended) is
answered 400 without reaching the judge. The relay logs nothing.
"""
from __future__ import annotations

import contextlib
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

HEADER = "X-Harness-Cell"
ROUTES = ("chat/completions",)
"""The routes relayed (after ``/v1/``): MLflow's judges send chat completions only."""
LOOPBACK = ("127.0.0.1", "localhost")
"""Added to ``NO_PROXY`` so a user's proxy never carries a call to the relay (``requests`` trusts
the environment's proxies)."""


def cell_key(base_url: str) -> str:
    """The ``run/case/metric`` part of a cell's gateway URL (still URL-quoted), or the whole URL path
    when it is not a cell URL.

    >>> cell_key("http://127.0.0.1:9/cell/r/case%2F1/mlflow.groundedness/v1")
    'r/case%2F1/mlflow.groundedness'
    >>> cell_key("http://127.0.0.1:9/v1")
    '/v1'
    """
    path = urlsplit(base_url).path.rstrip("/")
    if path.startswith("/cell/") and path.endswith("/v1"):
        return path[len("/cell/"):-len("/v1")]
    return path


def _error(status: int, message: str) -> tuple[int, bytes]:
    return status, json.dumps({"error": {"message": message, "type": "invalid_request_error",
                                         "code": status}}).encode()


class Relay:
    """One per process (:func:`relay`). :meth:`open` a cell for the length of its vendor call."""

    def __init__(self):
        self._cells: dict[str, object] = {}
        self._lock = threading.Lock()
        self._own = None
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 - the stdlib's name
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size) if size else b""
                status, payload = owner.forward(self.path, self.headers.get(HEADER, ""), body)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):   # the relay logs nothing (no URL, no header)
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="harness-mlflow-relay", daemon=True).start()

    @property
    def url(self) -> str:
        """The OpenAI-style base URL MLflow is pointed at (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @contextlib.contextmanager
    def open(self, endpoint):
        """Relay the requests that name ``endpoint``'s cell to it while the block runs; yields the
        headers the vendor must send (``{X-Harness-Cell: run/case/metric}``)."""
        key = cell_key(endpoint.base_url)
        with self._lock:
            if key in self._cells:
                raise RuntimeError(f"the MLflow relay already has cell {key} open")
            self._cells[key] = endpoint
        try:
            yield {HEADER: key}
        finally:
            with self._lock:
                self._cells.pop(key, None)

    def forward(self, path: str, key: str, body: bytes) -> tuple[int, bytes]:
        """``(status, body)`` for one request: the gateway's answer as it came, or the relay's 400/404."""
        route = path.split("?", 1)[0].strip("/")
        route = route[len("v1/"):] if route.startswith("v1/") else route
        if route not in ROUTES:
            return _error(404, f"the MLflow relay serves POST /v1/{', /v1/'.join(ROUTES)}, not {path}")
        with self._lock:
            endpoint = self._cells.get(key)
        if endpoint is None:
            return _error(400, f"no open cell {key!r} at the MLflow relay (the {HEADER} header names the cell)")
        import httpx  # noqa: PLC0415 - lazy, as everywhere in the adapters

        try:
            r = self._client(endpoint).post(
                f"{endpoint.base_url.rstrip('/')}/{route}", content=body, timeout=endpoint.timeout_s,
                headers={"Content-Type": "application/json", "Authorization": f"Bearer {endpoint.api_key}"})
        except httpx.TimeoutException:
            return _error(504, f"no answer from the harness gateway in {endpoint.timeout_s:g}s")
        except httpx.HTTPError as e:
            return _error(502, f"the harness gateway could not be reached: {type(e).__name__}")
        return r.status_code, r.content

    def _client(self, endpoint):
        """The cell's client: the run's shared sync client (its transport is the gateway), else one
        private client of the relay's (an endpoint outside a run)."""
        if endpoint.pool is not None:
            return endpoint.pool.sync_client()
        with self._lock:
            if self._own is None:
                import httpx  # noqa: PLC0415

                self._own = httpx.Client(trust_env=False)
            return self._own


_RELAY: Relay | None = None
_START = threading.Lock()


def relay() -> Relay:
    """The process's relay, started on first use; MLflow's environment is pointed at it then:
    ``OPENAI_API_BASE`` (read by MLflow's OpenAI provider on each call; the other vendors' clients are
    built with an explicit base URL and never read it), ``OPENAI_API_KEY`` only when unset (MLflow
    refuses to call without one; a placeholder), and loopback added to ``NO_PROXY``/``no_proxy``."""
    global _RELAY
    with _START:
        if _RELAY is None:
            _RELAY = Relay()
        # on every use, not once: a harness call restores the caller's environment when it ends
        # (harness.metric.vendor_env.switches), and the next call's MLflow cells need it pointed here again
        os.environ["OPENAI_API_BASE"] = _RELAY.url
        os.environ.setdefault("OPENAI_API_KEY", "harness-gateway")
        for name in ("NO_PROXY", "no_proxy"):
            have = [h for h in os.environ.get(name, "").split(",") if h]
            if any(h not in have for h in LOOPBACK):
                os.environ[name] = ",".join(have + [h for h in LOOPBACK if h not in have])
        return _RELAY
