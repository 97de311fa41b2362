"""Defaults that work from any directory.

The canonical cases ship inside the package (``harness/cases/data/canonical.jsonl``; in a clone
``datasets/canonical.jsonl`` is a link to it: one copy), so ``harness run`` and :func:`harness.evaluate` find them
whatever the working directory is.
"""
from __future__ import annotations

import os
from importlib import resources

DEFAULT_CASES = "datasets/canonical.jsonl"
"""The default case file, as the CLI names it."""


def packaged_cases() -> str:
    """Path of the canonical case file shipped with the package."""
    return str(resources.files("harness.cases") / "data" / "canonical.jsonl")


def resolve_cases(path: str) -> str:
    """``path`` as given, unless it is the default and the working directory has no such file: then
    the packaged copy.

    >>> resolve_cases("elsewhere.jsonl")
    'elsewhere.jsonl'
    >>> os.path.isfile(resolve_cases(DEFAULT_CASES))
    True
    """
    path = os.fspath(path)
    if path != DEFAULT_CASES or os.path.exists(path):
        return path
    packaged = packaged_cases()
    return packaged if os.path.isfile(packaged) else path
