"""Memory does not grow with the number of cells (issue 25, probe 11 and deliverable 4).

Per-cell state is released once the cell is stored: the gateway keeps only the most recently closed
cells (to refuse a late request of one), the fault injector keeps counts and its most recent events,
and its per-cell occurrence numbers go when the gateway hands the cell's ledger over; the run store
looks a cell's earlier attempt up instead of remembering every cell written.

The resident-memory tests run N cells of ``inhouse.span`` (no vendor stack) through a fake
zero-latency judge (the reference judge's reply to each distinct request, given again to every
identical one: the cases are copies) and a fault injector (1 % HTTP 500, retried at once), and compare
the resident memory at the end with the memory after the first cells. They measure in a process of their
own (``python -m tests.run.test_cell_memory N MARK KEPT``): in the suite's process the resident memory is
that of every earlier test too (1.1 GB of heap there, where the same run's allocations land on new pages
more often: +1.8 MB once, against +0.9 MB alone), and a thread an earlier test left behind would count. Full size,
200,000 cells against the first 10,000 (bound: +8 MB), is behind the ``soak`` marker (about an hour
on a loaded 2-core machine, ~20 ms a cell); the suite runs 6,000 against the first 1,000 with the
bounds lowered to 300 (bound: +1.5 MB).
"""
import dataclasses
import gc
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.cases.load import CaseSet
from harness.judge.cache import request_key
from harness.judge.faults import FaultInjector, FaultSpec
from harness.run.runner import RunOptions, run

import pytest

from tests.conftest import CANONICAL, ROOT

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


def run_cells(canonical, tmp_path, n: int, mark: int) -> tuple[float, float]:
    """(resident MB once ``mark`` cells were scored, resident MB at the end) of an n-cell run."""
    base = canonical.by_id("trivial-greeting")
    cases = CaseSet(canonical.path, tuple(dataclasses.replace(base, id=f"c{i:06d}") for i in range(n)),
                    canonical.sha256)
    calls = [0]
    marks: dict = {}
    per_cell = 2           # inhouse.span asks the judge twice per cell (claims, then verdicts)

    def on_call():
        calls[0] += 1
        if calls[0] == per_cell * mark:
            gc.collect()
            marks["first"] = rss_mb()

    injector = FaultInjector(FaultSpec.parse("500=0.01"), seed=1)
    out = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="mem", progress=False,
                         workers=1, concurrency=16, retry_base_delay_s=0.0, reuse_cells=False,
                         upstream_wrapper=lambda up: injector(FakeJudge(up, on_call))))
    gc.collect()
    end = rss_mb()
    assert out.counts["inhouse.span"].get("scored", 0) == n
    assert calls[0] == per_cell * n                                  # the fake judge answered every call
    assert injector.counts()["attempts"] > calls[0]                   # ... and some 500s were retried
    return marks["first"], end


def test_per_cell_state_is_released(canonical, tmp_path, monkeypatch):
    """The structures themselves, bounds lowered to 100, over 600 cells: fails at once if one of them
    keeps every cell."""
    from harness.judge import faults
    from harness.judge import gateway as gw_mod

    monkeypatch.setattr(gw_mod, "CLOSED_KEPT", 100)
    monkeypatch.setattr(faults, "EVENTS_KEPT", 100)
    seen = {"closed": 0, "events": 0, "slots": 0}
    real = gw_mod.Gateway.take

    def take(self, run_id, case, metric):
        out = real(self, run_id, case, metric)
        up = self.upstream
        for k, n in (("closed", len(self._closed)), ("events", len(up.events)), ("slots", len(up._cells))):
            seen[k] = max(seen[k], n)
        return out

    monkeypatch.setattr(gw_mod.Gateway, "take", take)
    base = canonical.by_id("trivial-greeting")
    n = 600
    cases = CaseSet(canonical.path, tuple(dataclasses.replace(base, id=f"c{i:05d}") for i in range(n)),
                    canonical.sha256)
    injector = FaultInjector(FaultSpec.parse("500=0.05"), seed=1)
    out = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="s", progress=False,
                         workers=1, concurrency=16, retry_base_delay_s=0.0, reuse_cells=False,
                         upstream_wrapper=injector))
    assert out.counts["inhouse.span"].get("scored", 0) == n
    assert seen["slots"] <= 16 + 1                  # the cells in flight, not every cell
    assert seen["closed"] == 100                    # the most recent closed cells, not every one
    assert seen["events"] == 100 and len(injector.events) == 100
    counts = injector.counts()                      # ... while the counts cover every attempt
    assert counts["500"] > 0 and counts["attempts"] == 2 * n + counts["500"]   # two calls a cell, each 500 retried


def measured(n: int, mark: int, kept: int | None) -> tuple[float, float]:
    """:func:`run_cells` in a process of its own (the gateway's and the injector's bounds lowered to ``kept``)."""
    out = subprocess.run([sys.executable, "-m", "tests.run.test_cell_memory", str(n), str(mark), str(kept or 0)],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    first, end = json.loads(out.stdout.strip().splitlines()[-1])
    return first, end


def test_resident_memory_is_flat_over_6k_cells():
    """The suite's size: the bounds lowered to 300 so that they fill within the first 1,000 cells; from
    there on nothing may grow (before issue 25 it grew ~1.1 KB a cell: ~5.5 MB here)."""
    first, end = measured(6_000, 1_000, 300)
    print(f"6,000 cells: resident {first:.1f} MB after 1,000, {end:.1f} MB at the end (+{end - first:.1f} MB)")
    assert end - first < 1.5, (first, end)


@pytest.mark.soak
def test_resident_memory_is_flat_over_200k_cells():
    """Full size, the real bounds: the memory after the first 10,000 cells against the end."""
    first, end = measured(200_000, 10_000, None)
    print(f"200,000 cells: resident {first:.1f} MB after 10,000, {end:.1f} MB at the end (+{end - first:.1f} MB)")
    assert end - first < 8.0, (first, end)


def main(argv: list[str]) -> None:
    """``N MARK KEPT``: run :func:`run_cells` here and print ``[first, end]`` (KEPT 0: the real bounds)."""
    from harness.cases.load import load_cases
    from harness.judge import faults
    from harness.judge import gateway as gw_mod

    n, mark, kept = (int(a) for a in argv)
    if kept:
        gw_mod.CLOSED_KEPT = faults.EVENTS_KEPT = kept
    with tempfile.TemporaryDirectory() as tmp:
        first, end = run_cells(load_cases(CANONICAL), Path(tmp), n, mark)
    print(json.dumps([first, end]))


if __name__ == "__main__":
    main(sys.argv[1:])
