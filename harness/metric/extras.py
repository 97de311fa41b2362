"""Which optional extra each vendor's metrics need, and whether it is installed.

Each vendor is an optional extra of the package (added to a pip install from the place it came from, or
synced from uv.lock in a clone: :func:`install_line`), so a team installs only the vendors it uses. A metric whose
vendor is missing is listed as unavailable with the line that installs it, and is left out of
"all metrics". Which extra and modules a metric needs is data on its class (``extra``, ``requires``).
"""
from __future__ import annotations

import json
from importlib import metadata

from harness.metric import registry

DIST = "groundedness-harness"
"""The distribution's name."""


def install_line(extra: str) -> str:
    """How to add an extra to this installation, keeping every extra already installed.

    Where the package came from decides it (its ``direct_url.json``, PEP 610): a clone (an editable
    install) syncs the lock with every extra; a wheel, a folder or a git URL is reinstalled from the
    same place with the extra (pip adds what is missing and removes nothing); otherwise the package
    index.

    >>> "[ragas]" in install_line("ragas") or "--extra ragas" in install_line("ragas")
    True
    """
    source = _source()
    if source == "editable":
        return (f"in this clone: bash scripts/setup.sh (every vendor, from uv.lock), or "
                f".tools/bin/uv sync --frozen --inexact --extra {extra} (adds it, removes nothing)")
    if source:
        return f"pip install '{DIST}[{extra}] @ {source}' (adds it; what is installed stays)"
    return f"pip install '{DIST}[{extra}]' (adds it; what is installed stays)"


def _source() -> str | None:
    """``editable``, the URL the package was installed from (a wheel, a folder, a git URL), or None
    (from an index, or not installed)."""
    try:
        raw = metadata.distribution(DIST).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not raw:
        return None
    try:
        info = json.loads(raw)
    except json.JSONDecodeError:
        return None
    if (info.get("dir_info") or {}).get("editable"):
        return "editable"
    url = info.get("url")
    vcs = info.get("vcs_info")
    if url and vcs:
        ref = vcs.get("requested_revision")
        if url.startswith("file:///"):   # pip before 24.1 rejects ``name @ git+file:///...``; ``localhost`` serves all
            url = "file://localhost/" + url[len("file:///"):]
        return f"{vcs.get('vcs', 'git')}+{url}" + (f"@{ref}" if ref else "")
    return url


def _importable(module: str) -> bool:
    return registry.findable(module)   # without importing the module or its parents


def missing_vendor(cls) -> str | None:
    """None when the metric's vendor is installed; else what is missing and how to install it.

    The class declares it, as data: ``requires`` (the modules that must import) and ``extra`` (the
    optional extra that installs them); a class that requires nothing is always available.
    """
    modules = tuple(getattr(cls, "requires", ()) or ())
    extra = getattr(cls, "extra", None)
    absent = [m for m in modules if not _importable(m)]
    if not absent:
        return None
    return f"{', '.join(absent)} not installed; {install_line(extra or absent[0].split('.')[0])}"


def available(names) -> tuple[list[str], dict[str, str]]:
    """(the metrics whose vendor is installed, {unavailable metric: why}) from registered names."""

    ok, missing = [], {}
    for n in names:
        why = missing_vendor(registry.get(n))
        if why:
            missing[n] = why
        else:
            ok.append(n)
    return ok, missing


def select(spec, names: list[str]) -> tuple[list[str], list[str]]:
    """(metrics to run, notes) for a resolved metric list: with "all" (``spec`` None or ``"all"``) a
    metric whose vendor is missing is left out with a note; a metric named explicitly raises
    ValueError with the install line."""
    ok, missing = available(names)
    if not missing:
        return names, []
    if spec is None or str(spec).strip() in ("", "all"):
        return ok, [f"{n} unavailable: {why}" for n, why in missing.items()]
    raise ValueError("; ".join(f"metric {n} unavailable: {why}" for n, why in missing.items()))
