"""The harness's own cost paths of a worker run (issue 15): the store's burst writes and the plain
thread pool behind the harness's own hops into threads."""
import asyncio
import os
import threading

from harness.core.records import CellResult, Ledger, UnitVerdict
from harness.store.runstore import RunStore, StoreWriteError

import pytest


def _cell(store, case_id, score=1.0, units=1):
    res = CellResult.scored(score, [UnitVerdict(index=i, text=f"claim {i}", kind="claim", verdict="supported",
                                                raw_verdict="yes") for i in range(units)])
    store.write_cell(case_id, "m", "1", "d", res, Ledger(calls=1), [], 1.0)


def test_a_burst_of_cells_is_one_commit_and_whole_or_absent(tmp_path):
    store = RunStore.create(str(tmp_path))
    sql = []
    store.db.set_trace_callback(sql.append)
    with store.batch():
        for cid in ("a", "b", "c"):
            _cell(store, cid)
    assert sum(s == "COMMIT" for s in sql) == 1
    assert store.rows("SELECT case_id, attempt FROM cells ORDER BY case_id") == [("a", 1), ("b", 1), ("c", 1)]

    with pytest.raises(RuntimeError):      # a failure inside the block: none of its cells is written
        with store.batch():
            _cell(store, "d")
            _cell(store, "a", score=0.0, units=3)
            raise RuntimeError("the runner stopped")
    assert store.rows("SELECT case_id, attempt, score FROM cells ORDER BY case_id") == [
        ("a", 1, 1.0), ("b", 1, 1.0), ("c", 1, 1.0)]

    _cell(store, "a", score=0.5, units=2)    # a recomputed cell: attempt 2, its old units replaced
    _cell(store, "d")                        # the rolled-back cell is new again: attempt 1
    assert store.rows("SELECT case_id, attempt, score FROM cells WHERE case_id IN ('a', 'd') ORDER BY case_id") == [
        ("a", 2, 0.5), ("d", 1, 1.0)]
    assert store.rows("SELECT COUNT(*) FROM units WHERE case_id = 'a'") == [(2,)]
    store.close()


def test_a_write_error_inside_a_burst_is_a_store_write_error(tmp_path):
    store = RunStore.create(str(tmp_path))
    store.db.execute("CREATE TRIGGER full BEFORE INSERT ON cells WHEN NEW.case_id = 'boom' "
                     "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    with pytest.raises(StoreWriteError, match="disk is full"):
        with store.batch():
            _cell(store, "ok")
            _cell(store, "boom")
    assert store.rows("SELECT COUNT(*) FROM cells") == [(0,)]
    store.close()


def test_the_harness_hops_into_plain_threads_even_after_trulens_swaps_the_pool():
    """TruLens replaces ``concurrent.futures.ThreadPoolExecutor`` with a class whose ``submit`` records
    ``inspect.stack()``; a worker's ``asyncio.to_thread`` (TruLens's sync call) uses the stdlib class."""
    pytest.importorskip("trulens.core.utils.threading")
    import concurrent.futures

    from harness.core.threads import plain_thread_pool
    from harness.run.cellwork import CellWorker, WorkerSpec
    from harness.run.runner import JudgeConfig

    assert concurrent.futures.ThreadPoolExecutor.__module__.startswith("trulens")   # the trap, still there
    pool = plain_thread_pool()
    assert isinstance(pool, concurrent.futures.ThreadPoolExecutor)           # what asyncio checks
    assert type(pool).submit is concurrent.futures.thread.ThreadPoolExecutor.__mro__[1].submit   # the stdlib's
    spec = WorkerSpec(run_id="r", judge=JudgeConfig(), mode="live", cache_path=None, retry_attempts=1,
                      retry_base_delay_s=0.01, call_timeout_s=5, cell_timeout_s=5, client_timeout_s=5, concurrency=2)

    async def main():
        worker = await CellWorker(spec).start()
        try:
            return await asyncio.to_thread(lambda: threading.current_thread().name)
        finally:
            await worker.close()

    assert asyncio.run(main()).startswith("harness-sync")


@pytest.mark.parametrize("workers", [1, 2])
def test_a_run_keeps_each_workers_start_up_and_hands_out_cells_needing_no_import_first(canonical, tmp_path, workers):
    """The run store keeps when each worker's vendor stacks were imported (the bench's steady state
    starts there), and the cells of metrics with nothing to import go out first, so the judge has work
    while the vendor stacks import."""
    import time

    from harness.cases.load import CaseSet
    from harness.run.runner import RunOptions, run

    cases = CaseSet(canonical.path, canonical.cases[:3], canonical.sha256)
    t0 = time.time()
    out = run(RunOptions(cases=cases, metrics=["ragas.faithfulness", "inhouse.span"], out_dir=str(tmp_path),
                         run_id="s", progress=False, concurrency=1, workers=workers))
    store = RunStore.open(out.store_path)
    try:
        startup = store.meta("startup")
        order = [m for (m,) in store.rows("SELECT metric FROM cells ORDER BY finished")]
    finally:
        store.close()
    # every worker is in the record; one that ran out of cells before its imports ended says so
    assert [w["worker"] for w in startup] == list(range(workers))
    for w in startup:
        assert w["metrics"] == ["ragas.faithfulness"]
        if w.get("unfinished"):
            assert w["ready"] is None and w["import_s"] is None and w["waited_s"] >= 0
        else:
            assert t0 < w["ready"] < time.time() and w["import_s"] >= 0 and w["import_cpu_s"] >= 0
    assert any(not w.get("unfinished") for w in startup)
    if workers == 1:      # one cell at a time: the finish order is the order cells were handed out
        assert order == ["inhouse.span"] * 3 + ["ragas.faithfulness"] * 3
    else:
        assert order[0] == "inhouse.span"


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pinning two workers needs two cores")
@pytest.mark.parametrize("pin", [True, False])
def test_each_worker_stays_on_a_core_of_its_own_unless_told_not_to(canonical, tmp_path, pin):
    """With no more workers than cores, each worker process runs on one core, a different one each
    (its threads hand the GIL over on that core); ``--no-pin`` leaves them on every core of the runner.
    The cores are those the worker process reports itself, from its import thread (any later thread
    of the process inherits the same mask)."""
    from harness.cases.load import CaseSet
    from harness.run.runner import RunOptions, run
    from harness.run.workers import worker_cores

    mine = sorted(os.sched_getaffinity(0))
    cases = CaseSet(canonical.path, canonical.cases[:2], canonical.sha256)
    # inhouse.span has no vendor stack to import, so both workers report their start-up at once
    out = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="p",
                         progress=False, concurrency=2, workers=2, pin_workers=pin))
    store = RunStore.open(out.store_path)
    try:
        cores = {w["worker"]: w["cores"] for w in store.meta("startup")}
    finally:
        store.close()
    assert sorted(cores) == [0, 1]
    if pin:
        assert cores == {0: [mine[0]], 1: [mine[1]]} == {i: [c] for i, c in enumerate(worker_cores(2))}
    else:
        assert cores == {0: mine, 1: mine}
    assert worker_cores(len(mine) + 1) is None     # more workers than cores: the OS places them
