"""MLflow's switches, forced before any vendor import (:mod:`harness.metric.vendor_env`)."""

SWITCHES = {
    # Usage telemetry (it records every judge invocation). MLflow has no tracing switch; its judges
    # open no trace and the harness never calls MLflow tracking or tracing.
    "MLFLOW_DISABLE_TELEMETRY": "true",
    # MLflow's judges fetch a model catalog from GitHub on their first call (context size, cost); empty: the
    # catalog bundled in the package only.
    "MLFLOW_MODEL_CATALOG_URI": "",
}
