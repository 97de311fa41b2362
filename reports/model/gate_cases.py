"""``harness check``'s per-case thresholds and its regression gate against a baseline run.

- ``--min-case METRIC=VALUE``: every case's score on the metric must be at least VALUE. Each case is
  its own criterion (its own JUnit test case, named by case and metric). A cell that errored (or is missing) fails;
  a cell that is not a score for another reason (unscored, the vendor's NaN, not applicable) is
  skipped, with its status, never counted as a pass or a zero.
- ``--baseline RUN --max-drop D``: for every metric the two runs share, the cases both scored are
  paired and the mean paired difference (this run minus the baseline) gets a paired bootstrap 95%
  interval (:func:`reports.model.compare.compare`, cases resampled together). The metric fails when
  the mean fell by more than D **and** the whole interval lies below zero: a drop larger than the
  margin that the pairs show is not noise. The detail names the cases that fell furthest.
"""
from __future__ import annotations

from reports.model.compare import compare
from reports.model.gate import Outcome, parse_min
from reports.model.matrix import build


def parse_min_case(item: str) -> tuple[str, float]:
    """``METRIC=VALUE`` of ``--min-case`` (ValueError naming the option).

    >>> parse_min_case("inhouse.span=0.5")
    ('inhouse.span', 0.5)
    """
    try:
        return parse_min(item)
    except ValueError as e:
        raise ValueError(str(e).replace("--min ", "--min-case ", 1)) from None


def per_case(data, minimums: list[tuple[str, float]]) -> list[Outcome]:
    """One outcome per (case, metric) of every ``--min-case`` criterion."""
    cells = build(data)
    out = []
    for metric, floor in minimums:
        if metric not in data.metrics:
            raise ValueError(f"--min-case {metric}: the run has no metric {metric!r}; it has "
                             f"{', '.join(data.metrics)}")
        for case in data.case_ids:
            cell = cells[(case, metric)]
            name = f"{case} / {metric} >= {floor:g}"
            if cell.status == "scored":
                out.append(Outcome(name, cell.score >= floor, f"score {cell.score:.4f}", case, metric))
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
        fell = [(c, a, b) for c, a, b in d.movers if b - a < -max_drop]
        worst = ", ".join(f"{c} {a:.2f}->{b:.2f}" for c, a, b in fell[:5])
        detail = (f"mean {d.mean_a:.4f} -> {d.mean_b:.4f}, change {d.diff:+.4f} "
                  f"[{d.low:+.4f}, {d.high:+.4f}] over {d.n_pairs} paired case(s)"
                  + (f"; fell most: {worst}" if worst else ""))
        failed = d.diff < -max_drop and d.high < 0
        out.append(Outcome(name, not failed, detail, metric=d.metric))
    return out
