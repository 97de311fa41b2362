"""Fault soak: many cases x every metric through a judge that fails 10 % of the time; nothing may be lost.

    .venv/bin/python scripts/soak.py                 # 500 cases x all metrics, 10 % faults (a few minutes)
    bash scripts/test.sh -m soak                     # the same, as a test (tests/run/test_faults_soak.py)
    .venv/bin/python scripts/soak.py --cases 50 --metrics inhouse.span,ragas   # a quick one

The cases are copies of the canonical ones with new ids (``<id>--soak-0001`` ...). The judge is the
reference judge wrapped in ``harness.judge.faults`` (HTTP 500, 429 with Retry-After, hangs past the call
timeout, malformed, truncated and wrong-schema replies), seeded so a run replays. The harness's own
settings are used (4 attempts per call, 0.5 s exponential backoff, Retry-After honoured) except the
per-call timeout, 2 s instead of 120 s, so a hang costs 2 s.

Before the soak, the canonical cases are run once without faults; each soak cell is then compared
with the fault-free cell of the case it copies. The soak passes (exit 0) when:

- every (case, metric) cell is in the store, exactly once (no lost cells);
- every errored or unscored cell has a reason;
- no cell is scored differently from its fault-free twin without a flag saying why (no fault is
  silently turned into a score);
- every upstream attempt the fault injector saw is in the store's call records (the ledger is whole).

It prints the counts: cells expected, stored, scored, unscored, vendor NaN, n/a, errored with a
reason, judge calls, upstream attempts, retries, faults injected by kind, vendor re-sends (identical
requests sent again within a cell by a vendor's own retry loop) and wall time.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

DEFAULT_SPEC = "500=0.02,429=0.02,timeout=0.01,malformed=0.02,truncated=0.015,schema=0.015"
"""10 % of upstream attempts fault, spread over every kind."""
SUFFIX = "--soak-"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=500, help="number of soak cases (default 500)")
    p.add_argument("--metrics", default="all", help="metric names or vendor prefixes (default all)")
    p.add_argument("--faults", default=DEFAULT_SPEC, help=f"fault spec (default {DEFAULT_SPEC})")
    p.add_argument("--seed", type=int, default=7, help="fault seed (default 7)")
    p.add_argument("--concurrency", type=int, default=16, help="cells in flight (default 16; measured best on 2 cores)")
    p.add_argument("--workers", type=int, default=2,
                   help="worker processes (default 2: the soak holds with several; 1: in this process)")
    p.add_argument("--call-timeout", type=float, default=2.0, help="seconds per judge attempt (default 2)")
    p.add_argument("--out", help="output directory (default: a temporary directory, removed at the end)")
    return p.parse_args(argv)


def soak_cases(canonical_path: str, n: int, path: str) -> None:
    """Write ``n`` copies of the canonical cases (cycled) with new ids to ``path``."""
    with open(canonical_path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            row = dict(rows[i % len(rows)])
            row["id"] = f"{row['id']}{SUFFIX}{i:04d}"
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def origin(case_id: str) -> str:
    """The canonical id a soak case copies.

    >>> origin("cookie-yield--soak-0042")
    'cookie-yield'
    """
    return case_id.rsplit(SUFFIX, 1)[0]


def read_store(path: str):
    from harness.store.runstore import RunStore

    s = RunStore.open(path)
    try:
        cells = s.rows("SELECT case_id, metric, status, score, reason, flags, calls, retries FROM cells")
        dup = s.rows("SELECT case_id, metric, COUNT(*) FROM cells GROUP BY case_id, metric HAVING COUNT(*) > 1")
        # the judge's attempts: the fault injector wraps the chat-completion judge; embeddings (the
        # similarity metrics) go to the embedding model, which it does not see
        attempts = s.rows("SELECT COALESCE(SUM(attempts), 0) FROM calls WHERE step != 'embeddings'")[0][0]
        resends = s.rows("SELECT COALESCE(SUM(n - 1), 0) FROM (SELECT COUNT(*) AS n FROM calls "
                         "GROUP BY case_id, metric, request_key HAVING COUNT(*) > 1)")[0][0]
        reasks = s.rows("SELECT COUNT(*) FROM calls WHERE step LIKE 'Correct your JSON%'")[0][0]
        ok = s.rows("PRAGMA integrity_check")[0][0]
    finally:
        s.close()
    return cells, dup, attempts, (resends, reasks), ok


def compare(cells, baseline) -> tuple[Counter, list]:
    """Each soak cell against its fault-free twin: (outcome counts, silent changes)."""
    outcome, silent = Counter(), []
    for cid, metric, status, score, reason, flags, *_ in cells:
        b = baseline[(origin(cid), metric)]
        same = b[0] == status and (b[1] == score or (b[1] is not None and score is not None
                                                      and math.isclose(b[1], score)))
        if same:
            outcome["same as fault-free"] += 1
        elif status == "error":
            outcome["errored"] += 1
        elif status in ("vendor_nan", "unscored", "not_applicable") and reason:
            outcome[f"{status} (vendor/harness handling of the failed judge)"] += 1
        elif status == "scored" and set(json.loads(flags)) - set(json.loads(b[2])):
            outcome["scored differently, flagged"] += 1
        else:
            silent.append((cid, metric, b[:2], (status, score)))
    return outcome, silent


def main(argv=None) -> int:
    args = parse_args(argv)
    from harness.cases.load import load_cases
    from harness.judge.faults import FaultInjector, FaultSpec
    from harness.metric import registry
    from harness.run.runner import RunOptions, run

    metrics = registry.resolve(args.metrics)
    spec = FaultSpec.parse(args.faults)
    tmp = None
    out = args.out
    if out is None:
        tmp = tempfile.TemporaryDirectory(prefix="harness-soak-")
        out = tmp.name
    os.makedirs(out, exist_ok=True)
    canonical_path = os.path.join(ROOT, "datasets", "canonical.jsonl")
    cases_path = os.path.join(out, "soak-cases.jsonl")
    soak_cases(canonical_path, args.cases, cases_path)
    cases = load_cases(cases_path)
    print(f"soak: {len(cases)} cases x {len(metrics)} metrics, faults {spec.describe()} "
          f"({spec.total:.0%} of attempts), seed {args.seed}, concurrency {args.concurrency}, "
          f"workers {args.workers}", flush=True)

    t0 = time.perf_counter()
    for cls in (registry.get(m) for m in metrics):       # vendor imports, outside the timed soak
        if callable(getattr(cls, "prepare", None)):
            cls.prepare()
    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    base = run(RunOptions(cases=load_cases(canonical_path), metrics=metrics, out_dir=out, run_id="fault-free",
                          progress=False, concurrency=args.concurrency))
    t_base = time.perf_counter() - t0
    baseline = {(r[0], r[1]): (r[2], r[3], r[5]) for r in read_store(base.store_path)[0]}

    inj = FaultInjector(spec, seed=args.seed)
    t0 = time.perf_counter()
    soak = run(RunOptions(cases=cases, metrics=metrics, out_dir=out, run_id="soak", progress=True,
                          concurrency=args.concurrency, call_timeout_s=args.call_timeout, upstream_wrapper=inj,
                          workers=args.workers))
    wall = time.perf_counter() - t0
    cells, dup, attempts, resends, integrity = read_store(soak.store_path)

    expected = {(c.id, m) for c in cases for m in metrics}
    stored = {(r[0], r[1]) for r in cells}
    status = Counter(r[2] for r in cells)
    no_reason = [(r[0], r[1]) for r in cells if r[2] != "scored" and not r[4]]
    outcome, silent = compare(cells, baseline)
    faults = inj.counts()
    lost = len(expected - stored)
    per_metric = {m: Counter(r[2] for r in cells if r[1] == m) for m in metrics}

    print(f"\nsoak finished in {wall:.1f} s (vendor imports {t_import:.1f} s, fault-free baseline of "
          f"{len(baseline)} cells {t_base:.1f} s, not included)")
    lines = [
        ("cells expected", len(expected)),
        ("cells stored", len(stored)),
        ("cells lost", lost),
        ("duplicate cells", len(dup)),
        ("scored", status["scored"]),
        ("unscored (harness)", status["unscored"]),
        ("unscored by the vendor (NaN)", status["vendor_nan"]),
        ("not applicable", status["not_applicable"]),
        ("errored, with a reason", sum(1 for r in cells if r[2] == "error" and r[4])),
        ("not scored and no reason", len(no_reason)),
        ("judge calls (gateway requests)", sum(r[6] for r in cells)),
        ("judge attempts (stored / injector saw)", f"{attempts} / {faults['attempts']}"),
        ("retries by the harness", sum(r[7] for r in cells)),
        ("vendor re-sends (identical request again in a cell)", resends[0]),
        ("vendor re-asks (instructor: 'Correct your JSON...')", resends[1]),
        ("faults injected", sum(v for k, v in faults.items() if k != "attempts")),
        ("  by kind", ", ".join(f"{k} {v}" for k, v in faults.items() if k != "attempts")),
        ("store integrity_check", integrity),
        ("wall time (s)", f"{wall:.1f}"),
        ("cells per second", f"{len(stored) / wall:.1f}"),
    ]
    w = max(len(k) for k, _ in lines)
    for k, v in lines:
        print(f"  {k.ljust(w)}  {v}")
    print("versus the fault-free run:")
    for k, v in outcome.most_common():
        print(f"  {k}: {v}")
    print(f"  silently changed: {len(silent)}")
    for s in silent[:20]:
        print(f"    {s}")
    print("per metric:")
    for m in metrics:
        c = per_metric[m]
        print(f"  {m:36} scored {c['scored']}, unscored {c['unscored']}, vendor NaN {c['vendor_nan']}, "
              f"n/a {c['not_applicable']}, errored {c['error']}")
    errors = Counter()
    for r in cells:
        if r[2] == "error":
            errors[_kind_of(r[4])] += 1
    if errors:
        print("error reasons (grouped):")
        for k, v in errors.most_common(12):
            print(f"  {v:5}  {k}")
    ok = (lost == 0 and not dup and not no_reason and not silent and attempts == faults["attempts"]
          and integrity == "ok" and stored == expected)
    print("soak: PASS" if ok else "soak: FAIL")
    if tmp is not None:
        tmp.cleanup()
    return 0 if ok else 1


def _kind_of(reason: str) -> str:
    """A reason with the case-specific parts cut, for grouping."""
    for marker in ("injected fault: judge HTTP 500", "injected fault: judge HTTP 429", "timed out after",
                   "reply is not JSON", "lacks required key", "does not fit schema", "unrecognised request"):
        if marker in (reason or ""):
            head = (reason or "").split(":")[0]
            return f"{head}: ... {marker}"
    return (reason or "")[:120]


if __name__ == "__main__":
    sys.exit(main())
