"""The scale goal (issue 38.6): N answers x 10 metrics against a judge at 100 requests per second.

    .venv/bin/python bench/bench_scale.py --answers 2000              # local worker processes
    .venv/bin/python bench/bench_scale.py --answers 2000 --ray        # the same on a local Ray cluster

A rate-limited test judge (``tests.helpers.judges.ratelimited``, its own process, real clock, loopback) allows
``--rps`` requests per second (kept over a ``--window`` of seconds, as ``--judge-rpm`` and ``--judge-window``
tell the run). ``--answers`` cases cycled from the canonical set (new ids; ``--cache live``, so every
copy's calls reach the judge) are scored by the ten metrics below, in one whole ``harness run`` command
(``--no-report``). With ``--ray`` the script starts a local Ray cluster (``ray start --head`` on 127.0.0.1),
runs with ``--ray auto`` and stops the cluster after.

While the run goes, every ``--every`` seconds it samples: cells stored, the RSS of the run's processes (the
``harness`` process and its workers; with ``--ray`` the Ray cluster's processes apart) and the load average.
At the end it prints one JSON line and a table row for bench/README.md: answers, metrics, judge calls, wall,
the judge requests per second achieved (calls answered / the span between the first and the last call sent,
from the run store's call timestamps; ``steady``: between the 10th and the 90th percentile of them) against
the bound, lost cells (missing from the store or ERROR: must be 0), RSS first / max / last (from the first
sample with a cell stored), the 429s the judge sent, the load seen, the CPU seconds of the harness (its
workers included), of the Ray cluster's processes and of the judge, and each metric's latency per answer
as the report gives it now (time in the judge) and gave it before (the gateway's time, queue included). Nothing is asserted: speed is
measured here, never in tests.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench import HARNESS, copies  # noqa: E402  (bench/bench.py)

METRICS = ["inhouse.span", "ragas.faithfulness", "ragas.response_groundedness", "deepeval.faithfulness",
           "deepeval.faithfulness_penalized", "trulens.groundedness", "trulens.groundedness_answerability",
           "trulens.citation", "baseline.similarity", "cascade.similarity_span"]
"""The ten metrics of the design (every vendor of the main environment, the baseline and the cascade)."""
MODEL = "realistic-judge"


def judge(rps: float, window: float):
    proc = subprocess.Popen([sys.executable, "-m", "tests.helpers.judges.ratelimited", "--rpm", str(rps * 60),
                             "--window", str(window)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    return proc, json.loads(proc.stdout.readline())["url"]


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def rss_mb(pids) -> float:
    import psutil  # noqa: PLC0415 - the bench's own dependency (in the lock through ray)

    total = 0
    for pid in pids:
        try:
            total += psutil.Process(pid).memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def cpu_of(pids, seen: dict) -> None:
    """Keep each process's CPU seconds so far in ``seen`` (pid -> seconds; a process that ended keeps its last)."""
    import psutil  # noqa: PLC0415

    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            seen[pid] = t.user + t.system
        except psutil.Error:
            pass


def tree(pid: int) -> list[int]:
    import psutil  # noqa: PLC0415

    try:
        p = psutil.Process(pid)
        return [pid] + [c.pid for c in p.children(recursive=True)]
    except psutil.Error:
        return []


def ray_pids(session_pids: set[int]) -> list[int]:
    """The Ray cluster's processes this script started: ``ray start``'s daemons and the workers they spawned
    (new since the cluster started, owned by this user, with Ray in their command line)."""
    import psutil  # noqa: PLC0415

    out = []
    for p in psutil.process_iter(["pid", "uids", "cmdline", "name"]):
        try:
            if p.info["pid"] in session_pids or p.info["uids"].real != os.getuid():
                continue
            cmd = " ".join(p.info["cmdline"] or []) + " " + (p.info["name"] or "")
            if any(k in cmd for k in ("ray::", "raylet", "gcs_server", "default_worker.py", "ray/_private",
                                      "dashboard", "log_monitor", "monitor.py")):
                out.append(p.info["pid"])
        except psutil.Error:
            continue
    return out


def stored(store: str) -> tuple[int, int]:
    """(cells stored, ERROR cells) so far (0, 0 before the store exists)."""
    if not os.path.exists(store):
        return 0, 0
    try:
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
        try:
            n, err = db.execute("SELECT COUNT(*), SUM(status = 'error' OR errors > 0) FROM cells").fetchone()
        finally:
            db.close()
        return int(n or 0), int(err or 0)
    except sqlite3.Error:
        return -1, -1


