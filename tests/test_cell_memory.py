"""Memory does not grow with the number of cells (issue 25, probe 11 and deliverable 4).

Per-cell state is released once the cell is stored: the gateway keeps only the most recently closed
cells (to refuse a late request of one), the fault injector keeps counts and its most recent events,
and its per-cell occurrence numbers go when the gateway hands the cell's ledger over; the run store
looks a cell's earlier attempt up instead of remembering every cell written.

The resident-memory test runs N cells of ``inhouse.span`` (no vendor stack) through a fake
zero-latency judge (the reference judge's reply to each distinct request, given again to every
identical one: the cases are copies) and a fault injector, in this process, and compares the resident
memory at the end with the memory after the first 10 % of the cells. Full size (200,000 cells) is
behind the ``soak`` marker; the suite runs 30,000.
"""
import dataclasses
import gc
import os

import pytest

from harness.cases.load import CaseSet
from harness.judge.cache import request_key
from harness.judge.faults import FaultInjector, FaultSpec
from harness.run.runner import RunOptions, run

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * PAGE / 2**20


class FakeJudge:
    """Zero latency: each distinct request is answered once by the wrapped judge, then from memory."""

    def __init__(self, inner, on_call):
        self.inner, self.kind, self.model = inner, inner.kind, inner.model
        self._answers: dict = {}
        self.on_call = on_call

    def scope(self, cell):
        return self.inner.scope(cell)

    async def complete(self, cell, body):
        self.on_call()
        key = request_key(body)
        reply = self._answers.get(key)
        if reply is None:
            reply = self._answers[key] = await self.inner.complete(cell, body)
        return reply

    async def aclose(self):
        await self.inner.aclose()


def run_cells(canonical, tmp_path, n: int):
    """(RSS after the first n/10 cells' calls, RSS at the end, calls) of an n-cell run, in MB."""
    base = canonical.by_id("trivial-greeting")
    cases = CaseSet(canonical.path, tuple(dataclasses.replace(base, id=f"c{i:06d}") for i in range(n)),
                    canonical.sha256)
    calls = [0]
    marks: dict = {}
    per_cell = 1           # inhouse.span asks the judge once per cell (checked below)

    def on_call():
        calls[0] += 1
        if calls[0] == per_cell * n // 10:
            gc.collect()
            marks["first"] = rss_mb()

    injector = FaultInjector(FaultSpec.parse("500=0.01"), seed=1)
    out = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="mem", progress=False,
                         workers=1, concurrency=16, retry_base_delay_s=0.0, reuse_cells=False,
                         upstream_wrapper=lambda up: injector(FakeJudge(up, on_call))))
    gc.collect()
    end = rss_mb()
    assert sum(out.counts["inhouse.span"].values()) == n
    assert injector.counts()["attempts"] >= calls[0] >= n            # every attempt counted, none lost
    assert calls[0] < n * 1.05, calls[0]                              # one call a cell (and a few retries)
    return marks["first"], end


def test_per_cell_state_is_released(canonical, tmp_path):
    """The structures themselves, after 3,000 cells: fails at once if one of them keeps every cell."""
    from harness.judge import gateway as gw_mod
    from harness.judge import faults

    seen = {}
    real = gw_mod.Gateway.take

    def take(self, run_id, case, metric):
        out = real(self, run_id, case, metric)
        seen["closed"] = max(seen.get("closed", 0), len(self._closed))
        up = self.upstream
        seen["events"] = max(seen.get("events", 0), len(up.events))
        seen["slots"] = max(seen.get("slots", 0), len(up._cells))
        return out

    gw_mod.Gateway.take = take
    try:
        base = canonical.by_id("trivial-greeting")
        n = 3000
        cases = CaseSet(canonical.path, tuple(dataclasses.replace(base, id=f"c{i:05d}") for i in range(n)),
                        canonical.sha256)
        injector = FaultInjector(FaultSpec.parse("500=0.01"), seed=1)
        run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="s", progress=False,
                       workers=1, concurrency=16, retry_base_delay_s=0.0, reuse_cells=False,
                       upstream_wrapper=injector))
    finally:
        gw_mod.Gateway.take = real
    assert seen["slots"] <= 16 + 1                  # only the cells in flight
    assert seen["closed"] <= gw_mod.CLOSED_KEPT and gw_mod.CLOSED_KEPT < n
    assert seen["events"] <= faults.EVENTS_KEPT and faults.EVENTS_KEPT < n
    assert injector.counts()["attempts"] >= n


def test_resident_memory_is_flat_over_30k_cells(canonical, tmp_path):
    first, end = run_cells(canonical, tmp_path, 30_000)
    print(f"30,000 cells: RSS after 3,000 {first:.1f} MB, at the end {end:.1f} MB (+{end - first:.1f} MB)")
    assert end - first < 12.0, (first, end)


@pytest.mark.soak
def test_resident_memory_is_flat_over_200k_cells(canonical, tmp_path):
    first, end = run_cells(canonical, tmp_path, 200_000)
    print(f"200,000 cells: RSS after 20,000 {first:.1f} MB, at the end {end:.1f} MB (+{end - first:.1f} MB)")
    assert end - first < 25.0, (first, end)
