"""Ragas 0.4.3 adapters: ``ragas.faithfulness`` and ``ragas.response_groundedness``.

Both wrap the current ``ragas.metrics.collections`` classes, built with ``llm_factory`` over the
cell's ``AsyncOpenAI`` client and scored with ``ascore`` in the runner's event loop. Modules:

- ``faithfulness`` / ``response_groundedness``: the adapter classes (no vendor import at module level);
- ``judge``: the reference judge's handlers for every Ragas step (pure, no vendor import);
- ``_llm``: everything that imports ragas (discovery skips it), the data-dir shim, the observers.
"""
