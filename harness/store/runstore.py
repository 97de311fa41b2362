"""The run store: one SQLite file per run, readable with pandas, resumable.

Tables (``RunStore.open(path).cells()`` etc. return DataFrames):

- ``meta``: the run spec as JSON (key ``spec``); each worker's start-up (key ``startup``: its vendor
  imports, when they were ready, their wall and CPU seconds, the cores it ran on; ``early``: the early worker of
  ``--workers N``, forked with the cheap vendor stacks only); what the runner scored itself while the vendor
  stacks imported (key ``overlap``);
- ``cases``: every case of the run as a JSONL object of the case format, with its digest, so a
  report never needs the case file (which may have moved or changed since);
- ``cells``: one row per (case, metric): status, score, reason, flags, detail, the ledger
  (calls, tokens, latency, time in the judge, cache hits, errors, retries; tokens billed upstream and
  served from the cache apart, live replies without usage, replies that did not fit the asked format), wall time,
  versions;
- ``units``: per-unit verdicts of each cell;
- ``cell_drift``: per cell, the drift sentinel: vendor versions, prompt-template and reply hashes, judge
  fingerprint (:mod:`harness.store.drift`);
- ``metric_facts``: per metric the run selected, the facts a report reads about it (:mod:`harness.store.facts`);
- ``calls``: one row per judge request of each cell: timing, attempts, tokens, whether the reply
  carried usage and whether it fit the requested format (``reply_fit``), the cache key, the error,
  and ``step``: the json_schema name, else the first 60 characters of the request's last user message
  (scrubbed of secrets); no headers, no key.

A cell and its units and calls are written in one transaction, so an interrupted run (even by
SIGKILL) leaves only whole cells. A rerun with the same run id skips cells that are finished with
the same case digest and metric version, and recomputes the rest (missing or errored cells).
"""
from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from dataclasses import asdict

from harness.cases.load import case_digest, case_to_json
from harness.core.records import CellResult, Ledger
from harness.core.redact import scrub
from harness.core.runspec import RunSpec
from harness.core.vocab import FINISHED
from harness.store import drift, repeats
from harness.store import facts as facts_table
from harness.store.readonly import connect_readonly

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cells (
    case_id TEXT NOT NULL, metric TEXT NOT NULL, metric_version TEXT NOT NULL, case_digest TEXT NOT NULL,
    status TEXT NOT NULL, score REAL, reason TEXT, flags TEXT NOT NULL, detail TEXT NOT NULL,
    calls INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
    latency_ms REAL NOT NULL, cache_hits INTEGER NOT NULL, errors INTEGER NOT NULL, retries INTEGER NOT NULL,
    wall_ms REAL NOT NULL, finished REAL NOT NULL, attempt INTEGER NOT NULL,
    billed_prompt_tokens INTEGER NOT NULL DEFAULT 0, billed_completion_tokens INTEGER NOT NULL DEFAULT 0,
    cached_prompt_tokens INTEGER NOT NULL DEFAULT 0, cached_completion_tokens INTEGER NOT NULL DEFAULT 0,
    usage_missing INTEGER NOT NULL DEFAULT 0, format_misfits INTEGER NOT NULL DEFAULT 0, judge_ms REAL,
    PRIMARY KEY (case_id, metric));
