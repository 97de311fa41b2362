"""A metric whose vendor installs alone (azure.groundedness: azure-ai-evaluation needs pandas < 3) is a
metric like any other where its vendor is installed (``.venv-azure``), and elsewhere is listed apart:
``harness metrics`` names it with how to get it, naming it in a run is a one-line error that says the
same, and "all metrics" and every table leave it out (no test or report of the main environment
meets a metric it cannot run)."""
from __future__ import annotations

import subprocess
import sys
from importlib.util import find_spec

from harness.metric import registry

import pytest

from tests.conftest import CANONICAL

NAME = "azure.groundedness"
HERE = find_spec("azure") is not None and find_spec("azure.ai.evaluation") is not None
CLI = "import sys; from harness.console import main; raise SystemExit(main(sys.argv[1:]))"


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-c", CLI, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def test_harness_metrics_lists_it_here_or_says_how_to_get_it():
    p = _cli("metrics")
    assert p.returncode == 0, p.stderr
    line = next(x for x in p.stdout.splitlines() if x.startswith(NAME))
    if HERE:
        assert NAME in registry.names() and registry.apart() == {} and "Azure AI Groundedness" in line
    else:
        assert NAME not in registry.names() and NAME in registry.apart()
        assert "installs alone" in line and "scripts/setup_azure.sh" in line, line


@pytest.mark.skipif(HERE, reason="the vendor is installed here: the metric runs (tests/vendors/test_azure_offline.py)")
def test_naming_it_where_it_is_not_installed_is_a_one_line_error(tmp_path):
    with pytest.raises(registry.UnknownMetric, match="not installed in this environment.*setup_azure.sh"):
        registry.get(NAME)
    p = _cli("run", "--cases", CANONICAL, "--metrics", NAME, "--out", str(tmp_path), "--no-progress", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and NAME in err[0] and "setup_azure.sh" in err[0], p.stderr
    assert "Traceback" not in p.stderr
