"""The scale benchmark: one command, every figure of issue 15 from one run of it.

    .venv/bin/python bench/bench.py            # ~10 minutes on 2 cores; figures in bench/README.md
    .venv/bin/python bench/bench.py --quick    # smaller runs, same report (a smoke test of the bench)

Every run below is a whole ``harness run`` command (a subprocess: start-up, vendor imports, report
included) on copies of the canonical cases with new ids, with the offline reference judge; the CPU
time is the command's own plus its worker processes' (``RUSAGE_CHILDREN``). It prints:

1. wall time over the bound at N=100 cases x all metrics, C=16, L=200 ms, where the bound is the
   largest of (a) the judge-latency bound: every cell's serial judge rounds x L / C, (b) the CPU time
   / workers, (c) the longest cell's chain of dependent calls (its rounds x L); a replay of the same
   run from the cache it recorded: upstream calls (must be 0) and its wall time as a share of the cold run's;
2. zero latency: cells/s and judge calls/s (all metrics), the harness's own cost per judge call
   (``inhouse.span`` only: no vendor code) and the top of a profile of that run;
3. judge calls and tokens per answer for each metric, and their growth with the answer's sentences
   and the context's length (least-squares slopes over the canonical cases);
4. ``harness --help`` time and the time to the first finished cell;
5. cells/s with 1 worker and with all cores on a CPU-bound run (zero latency, canonical x 20 = 4,800
   cells; the runs alternate 1, N, N with ``--no-pin`` three times and the best of each counts): the
   steady rate (the cells of the metrics with a vendor stack, 5th-95th percentile of their finish
   times: the same cells in all) and the whole commands, with each worker's vendor imports and cores
   (from the run store); identical stores;
6. N=184 (canonical x 8), C=16, L=200 ms: the whole command against the bound (target <= 1.3x), and
   its replay (0 upstream calls, target >= 20x faster than cold).

Benchmarks live here, never in timed tests.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
HARNESS = [sys.executable, "-m", "harness"]
CANONICAL = os.path.join(ROOT, "datasets", "canonical.jsonl")


def copies(n: int, path: str) -> str:
    """``n`` cases cycled from the canonical set, with new ids, written to ``path``."""
    rows = [json.loads(line) for line in open(CANONICAL, encoding="utf-8") if line.strip()]
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            row = dict(rows[i % len(rows)])
            row["id"] = f"{row['id']}--b{i:05d}"
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def harness_run(cases: str, out: str, run_id: str, *extra: str) -> dict:
    """One whole ``harness run`` command: wall, CPU (with its workers), and the time to its first cell."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    p = subprocess.run([*HARNESS, "run", "--cases", cases, "--out", out, "--run-id", run_id, "--no-progress",
                        *extra], cwd=ROOT, capture_output=True, text=True)
    wall = time.time() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        raise SystemExit(f"harness run failed ({p.returncode}): {p.stderr[-2000:]}")
    store = os.path.join(out, run_id, "store.sqlite")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "start": t0, "store": store, **store_facts(store, t0)}


def rounds(calls: list[tuple[float, float]]) -> int:
    """Serial judge rounds of a cell: calls that start after every earlier one ended open a new round.

    >>> rounds([(0.0, 0.2), (0.0, 0.2), (0.25, 0.2), (0.5, 0.2)])
    3
    """
    n, end = 0, float("-inf")
    for start, latency in sorted(calls):
        if start >= end - 1e-3:
            n += 1
            end = start + latency
        else:
            end = max(end, start + latency)
    return n


def store_facts(store: str, t0: float) -> dict:
    db = sqlite3.connect(store)
    try:
        cells = db.execute("SELECT case_id, metric, status, calls, prompt_tokens, completion_tokens, finished "
                           "FROM cells").fetchall()
        per_cell: dict = {}
        for case_id, metric, started, latency in db.execute("SELECT case_id, metric, started, latency_ms FROM calls"):
            per_cell.setdefault((case_id, metric), []).append((started, latency / 1000.0))
        upstream = db.execute("SELECT COALESCE(SUM(attempts), 0) FROM calls").fetchone()[0]
        row = db.execute("SELECT value FROM meta WHERE key = 'startup'").fetchone()
        startup = json.loads(row[0]) if row else []
    finally:
        db.close()
    finished = sorted(c[6] for c in cells)
    ready = max((w["ready"] for w in startup if w.get("ready") is not None), default=None)
    vendored = {m for w in startup for m in w["metrics"]}
    vendor_cells = sorted(c[6] for c in cells if c[1] in vendored)
    return {"cells": len(cells), "calls": sum(c[3] for c in cells), "upstream_attempts": upstream,
            "errors": sum(c[2] == "error" for c in cells),
            "rounds": {k: rounds(v) for k, v in per_cell.items()}, "rows": cells,
            "first_cell_s": finished[0] - t0 if finished else None,
            # steady rate: the same cells in any run, those of the metrics with a vendor stack (the run
            # store's start-up facts name them), between the 5th and the 95th percentile of their finish
            # times: the first wait for the imports, the last drain the run; cells of the metrics with
            # nothing to import go first and cost a fraction of a millisecond, so a window over all cells
            # would weigh runs by how many of those it caught
            "steady_rate": _rate(vendor_cells, vendor_cells[int(0.05 * (len(vendor_cells) - 1))])
            if len(vendor_cells) > 10 else _rate(finished, finished[int(0.2 * (len(finished) - 1))]),
            "startup": startup, "ready_s": (ready - t0) if ready is not None else None,
            "cell_phase_s": (finished[-1] - finished[0]) if len(finished) > 1 else None}