CREATE TABLE IF NOT EXISTS cases (
    case_id TEXT PRIMARY KEY, position INTEGER NOT NULL, digest TEXT NOT NULL, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS units (
    case_id TEXT NOT NULL, metric TEXT NOT NULL, idx INTEGER NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL,
    verdict TEXT NOT NULL, raw_verdict TEXT NOT NULL, reason TEXT, span_start INTEGER, span_end INTEGER,
    quotes TEXT NOT NULL, detail TEXT NOT NULL, PRIMARY KEY (case_id, metric, idx));
CREATE TABLE IF NOT EXISTS calls (
    case_id TEXT NOT NULL, metric TEXT NOT NULL, seq INTEGER NOT NULL, started REAL NOT NULL,
    latency_ms REAL NOT NULL, ok INTEGER NOT NULL, cached INTEGER NOT NULL, attempts INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, request_key TEXT NOT NULL,
    step TEXT NOT NULL, error TEXT, usage INTEGER NOT NULL DEFAULT 1, reply_fit TEXT, judge_ms REAL,
    PRIMARY KEY (case_id, metric, seq));
"""
ADDED = {
    "cells": ("billed_prompt_tokens INTEGER NOT NULL DEFAULT 0", "billed_completion_tokens INTEGER NOT NULL DEFAULT 0",
              "cached_prompt_tokens INTEGER NOT NULL DEFAULT 0", "cached_completion_tokens INTEGER NOT NULL DEFAULT 0",
              "usage_missing INTEGER NOT NULL DEFAULT 0", "format_misfits INTEGER NOT NULL DEFAULT 0", "judge_ms REAL"),
    "calls": ("usage INTEGER NOT NULL DEFAULT 1", "reply_fit TEXT", "judge_ms REAL"),
}
"""Columns added since the first store layout: a store written before them gets them on open (the repeat
tables too). ``judge_ms`` (time in the judge, queue left out) stays NULL in the rows of a store written
before it: unknown, and a report says so rather than reading 0."""

CELL_COLUMNS = ("case_id, metric, metric_version, case_digest, status, score, reason, flags, detail, calls, "
                "prompt_tokens, completion_tokens, latency_ms, cache_hits, errors, retries, wall_ms, finished, "
                "attempt, billed_prompt_tokens, billed_completion_tokens, cached_prompt_tokens, "
                "cached_completion_tokens, usage_missing, format_misfits, judge_ms")
UNIT_COLUMNS = ("case_id, metric, idx, kind, text, verdict, raw_verdict, reason, span_start, span_end, quotes, "
                "detail")
CALL_COLUMNS = ("case_id, metric, seq, started, latency_ms, ok, cached, attempts, prompt_tokens, completion_tokens, "
                "request_key, step, error, usage, reply_fit, judge_ms")

FINAL = FINISHED
"""Statuses a resumed run keeps; ``error`` cells are recomputed."""


def _json(v) -> str:
    """JSON text as the store keeps it: scrubbed of any secret (see ``harness.core.redact``)."""
    return scrub(json.dumps(v, ensure_ascii=False, sort_keys=True, default=str))


class StoreWriteError(Exception):
    """The run store could not be written (a full disk, an I/O error); the cells already written stay."""

    def __init__(self, path: str, error: BaseException):
        super().__init__(f"{path}: cannot write the run store: {error} (is the disk full?)")
        self.path, self.error = path, error


class RunStore:
    """Open or create with :meth:`create` / :meth:`open`."""

    FILENAME = "store.sqlite"

    def __init__(self, path: str, readonly: bool = False):
        self.path = path
        self.readonly = readonly
        self._batch = None
        if readonly:
            self.db = connect_readonly(path)
            return
        try:
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA busy_timeout=10000")
            self.db.executescript(SCHEMA)
            self.db.executescript(repeats.schema(SCHEMA))
            self.db.executescript(drift.SCHEMA)
            self.db.executescript(facts_table.SCHEMA)
            self._add_columns()
        except sqlite3.Error as e:
            raise StoreWriteError(path, e) from None

    def _add_columns(self) -> None:
        for base, cols in ADDED.items():
            for table in (base, f"repeat_{base}"):
                have = {r[1] for r in self.db.execute(f"PRAGMA table_info({table})")}
                for col in cols:
                    if have and col.split()[0] not in have:
                        self.db.execute(f"ALTER TABLE {table} ADD COLUMN {col}")

    @classmethod
    def create(cls, run_dir: str) -> "RunStore":
        os.makedirs(run_dir, exist_ok=True)
        return cls(os.path.join(run_dir, cls.FILENAME))

    @classmethod
    def open(cls, path: str, readonly: bool = True) -> "RunStore":
        """Open an existing store (a run directory or the ``store.sqlite`` in it), read-only unless
        asked: reading a run (a report, a table) never needs write access to it."""
        if os.path.isdir(path):
            path = os.path.join(path, cls.FILENAME)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no run store at {path}")
        return cls(path, readonly=readonly)

    def close(self) -> None:
        self.db.close()

    # --- spec --------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _transaction(self):
        """One atomic write; a failure to write (a full disk, an I/O error) is :class:`StoreWriteError`.
        Inside :meth:`batch`, the batch's transaction."""
        if self._batch is not None:
            yield self._batch
            return
        cur = self.db.cursor()
        try:
            cur.execute("BEGIN IMMEDIATE")
            yield cur
            cur.execute("COMMIT")
        except BaseException as e:
            if self.db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    cur.execute("ROLLBACK")
            if isinstance(e, sqlite3.Error):
                raise StoreWriteError(self.path, e) from None
            raise

    def write_spec(self, spec: dict) -> None:
        self.write_meta("spec", spec)

    def write_meta(self, key: str, value) -> None:
        """Keep a fact of the run as JSON under ``key`` (``spec``: the run spec; ``startup``: each worker's
        vendor imports: which, when ready, wall and CPU seconds, its cores)."""
        with self._transaction() as cur:
            cur.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, _json(value)))

    def meta(self, key: str):
        """A fact kept with :meth:`write_meta` (None if absent)."""
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def spec(self) -> dict:
        return self.meta("spec") or {}

    def run_spec(self) -> RunSpec:
        """The run spec as a typed record (:class:`harness.core.runspec.RunSpec`)."""
        return RunSpec.from_json(self.spec())

    def write_metric_facts(self, every) -> None:
        """Keep the facts of the run's metrics (:class:`harness.metric.facts.MetricFacts`; see
        :mod:`harness.store.facts`)."""
        with self._transaction() as cur:
            facts_table.write(cur, every)

    def metric_facts(self) -> dict:
        """metric -> its recorded :class:`harness.metric.facts.MetricFacts` ({} for a store written before them)."""
        return facts_table.read(self.db)

    # --- cases -------------------------------------------------------------------------------

    def write_cases(self, cases) -> None:
        """Keep the run's cases (replacing any earlier version of a case on resume)."""

        rows = [(c.id, i, case_digest(c), _json(case_to_json(c))) for i, c in enumerate(cases)]
        with self._transaction() as cur:
            cur.executemany("INSERT OR REPLACE INTO cases VALUES (?,?,?,?)", rows)

    def case_objects(self) -> list[tuple[str, str, dict]]:
        """(case_id, digest, case JSON object), in run order."""
        return [(r[0], r[1], json.loads(r[2]))
                for r in self.db.execute("SELECT case_id, digest, json FROM cases ORDER BY position")]

    # --- cells -------------------------------------------------------------------------------

    def finished(self) -> dict[tuple[str, str], tuple[str, str]]:
        """(case_id, metric) -> (case_digest, metric_version) for every cell a resume may keep: a final
        status, and no failed judge call (a store written before that rule may hold such a cell)."""
        q = (f"SELECT case_id, metric, case_digest, metric_version FROM cells "
             f"WHERE status IN ({','.join('?' * len(FINAL))}) AND errors = 0")
        return {(r[0], r[1]): (r[2], r[3]) for r in self.db.execute(q, FINAL)}

    @contextlib.contextmanager
    def batch(self):
        """Every :meth:`write_cell` in the block joins one transaction, committed at the block's end:
        one commit for the cells that finished together (a worker run hands them over in bursts). A
        cell is still in the store whole or not at all; a failure writes none of the block's cells."""
        if self._batch is not None:
            yield
            return
        with self._transaction() as cur:
            self._batch = cur
            try:
                yield
            finally:
                self._batch = None

    def _attempt_of(self, case_id: str, metric: str, repeat: int = 0) -> int:
        """The cell's earlier attempts (0: a new cell): one primary-key lookup, so nothing is kept per
        cell written (a million-cell run's memory stays flat)."""
        if repeat:
            row = self.db.execute("SELECT attempt FROM repeat_cells WHERE case_id = ? AND metric = ? AND repeat = ?",
                                  (case_id, metric, repeat)).fetchone()
        else:
            row = self.db.execute("SELECT attempt FROM cells WHERE case_id = ? AND metric = ?",
                                  (case_id, metric)).fetchone()
        return row[0] if row else 0

    def write_cell(self, case_id: str, metric: str, metric_version: str, case_digest: str,
                   result: CellResult, ledger: Ledger, calls: list, wall_ms: float, repeat: int = 0,
                   vendor: str = "") -> None:
        """Write one finished cell, its units and its calls, atomically (repeat k > 0 of ``--repeats``: into
        the repeat tables, :mod:`harness.store.repeats`), with its drift facts (:mod:`harness.store.drift`;
        ``vendor``: its vendor distributions' versions)."""
        cells_t, units_t, calls_t = repeats.tables(repeat)
        col, val = ("repeat, ", (repeat,)) if repeat else ("", ())
        attempt = self._attempt_of(case_id, metric, repeat) + 1
        with self._transaction() as cur:
            if attempt > 1:   # a recomputed cell: its earlier units and calls go
                where = "case_id = ? AND metric = ?" + (" AND repeat = ?" if repeat else "")
                cur.execute(f"DELETE FROM {units_t} WHERE {where}", (case_id, metric, *val))
                cur.execute(f"DELETE FROM {calls_t} WHERE {where}", (case_id, metric, *val))
            cur.execute(
                f"INSERT OR REPLACE INTO {cells_t} ({col}{CELL_COLUMNS}) VALUES ({','.join('?' * (26 + len(val)))})",
                (*val, case_id, metric, metric_version, case_digest, result.status, result.score, scrub(result.reason),
                 _json(list(result.flags)), _json(result.detail), ledger.calls, ledger.prompt_tokens,
                 ledger.completion_tokens, ledger.latency_ms, ledger.cache_hits, ledger.errors, ledger.retries,
                 wall_ms, time.time(), attempt, ledger.billed_prompt_tokens, ledger.billed_completion_tokens,
                 ledger.cached_prompt_tokens, ledger.cached_completion_tokens, ledger.usage_missing,
                 ledger.format_misfits, ledger.judge_ms))
            cur.executemany(
                f"INSERT INTO {units_t} ({col}{UNIT_COLUMNS}) VALUES ({','.join('?' * (12 + len(val)))})",
                [(*val, case_id, metric, u.index, u.kind, scrub(u.text), u.verdict, scrub(u.raw_verdict), scrub(u.reason),
                  u.span[0] if u.span else None, u.span[1] if u.span else None,
                  _json([asdict(q) for q in u.quotes]), _json(u.detail)) for u in result.units])
            cur.executemany(
                f"INSERT INTO {calls_t} ({col}{CALL_COLUMNS}) VALUES ({','.join('?' * (16 + len(val)))})",
                [(*val, case_id, metric, i, c.started, c.latency_ms, int(c.ok), int(c.cached), c.attempts,
                  c.prompt_tokens, c.completion_tokens, c.key, scrub(c.step), scrub(c.error),
                  int(getattr(c, "usage", True)), getattr(c, "reply_fit", None), getattr(c, "judge_ms", 0.0))
                 for i, c in enumerate(calls)])
            drift.write(cur, case_id, metric, repeat, drift.cell_facts(calls, vendor))

    # --- pandas views ------------------------------------------------------------------------

    def _df(self, table: str):
        import pandas as pd  # noqa: PLC0415 - lazy: pandas costs ~0.5 s to import

        return pd.read_sql_query(f"SELECT * FROM {table}", self.db)

    def cells(self):
        """DataFrame of cells (``flags`` and ``detail`` as JSON text)."""
        return self._df("cells")

    def units(self):
        """DataFrame of per-unit verdicts (``quotes`` and ``detail`` as JSON text)."""
        return self._df("units")

    def calls(self):
        """DataFrame of judge requests."""
        return self._df("calls")

    def drift(self, repeat: int = 0) -> dict[tuple[str, str], dict]:
        """(case_id, metric) -> the cell's drift facts (:mod:`harness.store.drift`); {} for an older store."""
        return drift.read(self.db, repeat)

    def rows(self, sql: str, params=()) -> list[tuple]:
        return list(self.db.execute(sql, params))
