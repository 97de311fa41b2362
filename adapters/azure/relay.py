"""A loopback HTTP relay for one cell: Azure's prompty builds its own ``AsyncOpenAI`` client per call
from the model configuration (no ``http_client`` can be handed to it), so it needs a real URL.

Inside a run the gateway is reached in-process (the run's pools carry the gateway transport) and a
cell's gateway URL names no listening socket. :func:`cell_url` serves, for the time of one cell, an
aiohttp server on ``127.0.0.1`` (an ephemeral port) in the running event loop; it accepts only the
cell's own path (``/cell/<run>/<case>/<metric>/v1/...``) and hands each request to the run's pooled
client as it came (method, path, body bytes, headers but the hop ones) and the gateway's reply back as
it came (status, body, content type). So the cell is named by its URL path exactly as on the gateway's
own loopback server, the gateway's ledger, cache and retries apply, and nothing leaves the machine.

Outside a run (an endpoint with no pools: a real gateway URL) the URL is used as it is.
"""
from __future__ import annotations

import contextlib
from urllib.parse import urlsplit

HOP = {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "accept-encoding"}
"""Headers that belong to one hop, not to the request."""


def _forwarded(headers) -> dict:
    """The request's headers without the hop ones.

    >>> _forwarded({"Host": "x", "Content-Type": "application/json", "Connection": "keep-alive"})
    {'Content-Type': 'application/json'}
    """
    return {k: v for k, v in headers.items() if k.lower() not in HOP}


@contextlib.asynccontextmanager
async def cell_url(endpoint):
    """Yield the base URL Azure's client is given for this cell: a relay into the run's gateway
    while the block runs, or ``endpoint.base_url`` itself when there is no in-process gateway."""
    pools = endpoint.pool
    if getattr(pools, "transport", None) is None:
        yield endpoint.base_url
        return
    from aiohttp import web

    prefix = urlsplit(endpoint.base_url).path.rstrip("/")
    client = pools.async_client()

    async def forward(request: web.Request) -> web.StreamResponse:
        path = request.rel_url.raw_path
        if not (path == prefix or path.startswith(prefix + "/")):
            return web.json_response({"error": {"message": f"this relay serves {prefix} only"}}, status=404)
        body = await request.read()
        reply = await client.request(request.method, endpoint.base_url[: -len(prefix)] + str(request.rel_url),
                                     content=body, headers=_forwarded(request.headers),
                                     timeout=endpoint.timeout_s)
        return web.Response(status=reply.status_code, body=reply.content,
                            content_type=(reply.headers.get("content-type") or "application/json").split(";")[0])

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", forward)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}{prefix}"
    finally:
        await runner.cleanup()
