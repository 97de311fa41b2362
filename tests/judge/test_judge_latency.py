"""Latency per answer from the metric's own judge calls (issue 38.5): time in the judge, not in the queue.

The gateway times each request from the moment it leaves for the judge to the reply (``judge_ms``), with
the pace's waits and the backoff between retries left out; a cache hit is 0 and counted apart. The judge
here (:mod:`tests.helpers.judges.delayed`) holds every request for a fixed delay that is a property of the server,
read back from it, so every bound below is a lower bound the server guarantees, or an ordering between
figures of one run that a slow machine cannot reverse.
"""
from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
import uuid

from harness.cases.load import CaseSet
from harness.judge.gateway import Gateway
from harness.judge.pace import Pace
from harness.judge.upstream import Cell, HttpUpstream, RetryPolicy
from harness.reports.analysis.cost import per_metric
from harness.reports.analysis.data import load_run
from harness.reports.analysis.frontier import Point, latency_text
from harness.run.runner import JudgeConfig, RunOptions, run
from harness.store.runstore import RunStore

import pytest

from tests.helpers.judges import delayed
from tests.helpers.judges.realistic import MODEL

WINDOW_S = 1.0
"""The pace below lets one request go per window: a request behind k others waits at least k windows."""


def body(metric: str) -> dict:
    return {"model": MODEL, "temperature": 0, "max_tokens": 32,
            "messages": [{"role": "user", "content": f"Question for {metric}: is the sky blue?"}]}


async def _one_then_queued(url: str, others: int):
    """Metric ``a``'s call, first alone, then behind ``others`` calls of other metrics, through one gateway
    whose pace sends one request per window (concurrency 1 at the judge). Returns both call records."""
    pace = Pace(rpm=60 / WINDOW_S, window_s=WINDOW_S)
    gw = Gateway(HttpUpstream(url, MODEL, None), pace=pace, policy=RetryPolicy(max_attempts=1)).attach()
    try:
        assert (await gw.handle(Cell("alone", "c1", "a"), body("a")))[0] == 200
        alone = gw.take("alone", "c1", "a")[1][0]
        ahead = [asyncio.ensure_future(gw.handle(Cell("q", "c1", f"m{i}"), body(f"m{i}"))) for i in range(others)]
        while pace.stats.sent + pace.stats.waited < others + 1:   # every other call is in the pace (state, not time)
            await asyncio.sleep(0.005)
        status, _ = await gw.handle(Cell("q", "c1", "a"), body("a"))
        assert status == 200 and all(s == 200 for s, _ in await asyncio.gather(*ahead))
        return alone, gw.take("q", "c1", "a")[1][0]
    finally:
        await gw.aclose()


def test_time_in_the_judge_leaves_the_queue_out():
    with delayed.serve(delay_s=0.05) as judge:
        delay_ms = judge.delay_s() * 1000
        others = 3
        alone, queued = asyncio.run(_one_then_queued(judge.url, others))
    # the judge held each request at least its delay: time in the judge covers it
    assert alone.judge_ms >= delay_ms and queued.judge_ms >= delay_ms
    # behind three calls at one request per window, the call waited at least three windows in the pace: the
    # gateway's time includes that wait, the time in the judge does not
    assert queued.latency_ms - queued.judge_ms >= others * WINDOW_S * 1000 * 0.99
    assert queued.latency_ms > alone.latency_ms + (others - 1) * WINDOW_S * 1000
    # so the metric's latency does not grow with the queue: the queued call's time in the judge is below what
    # the queue added to its gateway time (three windows, 60 times the server's delay)
    assert queued.judge_ms < queued.latency_ms - alone.latency_ms


def _cost(out_dir: str, run_id: str, cases, metrics, judge_url: str, **kw):
    outcome = run(RunOptions(cases=cases, metrics=metrics, out_dir=out_dir, run_id=run_id, progress=False,
                             judge=JudgeConfig(url=judge_url, model=MODEL), concurrency=1, **kw))
    return outcome, {c.metric: c for c in per_metric(load_run(outcome.run_dir))}


@pytest.fixture(scope="module")
def three(canonical):
    """Three annotated cases, each passage ending in a sentence of its own: the embedded model has never seen
    it in this process (its offsets and annotation are unchanged), so each embeddings call computes."""
    mark = uuid.uuid4().hex
    picked = tuple(dataclasses.replace(c, contexts=tuple(dataclasses.replace(x, text=f"{x.text} Marker {mark} {i}.")
                                                           for i, x in enumerate(c.contexts)))
                   for c in canonical if c.answer.strip() and c.annotation is not None)[:3]
    return CaseSet(canonical.path, picked, canonical.sha256)


