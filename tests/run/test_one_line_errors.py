"""Failures that gave a traceback now give one line and exit 2, and lose nothing already stored
(issue 25, probe 7): a worker killed with SIGKILL, ``--ray`` with no cluster (which also left an empty
run directory behind), a report or an export that cannot be written where it goes by default,
``export --dest`` naming an existing file."""
import importlib.util
import os
import signal
import subprocess
import sys
import time

from harness.cases.load import CaseSet
from harness.run.runner import RunOptions, run

import pytest

from tests.conftest import CANONICAL, ROOT
from tests.helpers.procs import free_port, stored_cells, workers_of


def test_a_worker_killed_with_sigkill_is_one_line_and_keeps_finishedstored_cells(tmp_path):
    out = tmp_path / "out"
    store = out / "w" / "store.sqlite"
    p = subprocess.Popen([sys.executable, "-m", "harness", "run", "--cases", CANONICAL, "--metrics", "inhouse.span",
                          "--judge-latency-ms", "1000", "--workers", "2", "--concurrency", "2", "--out", str(out),
                          "--run-id", "w", "--no-progress", "--no-report"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 600
        while time.time() < deadline and not (stored_cells(store) >= 2 and workers_of(p.pid)):
            time.sleep(0.05)
        os.kill(workers_of(p.pid)[0], signal.SIGKILL)
        stdout, stderr = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 2, stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    line = [ln for ln in stderr.splitlines() if ln.startswith("harness: ")]
    assert len(line) == 1 and "died (exit code -9)" in line[0] and "rerun with the same --run-id" in line[0]
    assert stored_cells(store) >= 2                                       # what was finished is kept


def test_ray_with_no_cluster_is_one_line_and_leaves_no_run_directory(tmp_path):
    """Run in its own process: importing and configuring Ray here would leave state behind that a later
    test's own Ray head (tests/run/test_ray.py) trips over."""
    if importlib.util.find_spec("ray") is None:   # not importorskip: importing Ray here, before the harness sets
        pytest.skip("ray is not installed")         # its loopback switches, breaks tests/run/test_ray.py later on
    address = f"127.0.0.1:{free_port()}"
    p = subprocess.run([sys.executable, "-m", "harness", "run", "--cases", CANONICAL, "--metrics", "inhouse.span",
                        "--ray", address, "--out", str(tmp_path / "out"), "--run-id", "r", "--no-progress"],
                       capture_output=True, text=True, timeout=300)
    err = p.stderr
    assert p.returncode == 2 and err.count("\n") == 1 and err.startswith(f"harness: --ray {address}: no Ray cluster"), err
    assert not (tmp_path / "out" / "r").exists()


@pytest.fixture
def finished(tmp_path, canonical):
    cases = CaseSet(canonical.path, canonical.cases[:1], canonical.sha256)
    return run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="f", progress=False,
                          workers=1))


def test_a_report_that_cannot_be_written_is_one_line(finished, capsys):
    from harness.console import main

    os.mkdir(os.path.join(finished.run_dir, "index.html"))          # where the report goes: not writable as a file
    rc = main(["report", finished.run_dir])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1, err
    assert err.startswith("harness: cannot write the report") and "--report-dir" in err
    assert stored_cells(finished.store_path) == 1


def test_an_export_that_cannot_be_written_is_one_line(finished, capsys):
    from harness.console import main

    os.makedirs(os.path.join(finished.run_dir, "export", "cells.jsonl"))
    rc = main(["export", finished.run_dir, "--format", "jsonl"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and err.startswith("harness: cannot write the export"), err
    assert "--dest" in err


def test_export_dest_naming_a_file_is_one_line(finished, tmp_path, capsys):
    from harness.console import main

    dest = tmp_path / "a-file"
    dest.write_text("keep me")
    rc = main(["export", finished.run_dir, "--format", "jsonl", "--dest", str(dest)])
    err = capsys.readouterr().err
    assert rc == 2 and err == f"harness: --dest {dest}: is a file; give a directory to write the tables into\n"
    assert dest.read_text() == "keep me"
