"""Where the harness writes outside a run's folder: the user's cache folder, and nowhere else.

``$XDG_CACHE_HOME/groundedness-harness`` (default ``~/.cache/groundedness-harness``) holds what a library the
harness drives would otherwise scatter in the home folder: matplotlib's font cache and config (``matplotlib/``,
through ``MPLCONFIGDIR``, which matplotlib otherwise points at ``~/.config/matplotlib`` and
``~/.cache/matplotlib``). A ``MPLCONFIGDIR`` the user set is kept.
"""
from __future__ import annotations

import os

NAME = "groundedness-harness"


def cache_dir() -> str:
    """The harness's cache folder (not made here).

    >>> cache_dir().endswith(os.path.join("", "groundedness-harness"))
    True
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, NAME)


def matplotlib_home() -> str:
    """Point matplotlib at ``<cache_dir>/matplotlib`` unless ``MPLCONFIGDIR`` is set; call before importing it."""
    return os.environ.setdefault("MPLCONFIGDIR", os.path.join(cache_dir(), "matplotlib"))
