"""DeepEval ``EvaluationDataset`` goldens or test cases (``save_as`` JSON, JSONL or CSV).

Fields read: ``input`` (question), ``retrieval_context`` (the passages: a list, or in CSV/JSONL one
string joined with ``|``, as DeepEval writes it), ``actual_output`` (the answer) and
``expected_output`` (optional: a correct answer). A ``name`` (or ``id``) field is the case id when
present; otherwise ids are ``case-1``, ``case-2``, ... DeepEval's source marker
(``deepeval_source=...,deepeval_context=TEXT``) is reduced to TEXT. ``context`` (the ground-truth
context) is not read: faithfulness judges against what was retrieved.

>>> to_case({"input": "Q?", "actual_output": "A.", "retrieval_context": "p1|p2"}, 3)["id"]
'case-3'
"""
from __future__ import annotations

import re

from harness.cases.importers.rows import RowProblem, case_id, list_field, text_field

FORMAT = "deepeval"
DESCRIPTION = "DeepEval EvaluationDataset: input, actual_output, retrieval_context, expected_output"
DELIMITER = "|"
"""DeepEval's ``DELIMITER`` for list columns in CSV and JSONL files."""
_MARKER = re.compile(r"^deepeval_source=.*?,deepeval_context=(?P<context>.*)$", re.S)


def to_case(row: dict, position: int) -> dict:
    """One DeepEval row as a case object (RowProblem naming the field)."""
    if row.get("actual_output") in (None, ""):
        raise RowProblem("actual_output", "missing: a golden without the system's answer has nothing to judge "
                                          "(fill actual_output first)")
    contexts = [_unmark(t) for t in list_field(row, "retrieval_context", DELIMITER)]
    return {
        "id": case_id(row, position, "id", "name"),
        "question": text_field(row, "input"),
        "contexts": [{"id": str(i), "text": t} for i, t in enumerate(contexts, start=1)],
        "answer": text_field(row, "actual_output"),
        "reference_answer": text_field(row, "expected_output", required=False),
    }


def _unmark(text: str) -> str:
    m = _MARKER.match(text)
    return m.group("context") if m else text


__all__ = ["FORMAT", "DESCRIPTION", "to_case", "RowProblem"]
