"""Case rows under other tools' column names, mapped onto the case format.

Ragas' evaluation datasets name the fields ``user_input``, ``retrieved_contexts``, ``response`` and
``reference``; DeepEval's test cases ``input``, ``actual_output``, ``retrieval_context`` and
``expected_output``. :func:`to_case_object` turns one such row (a dict, or a DataFrame row as a
dict) into a case object of the harness's own format (``datasets/README.md``), which
:func:`harness.cases.parse_case` then validates. Pure functions, no vendor import: the importers
(``harness import ragas|deepeval``) and :func:`harness.evaluate` share them.
"""
from __future__ import annotations

import math
from typing import Any

RAGAS = {"user_input": "question", "retrieved_contexts": "contexts", "response": "answer",
         "reference": "reference_answer"}
"""Ragas column -> case field."""
DEEPEVAL = {"input": "question", "actual_output": "answer", "retrieval_context": "contexts",
            "expected_output": "reference_answer"}
"""DeepEval column -> case field."""
DIALECTS = {"ragas": RAGAS, "deepeval": DEEPEVAL}
PASSTHROUGH = ("id", "question", "contexts", "answer", "reference_answer", "annotation", "tags")
"""Fields of the harness's own format, kept as they are."""


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
    scores = {name: len(cols & set(m)) for name, m in DIALECTS.items()}
    best = max(scores, key=scores.get)
    if scores[best] == 0 or {"question", "answer"} <= cols:
        return "harness"
    return best


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def contexts_of(value: Any) -> list:
    """Contexts as the case format takes them: strings become ``{id: "1", text}``, ``{id: "2", ...}``.

    >>> contexts_of(["a", "b"])
    [{'id': '1', 'text': 'a'}, {'id': '2', 'text': 'b'}]
    >>> contexts_of([{"id": "x", "text": "a"}])
    [{'id': 'x', 'text': 'a'}]
    >>> contexts_of("just one passage")
    [{'id': '1', 'text': 'just one passage'}]
    """
    if _missing(value):
        return []
    if isinstance(value, str):
        value = [value]
    if hasattr(value, "tolist"):   # a numpy array from a DataFrame cell
        value = value.tolist()
    out = []
    for i, c in enumerate(list(value), start=1):
        out.append({"id": str(i), "text": c} if isinstance(c, str) else c)
    return out


def to_case_object(row: dict, index: int, names: str | None = None) -> dict:
    """One row as a case object of the harness's format (``id`` defaults to ``case-<index+1>``).

    >>> to_case_object({"user_input": "Q?", "retrieved_contexts": ["C."], "response": "A."}, 0)
    {'id': 'case-1', 'question': 'Q?', 'contexts': [{'id': '1', 'text': 'C.'}], 'answer': 'A.'}
    >>> to_case_object({"input": "Q?", "actual_output": "A.", "retrieval_context": ["C."],
    ...                 "expected_output": "R.", "id": "x"}, 3)["reference_answer"]
    'R.'
    """
    mapping = DIALECTS.get(names or dialect(row), {})
    obj: dict = {}
    for key, value in row.items():
        field = mapping.get(key, key)
        if field not in PASSTHROUGH or _missing(value) or field in obj:
            continue
        obj[field] = value.tolist() if hasattr(value, "tolist") else value
    obj["contexts"] = contexts_of(obj.get("contexts"))
    obj["id"] = str(obj.get("id", f"case-{index + 1}"))
    return {k: obj[k] for k in PASSTHROUGH if k in obj}


def rows_of(data) -> list[dict]:
    """Rows of a pandas DataFrame (``to_dict("records")``) or a list of dicts, as a list of dicts."""
    if hasattr(data, "to_dict") and hasattr(data, "columns"):
        return data.to_dict("records")
    rows = list(data)
    for i, r in enumerate(rows):
        if not isinstance(r, dict):
            raise ValueError(f"case {i + 1}: expected a dict, got {type(r).__name__}")
    return rows
