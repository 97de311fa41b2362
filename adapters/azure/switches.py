"""Azure AI Evaluation's switches, forced before any vendor import (:mod:`harness.metric.vendor_env`)."""

SWITCHES = {
    # azure-core's distributed tracing off; promptflow's tracing off should promptflow be installed beside it;
    # the package's own prompty runner, never promptflow's (the stock default, forced). Its telemetry to
    # Azure lives in `evaluate()` uploads, which the harness never calls.
    "AZURE_TRACING_ENABLED": "false",
    "PF_DISABLE_TRACING": "true",
    "AI_EVALS_USE_PF_PROMPTY": "false",
}
