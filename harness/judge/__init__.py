"""The judge layer: everything between an adapter's HTTP call and the model.

The gateway, its in-process transport, upstream judges (the reference judge, any OpenAI-compatible URL,
the embedded embedding model), fault injection, per-cell time budgets, the response caches, reply
checks and accounting. Imports :mod:`harness.core`, :mod:`harness.metric.protocol` and :mod:`harness.cases.load`."""
