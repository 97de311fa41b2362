"""Both notebooks run top to bottom on the embedded default (the reference judge), from the
repository root, and are committed without outputs."""
from __future__ import annotations

import os

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import ROOT
from tests.synthetic import canonical_run

NOTEBOOKS = ("reproduce_discrepancy.ipynb", "choose_a_metric.ipynb", "trust_each_metric.ipynb")


def execute(name: str, env: dict | None = None):
    nb = nbformat.read(os.path.join(ROOT, "notebooks", name), as_version=4)
    old = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": os.path.join(ROOT, "notebooks")}}).execute()   # where Jupyter starts
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


def text_of(nb) -> str:
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            out.append(o.get("text", "") + str(o.get("data", {}).get("text/plain", "")))
    return "\n".join(out)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_without_outputs(name):
    nb = nbformat.read(os.path.join(ROOT, "notebooks", name), as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{name}: clear the outputs before committing"


def test_reproduce_discrepancy_runs():
    nb = execute("reproduce_discrepancy.ipynb")
    text = text_of(nb)
    assert "'inhouse.span': 0.75" in text and "'deepeval': 1.0" in text
    assert "? ambiguous (borderline)" in text


def test_choose_a_metric_runs():
    run_dir, _ = canonical_run()  # the same command the notebook would run; shared to save time
    nb = execute("choose_a_metric.ipynb", {"HARNESS_RUN": run_dir})
    text = text_of(nb)
    assert "a citation promised per claim" in text and "trulens.ans" in text


def test_trust_each_metric_runs():
    run_dir, _ = canonical_run()
    nb = execute("trust_each_metric.ipynb", {"HARNESS_RUN": run_dir})
    text = text_of(nb)
    assert "too few labelled answers to apply the rule" in text
    assert "verifier work saved" in text and "residual errors" in text
    assert "kept 8 case(s); dropped 10 row(s)" in text
    assert "inhouse.span" in text and "[" in text      # figures with their intervals
