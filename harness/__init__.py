"""groundedness-harness: run vendor groundedness metrics on the same cases, through one judge.

The public API, imported on first use (importing ``harness`` has no side effects and loads nothing, so
``harness --help`` stays instant)::

    import harness
    result = harness.evaluate("datasets/canonical.jsonl", metrics=["inhouse.span", "deepeval"])
    result.scores            # cases x metrics

- :func:`evaluate` and its result :class:`EvalResult` (:mod:`harness.api`; ``evaluate`` through the composition
  root :mod:`harness.console`, which gives it the report package's builder);
- :class:`Case` (:mod:`harness.core.records`), what a case file holds;
- :class:`Metric` and :func:`register` (:mod:`harness.metric`), the plug-in contract of a metric.
"""
__version__ = "0.1.0"
__all__ = ["evaluate", "EvalResult", "Case", "Metric", "register", "__version__"]

_PUBLIC = {"evaluate": "harness.console", "EvalResult": "harness.api", "Case": "harness.core.records",
           "Metric": "harness.metric", "register": "harness.metric"}


def __getattr__(name: str):
    if name in _PUBLIC:
        import importlib  # noqa: PLC0415 - lazy: the package itself imports nothing

        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
