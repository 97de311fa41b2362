"""A read-only reader sees every committed cell of a store, even in a directory it cannot write
(``harness.store.readonly``; issue 25).

The store under test is real: the cells of a finished run of three canonical cases, copied into a new
store by a writer that is killed before it closes (SIGKILL-like ``os._exit``, automatic checkpoints
off), so every cell is committed but sits in ``store.sqlite-wal``; the main file holds only the empty
tables. The reader is a forked child that cannot write the directory: as root it drops to the
``nobody`` user (root ignores file modes), otherwise the directory's mode alone forbids it. Before the
fix, the read-only open fell back to ``immutable=1`` there and read no cell at all.
"""
from __future__ import annotations

import os
import pwd
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile

from harness.cases.load import CaseSet
from harness.run.runner import RunOptions, run
from harness.store.runstore import RunStore

import pytest

TABLES = ("meta", "cases", "cells", "units", "calls")

WRITER = """
import os, sqlite3, sys
from harness.store.runstore import RunStore
src, dst, keep_shm = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
RunStore.create(dst).close()                       # the schema, checkpointed into the main file
db = sqlite3.connect(os.path.join(dst, "store.sqlite"), isolation_level=None)
db.execute("PRAGMA wal_autocheckpoint=0")
db.execute("ATTACH DATABASE ? AS src", (src,))
db.execute("BEGIN IMMEDIATE")
for t in sys.argv[4:]:
    db.execute(f"INSERT INTO main.{t} SELECT * FROM src.{t}")
db.execute("COMMIT")
db.execute("DETACH DATABASE src")
if not keep_shm:                                   # a store copied without its -shm (or a -shm lost)
    os.remove(os.path.join(dst, "store.sqlite-shm"))
os._exit(0)                                        # killed: no checkpoint, the cells stay in the WAL
"""


@pytest.fixture(scope="module")
def finished(canonical, tmp_path_factory):
    """A finished run's store (3 cases x inhouse.span) and its cell count."""
    out = tmp_path_factory.mktemp("ro-src")
    cases = CaseSet(canonical.path, tuple(canonical.cases[:3]), canonical.sha256)
    o = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(out), run_id="src", progress=False,
                       workers=1))
    return o.store_path, 3


@pytest.fixture
def shared_dir():
    """A directory anyone may read (pytest's own tmp dirs are private to their owner); removed after."""
    d = tempfile.mkdtemp(prefix="harness-ro-", dir="/tmp")
    os.chmod(d, 0o755)
    yield d
    for root, dirs, _ in os.walk(d):
        for x in dirs:
            os.chmod(os.path.join(root, x), 0o755)
    shutil.rmtree(d, ignore_errors=True)


def wal_store(src: str, parent: str, keep_shm: bool) -> str:
    """A run directory under ``parent`` whose store keeps every committed cell in its WAL only."""
    dst = os.path.join(parent, "run")
    subprocess.run([sys.executable, "-c", WRITER, src, dst, "1" if keep_shm else "0", *TABLES], check=True,
                   timeout=120)
    return dst


def read_only(run_dir: str):
    """``(cells, files)`` as a reader that cannot write ``run_dir`` sees them: the number of cells
    RunStore.open reads, or the error it raised; and the files left in the directory."""
    os.chmod(run_dir, 0o555)
    for f in os.listdir(run_dir):
        os.chmod(os.path.join(run_dir, f), stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: imports are done, it only reads
        try:
            os.close(r)
            if os.geteuid() == 0:
                try:
                    nobody = pwd.getpwnam("nobody").pw_uid
                except KeyError:
                    nobody = 65534
                os.setgroups([])
                os.setgid(nobody)
                os.setuid(nobody)
            try:
                store = RunStore.open(run_dir)
                try:
                    msg = str(store.rows("SELECT COUNT(*) FROM cells")[0][0])
                finally:
                    store.close()
            except Exception as e:  # noqa: BLE001 - reported to the parent
                msg = f"{type(e).__name__}: {e}"
            os.write(w, msg.encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as fh:
        got = fh.read()
    os.waitpid(pid, 0)
    return got, sorted(os.listdir(run_dir))


def committed(run_dir: str) -> int:
    """Cells committed to the store, read as its owner (SQLite replays the WAL)."""
    os.chmod(run_dir, 0o755)
    db = sqlite3.connect(os.path.join(run_dir, "store.sqlite"))
    try:
        return db.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
    finally:
        db.close()


@pytest.mark.parametrize("keep_shm", [True, False], ids=["with-shm", "without-shm"])
def test_a_read_only_reader_sees_the_cells_only_in_the_wal(finished, shared_dir, keep_shm):
    src, n = finished
    run_dir = wal_store(src, shared_dir, keep_shm)
    assert os.path.getsize(os.path.join(run_dir, "store.sqlite-wal")) > 32      # the cells are in the WAL
    main = sqlite3.connect(f"file:{os.path.join(run_dir, 'store.sqlite')}?mode=ro&immutable=1", uri=True)
    assert main.execute("SELECT COUNT(*) FROM cells").fetchone()[0] == 0          # ... and only there
    main.close()
    files = sorted(os.listdir(run_dir))
    got, after = read_only(run_dir)
    assert got == str(n), got
    assert after == files                                  # the reader wrote nothing there
    assert committed(run_dir) == n


def test_a_cleanly_closed_store_in_a_read_only_directory_is_read_whole(finished, shared_dir):
    src, n = finished
    run_dir = os.path.join(shared_dir, "run")
    os.makedirs(run_dir)
    shutil.copyfile(src, os.path.join(run_dir, "store.sqlite"))    # closed: no -wal, no -shm
    got, after = read_only(run_dir)
    assert got == str(n), got
    assert after == ["store.sqlite"]


def test_a_file_that_is_not_a_store_is_named(shared_dir):
    run_dir = os.path.join(shared_dir, "run")
    os.makedirs(run_dir)
    with open(os.path.join(run_dir, "store.sqlite"), "wb") as fh:
        fh.write(b"not a database" * 100)
    got, _ = read_only(run_dir)
    assert got.startswith("ValueError") and "store.sqlite: cannot be read as a run store" in got, got


def test_the_private_copy_is_removed_on_close(finished, shared_dir):
    src, n = finished
    run_dir = wal_store(src, shared_dir, keep_shm=False)
    before = set(os.listdir(tempfile.gettempdir()))
    from harness.store import readonly

    db = readonly._snapshot(os.path.join(run_dir, "store.sqlite"))
    snap = db.snapshot_dir
    assert os.path.isdir(snap) and db.execute("SELECT COUNT(*) FROM cells").fetchone()[0] == n
    db.close()
    assert not os.path.exists(snap) and snap not in {os.path.join(tempfile.gettempdir(), d) for d in before}
