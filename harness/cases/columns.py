"""Case rows under other tools' column names, for :func:`harness.evaluate` on a DataFrame or a list of dicts.

A row in Ragas' naming (``user_input``, ``retrieved_contexts``, ``response``, ``reference``) or
DeepEval's (``input``, ``actual_output``, ``retrieval_context``, ``expected_output``) is converted by
that format's importer (:mod:`harness.cases.importers.ragas`, :mod:`harness.cases.importers.deepeval`: the same
code as ``harness import``); a row in the harness's own naming is taken as it is. Fields of the
harness's format that the row also carries (``annotation``, ``tags``) are kept, so annotated rows can
run with the reference judge.
"""
from __future__ import annotations

import math
from typing import Any

from harness.cases import importers

COLUMNS = {
    "ragas": ("user_input", "retrieved_contexts", "response", "reference"),
    "deepeval": ("input", "actual_output", "retrieval_context", "expected_output"),
}
"""Each importer's column names."""
FIELDS = ("id", "question", "contexts", "answer", "reference_answer", "annotation", "tags")
"""Fields of the harness's own case format."""
KEPT = ("annotation", "tags")
"""Harness fields an imported row keeps."""


def dialect(columns) -> str:
    """Which naming a set of columns uses: ``harness``, ``ragas`` or ``deepeval``.

    >>> dialect(["user_input", "retrieved_contexts", "response"])
    'ragas'
    >>> dialect(["input", "actual_output", "retrieval_context"])
    'deepeval'
    >>> dialect(["id", "question", "contexts", "answer"])
    'harness'
    """
    cols = set(columns)
    if {"question", "answer"} <= cols:
        return "harness"
    scores = {name: len(cols & set(names)) for name, names in COLUMNS.items()}
    best = max(scores, key=scores.get)
    return best if scores[best] else "harness"


def _plain(v: Any) -> Any:
    """A DataFrame cell as plain Python: numpy arrays to lists, NaN to None."""
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def to_case_object(row: dict, position: int, names: str | None = None) -> dict:
    """One row (1-based ``position``) as a case object of the harness's format.

    Raises:
        harness.cases.importers.rows.RowProblem: a field the importer cannot read (its name and why).

    >>> to_case_object({"user_input": "Q?", "retrieved_contexts": ["C."], "response": "A."}, 1)["contexts"]
    [{'id': '1', 'text': 'C.'}]
    >>> to_case_object({"input": "Q?", "actual_output": "A.", "retrieval_context": ["C."], "id": "x",
    ...                 "tags": ["t"]}, 4)["tags"]
    ['t']
    """

    row = {k: _plain(v) for k, v in row.items()}
    names = names or dialect(row)
    if names == "harness":
        obj = {k: row[k] for k in FIELDS if row.get(k) is not None}
        obj.setdefault("id", f"case-{position}")
        return obj
    obj = {k: v for k, v in importers.module(names).to_case(row, position).items() if v is not None}
    obj.update({k: row[k] for k in KEPT if row.get(k) is not None})
    return obj


def rows_of(data) -> list[dict]:
    """Rows as a list of dicts, from a pandas DataFrame, a Ragas ``EvaluationDataset`` (``to_pandas``), a
    DeepEval ``EvaluationDataset`` (``test_cases``), or a list of dicts or of pydantic rows (Ragas'
    ``SingleTurnSample``, DeepEval's ``LLMTestCase``).

    >>> rows_of([{"a": 1}])
    [{'a': 1}]
    """
    if not (hasattr(data, "to_dict") and hasattr(data, "columns")) and hasattr(data, "to_pandas"):
        data = data.to_pandas()
    if hasattr(data, "to_dict") and hasattr(data, "columns"):
        return data.to_dict("records")
    if not isinstance(data, (list, tuple)) and isinstance(getattr(data, "test_cases", None), list):
        data = data.test_cases
    rows = []
    for i, r in enumerate(data):
        if hasattr(r, "model_dump"):
            r = r.model_dump(exclude_none=True)
        if not isinstance(r, dict):
            raise ValueError(f"case {i + 1}: expected a dict (or a DataFrame row), got {type(r).__name__}")
        rows.append(r)
    return rows
