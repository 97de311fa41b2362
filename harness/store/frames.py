"""The run store's tables as a notebook reader wants them: JSON columns parsed, and a case-by-metric
score table (:func:`score_table`)."""
from __future__ import annotations

import json

JSON_COLUMNS = {"cells": ("flags", "detail"), "units": ("quotes", "detail")}
"""Columns the store keeps as JSON text, per table."""


def parsed(name: str, frame):
    """``frame`` (the store's table ``name``) with its JSON text columns as Python values."""
    for col in JSON_COLUMNS.get(name, ()):
        if col in frame.columns:
            frame[col] = [json.loads(v) if isinstance(v, str) else v for v in frame[col]]
    return frame


def score_table(cells, case_ids: list[str] | None = None, metrics: list[str] | None = None):
    """Cases (rows) by metrics (columns): the score of every scored cell, NaN for a cell that is not a
    score (the ``cells`` table says why: status and reason). Rows in ``case_ids`` order, columns in
    ``metrics`` order (default: as the cells come).

    >>> import pandas as pd
    >>> cells = pd.DataFrame({"case_id": ["a", "a", "b"], "metric": ["m", "n", "m"],
    ...                       "status": ["scored", "error", "scored"], "score": [0.5, None, 1.0]})
    >>> score_table(cells).to_dict()
    {'m': {'a': 0.5, 'b': 1.0}, 'n': {'a': nan, 'b': nan}}
    """
    import pandas as pd  # noqa: PLC0415 - lazy: pandas only when a table is asked for

    cases = case_ids or list(dict.fromkeys(cells["case_id"]))
    names = metrics or list(dict.fromkeys(cells["metric"]))
    table = pd.DataFrame(float("nan"), index=pd.Index(cases, name="case_id"), columns=pd.Index(names, name="metric"))
    for case, metric, status, score in zip(cells["case_id"], cells["metric"], cells["status"], cells["score"]):
        if status == "scored" and case in table.index and metric in table.columns:
            table.loc[case, metric] = float(score)
    return table
