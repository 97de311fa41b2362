"""A vendor-free cell's first embedding does not wait for the vendor stacks' imports (``--workers 1`` and each Ray
actor: :meth:`harness.run.cellwork.CellWorker.prepare` imports them in a thread of the scoring process).

The embedded model imports numpy, onnxruntime and tokenizers under the vendor import lock
(:data:`harness.metric.vendor_env.IMPORT_LOCK`), which the import thread holds through each vendor's import and
takes again at once for the next: a similarity cell's first embedding could wait through every vendor import, and
on a loaded machine past the call timeout (seen on Ray under load 5-8: two attempts ended at 120 s, the third
answered). The worker imports the model's runtime before the vendors, so the cells never take the lock.

Proved by structure: ``toy.blocker``'s "vendor import" (a metric from a folder outside the repository) does not
return until the run store holds every ``baseline.similarity`` cell, so the similarity cells must be computed while
it holds the lock; its cells then say whether the gate opened (or timed out, after a bound that only ends a broken
run).
"""
from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import CANONICAL, ROOT
from tests.helpers import toydist as toys

N = 24   # canonical cases

MODULE = '''
"""A toy metric whose vendor import waits for the similarity cells (tests/run/test_embed_beside_imports.py)."""
import os
import sqlite3
import time

from harness.core.records import CellResult
from harness.metric.protocol import register

STATE = {"gate": None}

{STORED}

@register
class Blocker:
    name = short_name = "toy.blocker"
    display_name = "Toy blocker"
    vendor = "toyblocker"
    version = "1"
    order = 99
    higher_is_better = True
    unit = "answer"
    uses_judge = False
    judge = "toy_blocker.metric:reply"
    definition = "Scores 1; its vendor import waits until the run store holds every baseline.similarity cell."

    @classmethod
    def prepare(cls):
        if STATE["gate"] is None:
            STATE["gate"] = _gate("baseline.similarity")   # waits for the store's state, holding the import lock

    async def score(self, case, endpoint):
        return CellResult.scored(1.0, detail={"gate": STATE["gate"]})


def reply(req):
    raise AssertionError("the toy asks no judge")
'''


def test_similarity_cells_embed_while_a_vendor_stack_imports(tmp_path):
    site = toys.write_dist(tmp_path / "site", "toy_blocker", MODULE.replace("{STORED}", toys.STORED),
                           {"toy.blocker": "Blocker"})
    store = tmp_path / "out" / "b" / "store.sqlite"
    env = toys.run_env(site, TOY_GATE_CELLS=str(N), TOY_GATE_MAX_S="300", TOY_GATE_STORE=str(store))
    p = subprocess.run([sys.executable, "-m", "harness", "run", "--cases", CANONICAL, "--metrics",
                        "baseline.similarity,toy.blocker", "--out", str(tmp_path / "out"), "--run-id", "b",
                        "--no-report", "--workers", "1", "--no-progress"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    cells = toys.cells(store)
    similarity = [(s, json.loads(d)) for m, s, d, _ in cells if m == "baseline.similarity"]
    blocker = [json.loads(d) for m, s, d, _ in cells if m == "toy.blocker"]
    assert len(similarity) == len(blocker) == N
    assert sum(s == "scored" for s, _ in similarity) == N - 1 and all(s != "error" for s, _ in similarity)  # empty-answer: unscored
    # the similarity cells were all stored while the toy's import held the lock: its gate opened
    assert {b["gate"] for b in blocker} == {"opened"}, blocker[:2]
