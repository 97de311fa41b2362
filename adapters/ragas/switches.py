"""Ragas's switches, forced before any vendor import (:mod:`harness.metric.vendor_env`)."""

SWITCHES = {
    # Ragas: telemetry is on by default; only the literal "true" turns it off.
    "RAGAS_DO_NOT_TRACK": "true",
}
