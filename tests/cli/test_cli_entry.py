"""``python -m harness`` while the package is being reinstalled (issue 25: the bench's N=184 report step
exited 1 on a finished run, and the same command succeeded a minute later).

``python -m harness`` finds the CLI through the package's ``console_scripts`` metadata. A reinstall
(``scripts/setup.sh`` after a merge, ``uv sync --reinstall-package``) removes the old metadata before
it writes the new one: polled during one, the package's ``entry_points.txt`` was absent for a moment.
Then ``(_script,) = entry_points(...)`` raised ValueError, a traceback and exit 1, for whatever command
the bench (or a test, or a user) started in that moment. The test puts a finished run's report step in
that state: no metadata for the first lookups.
"""
from __future__ import annotations

import os
import subprocess
import sys

from harness.cases.load import CaseSet
from harness.run.runner import RunOptions, run

import pytest

from tests.conftest import ROOT

# no entry point for the first lookups (the old metadata removed, the new one not yet written), then the real ones
GAP = """
import importlib.metadata as md, runpy, sys
real, calls = md.entry_points, [0]
def gap(**kw):
    calls[0] += 1
    return [] if calls[0] <= 3 else real(**kw)
md.entry_points = gap
sys.argv = ["harness", *sys.argv[1:]]
runpy.run_module("harness", run_name="__main__", alter_sys=True)
"""


@pytest.fixture(scope="module")
def finished_run(canonical, tmp_path_factory):
    out = tmp_path_factory.mktemp("entry")
    cases = CaseSet(canonical.path, tuple(canonical.cases[:2]), canonical.sha256)
    return run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(out), run_id="done", progress=False,
                          workers=1)).run_dir


def test_a_report_while_the_metadata_is_briefly_absent_succeeds(finished_run):
    p = subprocess.run([sys.executable, "-c", GAP, "report", finished_run], cwd=ROOT, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Traceback" not in p.stderr and os.path.isfile(os.path.join(finished_run, "index.html"))


def test_metadata_that_never_settles_is_one_line_exit_2(capsys):
    from harness.__main__ import find_script

    class EP:
        def __init__(self, value):
            self.value = value

    with pytest.raises(SystemExit) as e:
        find_script(lambda **kw: [], wait_s=0.0)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no 'harness' console-script entry point" in err
    with pytest.raises(SystemExit):
        find_script(lambda **kw: [EP("a:main"), EP("b:main")], wait_s=0.0)
    assert "2 different (a:main, b:main)" in capsys.readouterr().err
    one = EP("harness.console:main")
    assert find_script(lambda **kw: [one, EP("harness.console:main")], wait_s=0.0).value == "harness.console:main"
