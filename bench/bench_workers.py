"""The ``--workers`` default against the best fixed choice: ratios from one run of this script.

    .venv/bin/python bench/bench_workers.py                  # ~15 minutes on 2 cores; figures in bench/README.md
    .venv/bin/python bench/bench_workers.py --quick          # one repeat, canonical set only (a smoke test)
    .venv/bin/python bench/bench_workers.py --sizes 1,8 --latencies 0 --repeats 5

For each judge latency L (the offline reference judge with an injected delay per call) and each size
(copies of the canonical cases with new ids, every metric, the CLI's defaults otherwise), it runs the
whole ``harness run`` command (start-up, vendor imports; ``--no-report``) three ways: ``--workers 1``,
``--workers N`` (N = the usable cores) and ``--workers`` left unset (the default,
:func:`harness.run.workers.auto_workers`). The three alternate (1, N, default, 1, ...) so that a slow spell
of a shared machine falls on all of them, and the median wall time of each counts. It prints, per setting,
the medians, the worker count the default picked (from the run store's start-up facts) and
``default / best of 1 and N``: at most 1.00 means the default was never slower than the best fixed choice.
When the default picks the same count as the faster fixed choice the two are the same command, and the
ratio shows only the noise between repeats.

Speed is measured here, never in tests.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench import CANONICAL, copies, harness_run  # noqa: E402  (bench/bench.py: a whole command, its wall and its run store)


def one_setting(tmp: str, size: int, latency_ms: int, repeats: int, cores: int) -> dict:
    """Median wall per way of choosing the workers, on ``size`` copies of the canonical cases."""
    with open(CANONICAL, encoding="utf-8") as fh:
        n = size * sum(1 for line in fh if line.strip())
    cases = copies(n, os.path.join(tmp, f"x{size}.jsonl"))
    ways = {"1": ["--workers", "1"], "N": ["--workers", str(cores)], "default": []}
    walls: dict = {k: [] for k in ways}
    picked: set = set()
    cells = 0
    for i in range(repeats):
        for way, flags in ways.items():
            rid = f"x{size}-L{latency_ms}-{way}-{i}"
            r = harness_run(cases, tmp, rid, "--no-report", "--judge-latency-ms", str(latency_ms), *flags)
            walls[way].append(r["wall"])
            cells = r["cells"]
            if way == "default":
                picked.add(len(r["startup"]) or 1)
    med = {k: statistics.median(v) for k, v in walls.items()}
    best = min(("1", "N"), key=lambda k: med[k])
    return {"size": size, "cases": n, "cells": cells, "latency_ms": latency_ms, "walls": walls, "median": med,
            "best": best, "picked": sorted(picked), "ratio": med["default"] / med[best]}


def show(s: dict, cores: int) -> None:
    runs = {k: " / ".join(f"{w:.1f}" for w in v) for k, v in s["walls"].items()}
    best = "1 worker" if s["best"] == "1" else f"{cores} workers"
    print(f"L={s['latency_ms']} ms, canonical x{s['size']} ({s['cases']} cases, {s['cells']} cells): "
          f"1 worker {s['median']['1']:.1f} s ({runs['1']}); {cores} workers {s['median']['N']:.1f} s ({runs['N']}); "
          f"default ({'/'.join(map(str, s['picked']))} worker(s)) {s['median']['default']:.1f} s ({runs['default']}); "
          f"best fixed: {best}; default / best = {s['ratio']:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1,4,8,20", help="canonical-set multiples at zero latency (default 1,4,8,20)")
    ap.add_argument("--latent-sizes", default="1", help="canonical-set multiples at the injected latency (default 1)")
    ap.add_argument("--latencies", default="0,200", help="injected judge latencies in ms (default 0,200)")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each way per setting; the median counts")
    ap.add_argument("--quick", action="store_true", help="canonical set only, one repeat (a smoke test)")
    ap.add_argument("--out", help="keep the runs here (default: a temporary directory)")
    a = ap.parse_args()
    from harness.run.workers import CELLS_PER_EXTRA_WORKER, default_workers  # noqa: PLC0415

    cores = default_workers()
    repeats = 1 if a.quick else a.repeats
    tmp = a.out or tempfile.mkdtemp(prefix="harness-bench-workers-")
    os.makedirs(tmp, exist_ok=True)
    print(f"{cores} usable cores, {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f} at the start; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; rule: 1 worker with a real judge, else one "
          f"more per {CELLS_PER_EXTRA_WORKER} vendor cells up to the cores; {repeats} repeat(s), median")
    settings = []
    for lat in (int(x) for x in a.latencies.split(",")):
        sizes = "1" if a.quick else (a.sizes if lat == 0 else a.latent_sizes)
        for size in (int(x) for x in sizes.split(",")):
            s = one_setting(tmp, size, lat, repeats, cores)
            show(s, cores)
            settings.append(s)
    worst = max(settings, key=lambda s: s["ratio"])
    print(f"worst default / best fixed: {worst['ratio']:.2f} (L={worst['latency_ms']} ms, x{worst['size']}); "
          f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
