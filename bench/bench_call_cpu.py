"""The harness's own CPU per judge call (issue 38.6: at 100 requests/s the CPU per call is the limit).

    .venv/bin/python bench/bench_call_cpu.py                 # 60 and 240 answers, three metrics
    .venv/bin/python bench/bench_call_cpu.py --small 100 --large 400 --metrics inhouse.span
    .venv/bin/python bench/bench_call_cpu.py --before DIR --run-rounds 2   # DIR: a checkout of main, say

The realistic test judge (``tests.helpers.judges.realistic --quiet-model``, its own process, loopback HTTP, no
latency) answers two whole ``harness run`` commands on copies of the canonical cases (new ids,
``--cache live``, ``--workers 1``, ``--concurrency 32``, ``--no-report``): ``--small`` answers and
``--large`` answers. The CPU of each command (user + system, the harness's process and any child) is read
from ``getrusage`` and its judge calls from the run store. The figure printed is the marginal cost

    (CPU of the large run - CPU of the small run) / (its calls - the small run's calls)

so the start-up (vendor imports, the store, the forkserver) cancels out, and what is left is what each
judge call costs the harness: the vendor code that builds and parses the call, the in-process gateway,
the cache and store writes, the upstream HTTP client. The judge's own CPU is not counted (another
process). That figure moves by a few ms from one measurement to the next on a shared machine (the
guest's speed varies), so the script also measures, in this one process, the part this bench was
written for, the upstream HTTP client, old against new:

    ``--calls`` chat completions (``--concurrency`` lanes, each waiting 0 to ``--think-ms`` between its calls
    as a vendor's own work does, so that, as in a run, idle connections sit in the pool) through :class:`harness.judge.upstream.HttpUpstream`
    to the same judge, CPU of this process per call (``time.process_time``), with the client as it was
    (a plain ``httpx.AsyncClient``) and as it is (:mod:`harness.judge.netbackend` installed), alternated
    ``--rounds`` times, best of each.

Nothing is asserted: speed is measured here, never in tests. Run it under ``nice -n 10``
on a shared machine and say the load average it prints.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench import HARNESS, copies  # noqa: E402  (bench/bench.py)

METRICS = "inhouse.span,ragas.faithfulness,deepeval.faithfulness"


def run(n: int, tmp: str, url: str, metrics: str, root: str) -> tuple[float, int]:
    cases = copies(n, os.path.join(tmp, f"cases{n}.jsonl"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([*HARNESS, "run", "--cases", cases, "--metrics", metrics, "--judge-url", url,
                        "--judge-model", "realistic-judge", "--cache", "live", "--workers", "1",
                        "--concurrency", "32", "--no-report", "--no-progress", "--out", tmp, "--run-id", f"r{n}"],
                       cwd=root, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        raise SystemExit(f"harness run failed ({p.returncode}): {p.stderr[-2000:]}")
    db = sqlite3.connect(os.path.join(tmp, f"r{n}", "store.sqlite"))
    try:
        calls = db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    finally:
        db.close()
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), calls


def upstream_cpu(url: str, calls: int, concurrency: int, plain: bool, think_ms: float) -> float:
    """CPU ms of this process per judge call through the harness's upstream client (``plain``: through
    ``httpx``, as the client was before)."""
    import asyncio  # noqa: PLC0415

    from harness.judge.cell import Cell  # noqa: PLC0415
    from harness.judge.replycap import ACCEPT_ENCODING, read_capped  # noqa: PLC0415
    from harness.judge.upstream import HttpUpstream  # noqa: PLC0415

    import httpx  # noqa: PLC0415

    class Plain(HttpUpstream):
        """The chat POST as it was before (httpx's client, read within the cap), errors left out."""

        async def complete(self, cell, body):
            if self._client is None:
                self._client = httpx.AsyncClient(timeout=self._timeout)
            headers = {"Content-Type": "application/json", "X-Harness-Cell": cell.header(),
                       "Accept-Encoding": ACCEPT_ENCODING}
            async with self._client.stream("POST", f"{self.url}/chat/completions", json=body, headers=headers) as r:
                raw = await read_capped(r, self.max_reply_bytes)
            return json.loads(raw)

    up = (Plain if plain else HttpUpstream)(url, "realistic-judge", None)
    cell = Cell("bench", "case", "inhouse.span")

    async def go() -> float:
        todo = iter(range(calls))

        async def lane(k: int):
            for i in todo:
                if think_ms:   # a vendor's own work between its calls: connections sit idle in the pool meanwhile
                    await asyncio.sleep(think_ms / 1000 * ((i * 7919 + k) % 11) / 10)
                await up.complete(cell, {"model": "realistic-judge", "messages": [
                    {"role": "user", "content": f"Is statement {i} supported by the context? Answer yes or no."}]})

        await up.complete(cell, {"model": "realistic-judge", "messages": [{"role": "user", "content": "warm-up"}]})
        t0 = time.process_time()
        await asyncio.gather(*(lane(k) for k in range(concurrency)))
        return 1000 * (time.process_time() - t0) / calls

    assert httpx   # imported before the timed part
    async def measured() -> float:
        try:
            return await go()
        finally:
            await up.aclose()

    return asyncio.run(measured())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--small", type=int, default=60)
    ap.add_argument("--large", type=int, default=240)
    ap.add_argument("--metrics", default=METRICS)
    ap.add_argument("--calls", type=int, default=1500, help="upstream-client part: calls per measurement")
    ap.add_argument("--concurrency", type=int, default=32, help="upstream-client part: calls in flight")
    ap.add_argument("--think-ms", type=float, default=20.0, help="upstream-client part: each lane waits 0 to "
                    "this many ms between its calls (the vendors' own work), so idle connections sit in the pool")
    ap.add_argument("--rounds", type=int, default=3, help="upstream-client part: old/new alternations")
    ap.add_argument("--skip-runs", action="store_true", help="only the upstream-client part")
    ap.add_argument("--root", default=ROOT, help="the checkout whose harness runs (another commit's worktree, "
                    "same .venv: its before-figure)")
    ap.add_argument("--before", help="another checkout (e.g. `git archive main | tar -x -C DIR`, same .venv): its "
                    "whole command is measured in this run too, alternated with --root's, and the ratio printed")
    ap.add_argument("--run-rounds", type=int, default=1, help="whole-command part: rounds (alternated with --before)")
    args = ap.parse_args()
    judge = subprocess.Popen([sys.executable, "-m", "tests.helpers.judges.realistic", "--quiet-model"], cwd=ROOT,
                             stdout=subprocess.PIPE, text=True)
    try:
        url = json.loads(judge.stdout.readline())["url"]
        load0 = os.getloadavg()[0]
        old, new = [], []
        for _ in range(args.rounds):
            old.append(upstream_cpu(url, args.calls, args.concurrency, True, args.think_ms))
            new.append(upstream_cpu(url, args.calls, args.concurrency, False, args.think_ms))
        print(json.dumps({"upstream_client_cpu_ms_per_call": {"old": [round(x, 3) for x in old],
                                                              "new": [round(x, 3) for x in new]},
                          "calls": args.calls, "concurrency": args.concurrency,
                          "think_ms": args.think_ms}))
        print(f"upstream client, CPU per call (best of {args.rounds}): old {min(old):.3f} ms, new {min(new):.3f} ms "
              f"({min(old) / min(new):.2f}x); load average {load0:.1f} -> {os.getloadavg()[0]:.1f}")
        if not args.skip_runs:
            trees = [("before", args.before), ("now", args.root)] if args.before else [("now", args.root)]
            figures = {label: [] for label, _ in trees}
            for _ in range(args.run_rounds):
                for label, root in trees:   # alternated: both trees see the same spells of load
                    load_a = os.getloadavg()[0]
                    with tempfile.TemporaryDirectory() as tmp:
                        cpu_s, calls_s = run(args.small, tmp, url, args.metrics, root)
                        cpu_l, calls_l = run(args.large, tmp, url, args.metrics, root)
                    per_call = 1000 * (cpu_l - cpu_s) / max(calls_l - calls_s, 1)
                    figures[label].append(per_call)
                    load_b = os.getloadavg()[0]
                    print(json.dumps({"tree": label, "root": root, "metrics": args.metrics,
                                      "small": [args.small, calls_s, round(cpu_s, 2)],
                                      "large": [args.large, calls_l, round(cpu_l, 2)],
                                      "cpu_ms_per_call": round(per_call, 2), "load": [round(load_a, 1), round(load_b, 1)]}))
                    print(f"whole command ({label}), CPU per judge call: {per_call:.2f} ms ({calls_l - calls_s} calls "
                          f"between the runs: {cpu_l:.1f} s - {cpu_s:.1f} s of CPU); load average {load_a:.1f} -> {load_b:.1f}")
            if args.before:
                for what, pick in (("best", min), ("median", statistics.median)):
                    b, n = pick(figures["before"]), pick(figures["now"])
                    print(f"whole command, CPU per judge call ({what} of {args.run_rounds}): before {b:.2f} ms, "
                          f"now {n:.2f} ms ({b / n:.2f}x less)")
    finally:
        judge.terminate()
        judge.wait()


if __name__ == "__main__":
    main()
