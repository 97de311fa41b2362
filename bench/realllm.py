"""A real small LLM as the judge: what each metric makes of it, cell by cell.

    bash ../shared/realllm/setup.sh serve 1.5b 8081     # llama.cpp's server with Qwen2.5-Coder 1.5B (~2 min)
    .venv/bin/python bench/realllm.py --judge-url http://127.0.0.1:8081/v1 --judge-model qwen2.5-coder-1.5b-instruct

One whole ``harness run`` (a subprocess) of the chosen canonical cases x every metric through the
judge, at concurrency 2 and one worker by default (the machine has 2 cores, shared), with the judge
cache off (``--cache live``: every call reaches the model). It then reads the run store and prints,
per metric: cells scored, unscored (the harness's own metric declining, or the vendor's NaN),
not applicable, errored; scored cells that carry a note (an in-house re-ask, for example); judge
calls, replies that did not fit the requested format, the cells' summed wall time; and, under the
table, what broke each metric's parsing: the stored reasons of its cells that did not score (and
the notes of those that did), and the calls whose reply did not fit the requested format or that
failed (``(call)``: the gateway's record), grouped with numbers folded, with counts. ``--json
PATH`` also writes the figures; ``--store PATH`` prints them for an existing run store.

Speed depends on the machine's load: the wall time is the command's, with the load average at start
and end printed beside it. Not part of any test run.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CANONICAL = os.path.join(ROOT, "datasets", "canonical.jsonl")
NOT_SCORED = ("unscored", "vendor_nan")


def pick_cases(ids: str | None, limit: int | None, path: str) -> str:
    """The canonical cases named by ``ids`` (comma-separated), else the first ``limit`` (all: None), as a file."""
    rows = [json.loads(line) for line in open(CANONICAL, encoding="utf-8") if line.strip()]
    if ids:
        want = [i.strip() for i in ids.split(",") if i.strip()]
        known = {r["id"] for r in rows}
        unknown = [i for i in want if i not in known]
        if unknown:
            sys.exit(f"bench/realllm.py: --case-ids: unknown case(s) {unknown}; canonical ids: {sorted(known)}")
        rows = [r for r in rows if r["id"] in want]
    elif limit:
        rows = rows[:limit]
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return path


def reason_kind(reason: str) -> str:
    """A stored reason with its numbers and quoted fragments folded, so like failures group.

    >>> reason_kind("judge returned 1 verdicts for 3 claims (missing: [2, 3])")
    'judge returned N verdicts for N claims (missing: [N, N])'
    >>> reason_kind("ValueError: bad reply 'The oven is hot'")
    "ValueError: bad reply '...'"
    """
    text = re.sub(r"'[^']{0,400}'|\"[^\"]{0,400}\"", lambda m: m.group(0)[0] + "..." + m.group(0)[0], reason or "")
    text = re.sub(r"\d+(?:\.\d+)?", "N", text)
    return " ".join(text.split())[:150]


def figures(store: str) -> dict:
    """Per metric: status counts, noted scored cells, calls, misfits, summed cell wall time, reasons."""
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT metric, status, reason, calls, format_misfits, wall_ms, errors FROM cells").fetchall()
        fits = db.execute("SELECT metric, reply_fit, error, COUNT(*) FROM calls WHERE (reply_fit IS NOT NULL AND "
                          "reply_fit NOT IN ('fits', 'not asked')) OR error IS NOT NULL GROUP BY 1, 2, 3").fetchall()
    finally:
        db.close()
    out: dict[str, dict] = defaultdict(lambda: {"cells": 0, "scored": 0, "unscored": 0, "not_applicable": 0,
                                                "errored": 0, "noted": 0, "calls": 0, "misfits": 0, "wall_s": 0.0,
                                                "judge_errors": 0, "reasons": Counter()})
    for metric, status, reason, calls, misfits, wall_ms, errors in rows:
        f = out[metric]
        f["cells"] += 1
        key = {"scored": "scored", "not_applicable": "not_applicable", "error": "errored"}.get(
            status, "unscored" if status in NOT_SCORED else status)
        f[key] = f.get(key, 0) + 1
        f["calls"] += calls
        f["misfits"] += misfits
        f["wall_s"] += wall_ms / 1000
        f["judge_errors"] += errors
        if status == "scored" and reason:
            f["noted"] += 1
            f["reasons"][f"(scored) {reason_kind(reason)}"] += 1
        elif status not in ("scored", "not_applicable"):
            f["reasons"][f"({status}) {reason_kind(reason)}"] += 1
    for metric, fit, error, n in fits:
        out[metric]["reasons"][f"(call) {reason_kind(error or fit)}"] += n
    return {m: {**f, "reasons": dict(f["reasons"].most_common())} for m, f in sorted(out.items())}


def table(figs: dict) -> str:
    """The figures as a Markdown table, then each metric's reasons."""
    cols = ("cells", "scored", "unscored", "not_applicable", "errored", "noted", "calls", "misfits", "wall_s")
    head = ["metric", "cells", "scored", "unscored", "n/a", "errored", "scored w/ note", "calls", "misfit replies",
            "cell wall s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    total = Counter()
    for m, f in figs.items():
        lines.append(f"| {m} | " + " | ".join(f"{f[c]:.0f}" if c == "wall_s" else str(f[c]) for c in cols) + " |")
        total.update({c: f[c] for c in cols})
    lines.append("| all | " + " | ".join(f"{total[c]:.0f}" if c == "wall_s" else str(total[c]) for c in cols) + " |")
    lines.append("")
    for m, f in figs.items():
        for why, n in f["reasons"].items():
            lines.append(f"- {m}: {n} x {why}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--judge-url", help="the judge's OpenAI-compatible base URL (.../v1)")
    ap.add_argument("--judge-model", help="the model id to send")
    ap.add_argument("--case-ids", help="comma-separated canonical case ids (default: all 24)")
    ap.add_argument("--cases-limit", type=int, help="only the first N canonical cases")
    ap.add_argument("--metrics", help="comma-separated metric names or vendor prefixes (default: all)")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--call-timeout", type=float, default=900, help="seconds per judge call (a small model on a "
                    "loaded 2-core machine can generate at ~2 tokens/s)")
    ap.add_argument("--cell-timeout", type=float, default=3600)
    ap.add_argument("--repeats", type=int, default=1, help="judge every cell K times (the report's judge "
                    "stability section then gives the figures: build it with `harness report`)")
    ap.add_argument("--out", help="output directory (default: a new temp dir)")
    ap.add_argument("--store", help="only read this existing run store and print its figures")
    ap.add_argument("--json", help="also write the figures to this file")
    a = ap.parse_args(argv)
    if not a.store and not (a.judge_url and a.judge_model):
        ap.error("--judge-url and --judge-model are needed (or --store PATH to read an existing run)")
    if a.store:
        figs, wall = figures(a.store), None
    else:
        out = a.out or tempfile.mkdtemp(prefix="realllm-")
        os.makedirs(out, exist_ok=True)
        cases = pick_cases(a.case_ids, a.cases_limit, os.path.join(out, "cases.jsonl"))
        env = {**os.environ, "REALLLM_KEY": os.environ.get("REALLLM_KEY", "unused")}
        cmd = [sys.executable, "-m", "harness", "run", "--cases", cases, "--out", out, "--run-id", "realllm",
               "--judge-url", a.judge_url, "--judge-model", a.judge_model, "--judge-key-env", "REALLLM_KEY",
               "--cache", "live", "--concurrency", str(a.concurrency), "--workers", str(a.workers),
               "--call-timeout", str(a.call_timeout), "--cell-timeout", str(a.cell_timeout),
               "--no-report", "--no-progress", "--repeats", str(a.repeats)] + (["--metrics", a.metrics] if a.metrics else [])
        load0, t0 = os.getloadavg()[0], time.perf_counter()
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        wall, load1 = time.perf_counter() - t0, os.getloadavg()[0]
        store = os.path.join(out, "realllm", "store.sqlite")
        if p.returncode != 0:   # exit 1 = some cell errored: the figures say which; anything else: no figures
            sys.stderr.write(p.stderr[-3000:])
            if p.returncode != 1 or not os.path.exists(store):
                return p.returncode
        figs = figures(store)
        n = sum(1 for _ in open(cases, encoding="utf-8"))
        print(f"{n} cases x {len(figs)} metrics, judge {a.judge_model} at {a.judge_url}, concurrency "
              f"{a.concurrency}, {a.workers} worker(s): run wall {wall:.0f} s (load average {load0:.1f} at start, "
              f"{load1:.1f} at end); store {out}/realllm/store.sqlite")
    print(table(figs))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump({"wall_s": wall, "metrics": figs}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
