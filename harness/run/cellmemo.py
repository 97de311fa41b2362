"""The cell cache: a recorded cell reused by a rerun from the judge cache, without running the vendor again.

With ``--cache record`` or ``replay``, every cell that finished cleanly (scored, unscored, NaN or n/a,
no judge error, no injected fault) is kept next to the judge's responses, in the same SQLite file
(table ``cell_results``), under a key of everything its result depends on:

- the judge's identity (kind, URL, model id, reference-judge version);
- the metric's name and version (bumped whenever what it computes changes, as resume assumes too), and
  its arguments, if any, with the embedding model behind them;
- the case's digest (question, contexts, answer, annotation);
- the versions of the packages that compute it (ragas, deepeval, trulens, openai, ... from the run spec).

A later run in record or replay mode reuses such a cell only when, in addition, every judge answer the
cell used is still in the judge cache: so it is exactly what the vendor code would compute again from
the same cached answers (the metric code is deterministic given its judge's replies), only without
importing and running it. It is stored as a replay stores it: every call a cache hit, no upstream
attempt (the ledger is recounted by the gateway's own arithmetic). ``--recompute`` runs the vendor
code for every cell instead (a check that the vendors themselves replay identically).

The runner is the only writer; it looks cells up before handing the rest to the workers, so a replay
whose cells are all cached starts no worker and imports no vendor.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
import time

from harness.core import redact
from harness.core.records import CellResult, Ledger, Quote, UnitVerdict
from harness.core.vocab import FINISHED
from harness.judge.gateway import CallRecord, Gateway
from harness.judge.upstream import Cell
from harness.run.cellwork import CellDone
from harness.run.spec import ENGINE_PACKAGES

TABLE = ("CREATE TABLE IF NOT EXISTS cell_results (key TEXT PRIMARY KEY, metric TEXT NOT NULL, "
         "result TEXT NOT NULL, created REAL NOT NULL)")
KEEP = FINISHED


def packages_of(spec: dict, metric: str) -> dict:
    """The versions that compute ``metric``'s cells: the engine's and the metric's own vendor packages (as
    its class names them, recorded in the spec); a spec that names none per metric keys on all of them.

    >>> spec = {"packages": {"groundedness-harness": "1", "ragas": "0.4.3", "deepeval": "4"},
    ...         "metrics": [{"name": "x", "packages": ["ragas"]}]}
    >>> packages_of(spec, "x")
    {'groundedness-harness': '1', 'ragas': '0.4.3'}
    """
    pk = spec.get("packages") or {}
    entry = next((m for m in spec.get("metrics") or [] if m.get("name") == metric), None)
    if entry is None or "packages" not in entry:
        return pk
    own = set(ENGINE_PACKAGES) | set(entry["packages"])
    return {p: v for p, v in pk.items() if p in own}


def cell_key(spec: dict, metric: str, version: str, digest: str) -> str:
    """The key of a cell's result under a run spec (see the module docstring).

    >>> spec = {"judge": {"kind": "reference", "url": None, "model": "m", "reference_version": "1"},
    ...         "packages": {"ragas": "0.4.3"}}
    >>> cell_key(spec, "x", "1", "d") == cell_key({**spec, "run_id": "other"}, "x", "1", "d")
    True
    >>> cell_key(spec, "x", "1", "d") == cell_key(spec, "x", "2", "d")
    False
    """
    judge = spec.get("judge") or {}
    canon = {"judge": {k: judge.get(k) for k in ("kind", "url", "model", "reference_version")},
             "packages": packages_of(spec, metric), "metric": metric, "version": version, "case": digest}
    args = (spec.get("metric_args") or {}).get(metric)
    if args:   # a metric's own arguments (a similarity threshold) and the embeddings behind it
        canon["args"], canon["embeddings"] = args, spec.get("embeddings")
    return hashlib.sha256(json.dumps(canon, sort_keys=True).encode()).hexdigest()


class CellMemo:
    """The ``cell_results`` table of the run's judge cache file (the runner's connection)."""

    def __init__(self, path: str, spec: dict, run_id: str):
        self.spec, self.run_id = spec, run_id
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.execute(TABLE)

    def close(self) -> None:
        self._db.close()

    def lookup(self, case_id: str, metric: str, version: str, digest: str):
        """A :class:`~harness.run.cellwork.CellDone` for this run, or None (no entry, or an answer it used is
        no longer in the judge cache)."""
        row = self._db.execute("SELECT result FROM cell_results WHERE key = ?",
                               (cell_key(self.spec, metric, version, digest),)).fetchone()
        if row is None:
            return None
        d = json.loads(row[0])
        keys = {c["key"] for c in d["calls"]}
        if keys:
            # the judge cache's own table (harness/judge/cache.py): is every answer this cell used still there?
            marks = ",".join("?" * len(keys))
            have = self._db.execute(f"SELECT COUNT(*) FROM responses WHERE key IN ({marks})", tuple(keys)).fetchone()[0]
            if have != len(keys):
                return None
        return _replayed(d, self.run_id, case_id, metric, version, digest)

    def keep(self, done) -> None:
        """Remember a finished cell when it ended cleanly (no judge error on any call)."""
        if done.result.status not in KEEP or done.ledger.errors or not all(c.ok for c in done.calls):
            return
        blob = json.dumps({"result": dataclasses.asdict(done.result),
                           "calls": [dataclasses.asdict(c) for c in done.calls]}, ensure_ascii=False, default=str)
        if redact.has_secret(blob):   # as the judge cache: nothing that holds a secret is kept on disk
            return
        self._db.execute("INSERT OR REPLACE INTO cell_results VALUES (?, ?, ?, ?)",
                         (cell_key(self.spec, done.metric, done.version, done.digest), done.metric, blob, time.time()))


def _known(cls, d: dict) -> dict:
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in d.items() if k in names}


def _result(d: dict) -> CellResult:
    units = tuple(UnitVerdict(**{**_known(UnitVerdict, u), "span": tuple(u["span"]) if u.get("span") else None,
                                 "quotes": tuple(Quote(**_known(Quote, q)) for q in u.get("quotes") or ())})
                  for u in d.get("units") or ())
    return CellResult(d["status"], d.get("score"), d.get("reason"), units, tuple(d.get("flags") or ()),
                      dict(d.get("detail") or {}))


def _replayed(d: dict, run_id: str, case_id: str, metric: str, version: str, digest: str):
    """The cell as a replay would store it: every call answered from the cache, the ledger recounted by
    the gateway's own bookkeeping."""

    cell = Cell(run_id, case_id, metric)
    book = Gateway(_NoUpstream())
    for c in d["calls"]:
        fields = _known(CallRecord, {**c, "cell": cell})
        rec = CallRecord(**{**fields, "cached": True, "attempts": 0, "latency_ms": 0.0, "judge_ms": 0.0, "ok": True,
                              "error": None})
        book._record(cell, rec)
    ledger, calls = book.take(run_id, case_id, metric)
    return CellDone(case_id, metric, version, digest, _result(d["result"]), ledger if calls else Ledger(), calls, 0.0)


class _NoUpstream:
    kind, model = "none", "none"

    async def aclose(self):
        return None
