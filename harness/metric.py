"""The adapter interface: one metric = one class behind one Protocol, registered by name.

An adapter module lives under ``adapters/`` and decorates its class with :func:`register`. The
registry finds adapter modules by walking the ``adapters`` package, so adding a metric touches
nothing outside its own module(s). Adapter modules must not import vendor packages at module level
(``tests/test_registry.py`` checks it): vendor code is imported inside ``score`` so that listing
metrics, ``--help`` and the reference judge stay fast.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from harness.model import Case, CellResult

if TYPE_CHECKING:  # pragma: no cover
    import openai


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
    pool: Any = dataclasses.field(default=None, compare=False, repr=False)
    """The runner's shared HTTP connection pools (``harness.http.Pools``); None builds private ones."""

    def async_openai(self) -> "openai.AsyncOpenAI":
        """An ``AsyncOpenAI`` on this cell's URL over the run's shared connection pool, SDK retries off
        (the gateway owns retries)."""
        import openai

        http = self.pool.async_client() if self.pool is not None else None
        return openai.AsyncOpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0,
                                  timeout=self.timeout_s, http_client=http)

    def openai(self) -> "openai.OpenAI":
        """A sync ``OpenAI`` client on this cell's URL over the shared pool, SDK retries off."""
        import openai

        http = self.pool.sync_client() if self.pool is not None else None
        return openai.OpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0,
                             timeout=self.timeout_s, http_client=http)


@dataclass(frozen=True)
class JudgeRequest:
    """One chat-completion request as the reference judge sees it."""

    metric: str
    """The metric name from the cell URL."""
    case: Case
    """The case of the cell (the reference judge answers from its annotation)."""
    body: dict
    """The request body as sent (OpenAI chat-completions shape)."""

    @property
    def messages(self) -> list[dict]:
        """The request's messages."""
        return list(self.body.get("messages") or [])

    def text_of(self, role: str | None = None) -> str:
        """All message text of one role (or of all roles), joined with blank lines.

        Content given as a list of parts (``[{"type": "text", "text": ...}]``) is flattened.
        """
        out = []
        for m in self.messages:
            if role is not None and m.get("role") != role:
                continue
            c = m.get("content")
            if isinstance(c, list):
                c = "".join(p.get("text", "") for p in c if isinstance(p, dict))
            out.append(c or "")
        return "\n\n".join(out)

    @property
    def prompt(self) -> str:
        """Every message's text, joined."""
        return self.text_of(None)

    @property
    def schema_name(self) -> str | None:
        """The ``response_format.json_schema.name``, when a json_schema is requested."""
        rf = self.body.get("response_format") or {}
        if rf.get("type") == "json_schema":
            return (rf.get("json_schema") or {}).get("name")
        return None

    @property
    def response_type(self) -> str:
        """``json_schema`` | ``json_object`` | ``text``."""
        return (self.body.get("response_format") or {}).get("type", "text")


class UnrecognisedRequest(Exception):
    """The reference judge does not know this request: never a guess."""

    def __init__(self, metric: str, step: str, prompt: str):
        self.metric, self.step, self.prompt = metric, step, prompt
        super().__init__(f"reference judge: unrecognised request for metric {metric!r} "
                         f"(step: {step}); prompt starts: {prompt[:200]!r}")


@runtime_checkable
class Metric(Protocol):
    """What every adapter class provides."""

    name: ClassVar[str]
    """Registered name in the vendor's namespace, e.g. ``ragas.faithfulness``."""
    version: ClassVar[str]
    """The adapter's version; bump it when what the metric computes or how the reference judge
    reads a label changes (finished cells of an older version are recomputed on resume)."""
    display_name: ClassVar[str]
    """Human name for reports."""
    short_name: ClassVar[str]
    """At most ~14 characters, for the terminal table."""
    higher_is_better: ClassVar[bool]
    """Direction of the score."""
    vendor: ClassVar[str]
    """``inhouse`` | ``ragas`` | ``deepeval`` | ``trulens``."""
    unit: ClassVar[str]
    """What one unit of judgement is: claim | statement | sentence | answer."""

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        """Score one case with the vendor's own code, all judge calls through ``endpoint``."""
        ...

    @staticmethod
    def reference_reply(request: JudgeRequest) -> str:
        """The reference judge's reply (assistant message content) to one of this metric's requests.

        Raise :class:`UnrecognisedRequest` for anything it does not recognise.
        """
        ...


_REGISTRY: dict[str, type] = {}


def register(cls: type) -> type:
    """Class decorator: register an adapter under ``cls.name``."""
    for attr in ("name", "version", "display_name", "short_name", "higher_is_better", "vendor", "unit"):
        if not hasattr(cls, attr):
            raise TypeError(f"adapter {cls.__qualname__} lacks class attribute {attr!r}")
    for meth in ("score", "reference_reply"):
        if not callable(getattr(cls, meth, None)):
            raise TypeError(f"adapter {cls.__qualname__} lacks method {meth!r}")
    prev = _REGISTRY.get(cls.name)
    if prev is not None and prev.__qualname__ != cls.__qualname__:
        raise TypeError(f"metric name {cls.name!r} registered twice: {prev.__module__} and {cls.__module__}")
    _REGISTRY[cls.name] = cls
    return cls
