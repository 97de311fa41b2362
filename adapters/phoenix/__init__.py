"""Arize Phoenix adapter: ``phoenix.faithfulness`` (arize-phoenix-evals' FaithfulnessEvaluator).

Importing this package imports no vendor code: ``phoenix.evals`` is imported inside ``score`` /
``prepare`` only.
"""
