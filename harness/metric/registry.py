"""Find metrics by name, lazily, through the ``groundedness_harness.metrics`` entry-point group.

Every distribution installed in the environment can add metrics: each entry point is
``"<metric name>" = "<module>:<class>"`` (the built-in ones are declared in ``pyproject.toml``). The
engine never names an adapter module. Loading a class imports its module only (adapter modules
import no vendor code at module level), so listing stays fast; ``--help`` loads nothing. Unknown
names get a "did you mean" list.
"""
from __future__ import annotations

import difflib
import importlib
import os
import sys
from importlib import metadata
from importlib.machinery import all_suffixes
from importlib.util import find_spec

from harness.metric.protocol import check

GROUP = "groundedness_harness.metrics"
"""The entry-point group metrics are declared in."""

_found: dict[str, type] | None = None
_apart: dict[str, type] = {}
_folders: list[str] | None = None
"""Metrics whose vendor installs alone (``installs_alone``) and is not installed in this environment."""


class UnknownMetric(ValueError):
    """A metric name that no installed distribution declares."""


def discover() -> dict[str, type]:
    """Load every entry point of :data:`GROUP` once; return name -> adapter class (checked)."""
    global _found
    if _found is None:
        found: dict[str, type] = {}
        where: dict[str, str] = {}
        for ep in metadata.entry_points(group=GROUP):
            if ep.name in where:
                if where[ep.name] == ep.value:
                    continue
                raise TypeError(f"metric {ep.name!r} declared twice: {where[ep.name]} and {ep.value}")
            cls = check(ep.load())
            if cls.name != ep.name:
                raise TypeError(f"entry point {ep.name!r} -> {ep.value} names a class whose name is {cls.name!r}")
            where[ep.name] = ep.value
            if cls.installs_alone and not _installed(cls):
                _apart[ep.name] = cls
            else:
                found[ep.name] = cls
        _found = found
    return dict(_found)


def _installed(cls) -> bool:
    """Are the modules the class requires importable here (checked without importing them)?"""
    return all(findable(m) for m in cls.requires)


def findable(module: str) -> bool:
    """Is ``module`` installed here? Found without importing it or any of its parents (``importlib.util.find_spec``
    imports the parents of a dotted name: ``azure`` and ``azure.ai`` for ``azure.ai.evaluation``).

    >>> findable("json.decoder"), findable("json.no_such_module"), findable("no_such_package.x")
    (True, False, False)
    """
    if module in sys.modules:
        return True
    top, *rest = module.split(".")
    try:
        spec = find_spec(top)   # a top-level name: looked up, nothing imported
    except (ImportError, ValueError):
        return False
    if spec is None or not rest:
        return spec is not None
    places = list(spec.submodule_search_locations or ())
    for i, part in enumerate(rest):   # each further part: a folder (a package, or a namespace) or a module file there
        folders = [os.path.join(p, part) for p in places if os.path.isdir(os.path.join(p, part))]
        if i == len(rest) - 1:
            return bool(folders) or any(os.path.isfile(os.path.join(p, part + suffix))
                                        for p in places for suffix in all_suffixes())
        places = folders
    return False


def folders() -> list[str]:
    """The package of every declared metric (its vendor's folder), from the entry points, nothing imported:
    ``harness.adapters.ragas`` for ``harness.adapters.ragas.faithfulness:RagasFaithfulness``. A vendor's folder
    holds its switches (``switches.py``, read by :mod:`harness.metric.vendor_env`) and its test kit (``kit/``)."""
    global _folders
    if _folders is None:
        out: list[str] = []
        for ep in metadata.entry_points(group=GROUP):
            folder = ep.value.partition(":")[0].strip().rpartition(".")[0]
            if folder and folder not in out:
                out.append(folder)
        _folders = out
    return list(_folders)


def folder_part(folder: str, part: str):
    """The module ``<folder>.<part>`` (e.g. ``switches``, ``kit.realistic``) imported, or None where the vendor's
    folder has none."""
    name = f"{folder}.{part}"
    return importlib.import_module(name) if findable(name) else None


def apart() -> dict[str, str]:
    """Metrics declared here whose vendor installs alone and is not installed in this environment:
    name -> how to get it (the class's ``installs_alone``). They are not in :func:`names`."""
    discover()
    return {n: _apart[n].installs_alone for n in sorted(_apart)}


def refresh() -> None:
    """Forget what was discovered (after installing a distribution at run time)."""
    global _found, _folders
    _found = _folders = None
    _apart.clear()


def names() -> list[str]:
    """Registered metric names in display order (each class's ``order``, then name)."""
    found = discover()
    return sorted(found, key=lambda n: (found[n].order, n))


def get(name: str) -> type:
    """The adapter class for ``name``; :class:`UnknownMetric` with suggestions otherwise."""
    found = discover()
    if name in found:
        return found[name]
    if name in _apart:
        raise UnknownMetric(f"metric {name!r} is not installed in this environment: {_apart[name].installs_alone}")
    close = difflib.get_close_matches(name, list(found), n=3, cutoff=0.4)
    hint = f"; did you mean {', '.join(close)}? " if close else "; "
    raise UnknownMetric(f"unknown metric {name!r}{hint}known: {', '.join(names())}")


def declared(name: str) -> type | None:
    """The adapter class declared for ``name``, installed here or not (a metric whose vendor installs alone, such as
    ``azure.groundedness`` in the main environment, still declares its range and direction); None if undeclared."""
    found = discover()
    return found.get(name) or _apart.get(name)


def ordered(metrics) -> list[str]:
    """``metrics`` in display order; names not registered (e.g. from an old run) follow, alphabetically."""
    found = discover()
    known = [m for m in names() if m in set(metrics)]
    return known + sorted(m for m in set(metrics) if m not in found)


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
