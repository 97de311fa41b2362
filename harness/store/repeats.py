"""Where the run store keeps the repeats of ``harness run --repeats K``.

Repeat 0 of every cell is the run's cell, in ``cells``, ``units`` and ``calls`` as always, so every
reader of a run sees one row per (case, metric) whatever K is. Repeats 1 to K-1 go to three tables of
the same columns plus ``repeat`` (``repeat_cells``, ``repeat_units``, ``repeat_calls``), keyed by the
repeat too; the stability figures read them with :func:`all_cells`.

In the gateway a repeat is a cell of its own (:func:`harness.judge.upstream.repeat_label`).
"""
from __future__ import annotations

import re


def tables(repeat: int) -> tuple[str, str, str]:
    """(cells, units, calls) table names of a repeat.

    >>> tables(0), tables(2)
    (('cells', 'units', 'calls'), ('repeat_cells', 'repeat_units', 'repeat_calls'))
    """
    return ("cells", "units", "calls") if repeat == 0 else ("repeat_cells", "repeat_units", "repeat_calls")


def schema(base: str) -> str:
    """The repeat tables' DDL, derived from the store's own (``base``: its ``CREATE TABLE`` script), so
    the two can never drift apart."""
    out = []
    for name in ("cells", "units", "calls"):
        m = re.search(rf"CREATE TABLE IF NOT EXISTS {name} \((.*?)\);", base, re.S)
        body = m.group(1)
        body = re.sub(r"PRIMARY KEY \(([^)]*)\)", r"PRIMARY KEY (\1, repeat)", body)
        out.append(f"CREATE TABLE IF NOT EXISTS repeat_{name} (repeat INTEGER NOT NULL, {body});")
    return "\n".join(out)


def all_cells(store):
    """DataFrame of every repeat's cells, with a ``repeat`` column (0 for the run's own cells)."""
    import pandas as pd  # noqa: PLC0415 - lazy: pandas only when a report reads a run

    base = pd.read_sql_query("SELECT * FROM cells", store.db)
    base.insert(0, "repeat", 0)
    try:
        more = pd.read_sql_query("SELECT * FROM repeat_cells", store.db)
    except Exception:  # noqa: BLE001 - a store written before repeats existed has no such table
        return base
    return pd.concat([base, more[base.columns]], ignore_index=True) if len(more) else base


def finished(store, final: tuple[str, ...]) -> dict[tuple[str, str, int], tuple[str, str]]:
    """(case_id, metric, repeat) -> (case_digest, metric_version) of every repeat a resume may keep (as
    ``RunStore.finished`` reads the run's own cells)."""
    q = (f"SELECT case_id, metric, repeat, case_digest, metric_version FROM repeat_cells "
         f"WHERE status IN ({','.join('?' * len(final))}) AND errors = 0")
    return {(r[0], r[1], int(r[2])): (r[3], r[4]) for r in store.db.execute(q, final)}
