"""Kill-and-resume soak of the parallel paths: worker processes and Ray, judge faults, SIGKILLs, resumes.

    .venv/bin/python scripts/soak_kill.py                  # 240 cases, 2 workers and Ray, 10 % faults
    .venv/bin/python scripts/soak_kill.py --cases 48 --no-ray    # a quick one (tests/run/test_soak_kill.py)

One run id, four segments, each a whole ``harness run`` command (a subprocess), all with
``--faults`` at 10 % of judge attempts (seeded) and a 10 s per-call timeout:

1. ``--workers 2``: once some cells are stored, one worker process is killed with SIGKILL; the run
   must end with one line naming the dead worker, exit 2;
2. resume 1, on Ray (a head node started here on 127.0.0.1, 2 CPUs; ``--no-ray``: ``--workers 2``):
   the driver's whole process group is killed with SIGKILL at a random moment;
3. resume 2, ``--workers 2``: the driver's process group is killed with SIGKILL at a random moment;
4. resume 3, ``--workers 2``: runs to the end (exit 0, or 1 when some cells errored).

After every segment the store is read: every cell a segment finished (scored, unscored, vendor NaN or
not applicable) must still be there, byte for byte, in every later segment. At the end, the soak
passes (exit 0) when every (case, metric) cell is in the store exactly once, the store's
integrity check is ``ok``, every cell that is not scored has a reason, and no cell is scored
differently from the same case's fault-free cell (a fault-free run of the canonical cases) without a
flag or a status saying why (``scripts/soak.py``'s comparison). The kill moments are random; the seed
is printed and ``--seed`` replays it.
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from soak import DEFAULT_SPEC, compare, soak_cases  # noqa: E402 - the fault soak's cases and comparison

from tests.helpers.procs import RayHead, store_rows, stored_cells, workers_of  # noqa: E402 - shared with the tests

FINAL = ("scored", "unscored", "vendor_nan", "not_applicable")
RUN_ID = "kill-soak"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=240, help="soak cases, copies of the canonical ones (default 240)")
    p.add_argument("--metrics", default="inhouse.span,baseline.similarity,cascade.similarity_span",
                   help="metrics (default: the three with no vendor stack, so the kills land mid-run)")
    p.add_argument("--faults", default=DEFAULT_SPEC, help=f"fault spec (default {DEFAULT_SPEC}: 10 %%)")
    p.add_argument("--seed", type=int, default=None, help="seed of the kill moments and the faults (default random)")
    p.add_argument("--latency-ms", type=float, default=40.0, help="reference judge latency per call (default 40)")
    p.add_argument("--call-timeout", type=float, default=10.0,
                   help="seconds per judge attempt (default 10: a hang fault costs that; the embedded embedding "
                        "model needs more than 2 s a call on a loaded 2-core machine)")
    p.add_argument("--no-ray", action="store_true", help="resume 1 with --workers 2 instead of on Ray")
    p.add_argument("--out", help="output directory (default: a temporary directory, removed at the end)")
    return p.parse_args(argv)


def segment(cmd: list[str], store: str, kill: str | None, at_cells: int, rng: random.Random, log) -> tuple[int, str]:
    """Run one ``harness run``; ``kill``: ``worker`` (SIGKILL one worker process once ``at_cells`` cells
    are stored), ``driver`` (SIGKILL the driver's process group then), or None (run to the end).
    Returns (exit code, stderr)."""
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    killed = None
    try:
        if kill is not None:
            deadline = time.time() + 600
            while p.poll() is None and time.time() < deadline and stored_cells(store) < at_cells:
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 0.5))
            if p.poll() is None:
                if kill == "worker":
                    workers = workers_of(p.pid)
                    if workers:
                        killed = rng.choice(workers)
                        os.kill(killed, signal.SIGKILL)
                else:
                    killed = p.pid
                    os.killpg(p.pid, signal.SIGKILL)
        _, err = p.communicate(timeout=1800)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(30)
    log(f"  exit {p.returncode}; " + (f"killed {kill} pid {killed} at {stored_cells(store)} stored cells"
                                      if killed else "ran to the end"))
    return p.returncode, err


def main(argv=None) -> int:
    args = parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1_000_000)
    rng = random.Random(seed)
    tmp = None
    out = args.out
    if out is None:
        tmp = tempfile.TemporaryDirectory(prefix="harness-kill-soak-")
        out = tmp.name
    os.makedirs(out, exist_ok=True)

    def log(msg: str) -> None:
        print(msg, flush=True)

    from harness.cases.load import load_cases
    from harness.metric import registry

    metrics = registry.resolve(args.metrics)
    canonical = os.path.join(ROOT, "datasets", "canonical.jsonl")
    cases_path = os.path.join(out, "kill-soak-cases.jsonl")
    soak_cases(canonical, args.cases, cases_path)
    cases = load_cases(cases_path)
    total = len(cases) * len(metrics)
    log(f"kill soak: {len(cases)} cases x {len(metrics)} metrics = {total} cells, faults {args.faults}, "
        f"seed {seed} (replay with --seed {seed}), Ray {'off' if args.no_ray else 'on'}")
    t_all = time.perf_counter()
    base_cmd = [sys.executable, "-m", "harness", "run", "--metrics", ",".join(metrics), "--out", out,
                "--no-progress", "--no-report"]
    p = subprocess.run([*base_cmd, "--cases", canonical, "--run-id", "fault-free"], cwd=ROOT,
                       capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        log(f"fault-free run failed ({p.returncode}): {p.stderr[-2000:]}")
        return 1
    baseline = {(r[0][0], r[0][1]): (r[0][4], r[0][5], r[0][7]) for r in store_rows(
        os.path.join(out, "fault-free", "store.sqlite")).values()}

    store = os.path.join(out, RUN_ID, "store.sqlite")
    cmd = [*base_cmd, "--cases", cases_path, "--run-id", RUN_ID, "--faults", args.faults, "--fault-seed",
           str(seed % 1000), "--call-timeout", str(args.call_timeout), "--judge-latency-ms", str(args.latency_ms), "--concurrency", "8"]
    try:
        head = None if args.no_ray else RayHead().start()
    except RuntimeError as e:
        log(str(e))
        return 1
    kept: dict = {}
    problems: list[str] = []
    try:
        plan = [("workers", "--workers", "worker"),
                ("resume 1, Ray" if head else "resume 1", "--ray" if head else "--workers", "driver"),
                ("resume 2", "--workers", "driver"),
                ("resume 3", "--workers", None)]
        for name, how, kill in plan:
            place = [how, head.address] if how == "--ray" else [how, "2"]
            before = stored_cells(store)
            at = before + max(1, int(rng.uniform(0.1, 0.3) * (total - before)))
            log(f"{name}: {' '.join(place)}, {before} cells stored" + (f", SIGKILL of the {kill} after ~{at}"
                                                                        if kill else ""))
            t0 = time.perf_counter()
            rc, err = segment([*cmd, *place], store, kill, at, rng, log)
            log(f"  {time.perf_counter() - t0:.1f} s")
            lines = [ln for ln in err.splitlines() if ln.startswith("harness: ")]
            if kill == "worker" and (rc != 2 or "Traceback" in err or len(lines) != 1 or "died" not in lines[0]):
                problems.append(f"{name}: a killed worker should end the run with one line and exit 2; got exit "
                                f"{rc}: {err[-800:]}")
            if kill is None and rc not in (0, 1):
                problems.append(f"{name}: the last resume should finish; exit {rc}: {err[-800:]}")
            snap = store_rows(store)
            changed = [k for k, rows in kept.items() if snap.get(k) != rows]
            if changed:
                problems.append(f"{name}: {len(changed)} cell(s) finished earlier were changed or lost: {changed[:5]}")
            kept.update({k: v for k, v in snap.items() if v[0][4] in FINAL})
            log(f"  {len(snap)} cells stored, {len(kept)} finished and kept")
    finally:
        if head is not None:
            head.stop()

    final = store_rows(store)
    expected = {(c.id, m) for c in cases for m in metrics}
    cells = [(r[0][0], r[0][1], r[0][4], r[0][5], r[0][6], r[0][7]) for r in final.values()]
    outcome, silent = compare(cells, baseline)
    no_reason = [(c[0], c[1]) for c in cells if c[2] != "scored" and not c[4]]
    missing, extra = expected - set(final), set(final) - expected
    log(f"\nkill soak finished in {time.perf_counter() - t_all:.1f} s")
    for k, v in (("cells expected", len(expected)), ("cells stored", len(final)), ("cells missing", len(missing)),
                 ("cells not expected", len(extra)), ("finished cells kept across the kills", len(kept)),
                 ("errored (recomputed by a later resume, or left with a reason)",
                  sum(c[2] == "error" for c in cells)),
                 ("not scored and no reason", len(no_reason)), ("silently changed vs fault-free", len(silent))):
        log(f"  {k}: {v}")
    for k, v in outcome.most_common():
        log(f"  vs fault-free: {k}: {v}")
    problems += [f"missing cells: {sorted(missing)[:5]}"] if missing else []
    problems += [f"cells with no reason: {no_reason[:5]}"] if no_reason else []
    problems += [f"silently changed: {silent[:5]}"] if silent else []
    for pr in problems:
        log(f"PROBLEM: {pr}")
    log("kill soak: PASS" if not problems else "kill soak: FAIL")
    if tmp is not None:
        tmp.cleanup()
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
