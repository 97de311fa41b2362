"""Azure's way into the run's gateway: the process's authenticated loopback face
(:mod:`harness.judge.loopback`), for the time of one cell.

Azure's prompty builds its own ``AsyncOpenAI`` client per call from the model configuration (no
``http_client`` can be handed to it), so it needs a real URL. Inside a run the gateway is reached
in-process (the run's pools carry the gateway transport) and a cell's gateway URL names no listening
socket. :func:`cell_url` opens the cell at the face for the length of the block and yields the base URL
Azure is given, ``http://127.0.0.1:PORT/<token>/v1``: the token is random and the cell's alone, so no
other local process can use it (the face answers 401, reading nothing). Each request goes to the
run's gateway as it came (method, route, body bytes) and the gateway's reply back as it came (status,
body, content type); the gateway's ledger, cache and retries apply, and nothing leaves the machine.

Outside a run (an endpoint with no pools: a real gateway URL) the URL is used as it is.
"""
from __future__ import annotations

import contextlib

from harness.judge.loopback import face


@contextlib.asynccontextmanager
async def cell_url(endpoint):
    """Yield the base URL Azure's client is given for this cell: the face while the block runs, or
    ``endpoint.base_url`` itself when there is no in-process gateway."""
    if getattr(endpoint.pool, "transport", None) is None:
        yield endpoint.base_url
        return
    with face().open(endpoint) as cell:
        yield cell.base_url
