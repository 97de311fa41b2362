"""The drift sentinel's record of each cell (issue 35.3): its vendor's package versions, the prompt
templates it sent, what the judge answered and who the judge was. ``harness compare`` reads it to say
which of these changed between two runs and which cells changed outcome with them
(:mod:`harness.reports.analysis.drift`).

One table, ``cell_drift``, one row per cell (``repeat`` 0: the run's cell; k > 0: a repeat of
``--repeats``), written in the cell's own transaction:

- ``vendor``: the metric's vendor distributions and their installed versions in the process that
  scored it (``deepeval 4.3.1, openai 1.109.1``);
- ``prompt_hash``: over the distinct prompt templates the cell sent (each call's hash is
  :func:`harness.judge.template.template_hash`: case text, the judge's earlier answers and numbers
  taken out; order and count of calls do not matter);
- ``reply_hash``: over the judge's replies as they came (a multiset);
- ``judge``: the judge fingerprints the replies carried (model, ``@system_fingerprint`` where given);
- ``steps``: JSON, step label -> the distinct template hashes sent at that step, so a change is named
  by step;
- ``sampling``: the distinct sampling settings the cell's requests asked for (``temperature=0``;
  ``temperature=default`` where the vendor sent none), ``; ``-separated: the stability figures name them.

A store written before the sentinel has no such table: its cells read as "not recorded".
"""
from __future__ import annotations

import hashlib
import json
import re

SCHEMA = """
CREATE TABLE IF NOT EXISTS cell_drift (
    case_id TEXT NOT NULL, metric TEXT NOT NULL, repeat INTEGER NOT NULL DEFAULT 0, vendor TEXT NOT NULL,
    prompt_hash TEXT NOT NULL, reply_hash TEXT NOT NULL, judge TEXT NOT NULL, steps TEXT NOT NULL,
    sampling TEXT NOT NULL DEFAULT '', PRIMARY KEY (case_id, metric, repeat));
"""
FIELDS = ("vendor", "prompt_hash", "reply_hash", "judge", "steps", "sampling")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def cell_facts(calls, vendor: str = "") -> dict:
    """A cell's drift facts from its call records (see the module docstring).

    >>> from types import SimpleNamespace as C
    >>> f = cell_facts([C(step="S 1", prompt_hash="a", reply_hash="r", judge="m"),
    ...                 C(step="S 2", prompt_hash="a", reply_hash="q", judge="m")], "v 1")
    >>> f["steps"], f["judge"], f["vendor"], f["prompt_hash"] == cell_facts([C(step="S", prompt_hash="a")])["prompt_hash"]
    ({'S #': ['a']}, 'm', 'v 1', True)
    """
    hashes = sorted({getattr(c, "prompt_hash", "") for c in calls} - {""})
    replies = sorted(getattr(c, "reply_hash", "") for c in calls if getattr(c, "reply_hash", ""))
    steps: dict[str, set] = {}
    for c in calls:
        if getattr(c, "prompt_hash", ""):
            steps.setdefault(step_label(getattr(c, "step", "")), set()).add(c.prompt_hash)
    return {"vendor": vendor, "prompt_hash": _digest(hashes) if hashes else "",
            "reply_hash": _digest(replies) if replies else "",
            "judge": ", ".join(sorted({getattr(c, "judge", "") for c in calls} - {""})),
            "steps": {k: sorted(v) for k, v in sorted(steps.items())},
            "sampling": "; ".join(sorted({getattr(c, "sampling", "") for c in calls} - {""}))}


def step_label(step: str) -> str:
    """A step's name in the drift facts: the ledger's step label (a json_schema name, else the start of
    the prompt), its first six words, numbers as ``#``.

    >>> step_label("Verdicts"), step_label("Based on the given claims, which is a list of 3 strings")
    ('Verdicts', 'Based on the given claims, which')
    """
    return _NUMBER.sub("#", " ".join(str(step).split()[:6]))


def write(cur, case_id: str, metric: str, repeat: int, facts: dict) -> None:
    """Keep one cell's facts (inside the cell's transaction)."""
    cur.execute("INSERT OR REPLACE INTO cell_drift VALUES (?,?,?,?,?,?,?,?,?)",
                (case_id, metric, repeat, facts.get("vendor", ""), facts.get("prompt_hash", ""),
                 facts.get("reply_hash", ""), facts.get("judge", ""), json.dumps(facts.get("steps") or {}),
                 facts.get("sampling", "")))


def read(db, repeat: int = 0) -> dict[tuple[str, str], dict]:
    """(case_id, metric) -> the cell's facts ({} for a store written before the sentinel)."""
    try:
        rows = db.execute("SELECT case_id, metric, vendor, prompt_hash, reply_hash, judge, steps, sampling "
                          "FROM cell_drift WHERE repeat = ?", (repeat,)).fetchall()
    except Exception:  # noqa: BLE001 - sqlite3.OperationalError: a store older than the table (or column)
        return {}
    return {(r[0], r[1]): {"vendor": r[2], "prompt_hash": r[3], "reply_hash": r[4], "judge": r[5],
                           "steps": json.loads(r[6] or "{}"), "sampling": r[7]} for r in rows}
