"""DeepEval's switches, forced before any vendor import (:mod:`harness.metric.vendor_env`)."""

SWITCHES = {
    # PostHog telemetry, .env autoload from the CWD, the legacy key file, the update check.
    "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
    "DEEPEVAL_DISABLE_DOTENV": "1",
    "DEEPEVAL_DISABLE_LEGACY_KEYFILE": "1",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0",
    # DeepEval retries 5xx/429/connection errors itself and cuts attempts at 88.5 s, under the
    # gateway's own retries and per-call timeout: one attempt, no vendor timeout (the harness owns both).
    "DEEPEVAL_RETRY_MAX_ATTEMPTS": "1",
    "DEEPEVAL_DISABLE_TIMEOUTS": "1",
}
