"""DeepEval's telemetry stays off after a harness call in the caller's own process.

Shim (issue 34.2, "the switches hold inside the harness's own runs only"): DeepEval counts each metric it
measures and sends the count from an exit hook, checking ``DEEPEVAL_TELEMETRY_OPT_OUT`` only when it sends.
``harness.evaluate`` in a notebook sets the opt-out for the length of the call and gives the caller's
environment back afterwards, so at the notebook's exit DeepEval would send what the harness's run recorded.
When a harness call ends, DeepEval's own telemetry backend is set to its no-op backend
(``deepeval.telemetry.client.set_backend(NoopBackend())``, the function DeepEval provides to swap it); the
scores, the requests and everything else DeepEval does are untouched. The `harness` command sets the switches
for its whole process and never needs it.
"""
from __future__ import annotations

import sys

from harness.metric import Shim
from harness.metric.vendor_env import on_leave

SHIM = Shim("adapters/deepeval/_telemetry.py", " ".join(__doc__.split("\n\n", 1)[1].split()).replace("``", "`"))
"""The shim as the DeepEval cards show it (the paragraph above)."""


def telemetry_stays_off() -> None:
    """Swap DeepEval's telemetry backend for its no-op one, if DeepEval was imported."""
    client = sys.modules.get("deepeval.telemetry.client")
    if client is not None:
        client.set_backend(client.NoopBackend())


on_leave(telemetry_stays_off)
