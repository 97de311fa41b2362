"""The judge layer: everything between an adapter's HTTP call and the model.

The gateway (one request path for every endpoint), its in-process transport and its loopback face (for
vendors that take a base URL and no client), upstream judges (the reference judge, any OpenAI-compatible URL,
the embedded embedding model), fault injection, per-cell time budgets, the response caches, reply
checks and accounting. Imports :mod:`harness.core`, :mod:`harness.metric.protocol` and :mod:`harness.cases.load`."""
