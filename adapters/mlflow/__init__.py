"""MLflow adapter: ``mlflow.groundedness`` (mlflow-skinny's ``mlflow.genai.judges.is_grounded``).

Importing this package imports no vendor code: ``mlflow`` is imported inside ``score`` / ``prepare``
only.
"""
