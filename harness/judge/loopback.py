"""One authenticated loopback face into a run's gateway, for vendors that take a base URL and no client.

MLflow's judge posts with ``requests`` to the base URL in its environment and Azure's prompty builds
its own ``AsyncOpenAI`` per call: neither can be handed the run's ``httpx`` client, whose transport is
the gateway in-process (:mod:`harness.judge.transport`), so they need a listening socket. Each process
has one (:func:`face`): a ``ThreadingHTTPServer`` on ``127.0.0.1`` (an ephemeral port) in a daemon thread.
A vendor's adapter says how the vendor finds it in one :class:`Use` (its base URL handed over, or read
from which environment variables) and opens each cell with :func:`cell`; nothing else of the face is
the vendor's.

It serves only its run's cells (issue 33.1: any other local process could use the relays before):

- a cell is opened for the length of its vendor call (:meth:`Face.open`) and gets a fresh random token
  (32 bytes from :mod:`secrets`, never derived from the cell id); a request names its cell only by that
  token, in the URL path (``http://127.0.0.1:PORT/<token>/v1``, the base URL handed to the vendor) or in
  the ``X-Harness-Token`` header (MLflow: its base URL is process-wide, its ``extra_headers=`` per call);
- a request without an open cell's token is answered 401 before its body is read, and nothing reaches
  the gateway, let alone the judge: the run's key never leaves the gateway anyway (the face sends the
  endpoint's placeholder key; the caller's ``Authorization`` stops here);
- a body needs a ``Content-Length`` of at most :data:`MAX_REQUEST_BYTES` (411/400/413 otherwise, unread),
  and a malformed request ends in a one-line HTTP error, never a traceback in the run's terminal;
- the body goes byte for byte to the cell's gateway URL (``POST`` chat completions, the Responses API,
  embeddings; ``GET`` models) over the cell's own sync client, and the gateway's status, body and
  content type come back as they came. The face logs nothing.

:func:`scoped_env` sets environment variables for as long as any of its holders is inside, and puts the
caller's values back exactly (an unset variable unset again) when the last one leaves.
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN_HEADER = "X-Harness-Token"
MAX_REQUEST_BYTES = 16 * 2**20
"""The largest request body the face reads (a vendor's judge prompt is kilobytes)."""
ROUTES = {("POST", "chat/completions"), ("POST", "responses"), ("POST", "embeddings"), ("GET", "models")}
"""(method, route after ``/v1/``) the face relays: what the gateway serves (:data:`harness.judge.transport.ROUTES`,
from the gateway's route table; a test holds the two equal)."""
READ_TIMEOUT_S = 60.0
"""How long a connection may take to send its request."""


@dataclass(frozen=True)
class Pass:
    """What a vendor is handed for one open cell."""

    token: str
    base_url: str
    """``http://127.0.0.1:PORT/<token>/v1``."""

    @property
    def headers(self) -> dict[str, str]:
        """The header that names the cell when the base URL cannot (``{X-Harness-Token: token}``; none
        when the base URL is a real gateway URL that names the cell itself)."""
        return {TOKEN_HEADER: self.token} if self.token else {}


def _error(status: int, message: str) -> tuple[int, bytes, str]:
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error", "code": status}})
    return status, body.encode(), "application/json"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):   # a broken connection is the caller's business
        return None


