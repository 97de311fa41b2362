"""Everything that imports ragas (discovery skips this module; adapters import it from score()).

How the judge is built (vendor-notes/ragas.md §1, §3, §5): ``llm_factory(endpoint.model,
client=endpoint.async_openai())``, the current route for ``ragas.metrics.collections``; provider
"openai" makes it instructor ``Mode.JSON``; the vendor's sampling defaults are kept (temperature
0.01, top_p 0.1, max_tokens 1024). Only ``ascore`` is used, inside the runner's event loop (the
sync ``score`` spins a new loop per call).

Retries (every attempt is one request the gateway sees and counts):

- openai SDK: off (``Endpoint.async_openai`` sets ``max_retries=0``); the gateway owns transport
  retries and counts them in ``Ledger.retries``; it hands every reply on as it came (a reply that
  does not fit the requested format is recorded, never retried).
- instructor: stock, untouched. ``llm_factory`` gets no ``max_retries``, so instructor keeps its own
  default policy (``max_retries=3``: three attempts per step on any exception). A reply that is not
  the step's JSON is re-asked in the same conversation (a new request the ledger shows as step
  "Correct your JSON ONLY RESPONSE..."); any other failure (a reply cut at the token limit,
  ``IncompleteOutputException``; an API error the gateway gave up on) repeats the same request, and
  after the third attempt instructor raises ``InstructorRetryException``, as in stock use. The
  measured effect of keeping it (issue 37): a judge that cuts a reply at the token limit once scores
  like stock (an earlier parse-errors-only policy errored on every such answer); an API error the
  gateway gave up on is asked 3 times per step, each time with the gateway's own attempts (card).
- ResponseGroundedness ``max_retries=5`` per judge is kept: it is the vendor's definition of when
  a judge's rating is NaN (5 failed tries), so it stays as the vendor ships it.

The one shim (the uuid.json file ragas writes into the user's home) is described once, as data,
in ``harness.adapters.ragas.common.SHIMS``: the metric cards show it; :func:`vendor` applies it.

Observation (not a shim; the vendor's computation is untouched): :func:`observe` wraps the
``agenerate`` of the LLM object the adapter itself built (an instance attribute, as ragas's own
``cacher`` does), recording each parsed output or exception; the adapters read per-unit verdicts
from those records because ``MetricResult`` drops them.
"""
from __future__ import annotations

import functools
import os
import tempfile
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from harness.metric import Endpoint

INSTRUCTOR_ATTEMPTS = 3
"""Attempts instructor makes per step on any exception: its own default (``max_retries=3`` is
``stop_after_attempt(3)``), pinned by tests/vendors/test_ragas_contract.py; the adapter passes no policy."""


def harness_data_dir(appname: str | None = None, *_args, **_kwargs) -> str:
    """Stands in for ``appdirs.user_data_dir`` inside ``ragas._analytics``: a per-user directory
    under the system temp dir (``<tmp>/groundedness-harness-<uid>/<appname>``)."""
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return os.path.join(tempfile.gettempdir(), f"groundedness-harness-{uid}", appname or "ragas")


@functools.lru_cache(maxsize=1)
def vendor() -> SimpleNamespace:
    """Import the ragas stack once (about 2-5 s) and apply the data-dir shim."""
    import ragas._analytics as analytics

    analytics.user_data_dir = harness_data_dir  # the shim: see harness.adapters.ragas.common.SHIMS
    import ragas
    from ragas.llms import llm_factory
    from ragas.metrics.collections import Faithfulness, ResponseGroundedness

    return SimpleNamespace(version=ragas.__version__, llm_factory=llm_factory, Faithfulness=Faithfulness,
                           ResponseGroundedness=ResponseGroundedness)


def make_llm(endpoint: Endpoint):
    """The ragas ``InstructorLLM`` for one cell: every call goes to ``endpoint``."""
    return vendor().llm_factory(endpoint.model, client=endpoint.async_openai())


@dataclass
class Call:
    """One ``agenerate`` call as observed: the parsed output, or the exception it raised."""

    output_type: str
    """The response model's class name, e.g. ``NLIStatementOutput``."""
    prompt: str
    """The rendered prompt ragas sent."""
    output: Any = None
    """The parsed pydantic object (None on failure)."""
    error: BaseException | None = None
    """What the call raised, if it failed."""


def observe(llm) -> list[Call]:
    """Record every ``llm.agenerate`` call (arguments and result pass through unchanged)."""
    calls: list[Call] = []
    inner = llm.agenerate

    async def agenerate(prompt, response_model, *args, **kwargs):
        call = Call(getattr(response_model, "__name__", str(response_model)), prompt)
        calls.append(call)
        try:
            call.output = await inner(prompt, response_model, *args, **kwargs)
        except BaseException as e:
            call.error = e
            raise
        return call.output

    llm.agenerate = agenerate
    return calls


def is_missing_input(exc: BaseException) -> bool:
    """Is this the ValueError ragas raises, before any judge call, on an empty field?

    >>> is_missing_input(ValueError("response is missing. Please add response to the test sample."))
    True
    >>> is_missing_input(ValueError("other"))
    False
    """
    msg = str(exc)
    return isinstance(exc, ValueError) and any(
        msg.startswith(f"{f} is missing") for f in ("response", "user_input", "retrieved_contexts"))


def describe(exc: BaseException, limit: int = 240) -> str:
    """``Type: message`` on one line, shortened; instructor's retry wrapper (whose message is an XML
    dump of every attempt) is reduced to its last attempt's exception.

    >>> describe(ValueError("a\\n  b"))
    'ValueError: a b'
    """
    attempts = getattr(exc, "failed_attempts", None)
    if attempts and getattr(attempts[-1], "exception", None) is not None:
        exc = attempts[-1].exception
    msg = " ".join(str(exc).split()) or repr(exc)
    out = f"{type(exc).__name__}: {msg}"
    return out if len(out) <= limit else out[: limit - 3] + "..."
