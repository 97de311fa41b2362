"""One pace for every vendor (issue 38.2): the gateway's limiter against a judge that enforces a budget.

The judge (:mod:`tests.helpers.judges.ratelimited`) and the pace share a virtual clock that moves only when the
pace waits, and only once every request it let go has been answered: no test here depends on the
machine's speed. Throughput against the budget is measured in bench/bench_pace.py, not here.
"""
from __future__ import annotations

import asyncio
import json

from harness.judge.gateway import Gateway
from harness.judge.pace import Pace, PaceTimeout, estimate_tokens, for_workers, parse_reset
from harness.judge.upstream import Cell, HttpUpstream, RetryPolicy

import pytest

from tests.conftest import CANONICAL
from tests.helpers.judges import ratelimited
from tests.helpers.judges.realistic import MODEL


class Virtual:
    """A clock that moves only in :meth:`sleep`, once every request the pace sent is answered (its reply and
    headers read at the time it was sent)."""

    def __init__(self):
        self.now = 1000.0
        self.landed = lambda: True

    def clock(self) -> float:
        return self.now

    async def sleep(self, d: float) -> None:
        while not self.landed():
            await asyncio.sleep(0.001)
        self.now += max(0.0, d)


def body(i: int, max_tokens: int = 64) -> dict:
    return {"model": MODEL, "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": f"Question {i}: is the sky blue? " + "word " * 40}]}


async def _fire(url: str, n: int, pace=None, attempts: int = 1, sequential: bool = False):
    gw = Gateway(HttpUpstream(url, MODEL, None), pace=pace, policy=RetryPolicy(max_attempts=attempts,
                                                                              base_delay_s=0.0))
    gw.attach()
    try:
        calls = [gw.handle(Cell("r", f"c{i}", "m"), body(i)) for i in range(n)]
        if sequential:
            return [await c for c in calls]
        return await asyncio.gather(*calls)
    finally:
        await gw.aclose()


def _window_max(log, window_s: float) -> int:
    """Most tickets in any window of ``window_s`` (the pace's own accounting)."""
    times = sorted(t.at for t in log)
    return max((sum(1 for u in times if t - window_s < u <= t) for t in times), default=0)


def test_without_a_pace_a_burst_loses_calls():
    clock = Virtual()
    with ratelimited.serve(rpm=6, clock=clock.clock) as judge:
        replies = asyncio.run(_fire(judge.url, 24))
    statuses = [s for s, _ in replies]
    assert statuses.count(200) == 6 and statuses.count(429) == 18
    assert judge.budget.refused == 18


def test_the_pace_keeps_the_budget_and_loses_nothing():
    clock = Virtual()
    with ratelimited.serve(rpm=6, clock=clock.clock) as judge:
        pace = Pace(rpm=6, clock=clock.clock, sleep=clock.sleep)
        pace.log = []
        clock.landed = lambda: not pace.inflight
        replies = asyncio.run(_fire(judge.url, 24, pace))   # one attempt each: a 429 would be a lost call
    assert [s for s, _ in replies] == [200] * 24
    assert judge.budget.refused == 0 and judge.budget.answered == 24
    assert _window_max(pace.log, 60.0) == 6 == pace.stats.max_requests
    assert clock.now - 1000.0 == pytest.approx(180.0)   # 24 calls at 6 a minute: sent at 0, 60, 120, 180 s


def test_a_pace_above_the_providers_limit_halves_on_429_and_loses_nothing():
    clock = Virtual()
    with ratelimited.serve(rpm=6, clock=clock.clock, headers=False) as judge:   # Retry-After only
        pace = Pace(rpm=24, clock=clock.clock, sleep=clock.sleep)
        clock.landed = lambda: not pace.inflight
        replies = asyncio.run(_fire(judge.url, 24, pace))
    assert [s for s, _ in replies] == [200] * 24
    assert pace.stats.throttled == judge.budget.refused > 0
    assert judge.budget.max_requests <= 6
    assert pace.share < 1.0   # halved, and climbing back by one request per answer


def test_the_providers_headers_pace_calls_before_any_429():
    # the pace is told 1,000 rpm; the server says "0 remaining, reset in ..." and the pace waits for it
    clock = Virtual()
    with ratelimited.serve(rpm=6, clock=clock.clock) as judge:
        pace = Pace(rpm=1000, clock=clock.clock, sleep=clock.sleep)
        clock.landed = lambda: not pace.inflight
        replies = asyncio.run(_fire(judge.url, 14, pace, sequential=True))
    assert [s for s, _ in replies] == [200] * 14
    assert judge.budget.refused == 0 and pace.stats.waited == 2