def call_rate(store: str) -> dict:
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        n, first, last, live = db.execute(
            "SELECT COUNT(*), MIN(started), MAX(started), SUM(cached = 0) FROM calls WHERE step != 'embeddings'").fetchone()
        statuses = dict(db.execute("SELECT status, COUNT(*) FROM cells GROUP BY status").fetchall())
        startup = db.execute("SELECT value FROM meta WHERE key = 'startup'").fetchone()
    finally:
        db.close()
    span = (last - first) if n and last and first else 0.0
    return {"judge_calls": int(n or 0), "live_calls": int(live or 0), "span_s": round(span, 1),
            "rps": round((n - 1) / span, 1) if span else None, "steady_rps": steady_rate(store), "statuses": statuses,
            "startup": json.loads(startup[0]) if startup else None}


def steady_rate(store: str) -> float | None:
    """Judge requests per second between the 10th and the 90th percentile of the calls' send times: the run's
    pace once the vendor stacks are imported and before its last cells trail off."""
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        times = [r[0] for r in db.execute("SELECT started FROM calls WHERE step != 'embeddings' ORDER BY started")]
    finally:
        db.close()
    if len(times) < 20:
        return None
    lo, hi = len(times) // 10, len(times) * 9 // 10
    return round((hi - lo) / (times[hi] - times[lo]), 1) if times[hi] > times[lo] else None


def latencies(store: str) -> dict:
    """Per metric, latency per answer as the report gives it now (median and p90 of the time in the judge of
    its own calls; compute time for a metric that calls no judge) and as it gave it before (the gateway's
    time, the run's queue included: :func:`harness.reports.analysis.cost.steady`)."""
    from harness.metric import registry  # noqa: PLC0415
    from harness.reports.analysis.cost import latency, steady  # noqa: PLC0415
    from harness.store.runstore import RunStore  # noqa: PLC0415

    st = RunStore.open(store)
    try:
        df = st.cells()
    finally:
        st.close()
    out = {}
    for m in dict.fromkeys(df["metric"]):
        d = df[(df["metric"] == m) & (df["status"] != "not_applicable")]
        med, p90, basis, _ = latency(d, getattr(registry.get(m), "uses_judge", True))
        out[m] = {"now_ms": round(med, 1), "p90_ms": round(p90 or 0, 1), "basis": basis,
                  "before_ms": round(steady(d["latency_ms"])[0], 1), "cache_hits": int(d["cache_hits"].sum())}
    return out


def start_ray(tmp: str) -> tuple[str, set[int]]:
    import psutil  # noqa: PLC0415

    before = {p.pid for p in psutil.process_iter()}
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
    ray = os.path.join(os.path.dirname(sys.executable), "ray")
    subprocess.run([ray, "start", "--head", "--node-ip-address", "127.0.0.1", "--include-dashboard=false",
                    "--disable-usage-stats", f"--temp-dir={tmp}/ray", "--num-cpus", str(os.cpu_count() or 2)],
                   check=True, env=env, cwd=ROOT, capture_output=True, text=True)
    return ray, before


def stop_ray(ray: str) -> None:
    subprocess.run([ray, "stop"], capture_output=True, text=True, cwd=ROOT)


