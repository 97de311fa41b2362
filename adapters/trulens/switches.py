"""TruLens's switches, forced before any vendor import (:mod:`harness.metric.vendor_env`)."""

SWITCHES = {
    # no OTEL tracing export.
    "TRULENS_OTEL_TRACING": "0",
}
