"""A judge reply without ``usage``: DeepEval scores it instead of failing.

Shim (issue 13, "usage is optional"): DeepEval's ``OpenAIModel`` reads ``completion.usage.prompt_tokens``
after every call, so a reply that leaves ``usage`` out (legal in the OpenAI-compatible protocol, and
what several servers send) fails every DeepEval cell with ``AttributeError``. The judge model's
client is wrapped so that a completion whose ``usage`` is absent gets an all-zero ``CompletionUsage``
before DeepEval sees it; nothing else of the reply changes, and the harness's ledger marks the call as carrying no usage
(``calls.usage`` 0, ``cells.usage_missing``; those zeros are never counted as reported tokens). A reply whose usage is
present but not integers is passed on as it came (DeepEval fails on it as it would in stock use, and
the cell's reason says the usage was not readable).
"""
from __future__ import annotations

import functools
import inspect

from harness.metric import Shim

SHIM = Shim("adapters/deepeval/_usage.py", " ".join(__doc__.split("\n\n", 1)[1].split()).replace("``", "`"))
"""The shim as the DeepEval cards show it (the paragraph above)."""

_WRAPPED = ("chat", "beta", "completions")
_CALLS = ("create", "parse")


def _fill(completion):
    if getattr(completion, "usage", "absent") is None:
        from openai.types import CompletionUsage

        completion.usage = CompletionUsage(prompt_tokens=0, completion_tokens=0, total_tokens=0)
    return completion


async def _filled(awaitable):
    return _fill(await awaitable)


class UsageOptional:
    """Proxy of an ``openai`` client (sync or async): ``chat.completions.create`` and
    ``beta.chat.completions.parse`` return completions that always carry a ``usage``.

    >>> class C:
    ...     usage = None
    >>> class Completions:
    ...     def create(self, **kw):
    ...         return C()
    >>> class Chat:
    ...     completions = Completions()
    >>> class Client:
    ...     chat = Chat()
    >>> UsageOptional(Client()).chat.completions.create().usage.prompt_tokens
    0
    """

    def __init__(self, target):
        self._target = target

    def __getattr__(self, name):
        value = getattr(self._target, name)
        if name in _WRAPPED:
            return UsageOptional(value)
        if name in _CALLS and callable(value):
            @functools.wraps(value)
            def call(*a, **k):
                out = value(*a, **k)       # the async SDK's create() is a plain function returning a coroutine
                return _filled(out) if inspect.isawaitable(out) else _fill(out)
            return call
        return value
