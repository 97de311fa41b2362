"""Helpers the tests and scripts/soak_kill.py share to drive harness runs from outside and read what they
stored: a free loopback port, the children of a process, the stored-cell count of a store that is being
written, every stored row of a store (integrity checked), and a Ray head node on loopback that is
stopped with every process it started.

Importable from a script: ``sys.path`` holding the repository root, ``from tests.helpers.procs import ...``.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _table() -> dict[int, tuple[int, bytes]]:
    """Every process: pid -> (parent pid, command line)."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                parent = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{d}/cmdline", "rb") as fh:
                out[int(d)] = (parent, fh.read())
        except (OSError, ValueError, IndexError):
            continue
    return out


def children(pid: int) -> dict[int, bytes]:
    """Direct children of ``pid``: their command lines."""
    return {p: cmd for p, (parent, cmd) in _table().items() if parent == pid}


def workers_of(pid: int) -> list[int]:
    """The worker processes of ``pid`` (multiprocessing's, not its resource tracker): spawned children, or the
    children of its forkserver (harness.run.workers starts them there), never the forkserver itself."""
    kids = children(pid)
    spawned = [p for p, cmd in kids.items() if b"spawn_main" in cmd]
    servers = [p for p, cmd in kids.items() if b"multiprocessing.forkserver" in cmd]
    return spawned + [w for s in servers for w in children(s)]


def pids_naming(*markers: str) -> set[int]:
    """Processes whose command line names any of ``markers``, and all their descendants (never the calling
    process itself, whose own command line may hold a marker)."""
    table = _table()
    table.pop(os.getpid(), None)
    found = {p for p, (_, cmd) in table.items() if any(m.encode() in cmd for m in markers)}
    grew = True
    while grew:
        kids = {p for p, (parent, _) in table.items() if parent in found} - found
        grew = bool(kids)
        found |= kids
    return found


def _started(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot), None when it is gone or a zombie: tells a reused pid
    apart."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return None if fields[0] == "Z" else int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def stored_cells(store: str) -> int:
    """Cells in the run store at ``store`` now, read-only while a run may be writing it (0 before it exists
    or while it cannot be read)."""
    try:
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1)
        try:
            return db.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def store_rows(store: str) -> dict:
    """Every row of every cell (cells, units, calls) by (case, metric), ``{}`` before the store exists;
    AssertionError when the store's integrity check fails or a cell, unit or call is there twice."""
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


class RayHead:
    """A Ray head node on 127.0.0.1 (2 CPUs, no dashboard, usage statistics off) in a temp dir of its own:
    ``RayHead().start()``.

    :meth:`stop` ends every process it started: those naming its temp dir, its GCS address or its client
    server's port (the client server names only the last two), and their descendants; then removes the
    temp dir. ``RuntimeError`` when ``ray start`` fails or times out (what it started is stopped first)."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="hray-", dir="/tmp")   # short: Ray's socket paths must fit 107 bytes
        self.port, self.client_port = free_port(), free_port()
        self.address = f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 180.0) -> "RayHead":
        """Start the head (``ray start``); returns this head."""
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
        ray = os.path.join(os.path.dirname(sys.executable), "ray")
        cmd = [ray, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(self.port), "--num-cpus", "2",
               "--include-dashboard=false", "--disable-usage-stats", "--object-store-memory", str(100 * 2**20),
               "--temp-dir", self.tmp, "--ray-client-server-port", str(self.client_port)]
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:   # a loaded machine: what it started so far must not stay behind
            self.stop()
            raise RuntimeError(f"ray start did not finish in {timeout:.0f} s (machine load?)") from None
        if p.returncode != 0:
            self.stop()
            raise RuntimeError(f"ray start failed: {p.stdout[-1500:]}{p.stderr[-1500:]}")
        return self

    def pids(self) -> set[int]:
        """The processes this head started (see the class), and any found before that still runs: a
        Ray process renames itself (``ray::DashboardAgent``) and its parent may be gone by then."""
        now = pids_naming(self.tmp, self.address, f"--port={self.client_port}", f"--port {self.client_port}")
        seen = getattr(self, "_seen", {})
        for pid in now:
            seen.setdefault(pid, _started(pid))
        self._seen = {pid: t for pid, t in seen.items() if t is not None and _started(pid) == t}
        return set(self._seen)

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.pids():
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 5
            while self.pids() and time.monotonic() < deadline:
                time.sleep(0.2)
        shutil.rmtree(self.tmp, ignore_errors=True)
