"""Opik's switches, forced before any vendor import (:mod:`harness.metric.vendor_env`)."""

SWITCHES = {
    # LiteLLM (under Opik): the bundled price map, not the fetch of the remote one at import.
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    # Opik: no trace logging to its server (Comet's cloud by default), no product analytics (it resolves
    # stats.comet.com when a metric is created, even with tracking off), no Sentry error reports, no
    # Opik callback in LiteLLM's calls.
    "OPIK_TRACK_DISABLE": "true",
    "OPIK_ANALYTICS_ENABLE": "false",
    "OPIK_SENTRY_ENABLE": "false",
    "OPIK_ENABLE_LITELLM_MODELS_MONITORING": "false",
}
