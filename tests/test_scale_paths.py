"""The harness's own cost paths of a worker run (issue 15): the store's burst writes and the plain
thread pool behind the harness's own hops into threads."""
import asyncio
import threading

import pytest

from harness.model import CellResult, Ledger, UnitVerdict
from harness.store import RunStore, StoreWriteError


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

    from harness.cellwork import CellWorker, WorkerSpec, plain_thread_pool
    from harness.runner import JudgeConfig

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

    from harness.cases import CaseSet
    from harness.runner import RunOptions, run

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
    ids = [w["worker"] for w in startup]    # (a worker that ran out of cells before its imports ended has none)
    assert ids == sorted(set(ids)) and ids[0] in (0, 1) and set(ids) <= set(range(workers))
    for w in startup:
        assert w["metrics"] == ["ragas.faithfulness"] and t0 < w["ready"] < time.time()
        assert w["import_s"] >= 0 and w["import_cpu_s"] >= 0
    if workers == 1:      # one cell at a time: the finish order is the order cells were handed out
        assert order == ["inhouse.span"] * 3 + ["ragas.faithfulness"] * 3
    else:
        assert order[0] == "inhouse.span"
