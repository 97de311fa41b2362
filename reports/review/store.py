"""The labels file of a review: one SQLite file that holds the sample and every save of every reviewer.

Tables:

- ``meta``: how the sample was drawn (source, run id, seed, size, population, uniform share, created);
- ``sample``: the answers of the sample in review order, each with its inclusion probability, the
  disagreement it was weighted by, the case (a JSONL object of the case format) and what the run's
  metrics said about it (scores and unit verdicts, shown only on request);
- ``labels``: one row per save: reviewer, case, time (UTC, ISO 8601) and the answer's whole label state.
  Nothing is ever updated in place: a reviewer's labels for an answer are their latest row, and the
  history stays.

Every save is its own committed transaction (write-ahead log, ``synchronous=FULL``): once the server has answered a
save, killing it (even with SIGKILL) loses nothing.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
from urllib.parse import quote

from harness.reports.review.sampling import Pick

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sample (
    pos INTEGER PRIMARY KEY, case_id TEXT NOT NULL UNIQUE, probability REAL NOT NULL,
    disagreement REAL NOT NULL, case_json TEXT NOT NULL, verdicts_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS labels (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, reviewer TEXT NOT NULL, case_id TEXT NOT NULL,
    saved_at TEXT NOT NULL, state_json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS labels_by_reviewer ON labels (reviewer, case_id, seq);
"""


TABLES = {"meta", "sample", "labels", "sqlite_sequence"}
"""The tables of a labels file (``sqlite_sequence`` is SQLite's own, for the AUTOINCREMENT)."""


class LabelsFileError(ValueError):
    """A ``--labels`` file that is not a labels file, or cannot be read or written (the message names it)."""


def foreign_tables(path: str) -> list[str]:
    """Tables of the SQLite file at ``path`` that a labels file does not hold (read only; [] for a file that
    does not exist or is empty). sqlite3.Error for a file SQLite cannot read."""
    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        return []
    db = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True)
    try:
        names = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    finally:
        db.close()
    return sorted(set(names) - TABLES)