def test_tokens_per_minute_are_kept_by_estimate_then_by_usage():
    clock = Virtual()
    cost = estimate_tokens(body(0))
    with ratelimited.serve(tpm=cost * 4, clock=clock.clock) as judge:
        pace = Pace(tpm=cost * 4, clock=clock.clock, sleep=clock.sleep)
        clock.landed = lambda: not pace.inflight
        replies = asyncio.run(_fire(judge.url, 12, pace))
    assert [s for s, _ in replies] == [200] * 12 and judge.budget.refused == 0
    assert pace.stats.max_tokens <= cost * 4
    # the replies' usage (below the estimate's max_tokens) gave room back: more than 4 calls a window went
    assert judge.budget.max_requests > 4


def test_a_call_that_cannot_be_sent_within_the_cell_budget_is_a_resumable_error():
    async def go():
        clock = Virtual()
        pace = Pace(rpm=1, clock=clock.clock, sleep=clock.sleep)
        await pace.acquire(10)
        with pytest.raises(PaceTimeout):
            await pace.acquire(10, deadline=clock.now + 30)
        assert pace.stats.gave_up == 1

        class Never:   # an upstream the pace never lets a call reach
            kind, model = "test", "m"

            def scope(self, cell):
                return "s"

            async def complete(self, cell, body):
                raise AssertionError("sent past the pace")

            async def aclose(self):
                return None

        gw = Gateway(Never(), pace=pace).attach()
        gw.budgets.open(Cell("r", "c", "m"), 5.0)
        status, reply = await gw.handle(Cell("r", "c", "m"), body(0))
        ledger, calls = gw.take("r", "c", "m")
        return status, reply, calls

    status, reply, calls = asyncio.run(go())
    assert status == 504 and "--cell-timeout" in reply["error"]["message"]
    assert [c.ok for c in calls] == [False]


def test_the_adaptive_share_halves_and_climbs_back():
    clock = Virtual()
    pace = Pace(rpm=60, clock=clock.clock, sleep=clock.sleep)
    pace.throttled(2.0)
    pace.throttled(None)
    assert pace.share == 0.25 and pace.stats.throttled == 2
    t = asyncio.run(pace.acquire(5))
    assert t.at >= 1002.0   # waited out Retry-After
    for _ in range(10):
        pace.settle(t, 5)
    assert pace.share == pytest.approx(0.25 + 10 / 60)
    for _ in range(100):
        pace.settle(t, 5)
    assert pace.share == 1.0


def test_workers_share_the_budget():
    assert for_workers(600, 90_000, 3) == (200.0, 30_000.0)
    assert for_workers(None, 1000, 2) == (None, 500.0)
    assert parse_reset("1m30s") == 90.0 and parse_reset("250ms") == 0.25


def test_a_run_paced_with_no_retries_loses_no_cell(tmp_path):
    """End to end through ``harness.evaluate``: inhouse.span against a judge that allows 3 requests a second,
    with no retries at all: every 429 would cost a cell, the pace waits them out instead."""
    from harness.api import evaluate

    with open(CANONICAL, encoding="utf-8") as fh:
        cases = [json.loads(line) for line in fh][:6]
    with ratelimited.serve(rpm=180, window_s=1.0) as judge:
        res = evaluate(cases, metrics="inhouse.span", judge={"url": judge.url, "model": MODEL}, report=False,
                       out_dir=str(tmp_path), progress=False, retry_attempts=1, cache_mode="live",
                       judge_rpm=180, judge_window_s=1.0)
        stats = judge.budget.stats()
    assert len(res.cells) == 6 and "error" not in set(res.cells["status"]), res.cells[["status", "reason"]]
    # an attempt counts from its sending until a window after its answer, so the judge never saw a 4th
    assert stats["answered"] >= 12 and stats["max_requests"] <= 3 and stats["refused"] == 0


def test_each_worker_paces_its_share():
    from dataclasses import replace

    from harness.api import case_set
    from harness.run.cellwork import make_gateway
    from harness.run.runner import RunOptions, _worker_spec

    opts = RunOptions(cases=case_set(CANONICAL), metrics=["inhouse.span"], judge_rpm=600, judge_tpm=90_000,
                      judge_window_s=10.0)
    spec = _worker_spec(opts, "r", "live", None, 3, remote=True)
    assert (spec.judge_rpm, spec.judge_tpm, spec.judge_window_s) == (200, 30_000, 10.0)
    pace = make_gateway(spec, {}, None).pace
    assert (pace.rpm, pace.tpm, pace.window_s) == (200, 30_000, 10.0)
    # on Ray the actors divide the run's limits among themselves (harness.run.rayrun), not the runner
    assert _worker_spec(replace(opts, ray="auto"), "r", "live", None, 3, remote=True).judge_rpm == 600
    assert make_gateway(_worker_spec(replace(opts, judge_rpm=None, judge_tpm=None), "r", "live", None, 1,
                                     remote=False), {}, None).pace is None
