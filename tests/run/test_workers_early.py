"""``--workers N``: the early worker. The forkserver imports the cheap vendor stacks first, forks a worker with
them (:func:`harness.run.early.early_main`) and imports the rest while that worker scores their cells.

Proved by structure, not by time, with two metrics from a folder outside the repository (one entry point each):
``toy.cheap``, whose vendor states a small import cost (the early stage), and ``toy.dear``, whose "vendor
import" (run in the forkserver after the early fork) does not return until the run store holds every
``toy.cheap`` cell. A run in which nothing scored the cheap cells before the forkserver's imports ended would
never open that gate (the metric then says so in its cells, after a bound). Each cell records the process that
scored it and the process its ``prepare`` ran in.
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
"""Toy metrics with a cheap and a dear "vendor import" (tests/run/test_workers_early.py)."""
import os
import sqlite3
import time

from harness.core.records import CellResult
from harness.metric.protocol import register

STATE = {"prepared_in": None, "gate": None}

{STORED}

class _Toy:
    version = "1"
    order = 99
    higher_is_better = True
    unit = "answer"
    uses_judge = False
    judge = "toy_early.metric:reply"

    async def score(self, case, endpoint):
        hold = os.environ.get("TOY_HOLD")
        if hold and self.name == "toy.cheap":   # the kill test: the cell waits, named by the process holding it
            open(os.path.join(hold, f"holding-{os.getpid()}"), "w").close()
            while not os.path.exists(os.path.join(hold, "release")):
                time.sleep(0.05)
        return CellResult.scored(1.0, detail={"pid": os.getpid(), **STATE})


@register
class Cheap(_Toy):
    name = short_name = "toy.cheap"
    display_name = "Toy cheap"
    vendor = "toycheap"
    import_cpu_s = 0.1
    definition = "Scores 1; its vendor stack is cheap to import (the early stage)."

    @classmethod
    def prepare(cls):
        if STATE["prepared_in"] is None:
            STATE["prepared_in"] = os.getpid()


@register
class Dear(_Toy):
    name = short_name = "toy.dear"
    display_name = "Toy dear"
    vendor = "toydear"
    import_cpu_s = 9.0
    definition = "Scores 1; its vendor import waits until the run store holds every toy.cheap cell."

    @classmethod
    def prepare(cls):
        if STATE["gate"] is not None:   # imported once per process (a fork inherits it)
            return
        gate = os.environ["TOY_GATE_DIR"]
        open(os.path.join(gate, f"dear-{os.getpid()}"), "w").close()
        STATE["gate"] = _gate("toy.cheap")   # waits for the store's state


def reply(req):
    raise AssertionError("the toys ask no judge")
'''


@pytest.fixture()
def dist(tmp_path):
    """The toy distribution in a folder of its own, found through ``PYTHONPATH``."""
    (tmp_path / "gate").mkdir()
    (tmp_path / "hold").mkdir()
    return toys.write_dist(tmp_path / "site", "toy_early", MODULE.replace("{STORED}", toys.STORED),
                           {"toy.cheap": "Cheap", "toy.dear": "Dear"})


def _env(tmp_path, site, run_id: str, cells: int, max_s: float, hold: bool = False) -> dict:
    env = toys.run_env(site, TOY_GATE_DIR=str(tmp_path / "gate"), TOY_GATE_CELLS=str(cells),
                       TOY_GATE_MAX_S=str(max_s), TOY_GATE_STORE=str(tmp_path / "out" / run_id / "store.sqlite"))
    env.pop("TOY_HOLD", None)
    if hold:
        env["TOY_HOLD"] = str(tmp_path / "hold")
    return env


def _cmd(tmp_path, run_id: str, *more: str) -> list[str]:
    return [sys.executable, "-m", "harness", "run", "--cases", CANONICAL, "--metrics",
            "inhouse.span,toy.dear,toy.cheap", "--out", str(tmp_path / "out"), "--run-id", run_id, "--no-report",
            "--workers", "2", "--no-progress", *more]


def test_the_early_worker_scores_the_cheap_vendors_cells_while_the_forkserver_imports_the_rest(tmp_path, dist):
    p = subprocess.run(_cmd(tmp_path, "e"), cwd=ROOT, env=_env(tmp_path, dist, "e", N, 300), capture_output=True,
                       text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    store = tmp_path / "out" / "e" / "store.sqlite"
    meta, cells = toys.meta(store), toys.cells(store)
    workers = {w["worker"]: w for w in meta["startup"]}
    assert sorted(workers) == [0, 1, 2], meta["startup"]   # the two workers and the early one (index 2)
    early = workers[2]
    assert early.get("early") is True and "preload" not in early
    preload = workers[0]["preload"]
    server = preload["pid"]
    assert workers[1]["preload"]["pid"] == server and early["pid"] not in (server, workers[0]["pid"],
                                                                           workers[1]["pid"])
    # the forkserver imported the cheap stack first, then the dear one (the order of the import costs)
    assert preload["metrics"] == ["toy.cheap", "toy.dear"] and not preload["failed"], preload

    cheap = [json.loads(d) for m, s, d, _ in cells if m == "toy.cheap"]
    dear = [json.loads(d) for m, s, d, _ in cells if m == "toy.dear"]
    assert len(cheap) == len(dear) == N and sum(m == "inhouse.span" for m, *_ in cells) == N
    # every cheap cell: in the early worker, its vendor imported once, in the forkserver before the fork
    assert {c["pid"] for c in cheap} == {early["pid"]}, cheap[:2]
    assert {c["prepared_in"] for c in cheap} == {server}
    # the forkserver's dear import ended only once the store held every cheap cell: they were scored during it
    assert {c["gate"] for c in dear} == {"opened"}
    assert max(f for m, _, _, f in cells if m == "toy.cheap") <= preload["ready"]
    assert os.listdir(tmp_path / "gate") == [f"dear-{server}"]   # the dear import ran in one process only
    # the dear cells ran in the workers forked after it, never in the early worker nor the runner
    assert {c["pid"] for c in dear} <= {workers[0]["pid"], workers[1]["pid"]}
    assert meta["overlap"]["pid"] not in {c["pid"] for c in cheap + dear}
    assert meta["overlap"]["ended_by"] in ("early worker", "vendor cell"), meta["overlap"]
    assert "Traceback" not in p.stderr and "unexpected pid" not in p.stderr, p.stderr[-3000:]


def _wait_for(what, p, err, limit: int = 60_000):
    for _ in range(limit):   # waits for the state; the bound only ends a broken run
        got = what()
        if got:
            return got
        assert p.poll() is None, "".join(err)
        time.sleep(0.01)
    raise AssertionError("the state never came")


def test_an_early_worker_that_dies_fails_the_run_with_a_message_and_a_rerun_finishes(tmp_path, dist):
    env = _env(tmp_path, dist, "k", 10 ** 6, 600, hold=True)
    p = subprocess.Popen(_cmd(tmp_path, "k"), cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    err: list = []
    reader = threading.Thread(target=lambda: err.append(p.stderr.read()), daemon=True)
    reader.start()
    hold = tmp_path / "hold"
    holding = _wait_for(lambda: [f for f in os.listdir(hold) if f.startswith("holding-")], p, err)
    victim = int(holding[0].partition("-")[2])
    os.kill(victim, signal.SIGKILL)
    p.wait(300)
    p.stdout.close()
    reader.join(300)   # the whole of stderr, read to its end
    assert p.returncode == 2, err
    assert "the early worker process died" in err[0] and "same --run-id" in err[0], err[0][-3000:]
    assert "Traceback" not in err[0], err[0][-3000:]
    store = tmp_path / "out" / "k" / "store.sqlite"
    assert not any(m == "toy.cheap" for m, *_ in toys.cells(store))   # it held every cheap cell it had: none stored

    (hold / "release").touch()
    again = subprocess.run(_cmd(tmp_path, "k"), cwd=ROOT, env=_env(tmp_path, dist, "k", 0, 60),
                           capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    cells = toys.cells(store)
    assert len(cells) == 3 * N and {s for m, s, *_ in cells if m.startswith("toy.")} == {"scored"}
    assert "errored" not in {s for _, s, *_ in cells}


def test_the_early_worker_ends_with_its_runner(tmp_path, dist):
    """SIGKILL the runner alone while the early worker holds a cell: the early worker (not the runner's child)
    notices and exits, and so does the forkserver."""
    env = _env(tmp_path, dist, "r", 10 ** 6, 600, hold=True)
    p = subprocess.Popen(_cmd(tmp_path, "r"), cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, text=True)
    hold = tmp_path / "hold"
    holding = _wait_for(lambda: [f for f in os.listdir(hold) if f.startswith("holding-")], p, [""])
    early = int(holding[0].partition("-")[2])
    server = int(_wait_for(lambda: os.listdir(tmp_path / "gate"), p, [""])[0].partition("-")[2])
    assert toys.running(early) and toys.running(server)
    p.kill()
    p.wait(60)
    for _ in range(60_000):
        if not toys.running(early) and not toys.running(server):
            break
        time.sleep(0.01)
    assert not toys.running(early), "the early worker outlived its runner"
    assert not toys.running(server), "the forkserver outlived its runner"


def _listening(tmp_path):
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(tmp_path / "early"))
    sock.listen(1)
    return sock


@pytest.mark.parametrize("takes", [0, 1])
def test_an_early_worker_that_dies_fails_the_run_only_if_it_held_cells(tmp_path, takes):
    """The runner's end of the early worker (:class:`harness.run.early.Early`) with a stand-in worker on the
    other end of the socket: it asks for ``takes`` cells, then its connection breaks."""
    import queue
    from multiprocessing.connection import Client

    from harness.run.cellwork import CellTask
    from harness.run.early import Early
    from harness.run.handout import Source

    sock = _listening(tmp_path)
    results: queue.Queue = queue.Queue()
    source = Source(CellTask(None, "v.cheap", str(i)) for i in range(5))
    early = Early(sock, source, "spec", ["v.cheap"], 2, results, threading.Event(), threading.Event())
    early.thread.start()
    conn = Client(str(tmp_path / "early"), family="AF_UNIX")
    assert conn.recv() == ("spec", ["v.cheap"], 2)
    for _ in range(takes):
        conn.send(("want", None))
        assert conn.recv().metric == "v.cheap"
    conn.close()
    early.thread.join()
    got = [results.get_nowait() for _ in range(results.qsize())]
    if takes:
        assert got[0][0] == "error" and "died holding 1 cell" in got[0][1], got
    else:
        assert got == [("exit", 2)]   # nothing lost: the workers take every cell
    assert got[-1] == ("exit", 2)
    assert len(list(source.rest())) == 5 - takes
    sock.close()


def test_the_early_worker_gets_no_cell_once_the_workers_are_started(tmp_path):
    import queue
    from multiprocessing.connection import Client

    from harness.run.cellwork import CellTask
    from harness.run.early import Early
    from harness.run.handout import Source

    sock = _listening(tmp_path)
    results: queue.Queue = queue.Queue()
    started = threading.Event()
    source = Source(CellTask(None, m, str(i)) for i, m in enumerate(["free", "v.cheap", "v.dear", "v.cheap"]))
    early = Early(sock, source, "spec", ["free", "v.cheap"], 2, results, started, threading.Event())
    early.thread.start()
    conn = Client(str(tmp_path / "early"), family="AF_UNIX")
    conn.recv()
    taken = []
    for _ in range(3):
        conn.send(("want", None))
        taken.append(conn.recv())
    # a vendor-free cell and its own vendor's, then nothing: the next is a vendor it does not have
    assert [t.digest for t in taken[:2]] == ["0", "1"] and taken[2] is None
    conn.send(("done", "cell 0"))
    started.set()
    conn.send(("want", None))
    assert conn.recv() is None
    conn.send(("exit", 2))
    early.thread.join()
    assert [results.get_nowait() for _ in range(results.qsize())] == [("done", "cell 0"), ("exit", 2)]
    assert [t.digest for t in source.rest()] == ["2", "3"]
    sock.close()


def test_closing_the_runners_end_ends_the_worker_and_the_thread_closes_the_connection_once(tmp_path, monkeypatch):
    """The run fails while the early worker holds cells: :meth:`Early.close` (the runner's thread) shuts the
    connection down, the worker's end sees it end, and the thread that reads it closes it, once, raising nothing."""
    import queue
    from multiprocessing.connection import Client

    from harness.run.cellwork import CellTask
    from harness.run.early import Early
    from harness.run.handout import Source

    raised: list = []
    monkeypatch.setattr(threading, "excepthook", raised.append)
    sock = _listening(tmp_path)
    results: queue.Queue = queue.Queue()
    stop = threading.Event()
    early = Early(sock, Source(CellTask(None, "v.cheap", str(i)) for i in range(5)), "spec", ["v.cheap"], 2,
                  results, threading.Event(), stop)
    early.thread.start()
    conn = Client(str(tmp_path / "early"), family="AF_UNIX")
    conn.recv()
    conn.send(("want", None))
    assert conn.recv().digest == "0"          # the worker holds a cell; the thread waits for what it sends next
    stop.set()
    early.close()
    with pytest.raises(EOFError):             # the worker's end: the runner is gone
        conn.recv()
    early.thread.join()
    assert early.conn.closed and raised == []
    assert [results.get_nowait() for _ in range(results.qsize())] == [("exit", 2)]   # stopped: no error of its own
    early.close()                              # again, after the thread closed it: nothing happens
    conn.close()
    sock.close()
