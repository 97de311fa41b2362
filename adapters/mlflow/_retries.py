"""MLflow's own judge retries off: the gateway owns retries.

Shim: MLflow's `is_grounded` calls `invoke_judge_model` with its default `num_retries=10`, and its
chat call (`send_chat_request`) then retries a 429, 500, 502 or 503 reply, a timeout or a refused
connection up to 10 more times, sleeping min(2^n, 30) s between tries (about 3 minutes in all); MLflow
has no setting for it. Behind the harness's gateway, which has already retried the upstream with the
run's policy, that would multiply every judge fault by 11 attempts and 3 minutes. The module global
`mlflow.genai.judges.builtin.invoke_judge_model`, which `is_grounded` calls, is wrapped once per
process to pass `num_retries=0`; the prompt, the request, MLflow's fall-back without
`response_format` after a 400 and its parsing are unchanged, so the gateway's final answer (a score
or a failure) is what MLflow sees, once.
"""
from __future__ import annotations

import functools

from harness.metric import Shim

SHIM = Shim("adapters/mlflow/_retries.py", " ".join(__doc__.split("\n\n", 1)[1].split()))
"""The shim as the card shows it (the paragraph above)."""

MARK = "_harness_no_retries"


def no_vendor_retries() -> None:
    """Wrap MLflow's ``invoke_judge_model`` as :data:`SHIM` says (idempotent; imports mlflow)."""
    from mlflow.genai.judges import builtin

    original = builtin.invoke_judge_model
    if getattr(original, MARK, False):
        return

    @functools.wraps(original)
    def invoke_judge_model(*args, **kwargs):
        kwargs["num_retries"] = 0
        return original(*args, **kwargs)

    setattr(invoke_judge_model, MARK, True)
    builtin.invoke_judge_model = invoke_judge_model