def _rate(finished: list[float], start: float) -> float | None:
    """Cells per second finished in (start, 95th percentile of the finish times].

    >>> _rate([float(t) for t in range(101)], 10.0)
    1.0
    """
    if len(finished) <= 10:
        return None
    end = finished[int(0.95 * (len(finished) - 1))]
    n = sum(start < f <= end for f in finished)
    return n / (end - start) if end > start and n else None


def report_time(r: dict) -> float:
    """``harness report RUN`` on a run's store (the runs above pass ``--no-report``: the run and its
    report are timed apart, and the whole command is their sum)."""
    t0 = time.time()
    p = subprocess.run([*HARNESS, "report", os.path.dirname(r["store"])], cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:   # say why: a bare CalledProcessError once hid the cause (issue 25)
        raise SystemExit(f"harness report {os.path.dirname(r['store'])} failed ({p.returncode}): "
                         f"{p.stdout[-2000:]}{p.stderr[-4000:]}")
    r["report_s"] = time.time() - t0
    r["whole"] = r["wall"] + r["report_s"]
    return r["report_s"]


def bound(r: dict, latency_s: float, concurrency: int, workers: int) -> dict:
    total_rounds = sum(r["rounds"].values())
    judge = total_rounds * latency_s / concurrency
    cpu = r["cpu"] / workers
    chain = max(r["rounds"].values(), default=0) * latency_s
    return {"judge": judge, "cpu": cpu, "chain": chain, "bound": max(judge, cpu, chain)}


def show_bound(title: str, r: dict, b: dict) -> None:
    which = max(("judge", "cpu", "chain"), key=lambda k: b[k])
    print(f"{title}: {r['cells']} cells, {r['calls']} judge calls, {r['errors']} errors")
    print(f"  run {r['wall']:.1f} s + report {r['report_s']:.1f} s = whole command {r['whole']:.1f} s; "
          f"bound {b['bound']:.1f} s ({which}): judge-latency {b['judge']:.1f} s, "
          f"CPU {r['cpu']:.1f} s / workers = {b['cpu']:.1f} s, longest chain {b['chain']:.1f} s")
    print(f"  whole command / bound = {r['whole'] / b['bound']:.2f}x (run alone {r['wall'] / b['bound']:.2f}x); "
          f"time to first finished cell {r['first_cell_s']:.1f} s")


def show_replay(cold: dict, rep: dict) -> None:
    report_time(rep)
    print(f"  replay: {rep['upstream_attempts']} upstream calls, {rep['errors']} errors, run {rep['wall']:.2f} s "
          f"= {rep['wall'] / cold['wall']:.1%} of the cold run ({cold['wall'] / rep['wall']:.1f}x faster); whole "
          f"commands with their reports {rep['whole']:.1f} s vs {cold['whole']:.1f} s ({cold['whole'] / rep['whole']:.1f}x)")


def sentences(text: str) -> int:
    """Sentences of an answer (a plain splitter: enough for a slope).

    >>> sentences("One. Two! Three? [1] Four")
    4
    """
    return len([s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s])


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ys on xs (0 when xs do not vary).

    >>> slope([1, 2, 3], [2, 4, 6])
    2.0
    """
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var else 0.0


def per_answer(r: dict) -> None:
    cases = {}
    for line in open(CANONICAL, encoding="utf-8"):
        if line.strip():
            c = json.loads(line)
            ctx = c["contexts"]
            cases[c["id"]] = (sentences(c["answer"]), sum(len(x["text"] if isinstance(x, dict) else x) for x in ctx))
    by_metric: dict = {}
    for case_id, metric, status, calls, pt, ct, _ in r["rows"]:
        base = case_id.rsplit("--b", 1)[0]
        if status == "not_applicable" or base not in cases:
            continue
        by_metric.setdefault(metric, {})[base] = (calls, pt + ct)
    print("judge calls and tokens per answer (canonical cases; n/a cells left out), and their growth:")
    print(f"  {'metric':36} {'calls':>6} {'tokens':>7}  {'calls/sentence':>14} {'tokens/1k ctx chars':>19}")
    for metric, rows in sorted(by_metric.items()):
        ids = sorted(rows)
        calls = [rows[i][0] for i in ids]
        toks = [rows[i][1] for i in ids]
        sent = [cases[i][0] for i in ids]
        ctx = [cases[i][1] / 1000 for i in ids]
        print(f"  {metric:36} {sum(calls) / len(ids):6.2f} {sum(toks) / len(ids):7.0f}  "
              f"{slope(sent, calls):14.2f} {slope(ctx, toks):19.0f}")


def help_time() -> float:
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([*HARNESS, "--help"], cwd=ROOT, capture_output=True, check=True)
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def inhouse_cost(n: int, profile_top: int) -> None:
    """In this process (no start-up in the figure): CPU per judge call of an in-house-only run."""
    import cProfile
    import dataclasses
    import pstats

    from harness.cases.load import CaseSet, load_cases
    from harness.run.runner import RunOptions, run

    base = load_cases(CANONICAL)
    cs = CaseSet(base.path, tuple(dataclasses.replace(c, id=f"{c.id}--p{i}") for i in range(n) for c in base),
                 base.sha256)
    with tempfile.TemporaryDirectory() as out:
        def once(rid):
            opts = RunOptions(cases=cs, metrics=["inhouse.span"], out_dir=out, run_id=rid, progress=False,
                              concurrency=16, workers=1)
            c0, w0 = time.process_time(), time.perf_counter()
            res = run(opts)
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            db = sqlite3.connect(res.store_path)
            calls = db.execute("SELECT SUM(calls) FROM cells").fetchone()[0]
            db.close()
            return cpu, wall, calls

        once("warm")
        best = min((once(f"r{i}") for i in range(3)), key=lambda t: t[0])
        cpu, wall, calls = best
        print(f"harness's own cost per judge call (inhouse.span, no vendor code, {len(cs)} cells, {calls} calls, "
              f"best of 3): {cpu * 1000 / calls:.3f} ms CPU ({wall * 1000 / calls:.3f} ms wall)")
        prof = cProfile.Profile()
        prof.enable()
        once("profiled")
        prof.disable()
    print(f"  profile of that run, top {profile_top} by own time:")
    st = pstats.Stats(prof)
    st.sort_stats("tottime")
    for func in st.fcn_list[:profile_top]:
        cc, nc, tt, ct, _ = st.stats[func]
        where = f"{os.path.relpath(func[0], ROOT) if func[0].startswith(ROOT) else os.path.basename(func[0])}:{func[1]}"
        print(f"    {tt:6.3f} s own {ct:6.3f} s cum {nc:7d} calls  {func[2]} ({where})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small runs (a smoke test of the bench itself)")
    ap.add_argument("--out", help="keep the runs here (default: a temporary directory)")
    a = ap.parse_args()
    from harness.run.workers import default_workers

    cores = default_workers()
    n100, n184, ncpu, ninh, nbig = (23, 46, 46, 4, 48) if a.quick else (100, 184, 184, 40, 480)
    lat, conc = 0.2, 16
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs ({cores} usable), "
          f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f} at start; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    tmp = a.out or tempfile.mkdtemp(prefix="harness-bench-")
    os.makedirs(tmp, exist_ok=True)
    print(f"harness --help: {help_time() * 1000:.0f} ms (median of 5)")

    cases = copies(n100, os.path.join(tmp, "n100.jsonl"))
    common = ["--judge-latency-ms", str(lat * 1000), "--concurrency", str(conc), "--workers", str(cores), "--no-report"]
    cache = ["--cache-path", os.path.join(tmp, "cache100.sqlite")]
    cold = harness_run(cases, tmp, "n100", *common, "--cache", "record", *cache)
    report_time(cold)
    show_bound(f"N={n100} cases x all metrics, C={conc}, L={lat * 1000:.0f} ms, {cores} workers", cold,
               bound(cold, lat, conc, cores))
    show_replay(cold, harness_run(cases, tmp, "n100-replay", "--cache", "replay", *cache, "--workers", str(cores),
                                  "--no-report"))

    zl = harness_run(copies(ncpu, os.path.join(tmp, "zl.jsonl")), tmp, "zl-all", "--no-report", "--concurrency", str(conc),
                     "--workers", str(cores))
    phase = zl["cell_phase_s"]
    print(f"zero latency, all metrics, {cores} workers: {zl['cells'] / phase:.1f} cells/s, {zl['calls'] / phase:.1f} "
          f"judge calls/s (cell phase {phase:.1f} s of {zl['wall']:.1f} s wall; {zl['cpu'] * 1000 / zl['cells']:.1f} ms "
          "CPU per cell, start-up included)")
    inhouse_cost(ninh, 12)
    per_answer(cold)

    # CPU-bound: 1 worker against all cores (pinned, the default, and --no-pin), alternated three times
    # (1, N, N unpinned, 1, ...) so that a slow spell of a shared machine falls on all; the best run of each
    # counts (the usual reading of noisy timings)
    big = copies(nbig, os.path.join(tmp, "big.jsonl"))
    kinds = {"1": ["--workers", "1"], "N": ["--workers", str(cores)],
             "N-unpinned": ["--workers", str(cores), "--no-pin"]}
    runs: dict = {k: [] for k in kinds}
    for i in range(3):
        for k, flags in kinds.items():
            runs[k].append(harness_run(big, tmp, f"cpu-{k}-{i}", "--no-report", "--concurrency", str(conc), *flags))
    best = {k: max(rs, key=lambda r: r["steady_rate"]) for k, rs in runs.items()}
    one, alln = best["1"], best["N"]
    r1, rn, ru = one["steady_rate"], alln["steady_rate"], best["N-unpinned"]["steady_rate"]
    same = all(_comparable(r["store"]) == _comparable(one["store"]) for rs in runs.values() for r in rs)
    rates = {k: " / ".join(f"{r['steady_rate']:.1f}" for r in rs) for k, rs in runs.items()}
    whole = {k: min(r["wall"] for r in rs) for k, rs in runs.items()}
    imports = {k: ", ".join((f"{f['import_s']:.1f} s ({f['import_cpu_s']:.1f} s CPU; cores {f.get('cores')})"
                             if f.get("import_s") is not None else "unfinished (out of cells first)")
                            for f in b["startup"]) for k, b in best.items()}
    print(f"CPU-bound (zero latency, all metrics, {one['cells']} cells, runs alternated 1, {cores}, {cores} "
          f"with --no-pin, three times; steady rate: the cells of the metrics with a vendor stack, 5th to 95th "
          f"percentile of their finish times): 1 worker {rates['1']} cells/s; {cores} workers {rates['N']} "
          f"cells/s; {cores} workers unpinned {rates['N-unpinned']} cells/s: best {rn / r1:.2f}x one "
          f"(unpinned {ru / r1:.2f}x); whole commands, start-up included, best: {whole['1']:.1f} s vs "
          f"{whole['N']:.1f} s = {whole['1'] / whole['N']:.2f}x (unpinned {whole['N-unpinned']:.1f} s); CPU "
          f"{one['cpu']:.1f} s vs {alln['cpu']:.1f} s (unpinned {best['N-unpinned']['cpu']:.1f} s); vendor "
          f"imports: 1 worker {imports['1']}; {cores} workers {imports['N']}; unpinned {imports['N-unpinned']}; "
          f"ready at {one['ready_s']:.1f} s vs {alln['ready_s']:.1f} s; stores identical: {same}")

    cases = copies(n184, os.path.join(tmp, "n184.jsonl"))
    cache = ["--cache-path", os.path.join(tmp, "cache184.sqlite")]
    cold = harness_run(cases, tmp, "n184", *common, "--cache", "record", *cache)
    report_time(cold)
    b = bound(cold, lat, conc, cores)
    show_bound(f"N={n184} cases x all metrics, C={conc}, L={lat * 1000:.0f} ms, {cores} workers (target <= 1.3x)",
               cold, b)
    rep = harness_run(cases, tmp, "n184-replay", "--cache", "replay", *cache, "--workers", str(cores), "--no-report")
    show_replay(cold, rep)
    print(f"targets: N={n184} whole command {cold['whole'] / b['bound']:.2f}x bound (<= 1.3x: "
          f"{'met' if cold['whole'] <= 1.3 * b['bound'] else 'NOT met'}); replay {cold['wall'] / rep['wall']:.1f}x "
          f"faster with {rep['upstream_attempts']} upstream calls (>= 20x and 0: "
          f"{'met' if cold['wall'] >= 20 * rep['wall'] and rep['upstream_attempts'] == 0 else 'NOT met'}); "
          f"{cores} workers {rn / r1:.2f}x one (>= 1.8x: {'met' if rn >= 1.8 * r1 else 'NOT met'})")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


def _comparable(store: str):
    db = sqlite3.connect(store)
    try:
        cells = sorted(db.execute("SELECT case_id, metric, status, score, reason, flags, detail, calls, "
                                  "prompt_tokens, completion_tokens FROM cells"))
        units = sorted(db.execute("SELECT * FROM units"))
    finally:
        db.close()
    return cells, units


if __name__ == "__main__":
    main()
