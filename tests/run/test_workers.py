"""--workers N: the same store as one process, the runner the single writer of store and cache, cells
streamed, vendor switches forced in every worker before any vendor import, a dead worker reported."""
import glob
import json
import sqlite3

from harness.cases.load import CaseSet
from harness.metric.vendor_env import forced
from harness.run.runner import RunOptions, run
from harness.store.runstore import RunStore

import pytest

from tests.helpers.upstreams import Probe

VENDOR_MODULES = ("ragas", "deepeval", "trulens.core")


def _store(path):
    """Everything a run computes, without wall-clock fields; a cell's calls as a sorted list (concurrent
    calls of one cell finish in no fixed order, in one process as in several)."""
    db = sqlite3.connect(path)
    try:
        cells = sorted(db.execute("SELECT case_id, metric, metric_version, case_digest, status, score, reason, "
                                  "flags, detail, calls, prompt_tokens, completion_tokens, cache_hits, errors, "
                                  "retries, attempt FROM cells"))
        units = sorted(db.execute("SELECT * FROM units"))
        calls = sorted(db.execute("SELECT case_id, metric, ok, cached, attempts, prompt_tokens, completion_tokens, "
                                  "request_key, step, error FROM calls"))
    finally:
        db.close()
    return cells, units, calls


def _cases(canonical, n):
    return CaseSet(canonical.path, canonical.cases[:n], canonical.sha256)


def test_two_workers_give_the_store_one_process_gives_and_force_the_vendor_switches(canonical, tmp_path):
    cases = _cases(canonical, 8)
    metrics = ["inhouse.span", "ragas.faithfulness", "deepeval.faithfulness", "trulens.groundedness"]
    probes = tmp_path / "probes"
    probes.mkdir()
    one = run(RunOptions(cases=cases, metrics=metrics, out_dir=str(tmp_path), run_id="w1", progress=False,
                         concurrency=8, workers=1))
    two = run(RunOptions(cases=cases, metrics=metrics, out_dir=str(tmp_path), run_id="w2", progress=False,
                         concurrency=8, workers=2, upstream_wrapper=Probe(probes)))
    a, b = _store(one.store_path), _store(two.store_path)
    assert len(a[0]) == 32 and all(row[4] != "error" for row in a[0])
    assert a == b
    seen = [json.load(open(p)) for p in glob.glob(str(probes / "*.json"))]
    # each worker process made judge calls (and the early worker, with the Ragas and DeepEval stacks, most often)
    assert len(seen) in (2, 3), seen
    for s in seen:
        assert s["env"] == forced()
        mods = s["modules"]
        for vendor in (v for v in VENDOR_MODULES if v in mods):   # the switches were forced before any vendor
            assert mods.index("harness.metric.vendor_env") < mods.index(vendor), vendor
    # the two workers have every vendor; the early worker, forked before TruLens imported, the cheaper two only
    every = [s for s in seen if all(v in s["modules"] for v in VENDOR_MODULES)]
    assert len(every) == 2 and all(s in every or "trulens.core" not in s["modules"] for s in seen)


def test_record_then_replay_with_workers_the_runner_writes_the_cache(canonical, tmp_path):
    cases = _cases(canonical, 10)
    cache = str(tmp_path / "cache.sqlite")
    rec = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="rec", progress=False,
                         cache_mode="record", cache_path=cache, workers=2))
    n = sqlite3.connect(cache).execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    calls = sum(r[0] for r in RunStore.open(rec.store_path).rows("SELECT calls FROM cells"))
    assert n == calls > 0                      # every response the workers got is in the runner's cache
    rep = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="rep", progress=False,
                         cache_mode="replay", cache_path=cache, workers=2))
    s = RunStore.open(rep.store_path)
    try:
        assert s.rows("SELECT SUM(calls), SUM(cache_hits), SUM(errors) FROM cells")[0] == (calls, calls, 0)
        assert s.rows("SELECT COUNT(*) FROM calls WHERE attempts > 0")[0][0] == 0   # 0 upstream attempts
    finally:
        s.close()
    assert _store(rec.store_path)[1] == _store(rep.store_path)[1]


