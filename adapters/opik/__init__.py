"""Comet Opik adapter: ``opik.hallucination`` (Opik's Hallucination LLM-judge metric, with context).

Importing this package imports no vendor code: ``opik`` (and LiteLLM under it) is imported inside
``score`` / ``prepare`` only, after the harness has turned Opik's tracking and error reporting off
(``harness.metric.vendor_env``).
"""
