"""Which optional extra each vendor's metrics need, and whether it is installed.

Each vendor is an optional extra of the package (``pip install 'groundedness-harness[ragas]'``, or
``uv sync --extra ragas`` in a clone), so a team installs only the vendors it uses. A metric whose
vendor is missing is listed as unavailable with the line that installs it, and is left out of
"all metrics". Which extra and modules a metric needs is data on its class (``extra``, ``requires``).
"""
from __future__ import annotations

from importlib.util import find_spec

from harness.metric import registry


def install_line(extra: str) -> str:
    """How to install an extra.

    >>> install_line("ragas")
    "pip install 'groundedness-harness[ragas]' (in a clone: uv sync --extra ragas)"
    """
    return f"pip install 'groundedness-harness[{extra}]' (in a clone: uv sync --extra {extra})"


def _importable(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):   # a parent package that is missing
        return False


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