def test_a_run_keeps_time_in_the_judge_per_call_and_the_report_reads_it(tmp_path, three):
    with delayed.serve(delay_s=0.04) as judge:
        delay_ms = judge.delay_s() * 1000
        outcome, cost = _cost(str(tmp_path), "lat", three, ["inhouse.span", "baseline.similarity",
                                                             "cascade.similarity_span"], judge.url, cache_mode="live")
    store = RunStore.open(outcome.run_dir)
    try:
        calls = store.rows("SELECT metric, judge_ms, latency_ms, cached, step FROM calls")
        cells = {(r[0], r[1]): r[2:] for r in store.rows("SELECT case_id, metric, judge_ms, latency_ms, calls FROM cells")}
        per_cell = store.rows("SELECT case_id, metric, SUM(judge_ms) FROM calls GROUP BY case_id, metric")
        embeds = store.rows("SELECT case_id, metric, SUM(judge_ms) FROM calls WHERE step = 'embeddings' "
                            "GROUP BY case_id, metric")
    finally:
        store.close()
    chat = [c for c in calls if c[0] == "inhouse.span"]
    assert chat and all(c[1] >= delay_ms for c in chat)           # every live call: at least the server's delay
    assert all(c[1] <= c[2] for c in chat)                        # never more than the gateway's own time
    for case_id, metric, total in per_cell:                        # the cell's figure is its calls' sum
        assert cells[(case_id, metric)][0] == pytest.approx(total)
    span, sim = cost["inhouse.span"], cost["baseline.similarity"]
    assert span.latency_basis == "judge" and span.timed_answers == 3
    assert span.latency_ms >= delay_ms * min(cells[k][2] for k in cells if k[1] == "inhouse.span")
    assert span.latency_p90_ms >= span.latency_ms
    # the similarity baseline calls no judge: its figure is its own compute (the embedded model's), kept apart
    assert sim.latency_basis == "compute" and sim.latency_ms > 0
    assert all(c[4] == "embeddings" and c[1] > 0 for c in calls if c[0] == "baseline.similarity")
    # the cascade embeds the same texts after the baseline did (the model hands its kept vectors back at once):
    # it is charged what computing them cost, so its figure is its own, not a sibling's leftover
    embedded = {(r[0], r[1]): r[2] for r in embeds}
    pairs = [c for c, m in embedded if m == "cascade.similarity_span" and (c, "baseline.similarity") in embedded]
    assert len(pairs) == 3
    for case_id in pairs:
        assert embedded[(case_id, "cascade.similarity_span")] == pytest.approx(embedded[(case_id, "baseline.similarity")])


def test_cache_hits_are_not_timed_and_are_counted_apart(tmp_path, three):
    with delayed.serve(delay_s=0.02) as judge:
        first, _ = _cost(str(tmp_path), "rec", three, ["inhouse.span"], judge.url, cache_mode="record",
                         cache_path=str(tmp_path / "cache.sqlite"))
        again, cost = _cost(str(tmp_path), "again", three, ["inhouse.span"], judge.url, cache_mode="record",
                            cache_path=str(tmp_path / "cache.sqlite"), reuse_cells=False)
    store = RunStore.open(again.run_dir)
    try:
        calls = store.rows("SELECT cached, judge_ms FROM calls")
    finally:
        store.close()
    assert calls and all(cached == 1 and ms == 0 for cached, ms in calls)
    c = cost["inhouse.span"]
    assert c.cache_hits == len(calls) and c.timed_answers == 0
    text = latency_text(Point("inhouse.span", "span", None, None, None, c.calls, c.tokens, None, c.latency_ms,
                              c.latency_p90_ms, c.latency_basis, c.cache_hits))
    assert f"{len(calls):,} calls served from cache" in text


def test_a_store_written_before_judge_time_falls_back_labelled(tmp_path, three):
    with delayed.serve(delay_s=0.0) as judge:
        outcome, _ = _cost(str(tmp_path), "old", three, ["inhouse.span"], judge.url, cache_mode="live")
    path = f"{outcome.run_dir}/store.sqlite"
    db = sqlite3.connect(path)
    for table in ("cells", "calls", "repeat_cells", "repeat_calls"):   # the layout before judge_ms
        db.execute(f"ALTER TABLE {table} DROP COLUMN judge_ms")
    db.commit()
    db.close()
    cost = {c.metric: c for c in per_metric(load_run(outcome.run_dir))}["inhouse.span"]
    assert cost.latency_basis == "gateway" and cost.latency_p90_ms is None
    assert "gateway, queue included" in latency_text(Point("inhouse.span", "span", None, None, None, 1.0, 1.0, None,
                                                           cost.latency_ms, None, cost.latency_basis))
    store = RunStore(path)   # opened for writing (a resumed run): the column comes back, old rows unknown
    try:
        assert {r[0] for r in store.rows("SELECT judge_ms IS NULL FROM cells")} == {1}
    finally:
        store.close()
