"""The terminal score table and the scores CSV, read from a run store."""
from __future__ import annotations

import csv
import json

from harness.core import vocab
from harness.core.redact import scrub

LEGEND = "; ".join(f"{t.short} = {t.explain}" for k, t in vocab.STATUSES.items() if k not in ("scored", "missing")) \
    + f"; {vocab.DEGENERATE.short} = {vocab.DEGENERATE.explain}"
"""The line under the terminal table, from :mod:`harness.core.vocab`."""


def cell_text(status: str, score: float | None, flags: list[str]) -> str:
    """How one cell shows in the table.

    >>> cell_text("scored", 0.75, []), cell_text("scored", 1, ["no_claims_scored_1"]), cell_text("vendor_nan", None, [])
    ('0.75', '1.00*', 'NaN')
    """
    if status != "scored":
        return vocab.status(status).short
    return f"{score:.2f}" + (vocab.DEGENERATE.short if flags else "")


def render(store, metrics: list[str], case_ids: list[str], short_names: dict[str, str]) -> str:
    """Cases x metrics, in the given orders."""
    cells = {(r[0], r[1]): (r[2], r[3], json.loads(r[4]))
             for r in store.rows("SELECT case_id, metric, status, score, flags FROM cells")}
    heads = [short_names.get(m, m) for m in metrics]
    w0 = max([len("case")] + [len(c) for c in case_ids])
    widths = [max(len(h), 8) for h in heads]
    lines = ["  ".join(["case".ljust(w0)] + [h.ljust(w) for h, w in zip(heads, widths)]).rstrip()]
    for cid in case_ids:
        row = [cid.ljust(w0)]
        for m, w in zip(metrics, widths):
            got = cells.get((cid, m))
            row.append((cell_text(*got) if got else "-").ljust(w))
        lines.append("  ".join(row).rstrip())
    return "\n".join(lines)


def counts_lines(counts: dict, metrics: list[str]) -> list[str]:
    """One line per metric: how many cells have each status (labels from :mod:`harness.core.vocab`)."""
    out = []
    w = max(len(m) for m in metrics) if metrics else 0
    keys = [k for k in vocab.STATUSES if k != "missing"]
    for m in metrics:
        c = counts.get(m, {})
        out.append(f"  {m.ljust(w)}  " + ", ".join(f"{vocab.status(k).label} {c.get(k, 0)}" for k in keys))
    return out


def write_scores_csv(store, path: str, metrics: list[str], case_ids: list[str]) -> None:
    """Columns case_id, metric, score, status; score empty when not scored."""
    rows = {(r[0], r[1]): (r[2], r[3]) for r in store.rows("SELECT case_id, metric, status, score FROM cells")}
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "metric", "score", "status"])
        for cid in case_ids:
            for m in metrics:
                status, score = rows.get((cid, m), ("missing", None))
                w.writerow([scrub(cid), m, "" if score is None or status != "scored" else repr(float(score)), status])


def error_lines(store, limit: int = 10) -> list[str]:
    rows = store.rows("SELECT case_id, metric, reason FROM cells WHERE status = 'error' ORDER BY metric, case_id")
    out = [f"  {m} / {c}: {r}" for c, m, r in rows[:limit]]
    if len(rows) > limit:
        out.append(f"  ... and {len(rows) - limit} more (see the store)")
    return out
