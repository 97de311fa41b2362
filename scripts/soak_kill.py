"""Kill-and-resume soak of the parallel paths: worker processes and Ray, judge faults, SIGKILLs, resumes.

    .venv/bin/python scripts/soak_kill.py                  # 240 cases, 2 workers and Ray, 10 % faults
    .venv/bin/python scripts/soak_kill.py --cases 48 --no-ray    # a quick one (tests/test_soak_kill.py)

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
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from soak import DEFAULT_SPEC, compare, soak_cases  # noqa: E402 - the fault soak's cases and comparison

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pid: int) -> dict[int, bytes]:
    """Direct children of ``pid``: their command lines."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                parent = int(fh.read().rsplit(")", 1)[1].split()[1])
            if parent == pid:
                with open(f"/proc/{d}/cmdline", "rb") as fh:
                    out[int(d)] = fh.read()
        except (OSError, ValueError, IndexError):
            continue
    return out


def _pids_under(marker: str) -> set[int]:
    """Processes whose command line names ``marker`` (the Ray head's own temp dir), and their children."""
    found, parents = set(), {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as fh:
                cmd = fh.read()
            with open(f"/proc/{d}/stat") as fh:
                parents[int(d)] = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if marker.encode() in cmd:
            found.add(int(d))
    grew = True
    while grew:
        kids = {p for p, pp in parents.items() if pp in found} - found
        grew = bool(kids)
        found |= kids
    return found


class RayHead:
    """A Ray head node on 127.0.0.1 in its own temp dir; :meth:`stop` ends exactly its processes."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="hray-", dir="/tmp")   # short: Ray's socket paths must fit 107 bytes
        port = _free_port()
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
        ray = os.path.join(os.path.dirname(sys.executable), "ray")
        cmd = [ray, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port), "--num-cpus", "2",
               "--include-dashboard=false", "--disable-usage-stats", "--object-store-memory", str(100 * 2**20),
               "--temp-dir", self.tmp, "--ray-client-server-port", str(_free_port())]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
        if p.returncode != 0:
            self.stop()
            raise SystemExit(f"ray start failed: {p.stdout[-1500:]}{p.stderr[-1500:]}")
        self.address = f"127.0.0.1:{port}"

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in _pids_under(self.tmp):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            time.sleep(1)
        shutil.rmtree(self.tmp, ignore_errors=True)


def snapshot(store: str) -> dict:
    """Every row of every cell (cells, units, calls) by (case, metric); asserts the store's integrity and
    that no cell, unit or call is there twice."""
    if not os.path.exists(store):
        return {}
    db = sqlite3.connect(store)
    try:
        ok = db.execute("PRAGMA integrity_check").fetchone()[0]
        if ok != "ok":
            raise AssertionError(f"store integrity_check: {ok}")
        for table, key in (("cells", "case_id, metric"), ("units", "case_id, metric, idx"),
                           ("calls", "case_id, metric, seq")):
            dup = db.execute(f"SELECT {key}, COUNT(*) FROM {table} GROUP BY {key} HAVING COUNT(*) > 1").fetchall()
            if dup:
                raise AssertionError(f"{table}: rows stored twice: {dup[:5]}")
        cells = {(r[0], r[1]): r for r in db.execute("SELECT * FROM cells")}
        units, calls = {}, {}
        for r in db.execute("SELECT * FROM units ORDER BY case_id, metric, idx"):
            units.setdefault((r[0], r[1]), []).append(r)
        for r in db.execute("SELECT * FROM calls ORDER BY case_id, metric, seq"):
            calls.setdefault((r[0], r[1]), []).append(r)
    finally:
        db.close()
    return {k: (row, units.get(k, []), calls.get(k, [])) for k, row in cells.items()}


def _count(store: str) -> int:
    try:
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1)
        try:
            return db.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


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
            while p.poll() is None and time.time() < deadline and _count(store) < at_cells:
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 0.5))
            if p.poll() is None:
                if kill == "worker":
                    workers = [pid for pid, c in _children(p.pid).items() if b"spawn_main" in c]
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
    log(f"  exit {p.returncode}; " + (f"killed {kill} pid {killed} at {_count(store)} stored cells"
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
    baseline = {(r[0][0], r[0][1]): (r[0][4], r[0][5], r[0][7]) for r in snapshot(
        os.path.join(out, "fault-free", "store.sqlite")).values()}

    store = os.path.join(out, RUN_ID, "store.sqlite")
    cmd = [*base_cmd, "--cases", cases_path, "--run-id", RUN_ID, "--faults", args.faults, "--fault-seed",
           str(seed % 1000), "--call-timeout", str(args.call_timeout), "--judge-latency-ms", str(args.latency_ms), "--concurrency", "8"]
    head = None if args.no_ray else RayHead()
    kept: dict = {}
    problems: list[str] = []
    try:
        plan = [("workers", "--workers", "worker"),
                ("resume 1, Ray" if head else "resume 1", "--ray" if head else "--workers", "driver"),
                ("resume 2", "--workers", "driver"),
                ("resume 3", "--workers", None)]
        for name, how, kill in plan:
            place = [how, head.address] if how == "--ray" else [how, "2"]
            before = _count(store)
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
            snap = snapshot(store)
            changed = [k for k, rows in kept.items() if snap.get(k) != rows]
            if changed:
                problems.append(f"{name}: {len(changed)} cell(s) finished earlier were changed or lost: {changed[:5]}")
            kept.update({k: v for k, v in snap.items() if v[0][4] in FINAL})
            log(f"  {len(snap)} cells stored, {len(kept)} finished and kept")
    finally:
        if head is not None:
            head.stop()

    final = snapshot(store)
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
