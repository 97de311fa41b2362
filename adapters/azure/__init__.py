"""Azure AI Evaluation adapter: ``azure.groundedness`` (azure-ai-evaluation's GroundednessEvaluator).

Importing this package imports no vendor code: ``azure.ai.evaluation`` is imported inside ``score`` /
``prepare`` only. The vendor installs alone (``scripts/setup_azure.sh`` builds ``.venv-azure``): it
needs pandas < 3, which the other extras' lock does not allow.
"""