class Face:
    """The process's loopback face (:func:`face`)."""

    def __init__(self):
        self._cells: dict[str, object] = {}
        self._lock = threading.Lock()
        self._own = None
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = READ_TIMEOUT_S

            def do_POST(self):  # noqa: N802 - the stdlib's name
                self._serve("POST")

            def do_GET(self):  # noqa: N802
                self._serve("GET")

            def _serve(self, method: str):
                status, payload, kind = owner.answer(method, self.path, self.headers, self._body)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                if status in (400, 401, 411, 413):   # a body left unread ends the connection
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(payload)

            def _body(self, size: int) -> bytes:
                return self.rfile.read(size) if size else b""

            def log_message(self, *args):   # the face logs nothing (no URL, no token)
                return None

        self._server = _Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, name="harness-loopback-face", daemon=True).start()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @contextlib.contextmanager
    def open(self, endpoint):
        """Serve ``endpoint``'s cell while the block runs; yields its :class:`Pass`."""
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._cells[token] = endpoint
        try:
            yield Pass(token, f"{self.url}/{token}/v1")
        finally:
            with self._lock:
                self._cells.pop(token, None)

    def answer(self, method: str, path: str, headers, read) -> tuple[int, bytes, str]:
        """``(status, body, content type)`` for one request; ``read(n)`` reads its body (only once it is
        authenticated and its length allowed)."""
        parts = path.split("?", 1)[0].strip("/").split("/")
        token = headers.get(TOKEN_HEADER, "")
        if parts and parts[0] != "v1" and not token:
            token, parts = parts[0], parts[1:]
        with self._lock:
            endpoint = self._cells.get(token) if token else None
        if endpoint is None:
            return _error(401, "the harness's loopback face serves only the cells of its own run")
        route = "/".join(parts[1:]) if parts[:1] == ["v1"] else ""
        if (method, route) not in ROUTES:
            return _error(404, f"the harness's loopback face serves {', '.join(sorted(r for _, r in ROUTES))}")
        body = b""
        if method == "POST":
            if headers.get("Transfer-Encoding"):
                return _error(411, "send the request body with a Content-Length")
            declared = (headers.get("Content-Length") or "").strip()
            if not declared.isdigit():
                return _error(411 if not declared else 400, "send the request body with a Content-Length")
            if int(declared) > MAX_REQUEST_BYTES:
                return _error(413, f"request body over the loopback face's {MAX_REQUEST_BYTES // 2**20} MB cap")
            body = read(int(declared))
        return self._forward(endpoint, method, route, body, headers.get("Content-Type") or "application/json")

    def _forward(self, endpoint, method: str, route: str, body: bytes, kind: str) -> tuple[int, bytes, str]:
        import httpx  # noqa: PLC0415 - lazy: httpx costs ~0.1 s to import

        try:
            r = self._client(endpoint).request(
                method, f"{endpoint.base_url.rstrip('/')}/{route}", content=body if method == "POST" else None,
                timeout=endpoint.timeout_s, headers={"Content-Type": kind, "Authorization": f"Bearer {endpoint.api_key}"})
        except httpx.TimeoutException:
            return _error(504, f"no answer from the harness gateway in {endpoint.timeout_s:g}s")
        except httpx.HTTPError as e:
            return _error(502, f"the harness gateway could not be reached: {type(e).__name__}")
        return r.status_code, r.content, r.headers.get("content-type") or "application/json"

    def _client(self, endpoint):
        """The cell's client: the run's shared sync client (its transport is the gateway), else one
        private client of the face's (an endpoint outside a run)."""
        if endpoint.pool is not None:
            return endpoint.pool.sync_client()
        with self._lock:
            if self._own is None:
                import httpx  # noqa: PLC0415

                self._own = httpx.Client(trust_env=False)
            return self._own


LOOPBACK_HOSTS = ("127.0.0.1", "localhost")
"""Added to ``NO_PROXY``/``no_proxy`` while a vendor reads the face's URL from the environment: a client that
obeys the environment's proxies (``requests``) must never send a call to the face through one."""


