"""Ragas ``EvaluationDataset`` rows (``to_jsonl``, ``to_csv``, or a JSON list of samples).

Fields read: ``user_input`` (question), ``retrieved_contexts`` (the passages), ``response`` (the
answer), ``reference`` (optional: a correct answer). An ``id`` field, when present, is the case id;
otherwise ids are ``case-1``, ``case-2``, ... in file order. Other Ragas fields
(``reference_contexts``, ``rubrics``, ...) are not read. Multi-turn samples are not supported.

>>> to_case({"user_input": "Q?", "retrieved_contexts": ["A passage."], "response": "An answer."}, 1)["contexts"]
[{'id': '1', 'text': 'A passage.'}]
"""
from __future__ import annotations

from harness.cases.importers.rows import RowProblem, case_id, list_field, text_field

FORMAT = "ragas"
DESCRIPTION = "Ragas EvaluationDataset: user_input, retrieved_contexts, response, reference"


def to_case(row: dict, position: int) -> dict:
    """One Ragas single-turn sample as a case object (RowProblem naming the field)."""
    if isinstance(row.get("user_input"), list):
        raise RowProblem("user_input", "a multi-turn sample (a list of messages); only single-turn samples import")
    contexts = list_field(row, "retrieved_contexts")
    return {
        "id": case_id(row, position, "id"),
        "question": text_field(row, "user_input"),
        "contexts": [{"id": str(i), "text": t} for i, t in enumerate(contexts, start=1)],
        "answer": text_field(row, "response"),
        "reference_answer": text_field(row, "reference", required=False),
    }
