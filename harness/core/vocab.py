"""One vocabulary: every cell status and every flag, defined once with its label, short label and
one-line explanation. The terminal table and its legend, the scores CSV (the keys), the HTML and
Markdown reports and the metric cards all read these; no renderer spells a status its own way.

A metric's own flags are declared on its class (``flags``, a tuple of :class:`Term`); the ones any
metric may raise are in :data:`FLAGS`. A flag nobody declared still renders (its key), so a new flag
never breaks a report, but it should be declared.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """One status or flag."""

    key: str
    """What the store, the CSV and the code say (``vendor_nan``)."""
    label: str
    """Words for prose and counts (``unscored by the vendor``)."""
    short: str
    """What a table cell shows (``NaN``)."""
    explain: str
    """One line: what it means."""

    @property
    def named(self) -> str:
        """The label with the short label beside it when they differ: ``unscored by the vendor (NaN)``.

        >>> STATUSES["vendor_nan"].named, STATUSES["unscored"].named
        ('unscored by the vendor (NaN)', 'unscored')
        """
        return self.label if self.short == self.label else f"{self.label} ({self.short})"


Flag = Term
"""A flag is a :class:`Term` too."""

STATUSES: dict[str, Term] = {t.key: t for t in (
    Term("scored", "scored", "scored", "a score, exactly as the metric computes it"),
    Term("unscored", "unscored", "unscored", "the harness's own metric declines (e.g. no claims)"),
    Term("vendor_nan", "unscored by the vendor", "NaN", "the vendor returned NaN (or its unparsable sentinel), kept with its reason"),
    Term("not_applicable", "not applicable", "n/a", "the metric does not apply to this case"),
    Term("error", "errored", "ERROR", "the cell failed (judge fault or vendor exception), never scored 0"),
    Term("missing", "not run", "-", "no cell in the store"),
)}
"""Every cell status, in the order counts and legends list them."""

CELL_STATUSES = tuple(k for k in STATUSES if k != "missing")
"""The statuses a stored cell can have (``missing`` is the absence of one)."""

FINISHED = tuple(k for k in CELL_STATUSES if k != "error")
"""The statuses of a finished cell: kept on resume and by the cell cache (an error is retried)."""

NOT_SCORES = tuple(k for k in STATUSES if k != "scored")
"""The statuses of a cell that carries no score (never shown as a number, never 0)."""

DEGENERATE = Term("degenerate", "degenerate value kept", "*",
                  "a degenerate value kept exactly as the vendor returns it, and flagged")
"""The mark beside a scored value that carries a flag (``1.00*``)."""

FLAGS: dict[str, Term] = {t.key: t for t in (
    Term("vendor_raised_on_empty_input", "vendor raised on empty input", "empty input",
         "the vendor raises on an empty answer or context before any judge call"),
    Term("no_claims_scored_1", "no claims, scored 1", "no claims = 1",
         "the vendor scores an answer with no claims as fully faithful"),
    Term("all_trivial_scored_0", "all sentences trivial, scored 0", "all trivial = 0",
         "the vendor's filter left no sentence to judge and it returns 0.0"),
    Term("judge_failure_fallback", "judge failure, vendor fell back", "fallback",
         "a judge call failed and the vendor silently fell back to a default; the cell still scored"),
    Term("vendor_fallback", "scored after a silent fallback", "silent fallback",
         "the vendor swallowed a failed judge call and still scored; the reason says what it did, the "
         "report counts such cells per metric"),
)}
"""Flags several metrics raise; a metric's own flags are on its class (``flags``)."""


def status(key: str) -> Term:
    """The term of a status (an unknown key renders as itself).

    >>> status("not_applicable").short, status("weird").label
    ('n/a', 'weird')
    """
    return STATUSES.get(key) or Term(key, key, key, key)


def flag(key: str, metric: type | None = None) -> Term:
    """The term of a flag: the metric's own declaration first, then the shared ones, else the key."""
    for t in getattr(metric, "flags", ()) or ():
        if t.key == key:
            return t
    return FLAGS.get(key) or Term(key, key.replace("_", " "), key, key.replace("_", " "))


def legend() -> list[tuple[str, str, str]]:
    """(short label, explanation, status key) for every non-score mark, then the degenerate star."""
    rows = [(t.short, t.explain, t.key) for k, t in STATUSES.items() if k != "scored"]
    return rows + [("0.75" + DEGENERATE.short, DEGENERATE.explain, "scored")]
