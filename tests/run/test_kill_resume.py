"""SIGKILL a running `harness run` at random moments, resume it with the same run id, and check that
nothing finished was changed, nothing is missing or duplicated, and the store is intact.

The kill moments are random but seeded; the seed is printed (pytest shows it on failure) and can be
replayed with ``HARNESS_KILL_SEED=<seed>``.
"""
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import CANONICAL, ROOT
from tests.helpers.procs import store_rows, stored_cells

SEED = int(os.environ.get("HARNESS_KILL_SEED") or random.SystemRandom().randrange(1_000_000))
METRIC = "inhouse.span"
FINAL = ("scored", "unscored", "vendor_nan", "not_applicable")


def _cmd(out, run_id, *extra):
    return [sys.executable, "-m", "harness", "run", "--cases", CANONICAL, "--metrics", METRIC, "--out", str(out),
            "--run-id", run_id, "--concurrency", "2", *extra]


def _start_and_kill(out, delay_s, *extra):
    """Start a run, SIGKILL its process group ``delay_s`` after it printed its first line."""
    p = subprocess.Popen(_cmd(out, "k", *extra), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, start_new_session=True)
    first = p.stdout.readline()
    assert first.startswith("judge: "), first
    time.sleep(delay_s)
    finished_early = p.poll() is not None
    if not finished_early:
        os.killpg(p.pid, signal.SIGKILL)
    p.wait(30)
    p.stdout.close()
    return finished_early


def _consistent(snap):
    """Units and calls of each cell agree with its row: no orphans, no gaps, counts match the ledger."""
    for key, (row, units, calls) in snap.items():
        assert [u[2] for u in units] == list(range(len(units))), key
        assert [c[2] for c in calls] == list(range(len(calls))), key
        assert len(calls) == row[9], (key, len(calls), row[9])      # cells.calls == calls rows
        assert row[4] in FINAL + ("error",) and (row[5] is None) == (row[4] != "scored"), key


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigkill_at_random_moments_then_resume(tmp_path, workers):
    """With one process and with worker processes (the whole process group is killed)."""
    print(f"kill seed: {SEED} (replay with HARNESS_KILL_SEED={SEED}), workers {workers}")
    rng = random.Random(SEED)
    out = tmp_path / "out"
    store = str(out / "k" / "store.sqlite")
    slow = ["--judge-latency-ms", "100", "--faults", "500=0.05,429=0.05,retry_after=0.05", "--fault-seed",
            str(SEED % 1000), "--workers", workers]
    kept = {}
    for round_ in range(2):
        delay = rng.uniform(0.2, 4.0)     # start-up takes ~1-2 s, the cells ~3 s more
        early = _start_and_kill(out, delay, *slow)
        print(f"round {round_}: killed after {delay:.2f}s" + (" (the run had already finished)" if early else ""))
        snap = store_rows(store)
        _consistent(snap)
        for key, rows in kept.items():                   # cells finished in an earlier round: untouched
            assert snap[key] == rows, (SEED, key)
        kept.update({k: v for k, v in snap.items() if v[0][4] in FINAL})
    n_kept = len(kept)

    done = subprocess.run(_cmd(out, "k", "--workers", workers), cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, (SEED, done.stdout[-2000:], done.stderr[-2000:])
    if 0 < n_kept < 24:   # (with nothing left to compute the runner says nothing about resuming)
        assert f"resume: {n_kept} finished cell(s) kept" in done.stderr, (SEED, done.stderr)
    final = store_rows(store)
    _consistent(final)
    for key, rows in kept.items():
        assert final[key] == rows, (SEED, key)           # same score, units, calls, finish time, attempt

    # everything else completed, with the results an uninterrupted run gives
    from harness.cases.load import load_cases
    from harness.run.runner import RunOptions, run

    clean = run(RunOptions(cases=load_cases(CANONICAL), metrics=[METRIC], out_dir=str(out), run_id="clean",
                           progress=False))
    ref = store_rows(clean.store_path)
    assert set(final) == set(ref) and len(final) == 24
    for key in ref:
        got, want = final[key], ref[key]
        assert got[0][4:6] == want[0][4:6], (SEED, key, got[0][4:6], want[0][4:6])    # status, score
        assert [u[3:10] for u in got[1]] == [u[3:10] for u in want[1]], (SEED, key)    # unit verdicts
    print(f"kept {n_kept} of 24 cells across the kills; the rest were computed on resume")

    from harness.store.runstore import RunStore

    s = RunStore.open(store)                             # the store opens cleanly, pandas-readable
    try:
        assert len(s.cells()) == 24 and len(s.calls()) == s.cells()["calls"].sum()
    finally:
        s.close()


def test_ctrl_c_keeps_finished_cells_and_says_how_to_resume(tmp_path):
    out = tmp_path / "out"
    p = subprocess.Popen(_cmd(out, "k", "--judge-latency-ms", "200", "--no-progress", "--workers", "2"), cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().startswith("judge: ")
    store = out / "k" / "store.sqlite"
    for _ in range(3000):                         # interrupt once a few cells are finished
        if store.exists() and stored_cells(store) >= 3:
            break
        time.sleep(0.01)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 1, err[-2000:]
    assert "harness: interrupted; finished cells are kept, rerun with the same --run-id to resume" in err
    snap = store_rows(str(out / "k" / "store.sqlite"))
    _consistent(snap)
    done = subprocess.run(_cmd(out, "k"), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and f"resume: {len(snap)} finished cell(s) kept" in done.stderr, done.stderr
    final = store_rows(str(out / "k" / "store.sqlite"))
    assert len(final) == 24 and all(final[k] == v for k, v in snap.items())
