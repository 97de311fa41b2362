"""azure.groundedness runs offline and keeps to the run directory: a default run (reference judge) of
the metric on the canonical cases, in a fresh process whose every socket connect and address look-up
is logged (the sitecustomize of ``tests/vendors/test_vendor_offline_more.py``), inside a network namespace of
its own with only the loopback interface up (``unshare -n``, when the machine allows it), finishes every
case (0 errors), connects to nothing but 127.0.0.1 (the cell's relay into the gateway: Azure's client
needs a real URL, :mod:`harness.judge.loopback`), and writes nothing to ``HOME`` or the working
directory; the committed card is what that run makes. Runs where the vendor is installed (``.venv-azure``); elsewhere it is skipped, saying so.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.util import find_spec

import pytest

from tests.conftest import CANONICAL, ROOT
from tests.vendors.test_vendor_offline_more import CLI, _files, sandbox

pytestmark = pytest.mark.skipif(
    find_spec("azure") is None or find_spec("azure.ai.evaluation") is None,
    reason="azure-ai-evaluation is not in this environment: it installs alone (bash scripts/setup_azure.sh); "
           ".ci/run runs this file in .venv-azure")

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _namespace() -> list[str]:
    """A private network namespace with only ``lo`` up, where the machine allows it; else nothing."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    probe = [unshare, "-n", "sh", "-c", f"{ip} link set lo up"] if unshare and ip else None
    if probe and subprocess.run(probe, capture_output=True).returncode == 0:
        return [unshare, "-n", "sh", "-c", f'{ip} link set lo up && exec "$@"', "sh"]
    return []


def _host(event) -> str:
    kind, what = event
    if kind == "resolve":
        return what
    return what.strip("()").split(",")[0].strip("' ")


def test_a_default_run_scores_every_case_offline_through_loopback_only(tmp_path):
    home, cwd, out, log, env = sandbox(tmp_path, ("AZURE_", "OPENAI_", "APPLICATIONINSIGHTS"))
    netns = _namespace()
    cmd = netns + [sys.executable, "-c", CLI, "run", "--cases", CANONICAL, "--metrics", "azure.groundedness",
                   "--out", str(out), "--run-id", "offline", "--no-progress"]
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    away = [e for e in events if _host(e) not in LOOPBACK]
    assert away == [], f"network use beyond loopback in an offline run: {away[:10]}"
    assert any(e[0] == "connect" for e in events), "no relay connection logged: the log is not working"
    assert _files(home) == set() and _files(cwd) == set(), (_files(home), _files(cwd))
    from harness.store.runstore import RunStore

    store = RunStore.open(str(out / "offline" / "store.sqlite"))
    try:
        rows = store.rows("SELECT status, COUNT(*) FROM cells GROUP BY status")
        calls = store.rows("SELECT SUM(calls) FROM cells")
    finally:
        store.close()
    # every case finished: 23 scored, the empty answer not applicable (Azure's validator refuses it, no call)
    assert dict(rows) == {"scored": 23, "not_applicable": 1}, rows
    assert calls[0][0] == 23, calls   # one judge call per scored answer, every one in the gateway's books
    if netns:
        print("ran in a private network namespace (loopback only)")
    # the committed card is what this reference run of the canonical set makes (`harness cards --from-run`
    # in .venv-azure; the main environment's card check leaves it alone: registry.apart())
    from harness.reports.cards.generate import generate

    card = generate(str(out / "offline"))["azure.groundedness.md"]
    with open(os.path.join(ROOT, "reports", "cards", "azure.groundedness.md"), encoding="utf-8") as fh:
        assert card == fh.read(), ("stale card: .venv-azure/bin/harness cards --from-run <a reference run of "
                                   "azure.groundedness> and commit reports/cards/azure.groundedness.md")
