"""``opik.hallucination``'s one shim (``adapters/opik/_shims.py``): LiteLLM's success handlers run as
tasks of their own, so a run's event loop closes even when a handler finishes as it closes.

The trap is reproduced exactly, in a fresh process: a LiteLLM success handler is queued, the worker
starts awaiting it, and ``asyncio.run``'s main returns so that the handler finishes in the loop's last
step; on Python 3.11 LiteLLM's own worker then loses its cancellation (``wait_for``, CPython gh-86296)
and ``asyncio.run`` never returns. With the shim installed the process must exit; the subprocess
timeout is a hang guard, not a speed check. The class must name the shim (it is on the card).
"""
from __future__ import annotations

import subprocess
import sys

from harness.metric import registry

import pytest

from tests.conftest import ROOT

HANG_GUARD_S = 600
SCRIPT = r'''
import asyncio, sys
from harness.adapters.opik import _shims
if sys.argv[1] == "shim":
    _shims.install()
from litellm.litellm_core_utils import logging_worker

ran = []

async def handler():            # LiteLLM's success handler, as it runs with no callback set: no await
    ran.append(1)

async def main():
    logging_worker.GLOBAL_LOGGING_WORKER.ensure_initialized_and_enqueue(handler())
    await asyncio.sleep(0)      # the worker (unshimmed) takes the handler and waits on it in wait_for
    # returning now: the handler ends in the loop's last step, as the run's last cells' handlers do

asyncio.run(main())
print("exited", type(logging_worker.GLOBAL_LOGGING_WORKER).__name__, len(ran))
'''


def test_the_metric_names_its_shim():
    shims = registry.get("opik.hallucination").shims
    assert [s.where for s in shims] == ["adapters/opik/_shims.py"]
    assert "gh-86296" in shims[0].text and "#16518" in shims[0].text


def test_a_handler_ending_as_the_loop_closes_does_not_keep_the_process_open(tmp_path):
    pytest.importorskip("litellm")
    try:
        p = subprocess.run([sys.executable, "-c", SCRIPT, "shim"], cwd=ROOT, capture_output=True, text=True,
                           timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"asyncio.run did not return within {HANG_GUARD_S} s with the shim installed (hung)")
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split() == ["exited", "TaskPerHandler", "1"], p.stdout + p.stderr[-2000:]
