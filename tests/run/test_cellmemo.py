"""The cell cache: a record/replay rerun reuses a cleanly finished cell when every judge answer it used is
cached, storing exactly what a replay running the vendor code stores, without starting a worker."""
import sqlite3

from harness.cases.load import CaseSet
from harness.run.runner import RunOptions, run

import pytest

from tests.run.test_workers import _store

METRICS = ["inhouse.span", "trulens.citation", "ragas.faithfulness"]


def _opts(cases, tmp_path, run_id, mode, **kw):
    return RunOptions(cases=cases, metrics=METRICS, out_dir=str(tmp_path), run_id=run_id, progress=False,
                      cache_mode=mode, cache_path=str(tmp_path / "cache.sqlite"), **kw)


def test_a_replay_reuses_cells_and_stores_what_running_the_vendors_stores(canonical, tmp_path, monkeypatch):
    import harness.run.workers

    cases = CaseSet(canonical.path, canonical.cases[:8], canonical.sha256)
    rec = run(_opts(cases, tmp_path, "rec", "record", workers=1))
    full = run(_opts(cases, tmp_path, "full", "replay", workers=1, reuse_cells=False))

    def no_workers(*a, **k):
        raise AssertionError("a replay whose cells are all cached starts no worker")

    monkeypatch.setattr(harness.run.workers, "run_in_processes", no_workers)
    fast = run(_opts(cases, tmp_path, "fast", "replay", workers=2))
    assert fast.computed == 24 and fast.counts == full.counts == rec.counts
    assert _store(fast.store_path) == _store(full.store_path)
    db = sqlite3.connect(fast.store_path)
    assert db.execute("SELECT SUM(attempts), SUM(cached) = COUNT(*) FROM calls").fetchone() == (0, 1)


def test_a_cell_whose_answer_left_the_cache_runs_again(canonical, tmp_path):
    cases = CaseSet(canonical.path, canonical.cases[:4], canonical.sha256)
    rec = run(_opts(cases, tmp_path, "rec", "record", workers=1))
    victim = canonical.cases[2].id
    key = sqlite3.connect(rec.store_path).execute(
        "SELECT request_key FROM calls WHERE case_id = ? AND metric = 'inhouse.span' AND seq = 1", (victim,)).fetchone()[0]
    db = sqlite3.connect(tmp_path / "cache.sqlite")
    db.execute("DELETE FROM responses WHERE key = ?", (key,))
    db.commit()
    rep = run(_opts(cases, tmp_path, "rep", "replay", workers=1))
    rows = sqlite3.connect(rep.store_path).execute("SELECT case_id, metric, status, reason FROM cells").fetchall()
    errors = [(c, m) for c, m, status, reason in rows if status == "error"]
    assert errors == [(victim, "inhouse.span")]               # recomputed: the replay miss, named
    assert "replay miss" in [r for c, m, s, r in rows if (c, m) == errors[0]][0]


def test_faulted_and_errored_cells_are_never_kept(canonical, tmp_path):
    from harness.judge.faults import FaultInjector, FaultSpec

    cases = CaseSet(canonical.path, canonical.cases[:3], canonical.sha256)
    run(_opts(cases, tmp_path, "f", "record", workers=1,
              upstream_wrapper=FaultInjector(FaultSpec.parse("500=0.5"), 1)))
    db = sqlite3.connect(tmp_path / "cache.sqlite")
    n = db.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'cell_results'").fetchone()[0]
    assert n == 0 or db.execute("SELECT COUNT(*) FROM cell_results").fetchone()[0] == 0


@pytest.mark.parametrize("change", ["judge", "packages"])
def test_the_key_covers_the_judge_and_the_vendor_versions(change):
    from harness.run.cellmemo import cell_key

    spec = {"judge": {"kind": "http", "url": "u", "model": "m", "reference_version": None},
            "packages": {"ragas": "0.4.3"}}
    other = {"judge": {**spec["judge"], "model": "m2"}} if change == "judge" else {"packages": {"ragas": "0.4.4"}}
    assert cell_key(spec, "x", "1", "d") != cell_key({**spec, **other}, "x", "1", "d")
