"""A team's own reports, adapters and harness_cli never shadow the harness's (issue 34).

The harness installs one import name, ``harness``: the repository's top-level reports/, adapters/ and
harness_cli.py are ``harness.reports``, ``harness.adapters`` and ``harness.console``. Each test runs in a
folder that holds a team's own packages of those names, with the folder first on sys.path (``python -c``
and ``python -m pytest`` put the working directory there, as a notebook's kernel does): the team's modules
raise when imported, but for the team's reports/__init__.py, which the team's own test reads.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import CANONICAL

TEAM_FILES = {
    "reports/__init__.py": "TEAM = 'the team reports'\n",
    "reports/build.py": "raise ImportError('the team reports/build.py was imported')\n",
    "reports/model/__init__.py": "raise ImportError('the team reports/model was imported')\n",
    "adapters/__init__.py": "raise ImportError('the team adapters/ was imported')\n",
    "adapters/azure/__init__.py": "raise ImportError('the team adapters/azure was imported')\n",
    "harness_cli.py": "raise ImportError('the team harness_cli.py was imported')\n",
}


@pytest.fixture
def team_folder(tmp_path):
    for rel, text in TEAM_FILES.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def _env():
    return {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def test_evaluate_and_its_report_run_in_a_folder_with_its_own_reports_and_adapters(team_folder):
    code = f"""
import os, sys
assert sys.path[0] in ("", os.getcwd()), sys.path[:2]   # the folder comes first, as in a notebook
import harness
res = harness.evaluate({str(CANONICAL)!r}, metrics=["inhouse.span"], out_dir="runs", run_id="team",
                       progress=False, report=True)
assert os.path.exists(os.path.join(res.run_dir, "report.md")), sorted(os.listdir(res.run_dir))
from harness import reports
print("mean", round(res.scores["inhouse.span"].mean(), 4), "report", reports.load(res).data.metrics)
print("team modules", sorted(m for m in sys.modules if m.split(".")[0] in ("reports", "adapters", "harness_cli")))
print("ours", harness.reports.__name__, type(res).__module__)
"""
    r = subprocess.run([sys.executable, "-c", code], cwd=str(team_folder), capture_output=True, text=True,
                       env=_env(), timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert "report ['inhouse.span']" in r.stdout and "team modules []" in r.stdout, r.stdout
    assert "mean 0." in r.stdout or "mean 1.0" in r.stdout, r.stdout


def test_the_pytest_fixture_runs_in_a_folder_with_its_own_reports_and_adapters(team_folder):
    (team_folder / "test_team_rag.py").write_text(f'''
import importlib

team_reports = importlib.import_module("reports")   # the team's own package, beside the harness's

def test_canonical_is_grounded(groundedness):
    got = groundedness.check({str(CANONICAL)!r}, {{"inhouse.span": 0.5}})
    assert got.mean("inhouse.span") > 0.5
    assert team_reports.TEAM == "the team reports"
''')
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "harness.run.testing", "-q", "-p", "no:cacheprovider",
                        "test_team_rag.py"], cwd=str(team_folder), capture_output=True, text=True, env=_env(),
                       timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "1 passed" in r.stdout, r.stdout[-3000:]


def test_the_console_script_runs_in_a_folder_with_its_own_harness_cli(team_folder):
    """``python -m harness`` loads the command line through the entry point (harness.console), never a
    top-level harness_cli module."""
    r = subprocess.run([sys.executable, "-m", "harness", "metrics"], cwd=str(team_folder), capture_output=True,
                       text=True, env=_env(), timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "inhouse.span" in r.stdout and "azure.groundedness" in r.stdout, r.stdout