def test_cells_are_streamed_not_listed(canonical):
    """The runner hands cells out as workers free up: at no time are more than the queue's bound plus
    the cells in flight taken from the iterator."""
    import dataclasses

    from harness.run.cellwork import CellTask
    from harness.run.runner import JudgeConfig, RunOptions, _worker_spec
    from harness.run.workers import run_in_processes

    base = canonical.cases[0]
    opts = RunOptions(cases=canonical, metrics=["inhouse.span"], judge=JudgeConfig(), concurrency=2)
    spec = _worker_spec(opts, "s", "live", None, 2, remote=True)
    taken, done, ahead = [0], [0], []

    def tasks():
        for i in range(300):
            taken[0] += 1
            ahead.append(taken[0] - done[0])
            yield CellTask(dataclasses.replace(base, id=f"{base.id}-{i}"), "inhouse.span", f"d{i}")

    def on_done(cell):
        done[0] += 1

    run_in_processes(spec, tasks(), 2, ["inhouse.span"], on_done)
    assert done[0] == 300
    # the queue holds 2 x workers x slots (4 here), plus the cells in flight, finished ones on their way
    # back and the feeder's next: a handful (more on a loaded machine), never the 300 a list takes at once
    assert max(ahead) <= 100, max(ahead)


def test_a_worker_that_dies_fails_the_run_with_a_message_and_resume_finishes(canonical, tmp_path):
    from harness.run.workers import WorkerFailed

    cases = _cases(canonical, 12)
    victim = cases.cases[9].id
    with pytest.raises(WorkerFailed, match="died.*same --run-id"):
        run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="d", progress=False,
                       workers=2, concurrency=2, upstream_wrapper=Probe(tmp_path, die_on=victim)))
    again = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="d", progress=False,
                           workers=2))
    assert again.reused + again.computed == 12 and again.computed >= 1
    assert sum(again.counts["inhouse.span"].values()) == 12


def test_workers_exit_at_once_when_their_runner_is_killed(tmp_path):
    """SIGKILL the runner alone (not its process group): its worker processes notice through the
    runner's process sentinel and exit within moments, printing nothing."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import CANONICAL, ROOT
    from tests.helpers.procs import workers_of

    def alive(pid):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                return fh.read().split()[2] != "Z"
        except OSError:
            return False

    cmd = [sys.executable, "-m", "harness", "run", "--cases", CANONICAL, "--metrics", "inhouse.span", "--out",
           str(tmp_path), "--run-id", "k", "--workers", "2", "--judge-latency-ms", "3000", "--no-progress"]
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().startswith("judge: ")
    workers: list = []
    for _ in range(1200):      # the two workers: its forkserver's children (tests/helpers/procs.py)
        workers = workers_of(p.pid)
        if len(workers) == 2:
            break
        time.sleep(0.05)
    assert len(workers) == 2, workers
    time.sleep(1.0)           # mid-run: cells waiting on the judge
    os.kill(p.pid, signal.SIGKILL)
    p.wait(10)
    t0 = time.monotonic()
    while any(alive(k) for k in workers) and time.monotonic() - t0 < 10:
        time.sleep(0.02)
    gone = time.monotonic() - t0
    assert gone < 2.0, f"workers outlived their runner by {gone:.1f} s"
    assert "Traceback" not in p.stderr.read()


def test_a_worker_failure_in_a_burst_still_stores_the_cells_that_came_with_it(monkeypatch):
    """Finished cells that wait on the result queue beside a worker's failure are all handed to the
    runner (stored) before the run fails."""
    import queue as stdqueue

    import harness.run.workers as w

    class FakeQueue:
        def __init__(self, items):
            self.items = list(items)

        def get(self, timeout=None):
            if not self.items:
                raise stdqueue.Empty
            return self.items.pop(0)

        def get_nowait(self):
            return self.get()

        def put(self, item, timeout=None):
            pass

        def cancel_join_thread(self):
            pass

    class FakeProcess:
        exitcode, name = None, "p"

        def __init__(self, *a, **k):
            pass

        def start(self):
            pass

        def is_alive(self):
            return False

        def terminate(self):
            pass

        def join(self, t=None):
            pass

    results = FakeQueue([("done", "cell-1"), ("error", "worker process 0 failed: boom"), ("done", "cell-2")])

    class Ctx:
        def Queue(self, maxsize=0):
            return results if maxsize == 0 else FakeQueue([])

        Process = FakeProcess

    import multiprocessing

    monkeypatch.setattr(multiprocessing, "get_context", lambda kind: Ctx())
    stored = []
    with pytest.raises(w.WorkerFailed, match="boom"):
        w.run_in_processes(type("S", (), {"concurrency": 1})(), iter([]), 1, [], stored.append)
    assert stored == ["cell-1", "cell-2"]
