"""Upstream judges behind the gateway, and the retry policy the harness owns.

Two upstreams: the in-process reference judge and any OpenAI-compatible HTTP endpoint. The gateway
calls :func:`call_with_retries`, which retries bounded, with exponential backoff, honouring
``Retry-After``, under a per-call timeout. A reply whose content does not honour the requested
``response_format`` (not JSON, or not fitting the json_schema: a missing key, a wrong type, a value
outside an enum) counts as a fault and is retried too; vendor SDK retries are off, so every attempt is
visible in the ledger.
"""
from __future__ import annotations

import asyncio
import contextvars
import email.utils
import itertools
import json
import os
import random
import time
from dataclasses import dataclass, field
from urllib.parse import quote

from harness.metric import UnrecognisedRequest


@dataclass(frozen=True)
class Cell:
    """The cell a request belongs to (from the gateway URL)."""

    run: str
    case: str
    metric: str

    @property
    def label(self) -> str:
        return f"{self.run}/{self.case}/{self.metric}"

    def header(self) -> str:
        """``X-Harness-Cell`` value: the three parts, URL-quoted, joined by ``/``."""
        return "/".join(quote(p, safe="") for p in (self.run, self.case, self.metric))


class UpstreamError(Exception):
    """A failed upstream attempt."""

    def __init__(self, message: str, *, status: int = 502, retryable: bool = True,
                 retry_after: float | None = None):
        super().__init__(message)
        self.status, self.retryable, self.retry_after = status, retryable, retry_after


