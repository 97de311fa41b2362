"""The judge's pace (issue 38.2): achieved rate against the budget, and 429s with and without the limiter.

    .venv/bin/python bench/bench_pace.py [--rpm 600] [--window 10] [--calls 400] [--concurrency 32]

A rate-limited test judge (``tests.helpers.judges.ratelimited``, its own process, real clock) allows ``--rpm``
requests per minute, kept over ``--window`` seconds (the default: 10 requests per second, 100 per 10 s
window). Each scenario sends ``--calls`` judge calls through one harness gateway (the path every vendor's
calls take), ``--concurrency`` at a time, with the harness's default retries (4 attempts, Retry-After
honoured):

- ``no pace``: the gateway as before (retries only);
- ``pace = budget``: ``--judge-rpm`` set to the judge's budget;
- ``pace = 2x budget``: the user stated twice the real limit; the pace halves on 429 and reads the headers;
- ``2 workers``: two gateways, each with half the pace (``--workers 2``), side by side;
- ``tokens``: ``--judge-tpm`` only, against a judge with a tokens budget.

Printed per scenario: calls answered and lost, 429s the judge sent, the wall time to the last answer, the
ideal time (the earliest a sliding-window budget lets the last call go: ceil(N / budget per window) - 1
windows) and their ratio ``rate_vs_budget`` (1.0: as fast as the budget allows), and the most requests
(tokens) the judge ever counted in one window against the budget per window. Nothing is asserted: speed
is measured here, never in tests.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from harness.judge.gateway import Gateway  # noqa: E402 - after the path
from harness.judge.pace import Pace, estimate_tokens, for_workers  # noqa: E402
from harness.judge.upstream import Cell, HttpUpstream, RetryPolicy  # noqa: E402

MODEL = "realistic-judge"


def body(i: int) -> dict:
    return {"model": MODEL, "max_tokens": 64,
            "messages": [{"role": "user", "content": f"Question {i}: is the sky blue? " + "word " * 40}]}


def judge(args, rpm=None, tpm=None):
    cmd = [sys.executable, "-m", "tests.helpers.judges.ratelimited", "--window", str(args.window)]
    cmd += ["--rpm", str(rpm)] if rpm else []
    cmd += ["--tpm", str(tpm)] if tpm else []
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    url = json.loads(proc.stdout.readline())["url"]
    return proc, url


def get(url: str) -> dict:
    with urllib.request.urlopen(url) as r:
        return json.loads(r.read())


def post(url: str) -> None:
    urllib.request.urlopen(urllib.request.Request(url, data=b"{}", method="POST")).read()


async def drive(url: str, calls: int, concurrency: int, paces: list) -> tuple[list, list[float], float]:
    """Send ``calls`` calls through one gateway per pace (round robin); (statuses, finish times, start)."""
    gws = [Gateway(HttpUpstream(url, MODEL, None), pace=p, policy=RetryPolicy()).attach() for p in paces]
    slots = asyncio.Semaphore(concurrency)
    t0 = time.monotonic()
    done: list[float] = []

    async def one(i):
        async with slots:
            status, _ = await gws[i % len(gws)].handle(Cell("bench", f"c{i}", "m"), body(i))
            done.append(time.monotonic())
            return status

    try:
        statuses = await asyncio.gather(*(one(i) for i in range(calls)))
    finally:
        for g in gws:
            await g.aclose()
    return statuses, done, t0


def scenario(name, url, args, paces, per_window: float, tokens: bool = False):
    """One scenario's row. ``per_window``: the judge's budget per window (requests, or tokens)."""
    post(url.removesuffix("/v1") + "/v1/budget/reset")
    statuses, done, t0 = asyncio.run(drive(url, args.calls, args.concurrency, paces))
    stats = get(url.removesuffix("/v1") + "/v1/budget")
    wall = max(done) - t0
    ok = statuses.count(200)
    # the earliest the last call can go under a sliding window: after ceil(N / per window) - 1 windows
    per_call = stats["tokens"] / max(1, stats["answered"]) if tokens else 1.0
    ideal = (math.ceil(ok * per_call / per_window) - 1) * args.window
    row = {"scenario": name, "calls": args.calls, "answered": ok, "lost": args.calls - ok,
           "429s": stats["refused"], "wall_s": round(wall, 2), "ideal_s": round(ideal, 2),
           "rate_vs_budget": round(ideal / wall, 3) if wall else None,
           "judge_max_window": stats["max_tokens" if tokens else "max_requests"], "budget_window": per_window,
           "pace_waits": sum(p.stats.waited for p in paces if p), "pace_429s": sum(p.stats.throttled for p in paces if p)}
    print(json.dumps(row), flush=True)
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rpm", type=float, default=600.0)
    p.add_argument("--window", type=float, default=10.0)
    p.add_argument("--calls", type=int, default=400)
    p.add_argument("--concurrency", type=int, default=32)
    args = p.parse_args(argv)
    print(f"# judge budget {args.rpm:g} requests/min = {args.rpm / 60:g}/s, kept over {args.window:g} s windows; "
          f"{args.calls} calls, concurrency {args.concurrency}; load average {os.getloadavg()[0]:.1f}", flush=True)
    proc, url = judge(args, rpm=args.rpm)
    per_window = int(args.rpm * args.window / 60)
    try:
        scenario("no pace", url, args, [None], per_window)
        scenario("pace = budget", url, args, [Pace(args.rpm, window_s=args.window)], per_window)
        scenario("pace = 2x budget (adaptive)", url, args, [Pace(2 * args.rpm, window_s=args.window)], per_window)
        half, _ = for_workers(args.rpm, None, 2)
        scenario("2 workers, half the pace each", url, args,
                 [Pace(half, window_s=args.window), Pace(half, window_s=args.window)], per_window)
    finally:
        proc.terminate()
        proc.wait()
    cost = estimate_tokens(body(0))
    tpm = args.rpm * 100   # ~100 tokens a call are billed (usage); the estimate says `cost`
    proc, url = judge(args, tpm=tpm)
    try:
        tw = int(tpm * args.window / 60)
        scenario("tokens: no pace", url, args, [None], tw, tokens=True)
        scenario("tokens: pace = budget", url, args, [Pace(tpm=tpm, window_s=args.window)], tw, tokens=True)
    finally:
        proc.terminate()
        proc.wait()
    print(f"# tokens: {cost} estimated per call before sending (prompt / 4 + max_tokens), corrected by usage",
          flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
