"""Where a metric's data files are: its folder (the folder of the module defining its class), its golden table
and its card text."""
from __future__ import annotations

import os
import sys


def metric_dir(cls: type) -> str:
    """The folder of the module that defines ``cls``: it holds the metric's data files."""

    return os.path.dirname(os.path.abspath(sys.modules[cls.__module__].__file__))


def golden_path(cls: type) -> str:
    """``<metric folder>/golden/<name>.csv``: the metric's golden table (tests read it)."""

    return os.path.join(metric_dir(cls), "golden", f"{cls.name}.csv")


def card_text_path(cls: type) -> str:
    """``<metric folder>/card_text/<name>.md``: the card prose written by hand."""

    return os.path.join(metric_dir(cls), "card_text", f"{cls.name}.md")