class LabelStore:
    """A review's labels file (see the module docstring)."""

    def __init__(self, path: str, read_only: bool = False):
        """Open (``read_only``: only read) or make the labels file at ``path``; LabelsFileError naming it when it
        is another kind of SQLite file (a run's store never gets label tables) or SQLite cannot read it."""
        self.path = path
        try:
            other = foreign_tables(path)
            if other:
                what = "a run's store" if "cells" in other else f"an SQLite file with other tables ({', '.join(other[:4])})"
                raise LabelsFileError(f"--labels {path}: is {what}, not a labels file; name a new file for the labels "
                                      "(e.g. labels.sqlite)")
            if read_only:
                self.db = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True, isolation_level=None,
                                          check_same_thread=False)
                self.db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
                return
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")   # one fsync per save instead of the rollback journal's several
            self.db.execute("PRAGMA synchronous=FULL")   # ... and that fsync happens before the save returns
            self.db.executescript(SCHEMA)
        except sqlite3.Error as e:
            raise LabelsFileError(f"--labels {path}: cannot be opened as a labels file ({e})") from None

    @classmethod
    def open_existing(cls, path: str) -> "LabelStore":
        """Open, read only, a labels file that must already hold a sample (ValueError naming it otherwise)."""
        if not os.path.isfile(path):
            raise ValueError(f"no labels file {path!r} (harness review SOURCE --labels {path} --sample N makes one)")
        store = cls(path, read_only=True)
        try:
            picks = store.picks()
        except sqlite3.Error as e:
            store.close()
            raise LabelsFileError(f"--labels {path}: cannot be opened as a labels file ({e})") from None
        if not picks:
            store.close()
            raise ValueError(f"labels file {path!r} holds no sample (harness review SOURCE --sample N draws one)")
        return store

    def check_writable(self) -> None:
        """LabelsFileError when a save could not be written (a read-only file, folder or disk): said at start,
        never after a reviewer's first label."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("INSERT INTO meta VALUES ('write-check', '0')")
            self.db.execute("ROLLBACK")
        except sqlite3.Error as e:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise LabelsFileError(f"--labels {self.path}: cannot be written ({e}); the review app saves every label "
                                  "there at once: give a labels file you can write") from None

    def close(self) -> None:
        self.db.close()

    def meta(self) -> dict:
        """How the sample was drawn."""
        return {k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM meta")}

    def set_guidelines(self, text: str, name: str) -> None:
        """Keep the labelling guidelines (``harness review --guidelines FILE``) in the labels file, so every reviewer
        of the sample reads the same text; a later call replaces them (the file's name and time are kept with it)."""
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('guidelines', ?)",
                        (json.dumps({"file": name, "text": text, "set_at": now}, ensure_ascii=False),))

    def guidelines(self) -> dict | None:
        """``{"file", "text", "set_at"}`` of the guidelines, or None when none were given."""
        return self.meta().get("guidelines")

    def set_assignment(self, assignment: dict) -> None:
        """Keep who labels which answers (:mod:`harness.reports.review.assign`); a later ``--assign`` replaces it."""
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('assignment', ?)", (json.dumps(assignment),))

    def has_sample(self) -> bool:
        return self.db.execute("SELECT COUNT(*) FROM sample").fetchone()[0] > 0

    def write_sample(self, picks: list[Pick], cases: dict[str, dict], verdicts: dict[str, dict], meta: dict) -> None:
        """Store a freshly drawn sample (once: a labels file keeps the sample it was made with)."""
        if self.has_sample():
            raise ValueError(f"labels file {self.path!r} already holds a sample; use another --labels file")
        with self.db:
            self.db.execute("BEGIN")
            for k, v in meta.items():
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (k, json.dumps(v)))
            for pos, p in enumerate(picks):
                self.db.execute("INSERT INTO sample VALUES (?, ?, ?, ?, ?, ?)",
                                (pos, p.case_id, p.probability, p.disagreement,
                                 json.dumps(cases[p.case_id], ensure_ascii=False),
                                 json.dumps(verdicts.get(p.case_id) or {}, ensure_ascii=False)))

    def append_wave(self, picks: list[Pick], cases: dict[str, dict], verdicts: dict[str, dict], wave: dict) -> None:
        """Add a later wave of the sample (``harness review --next``) after the answers already drawn; the meta's
        ``waves`` (``[{"start", "size", ...}]``) records where each wave starts, so the design weights can combine
        them (:mod:`harness.reports.review.waves`)."""
        have = self.picks()
        taken = {p.case_id for p in have}
        if any(p.case_id in taken for p in picks):
            raise ValueError("a later wave cannot draw an answer already in the sample")
        waves = self.meta().get("waves") or [{"start": 0, "size": len(have)}]
        waves.append({**wave, "start": len(have), "size": len(picks)})
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('waves', ?)", (json.dumps(waves),))
            for k, p in enumerate(picks):
                self.db.execute("INSERT INTO sample VALUES (?, ?, ?, ?, ?, ?)",
                                (len(have) + k, p.case_id, p.probability, p.disagreement,
                                 json.dumps(cases[p.case_id], ensure_ascii=False),
                                 json.dumps(verdicts.get(p.case_id) or {}, ensure_ascii=False)))

    def picks(self) -> list[Pick]:
        """The sample, in review order."""
        rows = self.db.execute("SELECT case_id, probability, disagreement FROM sample ORDER BY pos")
        return [Pick(c, p, d) for c, p, d in rows]

    def case_json(self, case_id: str) -> dict:
        row = self.db.execute("SELECT case_json FROM sample WHERE case_id = ?", (case_id,)).fetchone()
        if row is None:
            raise KeyError(case_id)
        return json.loads(row[0])

    def verdicts(self, case_id: str) -> dict:
        row = self.db.execute("SELECT verdicts_json FROM sample WHERE case_id = ?", (case_id,)).fetchone()
        return json.loads(row[0]) if row else {}

    def save(self, reviewer: str, case_id: str, state: dict) -> str:
        """Append one save (durable when this returns); return its time."""
        now = time.time()
        at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"
        self.db.execute("INSERT INTO labels (reviewer, case_id, saved_at, state_json) VALUES (?, ?, ?, ?)",
                        (reviewer, case_id, at, json.dumps(state, ensure_ascii=False, sort_keys=True)))
        return at

    def latest(self, reviewer: str | None = None) -> dict[str, dict[str, dict]]:
        """reviewer -> case id -> that reviewer's latest state of the answer (with ``saved_at``)."""
        sql = ("SELECT l.reviewer, l.case_id, l.saved_at, l.state_json FROM labels l JOIN "
               "(SELECT reviewer, case_id, MAX(seq) AS seq FROM labels GROUP BY reviewer, case_id) m "
               "ON l.seq = m.seq")
        out: dict[str, dict[str, dict]] = {}
        for r, cid, at, state in self.db.execute(sql):
            if reviewer is None or r == reviewer:
                out.setdefault(r, {})[cid] = {**json.loads(state), "saved_at": at}
        return out

    def adjudicators(self) -> list[str]:
        """The reviewers named as adjudicators of this sample (``harness review --adjudicator NAME``): their labels
        settle the other reviewers' disagreements and they are not counted as raters."""
        return list(self.meta().get("adjudicators") or [])

    def add_adjudicator(self, name: str) -> None:
        """Record ``name`` as an adjudicator (kept; naming someone twice changes nothing)."""
        names = self.adjudicators()
        if name not in names:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('adjudicators', ?)", (json.dumps(names + [name]),))

    def reviewers(self) -> list[str]:
        return [r for (r,) in self.db.execute("SELECT DISTINCT reviewer FROM labels ORDER BY reviewer")]

    def saves(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM labels").fetchone()[0]
