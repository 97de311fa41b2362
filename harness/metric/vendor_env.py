"""Vendor switches set before any vendor import: telemetry off, no dotenv, no hub downloads.

Called from ``harness/__init__.py``, so it runs before any adapter can import a vendor package.
Values are forced, not defaulted: a user's environment cannot turn telemetry back on in a run.
"""
from __future__ import annotations

import os
import threading

FORCED = {
    # Ragas: telemetry is on by default; only the literal "true" turns it off.
    "RAGAS_DO_NOT_TRACK": "true",
    # DeepEval: PostHog telemetry, .env autoload from the CWD, the legacy key file, the update check.
    "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
    "DEEPEVAL_DISABLE_DOTENV": "1",
    "DEEPEVAL_DISABLE_LEGACY_KEYFILE": "1",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0",
    # DeepEval retries 5xx/429/connection errors itself and cuts attempts at 88.5 s, under the
    # gateway's own retries and per-call timeout: one attempt, no vendor timeout (the harness owns both).
    "DEEPEVAL_RETRY_MAX_ATTEMPTS": "1",
    "DEEPEVAL_DISABLE_TIMEOUTS": "1",
    # LangChain / LangSmith tracing.
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_TRACING": "false",
    # LiteLLM price-map fetch at import (not installed by default; harmless if absent).
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    # No model or data hubs.
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    # trulens: no OTEL tracing export.
    "TRULENS_OTEL_TRACING": "0",
    # Azure AI Evaluation: azure-core's distributed tracing off; promptflow's tracing off should promptflow be
    # installed beside it; the package's own prompty runner, never promptflow's (the stock default, forced).
    # Its telemetry to Azure lives in `evaluate()` uploads, which the harness never calls.
    "AZURE_TRACING_ENABLED": "false",
    "PF_DISABLE_TRACING": "true",
    "AI_EVALS_USE_PF_PROMPTY": "false",
}


def quiet_vendors() -> None:
    """Force the switches above into ``os.environ``."""
    os.environ.update(FORCED)


quiet_vendors()   # on import: :mod:`harness.metric` imports this module, and every metric imports harness.metric
# (the registry too, before it loads any metric), so the switches are set before any vendor can be imported


IMPORT_LOCK = threading.RLock()
"""Held while a process imports a vendor stack (the worker's import thread) or the embedded model's
packages: two threads importing the same C extension at once (numpy, under a vendor stack and under
the embedded model, whose cells run while the vendors import) can leave it half initialised, and
every later import of it fails ("cannot import name ... from partially initialized module")."""
