"""``--workers N``: the vendor imports overlap with scoring. While the workers' forkserver imports the vendor stacks,
the runner's own process scores the cells of the metrics that import nothing; the vendor cells run only in workers
forked from the forkserver after its imports.

Proved by structure, not by time: a metric from a folder outside the repository (``toy.gated``, one entry point)
whose ``prepare`` (its "vendor import", run in the forkserver) does not return until the run store holds every
``inhouse.span`` cell. A run in which nothing scored before the forkserver's imports ended would never open that
gate (the metric then says so in its cells, after a bound). Each of its cells records the process that scored it
and the process its ``prepare`` ran in.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.conftest import CANONICAL, ROOT
from tests.helpers import toydist as toys

N = 24   # canonical cases

MODULE = '''
"""A toy metric with a "vendor import" that waits for the run store (tests/run/test_workers_overlap.py)."""
import os
import sqlite3
import time

from harness.core.records import CellResult
from harness.metric.protocol import register

STATE = {"prepared_in": None, "gate": None}

{STORED}

@register
class Gated:
    name = "toy.gated"
    version = "1"
    display_name = "Toy gated"
    short_name = "toy.gated"
    order = 99
    higher_is_better = True
    vendor = "toy"
    unit = "answer"
    uses_judge = False
    definition = "Scores 1; its vendor import waits until the run store holds every inhouse.span cell."
    judge = "toy_gated.metric:reply"

    @classmethod
    def prepare(cls):
        if STATE["prepared_in"] is not None:   # imported once per process (a fork inherits it)
            return
        STATE["prepared_in"] = os.getpid()
        gate = os.environ["TOY_GATE_DIR"]
        open(os.path.join(gate, f"prepare-{os.getpid()}"), "w").close()
        STATE["gate"] = _gate("inhouse.span")   # waits for the store's state

    async def score(self, case, endpoint):
        return CellResult.scored(1.0, detail={"pid": os.getpid(), **STATE})


def reply(req):
    raise AssertionError("toy.gated asks no judge")
'''


@pytest.fixture()
def gated(tmp_path):
    """The toy distribution in a folder of its own, found through ``PYTHONPATH``."""
    (tmp_path / "gate").mkdir()
    return toys.write_dist(tmp_path / "site", "toy_gated", MODULE.replace("{STORED}", toys.STORED),
                           {"toy.gated": "Gated"})


def _env(tmp_path, site, run_id: str, cells: int, max_s: float) -> dict:
    return toys.run_env(site, TOY_GATE_DIR=str(tmp_path / "gate"), TOY_GATE_CELLS=str(cells),
                        TOY_GATE_MAX_S=str(max_s), TOY_GATE_STORE=str(tmp_path / "out" / run_id / "store.sqlite"))


def _cmd(tmp_path, run_id: str, *more: str) -> list[str]:
    return [sys.executable, "-m", "harness", "run", "--cases", CANONICAL, "--metrics", "inhouse.span,toy.gated",
            "--out", str(tmp_path / "out"), "--run-id", run_id, "--no-report", "--workers", "2", *more]


def test_vendor_free_cells_are_scored_by_the_runner_while_the_forkserver_imports(tmp_path, gated):
    env = _env(tmp_path, gated, "o", N, 300)
    p = subprocess.Popen(_cmd(tmp_path, "o", "--no-progress"), cwd=ROOT, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=900)
    assert p.returncode == 0, err[-3000:]
    store = tmp_path / "out" / "o" / "store.sqlite"
    meta, cells = toys.meta(store), toys.cells(store)
    # the runner's own process scored every inhouse.span cell, then met the first vendor cell
    assert meta["overlap"]["pid"] == p.pid and meta["overlap"]["cells"] == N, meta["overlap"]
    assert meta["overlap"]["ended_by"] == "vendor cell"
    workers = meta["startup"]
    assert sorted(w["worker"] for w in workers) == [0, 1], workers
    server = {w["preload"]["pid"] for w in workers}
    assert len(server) == 1 and p.pid not in server
    preload = workers[0]["preload"]
    assert preload["metrics"] == ["toy.gated"] and not preload["failed"], preload
    gated_cells = [json.loads(d) for m, s, d, _ in cells if m == "toy.gated"]
    assert len(gated_cells) == N and len([c for c in cells if c[0] == "inhouse.span"]) == N
    # the forkserver's import finished only once the store held every inhouse.span cell: they were scored during it
    assert {c["gate"] for c in gated_cells} == {"opened"}, gated_cells[:1]
    assert max(f for m, _, _, f in cells if m == "inhouse.span") <= preload["ready"]
    # every vendor cell ran in a worker forked from the forkserver after its import, never where it was not done
    assert {c["prepared_in"] for c in gated_cells} == server
    assert {c["pid"] for c in gated_cells} <= {w["pid"] for w in workers}
    assert all(c["pid"] not in server | {p.pid} for c in gated_cells)
    assert os.listdir(tmp_path / "gate") == [f"prepare-{preload['pid']}"]   # the import ran in one process only
    assert min(f for m, _, _, f in cells if m == "toy.gated") >= preload["ready"]


def test_ctrl_c_while_the_forkserver_imports_keeps_the_cells_and_ends_every_process(tmp_path, gated):
    """Ctrl-C after the runner scored the vendor-free cells, the forkserver still in its import (its gate never
    opens in this run): the run ends with the resume message and no traceback, the forkserver ends with it, and a
    rerun keeps the cells and computes the rest."""
    env = _env(tmp_path, gated, "c", 10 ** 6, 600)
    p = subprocess.Popen(_cmd(tmp_path, "c", "--no-progress"), cwd=ROOT, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    err: list = []
    threading.Thread(target=lambda: err.append(p.stderr.read()), daemon=True).start()
    store, gate = tmp_path / "out" / "c" / "store.sqlite", tmp_path / "gate"
    for _ in range(60_000):   # wait for the state: the forkserver in its import, every inhouse.span cell stored
        if os.listdir(gate) and store.exists() and sum(m == "inhouse.span" for m, *_ in toys.cells(store)) == N:
            break
        assert p.poll() is None, "".join(err)
        time.sleep(0.01)
    server = int(os.listdir(gate)[0].partition("-")[2])
    assert toys.running(server)
    p.send_signal(signal.SIGINT)
    p.wait(60)
    p.stdout.close()
    for _ in range(3000):
        if not toys.running(server) and err:
            break
        time.sleep(0.01)
    assert p.returncode == 1
    assert "harness: interrupted; finished cells are kept, rerun with the same --run-id to resume" in err[0]
    assert "Traceback" not in err[0], err[0][-3000:]
    assert not toys.running(server), "the forkserver outlived its runner"
    assert {m for m, *_ in toys.cells(store)} == {"inhouse.span"}

    again = subprocess.run(_cmd(tmp_path, "c"), cwd=ROOT, env=_env(tmp_path, gated, "c", 0, 60),
                           capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"resume: {N} finished cell(s) kept" in again.stderr, again.stderr
    cells = toys.cells(store)
    assert len(cells) == 2 * N and all(s == "scored" for m, s, *_ in cells if m == "toy.gated")


def test_the_lead_stops_at_the_first_vendor_cell_when_the_workers_start_or_the_early_worker_comes():
    from harness.run.cellwork import CellTask
    from harness.run.handout import Lead, Source

    def tasks(metrics):
        return [CellTask(None, m, str(i)) for i, m in enumerate(metrics)]

    every = ["a", "a", "a", "v", "a", "v"]
    source = Source(tasks(every))
    lead = Lead(source, {"v"}, threading.Event())
    assert [t.digest for t in lead] == ["0", "1", "2"] and lead.ended_by == "vendor cell"
    assert [t.digest for t in source.rest()] == ["3", "4", "5"]   # the cell that ended it is first in line

    for why in ("workers", "early worker"):
        started, early = threading.Event(), threading.Event()
        source = Source(tasks(every))
        lead, here = Lead(source, {"v"}, started, early), []
        for t in lead:
            here.append(t.digest)
            (started if why == "workers" else early).set()   # the next cell is theirs
        assert here == ["0"] and lead.ended_by == why
        assert [t.digest for t in source.rest()] == ["1", "2", "3", "4", "5"]

    source = Source(tasks(["a", "a"]))
    lead = Lead(source, {"v"}, threading.Event())
    assert len(list(lead)) == 2 and lead.ended_by == "cells" and list(source.rest()) == [] and source.empty()


def test_the_source_hands_each_cell_once_in_order_to_takers_in_many_threads():
    """The runner, the early worker's thread and the workers' feeder take from one source at once."""
    from harness.run.cellwork import CellTask
    from harness.run.handout import Source

    source = Source(CellTask(None, "a" if i % 3 else "b", str(i)) for i in range(3000))
    got: dict = {}

    def take(name, accept):
        mine = got.setdefault(name, [])
        while (t := source.take(accept)) is not None or not source.empty():
            if t is not None:
                mine.append(int(t.digest))

    threads = [threading.Thread(target=take, args=(i, None if i == 0 else (lambda t: t.metric == "a")))
               for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = sorted(i for mine in got.values() for i in mine)
    assert every == list(range(3000))                     # none lost, none twice
    assert all(mine == sorted(mine) for mine in got.values())   # each taker sees the order kept
    assert all(i % 3 for name, mine in got.items() if name for i in mine)   # a taker gets only what it accepts
