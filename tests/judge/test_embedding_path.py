"""Embedding calls take the same path as chat calls: the cell's time budget bounds them, injected faults reach
them (and are retried like a chat call's), and every attempt is in the cell's ledger; a judge fault is an
errored cell, never a score."""
from __future__ import annotations

from harness.judge.faults import FaultInjector, FaultSpec
from harness.run.runner import RunOptions, run
from harness.store.runstore import RunStore


def _cells(outcome):
    store = RunStore.open(outcome.store_path)
    try:
        cells = store.rows("SELECT status, reason FROM cells WHERE metric = 'baseline.similarity'")
        calls = store.rows("SELECT ok, attempts, error FROM calls WHERE metric = 'baseline.similarity' "
                           "AND step = 'embeddings'")
    finally:
        store.close()
    return cells, calls


def test_injected_faults_reach_embedding_calls(canonical, tmp_path):
    inj = FaultInjector(FaultSpec.parse("500=1"))
    outcome = run(RunOptions(cases=canonical, metrics=["baseline.similarity"], out_dir=str(tmp_path), run_id="f",
                             progress=False, upstream_wrapper=inj, retry_attempts=2, retry_base_delay_s=0.0))
    cells, calls = _cells(outcome)
    assert not [c for c in cells if c[0] == "scored"], cells   # a judge fault is never a score
    errored = [reason for status, reason in cells if status == "error"]
    assert len(errored) >= len(cells) - 2 and all("injected fault: judge HTTP 500" in r for r in errored)
    assert calls and all(not ok and attempts == 2 and "HTTP 500" in error for ok, attempts, error in calls)
    assert sum(up.tally["500"] for up in inj.upstreams) == 2 * len(calls)


def test_a_hung_embedding_call_ends_at_the_cells_budget(canonical, tmp_path):
    few = canonical.__class__(canonical.path, canonical.cases[:2], canonical.sha256)
    inj = FaultInjector(FaultSpec.parse("timeout=1"), hang_s=3600.0)
    outcome = run(RunOptions(cases=few, metrics=["baseline.similarity"], out_dir=str(tmp_path), run_id="t",
                             progress=False, upstream_wrapper=inj, cell_timeout_s=1.0))
    cells, calls = _cells(outcome)
    assert cells and not [c for c in cells if c[0] == "scored"], cells
    assert any("time budget" in (error or "") for _, _, error in calls), calls


def test_the_embedded_model_never_waits_for_the_loops_default_executor(monkeypatch):
    """A vendor's synchronous cell holds a thread of the loop's default executor while it waits for the gateway
    (TruLens calls the judge through asyncio.to_thread). Here the default executor has one thread and a cell holds
    it until an embedding is computed: the embedded model must compute in threads of its own, or the two wait for
    each other for ever (the wait below is a guard against that hang, not a timing)."""
    import asyncio
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from harness.judge import embeddings as embed
    from harness.judge.cell import Cell

    seen = []
    real = embed._embed_timed

    def spy(texts):
        seen.append(threading.current_thread().name)
        return real(texts)

    monkeypatch.setattr(embed, "_embed_timed", spy)

    async def main():
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(max_workers=1, thread_name_prefix="vendor-sync"))
        done, held = threading.Event(), threading.Event()

        def vendor_cell():   # holds the default executor's only thread until the embedding is back
            held.set()
            done.wait()
            return "released"

        cell = loop.run_in_executor(None, vendor_cell)
        await loop.run_in_executor(ThreadPoolExecutor(1), held.wait)
        emb = embed.LocalEmbeddings()
        try:
            reply = await asyncio.wait_for(emb.embed(Cell("r", "c", "baseline.similarity"),
                                                     {"input": ["the sky is blue", "grass is green"]}), 600)
        finally:
            done.set()
            await emb.aclose()
        return reply, await cell

    reply, released = asyncio.run(main())
    assert released == "released"
    assert [d["index"] for d in reply["data"]] == [0, 1] and len(reply["data"][0]["embedding"]) == 384
    assert seen and all(name.startswith("harness-embed") for name in seen), seen
