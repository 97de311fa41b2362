"""``harness metrics`` says a metric is unavailable when its vendor is not installed (found without importing it),
and with ``--probe`` also when its vendor is installed but fails to import, with the reason; each probe imports in
a subprocess of its own, with the vendor switches forced before the import."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from harness.metric.vendor_env import forced

from tests.conftest import ROOT

BROKEN = """
import json, os
with open(os.environ["FAKE_VENDOR_SEEN"], "a") as fh:
    fh.write(json.dumps({k: os.environ.get(k) for k in %r}) + "\\n")
%s
"""


def _metrics(tmp_path, fake: str, *args: str) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    """``harness metrics <args>`` with a fake ``ragas`` package first on the path (its ``__init__`` records the
    switches it was imported under, then runs ``fake``): (the process, metric -> its line)."""
    pkg = tmp_path / "fake" / "ragas"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text(BROKEN % (sorted(forced()), fake))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "fake"), ROOT]),
           "FAKE_VENDOR_SEEN": str(tmp_path / "seen.jsonl"), "RAGAS_DO_NOT_TRACK": "false"}
    p = subprocess.run([sys.executable, "-m", "harness", "metrics", *args], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=900)
    lines = {ln.split()[0]: ln for ln in p.stdout.splitlines() if ln.strip()}
    return p, lines


def _seen(tmp_path) -> list[dict]:
    path = tmp_path / "seen.jsonl"
    return [json.loads(ln) for ln in path.read_text().splitlines()] if path.exists() else []


def test_without_probe_an_installed_but_broken_vendor_is_listed_and_nothing_is_imported(tmp_path):
    p, lines = _metrics(tmp_path, 'raise ImportError("broken on purpose")')
    assert p.returncode == 0, p.stderr[-2000:]
    assert "unavailable" not in lines["ragas.faithfulness"]   # installed (found on the path); not imported
    assert _seen(tmp_path) == []


def test_probe_names_the_import_failure_and_imports_with_telemetry_off(tmp_path):
    p, lines = _metrics(tmp_path, 'raise ImportError("broken on purpose: no compiled part")', "--probe", "ragas")
    assert p.returncode == 0, p.stderr[-2000:]
    for name in ("ragas.faithfulness", "ragas.response_groundedness"):
        assert lines[name].endswith("[unavailable: importing its vendor failed: ImportError: broken on purpose: "
                                    "no compiled part]"), lines[name]
    assert "unavailable" not in lines["deepeval.faithfulness"]    # not probed: installed is all that was checked
    seen = _seen(tmp_path)
    assert len(seen) == 2 and all(s == forced() for s in seen), seen   # one subprocess per metric, switches forced
    assert "failed" in p.stdout.splitlines()[-1] and "2 failed" in p.stdout.splitlines()[-1]


def test_probe_says_how_a_crashing_import_ended_and_passes_a_vendor_that_imports(tmp_path):
    p, lines = _metrics(tmp_path, "os._exit(7)", "--probe", "ragas.faithfulness,phoenix")
    assert p.returncode == 0, p.stderr[-2000:]
    assert "[unavailable: importing its vendor failed: the importing process ended with exit code 7" \
        in lines["ragas.faithfulness"], lines["ragas.faithfulness"]
    assert "unavailable" not in lines["phoenix.faithfulness"], lines["phoenix.faithfulness"]   # the real vendor imports
    assert "imported the vendor of 2 metric(s), 1 failed" in p.stdout
