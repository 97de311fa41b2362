"""groundedness-harness: run vendor groundedness metrics on the same cases, through one judge.

``harness.evaluate(cases, metrics=None, judge=None, **options)`` is the Python API (see
:mod:`harness.api`); it is imported on first use, so ``harness --help`` stays instant.
"""
from harness.metric.vendor_env import quiet_vendors as _quiet_vendors

_quiet_vendors()

__version__ = "0.1.0"
__all__ = ["evaluate", "EvalResult", "__version__"]


def __getattr__(name: str):
    if name in ("evaluate", "EvalResult"):
        from harness import api  # noqa: PLC0415 - lazy: keeps --help from importing the engine

        return getattr(api, name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
