"""harness run --no-report: the run is stored and no report is built (harness report builds it later)."""
import os
import subprocess
import sys

from tests.conftest import CANONICAL, ROOT


def test_no_report_then_report(tmp_path):
    out = str(tmp_path / "out")
    p = subprocess.run([sys.executable, "-m", "harness", "run", "--cases", CANONICAL, "--metrics", "inhouse.span",
                        "--out", out, "--run-id", "r", "--no-progress", "--no-report", "--workers", "1"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert os.path.exists(os.path.join(out, "r", "store.sqlite"))
    assert not os.path.exists(os.path.join(out, "r", "index.html")) and "report:" not in p.stdout
    q = subprocess.run([sys.executable, "-m", "harness", "report", os.path.join(out, "r")], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert q.returncode == 0 and os.path.exists(os.path.join(out, "r", "index.html")), q.stderr[-2000:]
