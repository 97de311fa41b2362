"""The whole-answer vendors of issue 24 run offline and keep to the run directory (Phoenix's and Opik's tests are
in their folders, ``kit/test_offline.py``, through :func:`scores_offline`): a default run
(reference judge) of their metrics on the canonical cases, in a fresh process whose every socket
connect and address look-up is logged, inside a network namespace with no interface up (``unshare
-n``, when the machine allows it), scores every case (0 errors), resolves and connects to nothing,
and writes nothing to ``HOME`` or the working directory: only the run directory grows.

The vendors' tracking and telemetry switches come from ``harness.metric.vendor_env`` (set by the command
for its own process, before any vendor import); the test passes none of its own.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from harness.metric import registry

import pytest

from tests.conftest import CANONICAL, ROOT

HANG_GUARD_S = 900
"""Seconds a run may take before it counts as hung (Opik's imports alone take minutes on a loaded machine)."""

SITECUSTOMIZE = r'''
import json, os, socket
_path = os.environ.get("NET_LOG")
if _path:
    def _note(kind, what):
        with open(_path, "a") as fh:
            fh.write(json.dumps([kind, str(what)]) + "\n")
    _connect, _connect_ex, _resolve = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo
    def connect(self, addr):
        _note("connect", addr); return _connect(self, addr)
    def connect_ex(self, addr):
        _note("connect", addr); return _connect_ex(self, addr)
    def getaddrinfo(host, *a, **k):
        _note("resolve", host); return _resolve(host, *a, **k)
    socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = connect, connect_ex, getaddrinfo
'''
"""Logs every connect and address look-up of every process of the run (the workers too)."""
CLI = "import sys; from harness.console import main; raise SystemExit(main(sys.argv[1:]))"


def _unshare() -> list[str]:
    """``["unshare", "-n"]`` where a private network namespace can be made, else nothing."""
    exe = shutil.which("unshare")
    if exe and subprocess.run([exe, "-n", "true"], capture_output=True).returncode == 0:
        return [exe, "-n"]
    return []


def _files(folder) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), folder) for d, _, fs in os.walk(folder) for f in fs}


def sandbox(tmp_path, drop: tuple[str, ...], **extra) -> tuple:
    """(home, cwd, out, net log, env) for one offline run: empty HOME and working directory, the
    connect/getaddrinfo logger on PYTHONPATH, the environment without the variables starting with
    ``drop`` (a vendor's own settings), plus ``extra``."""
    home, cwd, out = tmp_path / "home", tmp_path / "cwd", tmp_path / "out"
    for d in (home, cwd):
        d.mkdir()
    log, site = tmp_path / "net.log", tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(HOME=str(home), NET_LOG=str(log), PYTHONPATH=os.pathsep.join([str(site), ROOT]),
               XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"),
               MPLCONFIGDIR=str(tmp_path / "mpl"), **extra)   # the harness's own report (matplotlib), not a vendor
    return home, cwd, out, log, env


def status_counts(out) -> dict:
    """status -> cells of the run ``offline`` under ``out``."""
    from harness.store.runstore import RunStore

    store = RunStore.open(str(out / "offline" / "store.sqlite"))
    try:
        return dict(store.rows("SELECT status, COUNT(*) FROM cells GROUP BY status"))
    finally:
        store.close()


def scores_offline(metric: str, module: str, tmp_path, drop: tuple[str, ...]) -> None:
    """A default run of ``metric`` (its vendor ``module`` installed, else skipped) scores every canonical case offline
    and writes only its run directory; ``drop``: the prefixes of the vendor's own settings, taken out of the
    environment. A vendor's folder calls it from its offline test (``kit/test_offline.py``)."""
    pytest.importorskip(module)
    home, cwd, out, log, env = sandbox(tmp_path, drop)
    cmd = _unshare() + [sys.executable, "-c", CLI, "run", "--cases", CANONICAL, "--metrics", metric,
                        "--out", str(out), "--run-id", "offline", "--no-progress"]
    try:   # the timeout is a hang guard (a run that never exits), not a speed check
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{metric}: the run did not exit within {HANG_GUARD_S} s (hung): {str(e.stderr)[-1500:]}")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    assert events == [], f"{metric}: network use in an offline run: {events[:10]}"
    assert _files(home) == set() and _files(cwd) == set(), (_files(home), _files(cwd))
    rows = status_counts(out)
    assert rows.get("error", 0) == 0 and sum(rows.values()) == 24, rows
    assert registry.get(metric).label_reading is not None


def test_mlflow_runs_offline_with_only_its_loopback_relay(tmp_path):
    """MLflow's judge posts with ``requests`` to a URL (the loopback face, ``harness/judge/loopback.py``), so its default
    run uses one socket: to its own relay on 127.0.0.1. The namespace gets its loopback interface up
    (nothing else) and every logged event must be that: a look-up of 127.0.0.1 and connects to the
    relay; no other address, no name resolved, no file outside the run directory, 0 errors."""
    pytest.importorskip("mlflow.genai")
    home, cwd, out, log, env = sandbox(tmp_path, ("MLFLOW_", "OPENAI_"), HTTP_PROXY="http://192.0.2.1:9",
                                       HTTPS_PROXY="http://192.0.2.1:9")
    ns = _unshare()
    run = [sys.executable, "-c", CLI, "run", "--cases", CANONICAL, "--metrics", "mlflow.groundedness",
           "--out", str(out), "--run-id", "offline", "--no-progress"]
    cmd = (ns + ["sh", "-c", 'ip link set lo up && exec "$@"', "sh"] + run) if ns and shutil.which("ip") else run
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)   # a loaded CI box
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    other = [e for e in events if e not in (["resolve", "127.0.0.1"],)
             and not (e[0] == "connect" and e[1].startswith("('127.0.0.1', "))]
    assert other == [], f"network use beyond the loopback relay: {other[:10]}"
    assert len({e[1] for e in events if e[0] == "connect"}) == 1, events[:5]   # one address: the relay
    assert sum(e[0] == "connect" for e in events) == 24, len(events)           # one call per case
    assert _files(home) == set() and _files(cwd) == set(), (_files(home), _files(cwd))
    rows = status_counts(out)
    assert rows.get("error", 0) == 0 and sum(rows.values()) == 24, rows
