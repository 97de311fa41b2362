import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CANONICAL = os.path.join(ROOT, "datasets", "canonical.jsonl")
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
# Runs score in one process unless a test passes --workers: the pytest process imports each vendor once
# for every test (a worker process would import them again per run), and the suite's timing stays what it
# was. Subprocesses inherit it. tests/run/test_workers_default.py unsets it to test the default itself.
os.environ.setdefault("HARNESS_WORKERS", "1")
# The suite is the harness's own process: the vendor switches (telemetry off, no dotenv, no hub) hold for the whole
# session, before any test imports a vendor directly (the stock-usage scripts do). Importing harness sets none.
from harness.metric.vendor_env import quiet_vendors  # noqa: E402 - after ROOT is on sys.path

quiet_vendors()


@pytest.fixture(scope="session")
def canonical():
    from harness.cases.load import load_cases

    return load_cases(CANONICAL)

