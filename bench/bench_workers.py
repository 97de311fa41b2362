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
For the run of median wall of each way it prints the whole command's wall and CPU (its workers and their
forkserver included) against its own vendor imports (the forkserver's, paid once for every worker; or the
slowest worker's) plus its judge-latency bound (every cell's serial judge rounds x L / concurrency), and
``wall / (imports + bound)`` (issue 38 item 1: at most 1.1x with 2 workers), the cells the runner scored itself
during the imports (the run store's ``overlap``) and the machine's load average during the run (mean and peak,
read every second: on a shared machine the wall times follow the load; CPU seconds are the steadier figure).
At the end the same figures again as one Markdown table (setting x way), ready for bench/README.md.
When the default picks the same count as the faster fixed choice the two are the same command, and the
ratio shows only the noise between repeats.

Speed is measured here, never in tests.
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench import CANONICAL, copies, harness_run  # noqa: E402  (bench/bench.py: a whole command, its wall and its run store)


def import_cost(startup: list[dict]) -> tuple[float, float]:
    """(wall, CPU) seconds of a run's vendor imports, from its start-up facts: the forkserver's, paid once for
    every worker (``preload``), else the slowest worker's own (they import side by side)."""
    pre = [w["preload"] for w in startup if w.get("preload")]
    if pre:
        return pre[0]["import_s"] or 0.0, pre[0]["import_cpu_s"] or 0.0
    return (max((w.get("import_s") or 0.0 for w in startup), default=0.0),
            sum(w.get("import_cpu_s") or 0.0 for w in startup))


def judge_bound(r: dict, latency_ms: int, concurrency: int) -> float:
    """The judge-latency bound: every cell's serial judge rounds x the latency / the concurrency."""
    return sum(r["rounds"].values()) * latency_ms / 1000.0 / concurrency


class LoadWatch:
    """The machine's 1-minute load average, read every second while a block runs: its mean and its largest."""

    def __init__(self):
        self.seen: list[float] = []
        self._stop = threading.Event()

    def __enter__(self):
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self):
        while True:
            self.seen.append(os.getloadavg()[0])
            if self._stop.wait(1.0):
                return

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    @property
    def mean(self) -> float:
        return statistics.fmean(self.seen) if self.seen else 0.0

    @property
    def peak(self) -> float:
        return max(self.seen, default=0.0)


def overlap(store: str) -> dict | None:
    """What the runner scored itself while the forkserver imported (the run store's ``overlap``), or None."""
    db = sqlite3.connect(store)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'overlap'").fetchone()
    finally:
        db.close()
    return json.loads(row[0]) if row else None


WAYS = ("1", "N", "default")
"""The ways of choosing the workers: ``--workers 1``, ``--workers N`` (the usable cores), the default."""


def one_setting(tmp: str, size: int, latency_ms: int, repeats: int, cores: int, concurrency: int,
                only=WAYS) -> dict:
    """Median wall per way of choosing the workers, on ``size`` copies of the canonical cases; for each way the
    run of median wall with its CPU, its import cost, its judge-latency bound and wall / (imports + bound)."""
    with open(CANONICAL, encoding="utf-8") as fh:
        n = size * sum(1 for line in fh if line.strip())
    cases = copies(n, os.path.join(tmp, f"x{size}.jsonl"))
    ways = {k: v for k, v in {"1": ["--workers", "1"], "N": ["--workers", str(cores)], "default": []}.items()
            if k in only}
    runs: dict = {k: [] for k in ways}
    picked: set = set()
    cells = 0
    for i in range(repeats):
        for way, flags in ways.items():
            rid = f"x{size}-L{latency_ms}-{way}-{i}"
            with LoadWatch() as load:
                r = harness_run(cases, tmp, rid, "--no-report", "--judge-latency-ms", str(latency_ms),
                                "--concurrency", str(concurrency), *flags)
            imp_wall, imp_cpu = import_cost(r["startup"])
            jb = judge_bound(r, latency_ms, concurrency)
            lead = overlap(r["store"])
            runs[way].append({"wall": r["wall"], "cpu": r["cpu"], "import_s": imp_wall, "import_cpu_s": imp_cpu,
                              "judge_bound": jb, "ratio": r["wall"] / (imp_wall + jb) if imp_wall + jb else None,
                              "workers": len(r["startup"]) or 1, "load": load.mean, "load_peak": load.peak,
                              "overlap_cells": lead["cells"] if lead else 0})
            cells = r["cells"]
            if way == "default":
                picked.add(len(r["startup"]) or 1)
    walls = {k: [x["wall"] for x in v] for k, v in runs.items()}
    med = {k: statistics.median(v) for k, v in walls.items()}
    mid = {k: min(v, key=lambda x: abs(x["wall"] - med[k])) for k, v in runs.items()}
    fixed = [k for k in ("1", "N") if k in med]
    best = min(fixed, key=lambda k: med[k]) if fixed else None
    ratio = med["default"] / med[best] if best and "default" in med else None
    return {"size": size, "cases": n, "cells": cells, "latency_ms": latency_ms, "walls": walls, "median": med,
            "best": best, "picked": sorted(picked), "ratio": ratio, "mid": mid}


