"""An in-process ``httpx`` transport into the judge gateway: no socket, no HTTP framing per call.

The vendors' clients (the openai SDK under Ragas, DeepEval and TruLens) take an ``httpx`` client;
inside a run that client carries a :class:`GatewayTransport`, so a judge call is one call of
:meth:`harness.judge.gateway.Gateway.handle` (the same function the loopback server's routes call): the
request body the SDK encoded is parsed once, the reply dict is encoded once for the SDK to parse,
and nothing else is encoded, framed or copied. The harness's own scorers (in-house, baseline,
cascade) skip even that: :meth:`GatewayTransport.post` hands their request dict to the gateway and
its reply dict back (:meth:`harness.metric.endpoint.Endpoint.post_json`).

The cell of a request comes from its URL path, ``/cell/<run>/<case>/<metric>/v1/<route>``, exactly
as on the loopback server (each part URL-quoted), or from the ``X-Harness-Cell`` header on
``/v1/<route>``. The host part of the URL is never used: no connection is made.

Both halves of ``httpx``'s transport interface are served by one object:

- async (Ragas, DeepEval, the in-house scorer): in the gateway's own event loop, the request runs as
  its own task, shielded from the caller's cancellation, exactly as a server answers a request whose
  client went away: a call that reached the judge always ends in the cell's ledger. From another
  loop, the request is handed to the gateway's loop.
- sync (TruLens, which calls from worker threads): the request is handed to the gateway's loop and
  the thread waits for the answer. A sync call from the gateway loop's own thread would wait for
  itself; it raises instead.

The client's read timeout (``httpx`` passes it in the request's extensions) bounds the wait, as it
would on a socket; on expiry the request keeps running to its end in the gateway (and its ledger).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
from urllib.parse import unquote

from harness.judge.gateway import HEADER_NEEDED, _error, cell_of_header
from harness.judge.gateway import ROUTES as ENDPOINTS
from harness.judge.upstream import Cell

import httpx

ROUTES = {("POST", name) for name in ENDPOINTS} | {("GET", "models")}
"""(method, route after ``/v1/``) the gateway answers: every ``POST`` through :meth:`~harness.judge.gateway.Gateway.handle`
(its route table, :data:`harness.judge.gateway.ROUTES`), ``GET models`` through ``models_reply``."""

_JSON = [(b"content-type", b"application/json")]


def route_of(raw_path: bytes, header: str | None) -> tuple[Cell | None, str]:
    """The cell and the route (the path after ``v1/``) of a request path.

    >>> route_of(b"/cell/r/case%2F1/inhouse.span/v1/chat/completions", None)
    (Cell(run='r', case='case/1', metric='inhouse.span'), 'chat/completions')
    >>> route_of(b"/v1/models?x=1", "r/c/m")
    (Cell(run='r', case='c', metric='m'), 'models')
    >>> route_of(b"/v1/chat/completions", None)
    (None, 'chat/completions')
    """
    path = raw_path.split(b"?", 1)[0].decode("ascii", "replace")
    parts = path.strip("/").split("/")
    if len(parts) >= 5 and parts[0] == "cell" and parts[4] == "v1":
        return Cell(*(unquote(p) for p in parts[1:4])), "/".join(parts[5:])
    if parts and parts[0] == "v1":

        return (cell_of_header(header) if header else None), "/".join(parts[1:])
    return None, path


def _reply(status: int, payload: dict) -> httpx.Response:
    return httpx.Response(status, headers=_JSON, content=json.dumps(payload, ensure_ascii=False).encode())


def _failed(exc: Exception) -> tuple[int, dict]:

    return _error(500, f"harness gateway failed: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")


def _read_timeout(request: httpx.Request) -> float | None:
    return (request.extensions.get("timeout") or {}).get("read")


async def _answer(loop: asyncio.AbstractEventLoop, call, timeout_s: float | None) -> tuple[int, dict]:
    """Await the gateway coroutine ``call`` in its loop ``loop``, shielded from the caller's cancellation
    (a call that reached the judge ends in the cell's ledger), for at most ``timeout_s`` (TimeoutError);
    a gateway bug becomes a 500 naming it, as a server would answer."""
    if asyncio.get_running_loop() is loop:
        pending = asyncio.shield(loop.create_task(call))
    else:
        pending = asyncio.shield(asyncio.wrap_future(asyncio.run_coroutine_threadsafe(call, loop)))
    try:
        async with asyncio.timeout(timeout_s):
            return await pending
    except TimeoutError:
        raise
    except Exception as e:  # noqa: BLE001 - a gateway bug: a 500 naming it
        return _failed(e)


class GatewayTransport(httpx.AsyncBaseTransport, httpx.BaseTransport):
    """``httpx`` transport (sync and async) that answers every request with the gateway in-process."""

    def __init__(self, gateway):
        """``gateway``: a :class:`harness.judge.gateway.Gateway` that is attached to an event loop
        (:meth:`~harness.judge.gateway.Gateway.attach`) or serving (:meth:`~harness.judge.gateway.Gateway.start`)."""
        self.gateway = gateway

    def _call(self, request: httpx.Request, body: bytes):
        """The gateway coroutine that answers ``request`` (the gateway running), or a ready reply (404, 400)."""
        return self._route(request.method, request.url.raw_path, request.headers.get("x-harness-cell"),
                           request.url.path, body)

    def _route(self, method: str, raw_path: bytes, header: str | None, shown_path: str, body):
        """The gateway coroutine for a request (its body raw or parsed), or a ready reply (404, 400)."""
        cell, route = route_of(raw_path, header)
        if (method, route) not in ROUTES:
            return 404, {"error": {"message": f"not found: {method} {shown_path}",
                                   "type": "invalid_request_error", "code": 404}}
        if cell is None:

            return _error(400, HEADER_NEEDED)
        self._loop()
        if method == "GET":
            return self.gateway.models_reply(cell, body)
        return self.gateway.handle(cell, body, route)

    def _loop(self) -> asyncio.AbstractEventLoop:
        loop = self.gateway.loop
        if loop is None or loop.is_closed():
            raise httpx.ConnectError("the harness gateway is not running")
        return loop

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        call = self._call(request, body)
        if isinstance(call, tuple):
            return _reply(*call)
        try:
            status, payload = await _answer(self._loop(), call, _read_timeout(request))
        except TimeoutError:
            raise httpx.ReadTimeout("no answer from the harness gateway in time", request=request) from None
        return _reply(status, payload)

    async def post(self, raw_path: bytes, body: dict, timeout_s: float | None) -> tuple[int, dict]:
        """A POST of an already built JSON body, answered with no HTTP model at all: the harness's own
        scorers' path (:meth:`harness.metric.endpoint.Endpoint.post_json`). The request dict reaches
        :meth:`~harness.judge.gateway.Gateway.handle` as it is (no encoding, no parsing) and the reply dict
        comes back as the gateway made it; routing, shielding and the timeout are those of
        :meth:`handle_async_request`. Raises ``TimeoutError`` when no answer came in time."""
        call = self._route("POST", raw_path, None, raw_path.decode("ascii", "replace"), body)
        if isinstance(call, tuple):
            return call
        return await _answer(self._loop(), call, timeout_s)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        call = self._call(request, body)
        if isinstance(call, tuple):
            return _reply(*call)
        loop = self._loop()
        if asyncio._get_running_loop() is loop:
            call.close()
            raise RuntimeError("a sync judge call from the gateway's own event loop would wait for itself; "
                               "make it from a worker thread (asyncio.to_thread)")
        future = asyncio.run_coroutine_threadsafe(call, loop)
        try:
            status, payload = future.result(_read_timeout(request))
        except concurrent.futures.TimeoutError:
            raise httpx.ReadTimeout("no answer from the harness gateway in time", request=request) from None
        except Exception as e:  # noqa: BLE001 - as above
            return _reply(*_failed(e))
        return _reply(status, payload)

    async def aclose(self) -> None:
        return None

    def close(self) -> None:
        return None
