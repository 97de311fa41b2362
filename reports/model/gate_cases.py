"""``harness check``'s per-case thresholds and its regression gate against a baseline run.

- ``--min-case METRIC=VALUE``: every case's score on the metric must be at least VALUE (``--max-case``:
  at most VALUE, for a metric whose lower score is better, as ``--max`` in :mod:`reports.model.gate`). Each case is
  its own criterion (its own JUnit test case, named by case and metric). A cell that errored (or is missing) fails;
  a cell that is not a score for another reason (unscored, the vendor's NaN, not applicable) is
  skipped, with its status, never counted as a pass or a zero.
- ``--baseline RUN --max-drop D``: for every metric the two runs share, the cases both scored are
  paired and the mean paired difference (this run minus the baseline) gets a paired bootstrap 95%
  interval (:func:`reports.model.compare.compare`, cases resampled together). The metric fails when
  the mean fell by more than D **and** the whole interval lies below zero: a drop larger than the
  margin that the pairs show is not noise. The detail names the cases that fell furthest. "Fell" is
  read in the metric's own direction (a rise of Opik's hallucination score is a fall), and D is a share
  of the metric's range (0.05 is 0.05 on 0-1 and 0.2 on Azure's 1-5).
"""
from __future__ import annotations

from reports.model.compare import compare
from reports.model.gate import Outcome, bounds, holds, parse_min
from reports.model.matrix import build
from reports.model.orient import scale


def parse_min_case(item: str) -> tuple[str, float]:
    """``METRIC=VALUE`` of ``--min-case`` (ValueError naming the option).

    >>> parse_min_case("inhouse.span=0.5")
    ('inhouse.span', 0.5)
    """
    return parse_min(item, "--min-case")


def per_case(data, minimums: list[tuple[str, float]], maximums: list[tuple[str, float]] = ()) -> list[Outcome]:
    """One outcome per (case, metric) of every ``--min-case`` and ``--max-case`` criterion."""
    cells = build(data)
    out = []
    for metric, value, is_floor in bounds(minimums, maximums, data, per_case=True):
        for case in data.case_ids:
            cell = cells[(case, metric)]
            name = f"{case} / {metric} {'>=' if is_floor else '<='} {value:g}"
            if cell.status == "scored":
                out.append(Outcome(name, holds(cell.score, value, is_floor), f"score {cell.score:.4f}", case, metric))
            elif cell.status in ("error", "missing"):
                out.append(Outcome(name, False, f"errored: {cell.reason or 'no reason recorded'}", case, metric))
            else:
                out.append(Outcome(name, True, f"not a score ({cell.label}): skipped", case, metric, skipped=True))
    return out


def against_baseline(data, baseline, max_drop: float) -> list[Outcome]:
    """One outcome per metric both runs have: fails on a drop larger than ``max_drop`` whose paired
    interval lies below zero."""
    if not 0 <= max_drop <= 1:
        raise ValueError(f"--max-drop must be between 0 and 1, got {max_drop:g}")
    cmp = compare(baseline, data)
    if not cmp.metrics:
        raise ValueError(f"--baseline {baseline.run_id}: no metric in common with {data.run_id} "
                         f"(baseline has {', '.join(baseline.metrics)})")
    out = []
    for d in cmp.metrics:
        name = f"{d.metric} drop vs {baseline.run_id} <= {max_drop:g}"
        if d.diff is None:
            out.append(Outcome(name, False, "no case scored in both runs", metric=d.metric))
            continue
        lo, hi, higher = scale(d.metric)
        sign, margin = (1 if higher else -1), max_drop * (hi - lo)
        fell = [(c, a, b) for c, a, b in d.movers if sign * (b - a) < -margin]
        worst = ", ".join(f"{c} {a:.2f}->{b:.2f}" for c, a, b in fell[:5])
        detail = (f"mean {d.mean_a:.4f} -> {d.mean_b:.4f}, change {d.diff:+.4f} "
                  f"[{d.low:+.4f}, {d.high:+.4f}] over {d.n_pairs} paired case(s)"
                  + ("" if higher else "; lower is better: a rise is a drop")
                  + (f"; margin {margin:g} on the {lo:g}-{hi:g} scale" if (lo, hi) != (0.0, 1.0) else "")
                  + (f"; fell most: {worst}" if worst else ""))
        failed = (d.diff < -margin and d.high < 0) if higher else (d.diff > margin and d.low > 0)
        out.append(Outcome(name, not failed, detail, metric=d.metric))
    return out
