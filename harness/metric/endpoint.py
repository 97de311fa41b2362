"""Where an adapter sends its judge calls (:class:`Endpoint`: the gateway URL of one cell, with OpenAI clients and a
plain JSON POST over the run's shared connection pools), and the error of a judge call answered with a non-2xx.

Layer: imports only :mod:`harness.core` (and, lazily, ``openai`` / ``httpx``).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:  # pragma: no cover
    import openai


class JudgeHTTPError(RuntimeError):
    """A judge call of :meth:`Endpoint.post_json` answered with a non-2xx status (0: no answer in time)."""

    def __init__(self, status: int, message: str):
        super().__init__(f"judge HTTP {status}: {message}" if status else message)
        self.status = status


@dataclass(frozen=True)
class Endpoint:
    """Where an adapter sends its judge calls: the gateway URL of one cell.

    The URL encodes the run, case and metric, so every call is attributed. The key is a
    placeholder the gateway ignores: the real key (if any) stays in the gateway's memory.
    """

    base_url: str
    """``http://127.0.0.1:PORT/cell/<run>/<case>/<metric>/v1``."""
    model: str
    """The model id to put in requests (the judge's, or ``reference-judge``)."""
    api_key: str = "harness-gateway"
    """Placeholder; never a real key."""
    timeout_s: float = 600.0
    """Client-side timeout; the gateway enforces its own per-call timeout upstream."""
    batched: bool = False
    """The judge is reached through its provider's batch API (``--judge-batch``): a call may wait hours for its
    batch, and ``timeout_s`` has grown by as long. An adapter whose vendor sets a shorter timeout of its own on
    each call gives it this one instead (a named client setting, never a change to the request)."""
    pool: Any = dataclasses.field(default=None, compare=False, repr=False)
    """The runner's shared HTTP connection pools (``harness.metric.http.Pools``); None builds private ones."""

    def async_openai(self) -> "openai.AsyncOpenAI":
        """An ``AsyncOpenAI`` on this cell's URL over the run's shared connection pool, SDK retries off
        (the gateway owns retries)."""
        import openai  # noqa: PLC0415 - lazy: the openai SDK costs ~0.4 s to import

        http = self.pool.async_client() if self.pool is not None else None
        return openai.AsyncOpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0,
                                  timeout=self.timeout_s, http_client=http)

    async def post_json(self, route: str, body: dict) -> dict:
        """POST ``body`` to ``<base_url>/<route>`` (e.g. ``chat/completions``) and return the JSON reply;
        :class:`JudgeHTTPError` when the reply is not a 2xx. The harness's own scorers use it (the vendors
        keep their SDK clients).

        In a run the pool carries the in-process transport into the gateway, and the request dict goes
        to the gateway as it is and its reply dict comes back (no HTTP model, no encoding, no parsing:
        the harness's own cost per judge call); anywhere else it is a plain JSON POST with ``httpx``."""

        transport = getattr(self.pool, "transport", None)
        if hasattr(transport, "post"):
            path = f"{urlsplit(self.base_url).path.rstrip('/')}/{route}".encode()
            try:
                status, payload = await transport.post(path, body, self.timeout_s)
            except TimeoutError:
                raise JudgeHTTPError(0, f"no answer from the harness gateway in {self.timeout_s:g}s") from None
        else:
            import httpx  # noqa: PLC0415 - lazy: httpx costs ~0.1 s to import

            client = self.pool.async_client() if self.pool is not None else None
            own = client is None
            if own:
                client = httpx.AsyncClient(timeout=self.timeout_s, trust_env=False)
            try:
                r = await client.post(f"{self.base_url.rstrip('/')}/{route}", json=body, timeout=self.timeout_s,
                                      headers={"Authorization": f"Bearer {self.api_key}"})
            finally:
                if own:
                    await client.aclose()
            status = r.status_code
            try:
                payload = r.json()
            except ValueError:
                payload = {"error": {"message": r.text[:300]}}
        if not 200 <= status < 300:
            err = payload.get("error") if isinstance(payload, dict) else None
            msg = err.get("message") if isinstance(err, dict) else err
            raise JudgeHTTPError(status, str(msg or payload)[:300])
        if not isinstance(payload, dict):
            raise JudgeHTTPError(status, f"the reply is {type(payload).__name__}, not a JSON object")
        return payload

    def openai(self) -> "openai.OpenAI":
        """A sync ``OpenAI`` client on this cell's URL over the shared pool, SDK retries off."""
        import openai  # noqa: PLC0415 - lazy: the openai SDK costs ~0.4 s to import

        http = self.pool.sync_client() if self.pool is not None else None
        return openai.OpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0,
                             timeout=self.timeout_s, http_client=http)
