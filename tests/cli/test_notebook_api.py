"""The issue's notebook cell, in a real Jupyter kernel (nbclient): ``harness.evaluate`` inside the
kernel's running event loop, from a directory that is not the repository (the canonical cases come
from the package data)."""
from __future__ import annotations

import time

import nbformat
from nbclient import NotebookClient

from tests.conftest import CANONICAL

CELL = 'harness.evaluate("datasets/canonical.jsonl", metrics=["inhouse.span"]).cells'


def test_evaluate_in_a_notebook_cell(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    monkeypatch.setenv("HARNESS_OUT", str(runs))   # the API's run folder (the kernel inherits it)
    work = tmp_path / "work"
    work.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import asyncio, harness\nasyncio.get_running_loop()"),
                nbformat.v4.new_code_cell(CELL),
                nbformat.v4.new_code_cell("r = _.set_index('case_id').loc['cookie-yield']; [r.metric, r.status, float(r.score)]")]
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    elapsed = time.perf_counter() - t0
    loop, cells, cookie = (c.outputs for c in nb.cells)
    assert "_UnixSelectorEventLoop" in loop[0]["data"]["text/plain"]   # the kernel's loop is running
    assert not [o for o in cells if o.get("output_type") == "error"], cells
    table = cells[-1]["data"]["text/html"]   # a DataFrame, shown as one
    assert "<th>case_id</th>" in table and "<th>score</th>" in table and "<th>status</th>" in table
    assert table.count("<td>inhouse.span</td>") == sum(1 for line in open(CANONICAL) if line.strip())
    assert cookie[0]["data"]["text/plain"] == "['inhouse.span', 'scored', 0.75]"
    assert runs.is_dir() and any(runs.iterdir())   # the run went where the API says ...
    assert not any(work.iterdir())                  # ... and nothing into the notebook's working directory
    print(f"notebook: kernel start + 3 cells in {elapsed:.1f}s")
