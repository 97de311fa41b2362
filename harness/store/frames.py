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


def read_table(db, table: str):
    """The store's table ``table`` as a DataFrame: the same columns, dtypes and values as
    ``pandas.read_sql_query("SELECT * FROM table")`` (integers as int64, numbers with a NULL as float64 with NaN,
    text as pandas' pyarrow-backed ``str`` with NaN for NULL, a column of NULLs only as None), read through
    ``sqlite3`` column by column, each text column handed to pyarrow whole (pandas checks its values one by
    one first). A column mixing text and numbers (SQLite allows it) or holding bytes, and an empty table, are
    read by pandas itself.

    >>> import sqlite3
    >>> db = sqlite3.connect(":memory:")
    >>> _ = db.execute("CREATE TABLE t (a TEXT, b INTEGER, c REAL, d INTEGER, e INTEGER)")
    >>> _ = db.executemany("INSERT INTO t VALUES (?,?,?,?,?)", [("x", 1, None, None, 3), (None, None, 2.5, None, 4)])
    >>> df = read_table(db, "t")
    >>> [str(t) for t in df.dtypes], df.to_dict("list")
    (['str', 'float64', 'float64', 'object', 'int64'], {'a': ['x', nan], 'b': [1.0, nan], 'c': [nan, 2.5], 'd': [None, None], 'e': [3, 4]})
    >>> import pandas as pd
    >>> df.equals(pd.read_sql_query("SELECT * FROM t", db))
    True
    """
    if arrow_text() is None:
        return pd_read(db, table)
    names, columns = table_columns(db, table)
    got = frame_of(columns, declared_types(db, table)) if columns else None
    return got if got is not None else pd_read(db, table)


def table_columns(db, table: str) -> tuple[list[str], dict[str, tuple]]:
    """The store's table ``table`` as sqlite3 reads it, column by column: (column names, name -> its values in
    table order, NULL as None); ``{}`` for an empty table. One read of the table serves both a DataFrame
    (:func:`frame_of`) and a caller that wants the plain values (the report's units and cells), which would
    otherwise have to take them back out of the DataFrame one column at a time."""
    cur = db.execute(f"SELECT * FROM {table}")
    names = [d[0] for d in cur.description]
    rows = cur.fetchall()
    return names, (dict(zip(names, zip(*rows))) if rows else {})


def declared_types(db, table: str) -> dict[str, str]:
    """Column name -> its declared type, upper case (``TEXT``, ``INTEGER``, ``REAL``)."""
    return {r[1]: str(r[2]).upper() for r in db.execute(f"PRAGMA table_info({table})")}


def pd_read(db, table: str):
    """pandas' own reading of the table (what :func:`read_table` gives the same as)."""
    import pandas as pd  # noqa: PLC0415 - lazy: pandas costs ~0.5 s to import

    return pd.read_sql_query(f"SELECT * FROM {table}", db)


def arrow_text():
    """pandas' pyarrow-backed text dtype (NaN for a missing value) when it is this pandas' text, else None (pandas 2
    in Azure's own venv, without pyarrow: pandas reads the tables itself)."""
    import numpy as np  # noqa: PLC0415 - lazy: with pandas, only when a report reads a run
    import pandas as pd  # noqa: PLC0415 - lazy: pandas costs ~0.5 s to import

    try:
        import pyarrow  # noqa: F401, PLC0415 - lazy: as pandas

        text = pd.StringDtype("pyarrow", na_value=np.nan)
    except (ImportError, TypeError):
        return None
    return text if pd.Series(["x"]).dtype == text else None


def frame_of(columns: dict[str, tuple], declared: dict[str, str]):
    """The DataFrame :func:`read_table` gives, from the table's columns (:func:`table_columns`, not empty) and
    declared types (:func:`declared_types`); None where pandas' own reading is needed (a pandas whose text is not
    pyarrow's, a column mixing text and numbers or holding bytes)."""
    import numpy as np  # noqa: PLC0415 - lazy: with pandas, only when a report reads a run
    import pandas as pd  # noqa: PLC0415 - lazy: pandas costs ~0.5 s to import

    text = arrow_text()
    if text is None:
        return None
    import pyarrow as pa  # noqa: PLC0415 - lazy: as pandas

    out = {}
    for name, col in columns.items():
        if declared.get(name) == "TEXT":   # text affinity: str or NULL (a blob fails here and goes to pandas)
            try:
                out[name] = pd.arrays.ArrowStringArray(pa.array(col, type=pa.large_string()), dtype=text)
                if out[name].isna().all():   # NULLs only: pandas reads None (object)
                    out[name] = pd.Series(col, dtype=object)
                continue
            except (pa.ArrowException, TypeError, ValueError):
                return None
        kinds = set(map(type, col))
        none = type(None) in kinds
        kinds.discard(type(None))
        if kinds == {str}:
            out[name] = pd.arrays.ArrowStringArray(pa.array(col, type=pa.large_string()), dtype=text)
        elif not kinds:
            out[name] = pd.Series(col, dtype=object)
        elif kinds == {int} and not none:
            out[name] = np.fromiter(col, dtype=np.int64, count=len(col))
        elif kinds <= {int, float}:
            out[name] = np.array(col, dtype=np.float64)   # None reads as NaN
        else:   # text and numbers in one column, or bytes: pandas' own reading
            return None
    return pd.DataFrame(out, copy=False)
