"""Toy metric distributions for the ``--workers`` tests (tests/run/test_workers_overlap.py and
test_workers_early.py): a package written into a folder of the test's own with its entry points, found through
``PYTHONPATH``, and what those tests read back from a run: the store's facts and cells, and whether a process runs.
"""
from __future__ import annotations

import json
import os
import sqlite3
import textwrap

from tests.conftest import ROOT

STORED = '''
def _stored(path, metric):
    """How many cells of ``metric`` the run store at ``path`` holds (0 before it exists)."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return db.execute("SELECT COUNT(*) FROM cells WHERE metric = ?", (metric,)).fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:   # not created yet
        return 0


def _gate(metric):
    """Wait until the run store (``TOY_GATE_STORE``) holds ``TOY_GATE_CELLS`` cells of ``metric``: "opened"; or
    "timed out" after ``TOY_GATE_MAX_S`` seconds (the bound only ends a broken run)."""
    want, deadline = int(os.environ["TOY_GATE_CELLS"]), time.monotonic() + float(os.environ["TOY_GATE_MAX_S"])
    while time.monotonic() < deadline:
        if _stored(os.environ["TOY_GATE_STORE"], metric) >= want:
            return "opened"
        time.sleep(0.05)
    return "timed out"
'''
"""Source of the helpers a toy metric's module includes (it imports ``os``, ``sqlite3`` and ``time``): they wait on
the run store's state, never on time."""


def write_dist(root, package: str, module: str, entries: dict[str, str]):
    """The distribution ``package`` (one module, ``metric.py``, with ``module``'s text; ``entries``: metric name ->
    class name) under ``root``, the folder to put on ``PYTHONPATH``."""
    pkg = root / package
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "metric.py").write_text(textwrap.dedent(module))
    info = root / f"{package}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package.replace('_', '-')}\nVersion: 0.1\n")
    lines = "".join(f"{name} = {package}.metric:{cls}\n" for name, cls in entries.items())
    (info / "entry_points.txt").write_text(f"[groundedness_harness.metrics]\n{lines}")
    return root


def run_env(site, **more: str) -> dict:
    """The environment of a ``harness run`` that finds the toy distribution at ``site`` (the machine's
    ``HARNESS_WORKERS`` left out: the tests name their workers), with ``more`` variables."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), ROOT]), **more}
    env.pop("HARNESS_WORKERS", None)
    return env


def meta(store) -> dict:
    """The run store's facts (``meta``), each read from its JSON."""
    with sqlite3.connect(store) as db:
        return {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM meta")}


def cells(store) -> list[tuple]:
    """Every stored cell: (metric, status, detail, finished)."""
    with sqlite3.connect(store) as db:
        return db.execute("SELECT metric, status, detail, finished FROM cells").fetchall()


def running(pid: int) -> bool:
    """Is the process there and not a zombie (an orphan may wait for a reaper that never comes)?"""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        return False
