"""The notebooks carry their executed outputs, and a fresh run from notebooks/ (where Jupyter starts) gives
the same outputs: what a reader sees is what the code does today. They use only the public API.

Each notebook runs once here, in a kernel started in notebooks/, with the reference judge; choose_a_metric
and trust_each_metric share one CLI run of the canonical set (``HARNESS_RUN``) to save a run each. The
stored outputs come from ``scripts/refresh_notebooks.py`` (every notebook runs on its own there).
"""
from __future__ import annotations

import ast
import importlib.util
import os

import nbformat
import pytest

from tests.conftest import ROOT
from tests.helpers.synthetic import canonical_run

NOTEBOOKS = ("reproduce_discrepancy.ipynb", "choose_a_metric.ipynb", "trust_each_metric.ipynb")
_spec = importlib.util.spec_from_file_location("refresh_notebooks", os.path.join(ROOT, "scripts", "refresh_notebooks.py"))
refresh = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(refresh)

PUBLIC = {"harness", "reports"}
"""The project modules a notebook may import (``import harness``, ``from harness.reports import ...``)."""
PROJECT = ("harness", "reports", "adapters", "tests")


def stored(name: str):
    return nbformat.read(os.path.join(ROOT, "notebooks", name), as_version=4)


def code(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


@pytest.fixture(scope="module")
def shared_run():
    run_dir, _ = canonical_run()   # the run both canonical notebooks would make; shared to save time
    return run_dir


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_stored_with_outputs_and_public_imports_only(name):
    nb = stored(name)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    cells = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in cells), f"{name}: run scripts/refresh_notebooks.py to store its outputs"
    assert sum(bool(c.outputs) for c in cells) >= len(cells) - 1, f"{name}: outputs missing"   # a closing check may print nothing
    assert not [o for c in cells for o in c.outputs if o.output_type == "error"], name
    src = code(nb)
    modules = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Import):
            modules |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            modules.add(node.module or "")
    internal = sorted(m for m in modules if m.split(".")[0] in PROJECT and m not in PUBLIC)
    assert not internal, f"{name} imports internals: {internal}"
    assert modules & PUBLIC and "sys.path" not in src, name


def _same_outputs(name: str, fresh) -> None:
    want, got = refresh.meaningful(stored(name)), refresh.meaningful(fresh)
    assert len(want) == len(got), name
    for i, (w, g) in enumerate(zip(want, got)):
        assert w == g, f"{name}, code cell {i}: stored output differs from a fresh run's; run scripts/refresh_notebooks.py"


def test_reproduce_discrepancy_matches_its_stored_outputs():
    nb = refresh.execute("reproduce_discrepancy.ipynb")
    _same_outputs("reproduce_discrepancy.ipynb", nb)
    text = "\n".join(t for ts in refresh.meaningful(nb) for t in ts)
    assert "'inhouse.span': 0.75" in text and "'deepeval': 1.0" in text
    assert "? ambiguous (borderline)" in text


def test_choose_a_metric_matches_its_stored_outputs(shared_run):
    nb = refresh.execute("choose_a_metric.ipynb", {"HARNESS_RUN": shared_run})
    _same_outputs("choose_a_metric.ipynb", nb)
    text = "\n".join(t for ts in refresh.meaningful(nb) for t in ts)
    cases = sum(1 for line in open(os.path.join(ROOT, "datasets", "canonical.jsonl")) if line.strip())
    assert f"{cases} cases x " in text                     # counted from the data
    assert "a citation promised per claim" in text and "trulens.ans" in text


def test_trust_each_metric_matches_its_stored_outputs(shared_run):
    nb = refresh.execute("trust_each_metric.ipynb", {"HARNESS_RUN": shared_run})
    _same_outputs("trust_each_metric.ipynb", nb)
    text = "\n".join(t for ts in refresh.meaningful(nb) for t in ts)
    assert "too few labelled answers to apply the rule" in text
    assert "verifier work saved" in text and "residual errors" in text
    assert "kept 8 case(s); dropped 10 row(s)" in text
    assert "In-house span groundedness" in text and "[" in text      # figures with their intervals


def test_a_changed_output_is_caught():
    """The comparison reads the outputs themselves: a stored number that a run no longer gives fails it,
    while a different temporary folder, run id or timing does not."""
    nb = stored("reproduce_discrepancy.ipynb")
    other = nbformat.from_dict(nb)
    first = next(c for c in other.cells if c.cell_type == "code" and c.outputs)
    first.outputs[0]["text"] = first.outputs[0]["text"].replace("350 F", "375 F")
    assert refresh.meaningful(other) != refresh.meaningful(nb)
    assert refresh.normalise("/tmp/cookie-abc/cookie 1.2 s") == refresh.normalise("/tmp/cookie-xyz/cookie 3 s")
