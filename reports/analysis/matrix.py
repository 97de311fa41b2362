"""The score matrix: cases x metrics, each cell a number or a visibly different non-score mark.

A cell that is not a score (unscored, unscored by the vendor, errored, not applicable, missing)
never shows as a number and never as 0: it carries its own label, colour and hatching.
"""
from __future__ import annotations

from dataclasses import dataclass

from harness.core import vocab
from harness.reports.analysis.data import cell_columns

NAN = float("nan")


@dataclass(frozen=True)
class Cell:
    """One matrix cell."""

    status: str
    """scored | unscored | vendor_nan | error | not_applicable | missing."""
    score: float | None
    """The score, for a scored cell only."""
    flags: tuple[str, ...] = ()
    """Degenerate-value flags."""
    reason: str | None = None
    """Why the cell is not a score, or the vendor's reason."""

    @property
    def label(self) -> str:
        """How the cell reads.

        >>> Cell("scored", 0.75).label, Cell("scored", 1.0, ("no_claims_scored_1",)).label
        ('0.75', '1.00*')
        >>> Cell("vendor_nan", None).label, Cell("not_applicable", None).label, Cell("error", None).label
        ('NaN', 'n/a', 'ERROR')
        """
        if self.status == "scored":
            return f"{self.score:.2f}" + (vocab.DEGENERATE.short if self.flags else "")
        return vocab.status(self.status).short


def build(data) -> dict[tuple[str, str], Cell]:
    """(case_id, metric) -> Cell for every case and metric of the run (missing cells included); built once per
    loaded run (the report, its statistics and its divergences read the same cells)."""
    kept = getattr(data, "_matrix_cells", None)
    if kept is not None:
        return kept
    cols = cell_columns(data)
    if cols is not None:   # the cells as the store gave them (no row objects made for a million cells)
        rows = dict(zip(zip(cols["case_id"], cols["metric"]),
                        zip(cols["status"], cols["score"], cols["reason"], cols["flags"])))
        cell = lambda cid, m: rows.get((cid, m))  # noqa: E731
    else:
        cell = lambda cid, m: _row(data, cid, m)  # noqa: E731
    out = {}
    for cid in data.case_ids:
        for m in data.metrics:
            r = cell(cid, m)
            if r is None:
                out[(cid, m)] = Cell("missing", None)
                continue
            status, score, reason, flags = r
            score = (NAN if score is None else float(score)) if status == "scored" else None
            out[(cid, m)] = Cell(status, score, tuple(flags), reason if isinstance(reason, str) else None)
    try:
        data._matrix_cells = out
    except AttributeError:   # a read-only stand-in: build again next time
        pass
    return out


def _row(data, case_id: str, metric: str) -> tuple | None:
    """(status, score, reason, flags) of the cell ``data.cell`` gives, or None."""
    r = data.cell(case_id, metric)
    return None if r is None else (r.status, r.score, r.reason, r.flags)


def legend() -> list[tuple[str, str, str]]:
    """(label, meaning, status) for the legend, the star included (from :mod:`harness.core.vocab`)."""
    return vocab.legend()
