"""Per-metric summary: mean over scored cases with a seeded bootstrap 95% interval, and the counts
of cells that are not scores, with their reasons."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from harness.reports.analysis.agreement_stats import BIG, grouped_multiplicities, on_grid
from harness.reports.analysis.matrix import build

RESAMPLES = 2000
SEED = 20261130


def bootstrap_ci(values, resamples: int = RESAMPLES, seed: int = SEED, level: float = 0.95):
    """(mean, low, high) of the mean, by a seeded percentile bootstrap; None for no values.

    >>> bootstrap_ci([0.5, 0.5, 0.5])
    (0.5, 0.5, 0.5)
    >>> m, lo, hi = bootstrap_ci([0.0, 1.0, 1.0, 0.5, 0.75, 1.0])
    >>> round(m, 4), lo < m < hi, bootstrap_ci([0.0, 1.0, 1.0, 0.5, 0.75, 1.0]) == (m, lo, hi)
    (0.7083, True, True)
    >>> bootstrap_ci([]) is None
    True
    """
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    x = np.asarray(list(values), dtype=float)
    if x.size == 0:
        return None
    if x.size > BIG:   # each resample's counts of the distinct values, one multinomial (agreement_stats.BIG)
        vals, counts = np.unique(on_grid(x), return_counts=True)
        means = grouped_multiplicities(counts, resamples, seed) @ vals / x.size
    else:
        rng = np.random.default_rng(seed)
        means = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    a = (1 - level) / 2
    lo, hi = np.quantile(means, [a, 1 - a])
    return float(x.mean()), float(min(lo, x.mean())), float(max(hi, x.mean()))


@dataclass
class MetricSummary:
    """One metric's line in the summary table."""

    metric: str
    n_scored: int
    mean: float | None
    low: float | None
    high: float | None
    counts: dict[str, int]
    """status -> number of cells."""
    reasons: dict[str, list[tuple[str, list[str]]]] = field(default_factory=dict)
    """status -> [(reason, case ids)], for statuses other than scored."""
    flagged: list[tuple[str, str]] = field(default_factory=list)
    """(case id, flags) of scored cells that carry a degenerate-value flag."""
    fallbacks: int = 0
    """Cells the vendor still scored after swallowing a failed judge call (flag ``vendor_fallback``)."""


def summarise(data) -> list[MetricSummary]:
    """A summary per metric, in display order."""

    cells = build(data)
    out = []
    for m in data.metrics:   # one pass over the metric's cells
        column = [(c, cells[(c, m)]) for c in data.case_ids]
        scored = []
        counts: Counter = Counter()
        reasons: dict[str, dict[str, list[str]]] = {}
        flagged = []
        fallbacks = 0
        for c, cell in column:
            counts[cell.status] += 1
            fallbacks += "vendor_fallback" in cell.flags
            if cell.status == "scored":
                scored.append(cell.score)
                if cell.flags:
                    flagged.append((c, ", ".join(cell.flags)))
                continue
            reasons.setdefault(cell.status, {}).setdefault(cell.reason or "(no reason given)", []).append(c)
        ci = bootstrap_ci(scored)
        out.append(MetricSummary(m, len(scored), *(ci or (None, None, None)), dict(counts),
                                 {s: list(r.items()) for s, r in reasons.items()}, flagged, fallbacks))
    return out
