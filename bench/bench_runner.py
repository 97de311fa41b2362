"""Benchmark the runner and gateway with the reference judge (no vendor code): ratios from one run.

    .venv/bin/python bench/bench_runner.py [--copies 8] [--latency-ms 50]

Prints:
- harness overhead per cell (gateway + runner + store) with an instant judge, and per judge call;
- the concurrency speed-up with an injected judge latency (serial vs --concurrency 8): ideally ~8x,
  since ``inhouse.span`` makes 2 serial calls per cell and the harness should add almost nothing.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness.cases.load import CaseSet, load_cases  # noqa: E402
from harness.run.runner import JudgeConfig, RunOptions, run  # noqa: E402
from harness.store.runstore import RunStore  # noqa: E402


def cases(copies: int) -> CaseSet:
    base = load_cases("datasets/canonical.jsonl")
    out = [dataclasses.replace(c, id=f"{c.id}--{i}") for i in range(copies) for c in base]
    return CaseSet(base.path, tuple(out), base.sha256)


def timed(cs: CaseSet, concurrency: int, latency_ms: float, out: str) -> tuple[float, int]:
    opts = RunOptions(cases=cs, metrics=["inhouse.span"], judge=JudgeConfig(latency_ms=latency_ms),
                      concurrency=concurrency, out_dir=out, progress=False,
                      run_id=f"c{concurrency}-l{latency_ms:g}-{time.time_ns()}")
    t0 = time.perf_counter()
    res = run(opts)
    wall = time.perf_counter() - t0
    s = RunStore.open(res.store_path)
    calls = s.rows("SELECT SUM(calls) FROM cells")[0][0]
    s.close()
    return wall, calls


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=8)
    ap.add_argument("--latency-ms", type=float, default=50.0)
    a = ap.parse_args()
    cs = cases(a.copies)
    with tempfile.TemporaryDirectory() as out:
        timed(cases(1), 8, 0, out)                    # warm-up: imports, first connections
        w0, calls = timed(cs, 8, 0, out)
        w1, _ = timed(cs, 1, a.latency_ms, out)
        w8, _ = timed(cs, 8, a.latency_ms, out)
    n = len(cs)
    print(f"cells: {n}, judge calls: {calls}")
    print(f"instant judge: {w0 * 1000 / n:.2f} ms per cell, {w0 * 1000 / max(calls, 1):.2f} ms per judge call "
          f"(whole harness path: HTTP client, gateway, reference judge, store)")
    ideal = calls * a.latency_ms / 1000
    print(f"latency {a.latency_ms:g} ms: serial {w1:.2f} s (ideal {ideal:.2f} s, ratio {w1 / ideal:.2f}); "
          f"concurrency 8 {w8:.2f} s; speed-up {w1 / w8:.2f}x (ideal 8x)")


if __name__ == "__main__":
    main()