def labels(s: dict, cores: int):
    """(way, label) of the ways a setting ran, in order."""
    names = {"1": "1 worker", "N": f"{cores} workers", "default": "default"}
    return [(w, names[w]) for w in WAYS if w in s["mid"]]


def show(s: dict, cores: int) -> None:
    runs = {k: " / ".join(f"{w:.1f}" for w in v) for k, v in s["walls"].items()}
    parts = [f"{label}{' (' + '/'.join(map(str, s['picked'])) + ' worker(s))' if way == 'default' else ''} "
             f"{s['median'][way]:.1f} s ({runs[way]})" for way, label in labels(s, cores)]
    verdict = f"; default / best fixed = {s['ratio']:.2f}" if s["ratio"] is not None else ""
    print(f"L={s['latency_ms']} ms, canonical x{s['size']} ({s['cases']} cases, {s['cells']} cells): "
          + "; ".join(parts) + verdict)
    for way, label in labels(s, cores):
        m = s["mid"][way]
        ratio = f"{m['ratio']:.2f}x" if m["ratio"] is not None else "n/a"
        print(f"  {label} ({m['workers']} process(es)): whole command {m['wall']:.1f} s wall, {m['cpu']:.1f} s CPU; "
              f"imports {m['import_s']:.1f} s wall ({m['import_cpu_s']:.1f} s CPU) + judge-latency bound "
              f"{m['judge_bound']:.1f} s = {m['import_s'] + m['judge_bound']:.1f} s; wall / (imports + bound) = "
              f"{ratio}; {m['overlap_cells']} cells scored by the runner during the imports; load {m['load']:.1f} "
              f"mean, {m['load_peak']:.1f} peak during it")


def table(settings: list[dict], cores: int) -> None:
    """The done-when table of issue 38 item 1: per setting and way, the run of median wall against its own imports
    plus its judge-latency bound (target for 2 workers: at most 1.1x), with its CPU and the load during it."""
    print("\n| setting | way | workers | whole command wall / CPU | imports wall (CPU) | judge bound | "
          "wall / (imports + bound) | load mean / peak |")
    print("|---|---|---|---|---|---|---|---|")
    for s in settings:
        first = True
        for way, label in labels(s, cores):
            m = s["mid"][way]
            ratio = f"**{m['ratio']:.2f}x**" if m["ratio"] is not None else "n/a"
            where = f"L={s['latency_ms']} ms, x{s['size']} ({s['cells']} cells)" if first else ""
            first = False
            print(f"| {where} | {label} | {m['workers']} | {m['wall']:.1f} s / {m['cpu']:.1f} s | "
                  f"{m['import_s']:.1f} s ({m['import_cpu_s']:.1f} s) | {m['judge_bound']:.1f} s | {ratio} | "
                  f"{m['load']:.1f} / {m['load_peak']:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1,4,8,20", help="canonical-set multiples at zero latency (default 1,4,8,20)")
    ap.add_argument("--latent-sizes", default="1", help="canonical-set multiples at the injected latency (default 1)")
    ap.add_argument("--latencies", default="0,200", help="injected judge latencies in ms (default 0,200)")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each way per setting; the median counts")
    ap.add_argument("--concurrency", type=int, default=8, help="--concurrency of every run (default 8, the CLI's)")
    ap.add_argument("--quick", action="store_true", help="canonical set only, one repeat (a smoke test)")
    ap.add_argument("--out", help="keep the runs here (default: a temporary directory)")
    ap.add_argument("--ways", default=",".join(WAYS), help="which of 1, N (the cores) and default to run (default all)")
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
            s = one_setting(tmp, size, lat, repeats, cores, a.concurrency, tuple(a.ways.split(",")))
            show(s, cores)
            settings.append(s)
    table(settings, cores)
    compared = [s for s in settings if s["ratio"] is not None]
    if compared:
        worst = max(compared, key=lambda s: s["ratio"])
        print(f"worst default / best fixed: {worst['ratio']:.2f} (L={worst['latency_ms']} ms, x{worst['size']})")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