def latency_check() -> dict:
    """Latency per answer, the similarity baseline alone and in a run of all ten metrics (the canonical set, the
    reference judge, ``--cache live``, one worker): the report's figure now and the gateway's before."""
    out, res = tempfile.mkdtemp(prefix="bench-latency-"), {}
    for rid, metrics in (("alone", "baseline.similarity"), ("full", ",".join(METRICS))):
        subprocess.run([*HARNESS, "run", "--cases", os.path.join(ROOT, "datasets", "canonical.jsonl"), "--metrics",
                        metrics, "--out", out, "--run-id", rid, "--no-progress", "--no-report", "--cache", "live",
                        "--workers", "1"], cwd=ROOT, capture_output=True, text=True, check=True)
        res[rid] = latencies(os.path.join(out, rid, "store.sqlite"))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--answers", type=int, default=2000)
    ap.add_argument("--rps", type=float, default=100.0, help="the judge's bound, requests per second")
    ap.add_argument("--window", type=float, default=10.0, help="seconds the judge keeps its budget over")
    ap.add_argument("--concurrency", type=int, default=32, help="cells in flight per worker")
    ap.add_argument("--workers", type=int, help="--workers of the run (default: the run picks)")
    ap.add_argument("--ray", action="store_true", help="run on a local Ray cluster (--ray auto)")
    ap.add_argument("--every", type=float, default=5.0, help="seconds between samples")
    ap.add_argument("--metrics", default=",".join(METRICS))
    ap.add_argument("--latency-check", action="store_true",
                    help="only the latency per answer of the similarity baseline alone and in a full run")
    args = ap.parse_args()
    if args.latency_check:
        print(json.dumps(latency_check()))
        return
    metrics = args.metrics.split(",")
    tmp = tempfile.mkdtemp(prefix="bench-scale-")
    jproc, url = judge(args.rps, args.window)
    ray = None
    try:
        cases = copies(args.answers, os.path.join(tmp, "cases.jsonl"))
        run_id = f"scale-{args.answers}{'-ray' if args.ray else ''}"
        cmd = [*HARNESS, "run", "--cases", cases, "--out", tmp, "--run-id", run_id, "--no-progress", "--no-report",
               "--metrics", ",".join(metrics), "--judge-url", url, "--judge-model", MODEL, "--cache", "live",
               "--judge-rpm", str(args.rps * 60), "--judge-window", str(args.window),
               "--concurrency", str(args.concurrency)]
        if args.ray:
            ray, before = start_ray(tmp)
            cmd += ["--ray", "auto"]
        elif args.workers:
            cmd += ["--workers", str(args.workers)]
        store = os.path.join(tmp, run_id, "store.sqlite")
        before_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        ray_cpu: dict = {}
        t0 = time.time()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"})
        samples = []
        while proc.poll() is None:
            time.sleep(args.every)
            if proc.poll() is not None:
                break
            cells, errors = stored(store)
            s = {"t": round(time.time() - t0, 1), "cells": cells, "errors": errors,
                 "rss_mb": round(rss_mb(tree(proc.pid)), 1), "load1": os.getloadavg()[0]}
            if args.ray:
                pids = ray_pids(before | {os.getpid(), *tree(proc.pid)})
                s["ray_rss_mb"] = round(rss_mb(pids), 1)
                cpu_of(pids, ray_cpu)
            samples.append(s)
            print(json.dumps(s), flush=True)
        out, err = proc.communicate()
        wall = time.time() - t0
        if proc.returncode not in (0, 1):
            raise SystemExit(f"harness run failed ({proc.returncode}): {err[-3000:]}")
        after_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        judge_cpu: dict = {}
        cpu_of([jproc.pid], judge_cpu)
        budget = get(url.removesuffix("/v1") + "/v1/budget")
        rate = call_rate(store)
        expected = args.answers * len(metrics)
        cells, errors = stored(store)
        # the first samples are taken while the vendor stacks import; memory is judged once cells flow
        flowing = [s for s in samples if s["cells"] > 0] or samples
        rss = [s["rss_mb"] for s in flowing]
        result = {"answers": args.answers, "metrics": len(metrics), "ray": args.ray, "wall_s": round(wall, 1),
                  "cells": cells, "expected_cells": expected, "lost_cells": expected - cells + errors,
                  "error_cells": errors, **rate, "bound_rps": args.rps,
                  "judge": budget, "rss_mb_first_max_last": [rss[0], max(rss), rss[-1]] if rss else None,
                  "load1_min_max": [round(min(s["load1"] for s in samples), 2),
                                    round(max(s["load1"] for s in samples), 2)] if samples else None,
                  "cpu_s": {"harness": round(after_cpu.ru_utime + after_cpu.ru_stime - before_cpu.ru_utime
                                             - before_cpu.ru_stime, 1),
                            "ray_cluster": round(sum(ray_cpu.values()), 1) if args.ray else None,
                            "judge": round(sum(judge_cpu.values()), 1)}}
        if args.ray:
            rr = [s["ray_rss_mb"] for s in flowing]
            result["ray_rss_mb_first_max_last"] = [rr[0], max(rr), rr[-1]] if rr else None
        print(json.dumps(result))
        print(json.dumps({"latency_per_answer": latencies(store)}))
        r = result
        mem = r["rss_mb_first_max_last"] or ["?"] * 3
        print(f"| {r['answers']:,} | {r['metrics']} | {'Ray' if args.ray else 'workers'} | {r['judge_calls']:,} | "
              f"{r['wall_s']:,.0f} s | {r['rps']} ({r['steady_rps']} steady) / {args.rps:g} | {r['lost_cells']} | "
              f"{mem[0]:,.0f} / {mem[1]:,.0f} / {mem[2]:,.0f} MB | {r['judge']['refused']} | "
              f"{r['load1_min_max'][0]}-{r['load1_min_max'][1]} |")
    finally:
        if ray is not None:
            stop_ray(ray)
        jproc.terminate()
        jproc.wait(10)


if __name__ == "__main__":
    main()