@dataclass(frozen=True)
class Use:
    """How a vendor that takes a base URL and no client is pointed at the face: an adapter's whole say in it.

    With no ``base_env`` the vendor is handed the cell's base URL (``Pass.base_url``), the cell's token in
    its path (Azure). With ``base_env`` the vendor reads its base URL from the process environment, one URL
    for every cell at once, so the cell is named by the ``X-Harness-Token`` header the vendor must send
    (``Pass.headers``; MLflow, through its ``extra_headers=``)."""

    base_env: tuple[str, ...] = ()
    """The environment variables the vendor reads its base URL from: set to the face's ``/v1`` URL while any
    cell of the vendor is open, and put back as they were when the last one ends (:func:`scoped_env`)."""
    key_env: str = ""
    """A key variable the vendor will not call without: a placeholder while its cells run, when it is unset
    (the key the vendor sends stops at the face either way)."""

    def env(self, base_url: str) -> dict[str, str]:
        """The variables set while the vendor's cells run (from the environment as it is now).

        >>> env = Use(("OPENAI_API_BASE",), "OPENAI_API_KEY").env("http://127.0.0.1:9/v1")
        >>> env["OPENAI_API_BASE"], "127.0.0.1" in env["NO_PROXY"].split(",")
        ('http://127.0.0.1:9/v1', True)
        >>> Use().env("http://127.0.0.1:9/v1")
        {}
        """
        if not self.base_env:
            return {}
        out = dict.fromkeys(self.base_env, base_url)
        if self.key_env and not os.environ.get(self.key_env):
            out[self.key_env] = PLACEHOLDER_KEY
        for name in ("NO_PROXY", "no_proxy"):
            have = [h for h in os.environ.get(name, "").split(",") if h]
            out[name] = ",".join(have + [h for h in LOOPBACK_HOSTS if h not in have])
        return out


PLACEHOLDER_KEY = "harness-gateway"
"""The key a vendor is given where it insists on one (:attr:`Use.key_env`); the gateway never sees it."""


@contextlib.contextmanager
def cell(endpoint, use: Use):
    """Open ``endpoint``'s cell for the vendor ``use`` describes while the block runs; yields the
    :class:`Pass` to hand the vendor (its ``base_url``, or its ``headers`` when the vendor reads its base
    URL from the environment).

    An endpoint outside a run (a real gateway URL, no in-process gateway) whose vendor takes its base URL
    as given needs no face: the URL itself names the cell, and it is handed over as it is."""
    if not use.base_env and getattr(getattr(endpoint, "pool", None), "transport", None) is None:
        yield Pass("", endpoint.base_url)
        return
    f = face()
    holder = "loopback:" + ",".join(use.base_env)
    with scoped_env(holder, lambda: use.env(f"{f.url}/v1")), f.open(endpoint) as opened:
        yield opened


_FACE: Face | None = None
_START = threading.Lock()


def face() -> Face:
    """The process's face, started on first use."""
    global _FACE
    with _START:
        if _FACE is None:
            _FACE = Face()
        return _FACE


_ENV_LOCK = threading.Lock()
_ENV_HOLDERS: dict[str, list] = {}


@contextlib.contextmanager
def scoped_env(name: str, values):
    """Set the variables ``values()`` gives (called by the first holder only) in ``os.environ`` while any
    holder of ``name`` is inside the block; the last one out puts every variable back as the first one
    found it (unset ones unset).

    >>> os.environ.pop("HARNESS_DT_X", None) and None
    >>> with scoped_env("dt", lambda: {"HARNESS_DT_X": "1"}):
    ...     with scoped_env("dt", lambda: {"HARNESS_DT_X": "2"}):
    ...         os.environ["HARNESS_DT_X"]
    '1'
    >>> "HARNESS_DT_X" in os.environ
    False
    """
    with _ENV_LOCK:
        held = _ENV_HOLDERS.get(name)
        if held is None:
            new = values()
            saved = {k: os.environ.get(k) for k in new}
            os.environ.update(new)
            held = _ENV_HOLDERS[name] = [0, saved]
        held[0] += 1
    try:
        yield
    finally:
        with _ENV_LOCK:
            held[0] -= 1
            if not held[0]:
                del _ENV_HOLDERS[name]
                for k, old in held[1].items():
                    if old is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = old
