"""Vendor switches set before any vendor import: telemetry off, no dotenv, no hub downloads.

They are in force wherever the harness works and nowhere else: a process the harness owns (the ``harness``
command, its workers, its Ray actors, the test suite) sets them for its whole life with
:func:`quiet_vendors`; inside a team's own process (a notebook, a pytest session with the plugin),
:func:`switches` sets them for the length of one harness call (``harness.evaluate``) and puts the caller's
values back after. Importing ``harness`` or loading its pytest plugin changes no environment variable.
Values are forced, not defaulted: a user's environment cannot turn telemetry back on in a run.
"""
from __future__ import annotations

import contextlib
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
    # LiteLLM (under Opik): the bundled price map, not the fetch of the remote one at import.
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    # Opik: no trace logging to its server (Comet's cloud by default), no product analytics (it resolves
    # stats.comet.com when a metric is created, even with tracking off), no Sentry error reports, no
    # Opik callback in LiteLLM's calls.
    "OPIK_TRACK_DISABLE": "true",
    "OPIK_ANALYTICS_ENABLE": "false",
    "OPIK_SENTRY_ENABLE": "false",
    "OPIK_ENABLE_LITELLM_MODELS_MONITORING": "false",
    # No model or data hubs.
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    # trulens: no OTEL tracing export.
    "TRULENS_OTEL_TRACING": "0",
    # MLflow: usage telemetry (it records every judge invocation). MLflow has no tracing switch; its judges
    # open no trace and the harness never calls MLflow tracking or tracing.
    "MLFLOW_DISABLE_TELEMETRY": "true",
    # MLflow's judges fetch a model catalog from GitHub on their first call (context size, cost); empty: the
    # catalog bundled in the package only.
    "MLFLOW_MODEL_CATALOG_URI": "",
    # Azure AI Evaluation: azure-core's distributed tracing off; promptflow's tracing off should promptflow be
    # installed beside it; the package's own prompty runner, never promptflow's (the stock default, forced).
    # Its telemetry to Azure lives in `evaluate()` uploads, which the harness never calls.
    "AZURE_TRACING_ENABLED": "false",
    "PF_DISABLE_TRACING": "true",
    "AI_EVALS_USE_PF_PROMPTY": "false",
}


def quiet_vendors() -> None:
    """Force the switches above into ``os.environ`` for the rest of this process (a process the harness owns)."""
    os.environ.update(FORCED)


_held = 0
_saved: dict[str, str] = {}
_held_lock = threading.Lock()
_on_leave: list = []


def on_leave(hook) -> None:
    """Call ``hook()`` when the outermost :func:`switches` block ends, before the caller's environment comes back:
    a vendor that reads a switch later (an exit hook) is put in a state that needs none (a named shim)."""
    if hook not in _on_leave:
        _on_leave.append(hook)


@contextlib.contextmanager
def switches():
    """The switches in ``os.environ`` while the block runs (a harness call inside a team's own process);
    on leaving the outermost block the environment is the caller's again, whole: the switches, and whatever a
    vendor's import or the harness's own relays set meanwhile (grpc's GRPC_VERBOSITY at DeepEval's import,
    MLflow's OPENAI_API_BASE), are put back to the caller's value or unset.
    Nested and concurrent blocks share one saved copy: the last to leave restores it."""
    global _held
    with _held_lock:
        if _held == 0:
            _saved.clear()
            _saved.update(os.environ)
            os.environ.update(FORCED)
        _held += 1
    try:
        yield
    finally:
        with _held_lock:
            _held -= 1
            if _held == 0:
                for hook in list(_on_leave):
                    hook()
                for k in [k for k in os.environ if k not in _saved]:
                    del os.environ[k]
                for k, v in _saved.items():
                    if os.environ.get(k) != v:
                        os.environ[k] = v


IMPORT_LOCK = threading.RLock()
"""Held while a process imports a vendor stack (the worker's import thread) or the embedded model's
packages: two threads importing the same C extension at once (numpy, under a vendor stack and under
the embedded model, whose cells run while the vendors import) can leave it half initialised, and
every later import of it fails ("cannot import name ... from partially initialized module")."""
