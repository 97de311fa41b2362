"""Find adapters by name, lazily.

Adapter modules are discovered by walking the ``adapters`` package and importing each module (they
import no vendor code at module level, so this is cheap). Unknown names get a "did you mean" list.
"""
from __future__ import annotations

import difflib
import importlib
import pkgutil

from harness.metric import _REGISTRY

DISPLAY_ORDER = (
    "inhouse.span",
    "ragas.faithfulness",
    "ragas.response_groundedness",
    "deepeval.faithfulness",
    "deepeval.faithfulness_penalized",
    "trulens.groundedness",
    "trulens.groundedness_answerability",
    "trulens.citation",
)
"""Column order in tables; metrics not listed here follow, alphabetically."""

_discovered = False


class UnknownMetric(ValueError):
    """A metric name that no adapter registers."""


def discover() -> dict[str, type]:
    """Import every module under ``adapters`` once; return name -> adapter class."""
    global _discovered
    if not _discovered:
        import adapters

        for info in pkgutil.walk_packages(adapters.__path__, prefix="adapters."):
            if info.name.rsplit(".", 1)[-1].startswith("_"):
                continue
            importlib.import_module(info.name)
        _discovered = True
    return dict(_REGISTRY)


def names() -> list[str]:
    """Registered metric names in display order."""
    found = discover()
    ordered = [n for n in DISPLAY_ORDER if n in found]
    return ordered + sorted(n for n in found if n not in DISPLAY_ORDER)


def get(name: str) -> type:
    """The adapter class for ``name``; :class:`UnknownMetric` with suggestions otherwise."""
    found = discover()
    if name in found:
        return found[name]
    close = difflib.get_close_matches(name, list(found), n=3, cutoff=0.4)
    hint = f"; did you mean {', '.join(close)}? " if close else "; "
    raise UnknownMetric(f"unknown metric {name!r}{hint}known: {', '.join(names())}")


def resolve(spec: str | None) -> list[str]:
    """Parse a comma-separated metric list (None or "all": every registered metric).

    Vendor prefixes select a family: ``ragas`` or ``ragas.*`` means every ragas metric.
    """
    if spec is None or spec.strip() in ("", "all"):
        return names()
    out: list[str] = []
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            continue
        family = item[:-2] if item.endswith(".*") else item
        members = [n for n in names() if n.startswith(family + ".")]
        picked = members if (item.endswith(".*") or (members and family not in discover())) else [get(item).name]
        out.extend(n for n in picked if n not in out)
    return out
