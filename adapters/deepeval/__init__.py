"""DeepEval adapters: ``deepeval.faithfulness`` and ``deepeval.faithfulness_penalized``.

Importing this package imports no vendor code: DeepEval is imported by ``_model`` (skipped by
discovery), which the adapters load lazily from ``prepare()`` / ``score()``.
"""
