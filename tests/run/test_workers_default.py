"""``--workers`` left unset: the runner picks the count (``auto_workers``: by vendor cells, the judge's kind,
the cores and the memory), ``HARNESS_WORKERS`` overrides it, and a bad value is bad input (exit 2). Speed
itself is measured in ``bench/bench_workers.py``, never here."""
from __future__ import annotations

import json
import os
import sqlite3

from harness.console import main
from harness.run import workers as w

from tests.conftest import CANONICAL


def _picked(tmp_path, run_id: str) -> int:
    """Worker processes the run started (its start-up facts, one per worker; none: it ran in-process)."""
    store = os.path.join(tmp_path, run_id, "store.sqlite")
    with sqlite3.connect(store) as db:
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    return len(json.loads(meta.get("startup") or "[]")) or 1


def test_the_default_takes_a_second_worker_for_a_cpu_bound_run_and_the_env_overrides_it(tmp_path, monkeypatch):
    monkeypatch.delenv("HARNESS_WORKERS", raising=False)
    monkeypatch.setattr(w, "default_workers", lambda: 2)
    args = ["run", "--cases", CANONICAL, "--metrics", "ragas", "--out", str(tmp_path), "--no-progress", "--no-report"]
    # 24 cases x 2 Ragas metrics = 48 vendor cells: too few for a second worker's imports to pay
    assert main([*args, "--run-id", "small"]) == 0
    assert _picked(tmp_path, "small") == 1
    monkeypatch.setattr(w, "CELLS_PER_EXTRA_WORKER", 40)   # the same run, as if it were large
    assert main([*args, "--run-id", "large"]) == 0
    assert _picked(tmp_path, "large") == 2
    monkeypatch.setenv("HARNESS_WORKERS", "1")
    assert main([*args, "--run-id", "env"]) == 0
    assert _picked(tmp_path, "env") == 1


def test_a_bad_workers_variable_is_bad_input(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HARNESS_WORKERS", "two")
    assert main(["run", "--cases", CANONICAL, "--metrics", "inhouse.span", "--out", str(tmp_path),
                 "--no-progress", "--no-report"]) == 2
    assert "HARNESS_WORKERS='two': expected a whole number" in capsys.readouterr().err


def test_a_real_judge_and_the_memory_keep_it_to_what_pays():
    assert w.auto_workers(100_000, True, 8) == 1
    assert w.auto_workers(100_000, False, 8) == min(8, w.memory_workers())
    assert 1 <= w.memory_workers()


def test_the_cores_decide_not_the_load_other_programs_put_on_them(monkeypatch):
    """With the imports paid once a second worker costs about the CPU of one: on a busy machine it still pays."""
    monkeypatch.setattr(w, "memory_workers", lambda: 64)
    assert w.auto_workers(1920, False, 2) == 2
    assert w.auto_workers(1920, False, 8) == 8
    assert w.auto_workers(1920, False, 1) == 1
    n = w.CELLS_PER_EXTRA_WORKER
    assert w.auto_workers(n, False, 2) == 2 and w.auto_workers(n - 1, False, 2) == 1
