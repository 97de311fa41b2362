"""The fault soak (scripts/soak.py): 500 cases x every metric with 10 % injected judge faults; zero lost
cells. Deselected by default (marker ``soak``); run it with ``bash scripts/test.sh -m soak`` (add ``-s``
to see its counts) or directly with ``.venv/bin/python scripts/soak.py``."""
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.soak
def test_fault_soak_loses_nothing():
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "soak.py")], cwd=ROOT, capture_output=True,
                       text=True, timeout=3600)
    report = p.stdout[p.stdout.find("soak finished"):]
    print(report)
    assert p.returncode == 0, report + p.stderr[-3000:]
    assert re.search(r"^  cells lost +0$", p.stdout, re.M) and "soak: PASS" in p.stdout