@dataclass
class RetryPolicy:
    """Bounded retries with exponential backoff and jitter; Retry-After wins when given."""

    max_attempts: int = 4
    """Attempts per request, the first included."""
    base_delay_s: float = 0.5
    """Backoff before attempt n+1 is base * 2**(n-1), with up to 25 % jitter."""
    max_delay_s: float = 30.0
    """No single wait is longer (Retry-After included)."""
    timeout_s: float = 120.0
    """Per-attempt timeout."""
    seed: int | None = None
    """Seed for the jitter (None: random)."""
    _rng: random.Random = field(default=None, repr=False)

    def __post_init__(self):
        self._rng = random.Random(self.seed)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(0.0, retry_after), self.max_delay_s)
        d = self.base_delay_s * (2 ** (attempt - 1))
        return min(d * (1 + 0.25 * self._rng.random()), self.max_delay_s)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or HTTP-date).

    >>> parse_retry_after("2"), parse_retry_after(None), parse_retry_after("soon")
    (2.0, None, None)
    """
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def content_problem(body: dict, response: dict) -> str | None:
    """Why a 200 response cannot be what the request asked for, or None when it looks right.

    >>> req = {"response_format": {"type": "json_object"}}
    >>> ok = {"choices": [{"message": {"content": '{"a": 1}'}}]}
    >>> content_problem(req, ok) is None
    True
    >>> content_problem(req, {"choices": [{"message": {"content": '{"a": '}}]})
    'response_format json_object asked, reply is not JSON'
    >>> schema = {"type": "json_schema", "json_schema": {"name": "X", "schema": {"required": ["b"]}}}
    >>> content_problem({"response_format": schema}, ok)
    "reply lacks required key 'b' of schema X"
    """
    choices = response.get("choices") if isinstance(response, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        return "reply has no choices"
    msg = choices[0].get("message") or {}
    if msg.get("tool_calls"):
        return None
    content = msg.get("content")
    if not isinstance(content, str):
        return "reply has no message content"
    rf = body.get("response_format") or {}
    kind = rf.get("type")
    if kind not in ("json_object", "json_schema"):
        return None
    try:
        parsed = json.loads(content)
    except (ValueError, TypeError):
        return f"response_format {kind} asked, reply is not JSON"
    if kind == "json_schema":
        js = rf.get("json_schema") or {}
        required = (js.get("schema") or {}).get("required") or []
        if not isinstance(parsed, dict):
            return f"reply is not a JSON object (schema {js.get('name')})"
        for k in required:
            if k not in parsed:
                return f"reply lacks required key {k!r} of schema {js.get('name')}"
        bad = schema_mismatch(parsed, js.get("schema") or {})
        if bad:
            return f"reply does not fit schema {js.get('name')}: {bad}"
    return None


_JSON_TYPES = {"object": dict, "array": list, "string": str, "null": type(None)}
_BOOL_WORDS = ("true", "false", "yes", "no", "on", "off", "0", "1")


def _fits(value, t: str) -> bool:
    """Does ``value`` pass as JSON type ``t``? Scalars as leniently as the vendors' pydantic parsing takes
    them (lax mode: 2.0 or "2" for an integer, "0.5" for a number, 1 or "yes" for a boolean), so the
    gateway never rejects a reply the vendor would accept; structure (object, array, string) strictly.

    >>> _fits(2.0, "integer"), _fits("2", "integer"), _fits(2.5, "integer"), _fits(True, "integer")
    (True, True, False, False)
    >>> _fits("yes", "boolean"), _fits(5, "string"), _fits(["a"], "string")
    (True, False, False)
    """
    if t in ("integer", "number"):
        if isinstance(value, bool):
            return False
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                return False
        if not isinstance(value, (int, float)):
            return False
        return t == "number" or float(value).is_integer()
    if t == "boolean":
        return isinstance(value, bool) or (not isinstance(value, (list, dict)) and value in (0, 1)) or \
            (isinstance(value, str) and value.strip().lower() in _BOOL_WORDS)
    return t in _JSON_TYPES and isinstance(value, _JSON_TYPES[t])


def schema_mismatch(value, schema: dict, defs: dict | None = None, path: str = "$", depth: int = 0) -> str | None:
    """Where ``value`` breaks the JSON-schema subset structured outputs use (type, properties, required,
    items, enum, anyOf, local ``$ref``), or None. Anything else in the schema is not checked, and scalar
    types are checked as leniently as pydantic's lax mode (:func:`_fits`).

    >>> s = {"type": "object", "properties": {"v": {"type": "array", "items": {"enum": ["yes", "no"]}}}}
    >>> schema_mismatch({"v": ["yes"]}, s) is None, schema_mismatch({"v": "yes"}, s)
    (True, '$.v is str, expected array')
    >>> schema_mismatch({"v": ["maybe"]}, s)
    "$.v[0] is 'maybe', expected one of ['yes', 'no']"
    """
    if not isinstance(schema, dict) or depth > 32:
        return None
    defs = defs if defs is not None else (schema.get("$defs") or schema.get("definitions") or {})
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
        return schema_mismatch(value, defs.get(ref.rsplit("/", 1)[-1]) or {}, defs, path, depth + 1)
    if isinstance(schema.get("anyOf"), list):
        if all(schema_mismatch(value, s, defs, path, depth + 1) for s in schema["anyOf"]):
            return f"{path} matches none of anyOf"
    types = schema.get("type")
    types = [types] if isinstance(types, str) else types
    known = [t for t in types if t in _JSON_TYPES or t in ("integer", "number", "boolean")] \
        if isinstance(types, list) else []
    if known and not any(_fits(value, t) for t in known):
        return f"{path} is {type(value).__name__}, expected {'/'.join(known)}"
    if isinstance(schema.get("enum"), list) and value not in schema["enum"]:
        return f"{path} is {value!r}, expected one of {schema['enum']}"
    if isinstance(value, dict):
        for k in schema.get("required") or []:
            if k not in value:
                return f"{path} lacks required key {k!r}"
        for k, sub in (schema.get("properties") or {}).items():
            if k in value:
                bad = schema_mismatch(value[k], sub, defs, f"{path}.{k}", depth + 1)
                if bad:
                    return bad
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            bad = schema_mismatch(item, schema["items"], defs, f"{path}[{i}]", depth + 1)
            if bad:
                return bad
    return None


class ReferenceUpstream:
    """The in-process reference judge, with optional injected latency."""

    kind = "reference"

    def __init__(self, cases: dict[tuple[str, str], object] | None = None, latency_ms: float = 0.0):
        from harness.reference import ReferenceJudge

        self.judge = ReferenceJudge(latency_ms=latency_ms)
        self.cases = cases if cases is not None else {}
        self.model = "reference-judge"

    def scope(self, cell: Cell) -> str:
        from harness import registry
        from harness.cases import case_digest
        from harness.reference import REFERENCE_VERSION

        case = self._case(cell)
        version = getattr(registry.get(cell.metric), "version", "?")
        return f"reference-v{REFERENCE_VERSION}|{cell.metric}@{version}|{case_digest(case)}"

    def _case(self, cell: Cell):
        try:
            return self.cases[(cell.run, cell.case)]
        except KeyError:
            raise UpstreamError(f"reference judge: no case {cell.case!r} registered for run {cell.run!r}",
                                status=400, retryable=False) from None

    async def complete(self, cell: Cell, body: dict) -> dict:
        if self.judge.latency_ms:
            await asyncio.sleep(self.judge.latency_ms / 1000.0)
        try:
            return self.judge.reply(cell.metric, self._case(cell), body)
        except UnrecognisedRequest as e:
            raise UpstreamError(str(e), status=400, retryable=False) from None

    async def aclose(self):
        return None


class HttpUpstream:
    """Any OpenAI-compatible ``/chat/completions`` endpoint; the key is read from an env var
    at start-up and kept in memory only."""

    kind = "http"

    def __init__(self, url: str, model: str, key_env: str | None, timeout_s: float = 120.0):
        self.url = url.rstrip("/")
        self.model = model
        self.key_env = key_env
        self.__key = os.environ.get(key_env, "") if key_env else ""
        self._timeout = timeout_s
        self._client = None

    def __repr__(self):
        return f"HttpUpstream(url={self.url!r}, model={self.model!r}, key_env={self.key_env!r})"

    def scope(self, cell: Cell) -> str:
        return ""

    def redact(self, text: str) -> str:
        """Remove the key from any text (error bodies can echo headers)."""
        return text.replace(self.__key, "***") if self.__key else text

    async def complete(self, cell: Cell, body: dict) -> dict:
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self._timeout)
        headers = {"Content-Type": "application/json", "X-Harness-Cell": cell.header()}
        if self.__key:
            headers["Authorization"] = f"Bearer {self.__key}"
        try:
            r = await self._client.post(f"{self.url}/chat/completions", json=body, headers=headers)
        except httpx.TimeoutException:
            raise UpstreamError(f"judge timed out after {self._timeout:.0f}s", status=504) from None
        except httpx.HTTPError as e:
            raise UpstreamError(self.redact(f"judge unreachable: {type(e).__name__}: {e}")) from None
        if r.status_code == 429 or r.status_code >= 500:
            raise UpstreamError(self.redact(f"judge HTTP {r.status_code}: {r.text[:200]}"), status=r.status_code,
                                retry_after=parse_retry_after(r.headers.get("retry-after")))
        if r.status_code >= 400:
            raise UpstreamError(self.redact(f"judge HTTP {r.status_code}: {r.text[:300]}"), status=r.status_code,
                                retryable=False)
        try:
            return r.json()
        except ValueError:
            raise UpstreamError(f"judge replied with a body that is not JSON: {r.text[:120]!r}") from None

    async def aclose(self):
        if self._client is not None:
            await self._client.aclose()


ATTEMPT: contextvars.ContextVar[tuple[int, int]] = contextvars.ContextVar("harness_upstream_attempt",
                                                                          default=(0, 1))
"""(call number, 1-based attempt) of the upstream call in progress, set by :func:`call_with_retries`;
the call number is unique in the process. ``harness.faults`` reads it, so injected faults depend on
the attempt, not on timing."""
_CALL_NUMBERS = itertools.count(1)


@dataclass
class Attempts:
    """What :func:`call_with_retries` did."""

    response: dict | None = None
    attempts: int = 0
    error: UpstreamError | None = None


async def call_with_retries(upstream, cell: Cell, body: dict, policy: RetryPolicy) -> Attempts:
    """Call the upstream until a usable response, a non-retryable error, or ``max_attempts``."""
    out = Attempts()
    call_no = next(_CALL_NUMBERS)
    for attempt in range(1, policy.max_attempts + 1):
        out.attempts = attempt
        ATTEMPT.set((call_no, attempt))
        try:
            resp = await asyncio.wait_for(upstream.complete(cell, body), timeout=policy.timeout_s)
            problem = content_problem(body, resp)
            if problem is None:
                out.response, out.error = resp, None
                return out
            out.error = UpstreamError(f"judge reply unusable: {problem}", status=502)
        except asyncio.TimeoutError:
            out.error = UpstreamError(f"judge call timed out after {policy.timeout_s:g}s", status=504)
        except UpstreamError as e:
            out.error = e
            if not e.retryable:
                return out
        except Exception as e:  # noqa: BLE001 - an upstream bug is this call's error, kept in the ledger
            msg = " ".join(str(e).split())[:200]
            out.error = UpstreamError(f"judge upstream failed: {type(e).__name__}: {msg}", status=500,
                                      retryable=False)
            return out
        if attempt < policy.max_attempts:
            await asyncio.sleep(policy.delay(attempt, out.error.retry_after))
    return out
