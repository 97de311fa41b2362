"""``harness check``'s per-case thresholds and its regression gate against a baseline run.

- ``--min-case METRIC=VALUE``: every case's score on the metric must be at least VALUE (``--max-case``:
  at most VALUE, for a metric whose lower score is better, as ``--max`` in :mod:`harness.reports.analysis.gate`). Each case is
  its own criterion (its own JUnit test case, named by case and metric). A cell that errored (or is missing) fails;
  a cell that is not a score for another reason (unscored, the vendor's NaN, not applicable) is
  skipped, with its status, never counted as a pass or a zero.
- ``--baseline RUN --max-drop D``: for every metric the two runs share, the cases both scored are
  paired and the mean paired difference (this run minus the baseline) gets a paired bootstrap 95%
  interval (:func:`harness.reports.analysis.compare.compare`, cases resampled together). The metric fails when
  the mean fell by more than D **and** the whole interval lies below zero: a drop larger than the
  margin that the pairs show is not noise. The detail names the cases that fell furthest. "Fell" is
  read in the metric's own direction (a rise of Opik's hallucination score is a fall), and D is a share
  of the metric's range (0.05 is 0.05 on 0-1 and 0.2 on Azure's 1-5).
"""
from __future__ import annotations

from harness.reports.analysis.compare import compare
from harness.reports.analysis.gate import Outcome, bounds, holds, parse_min
from harness.reports.analysis.matrix import build


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
                ok = holds(cell.score, value, is_floor)
                out.append(Outcome(name, ok, f"score {cell.score:.4f}" + ("" if ok else why(data, case, metric)),
                                   case, metric))
            elif cell.status in ("error", "missing"):
                out.append(Outcome(name, False, f"errored: {cell.reason or 'no reason recorded'}", case, metric))
            else:
                out.append(Outcome(name, True, f"not a score ({cell.label}): skipped", case, metric, skipped=True))
    return out


def why(data, case: str, metric: str, limit: int = 3) -> str:
    """The reason a case failed, from the metric's own unit verdicts: its units that are not supported (the
    claim's text, the verdict, the judge's reason), or, for a whole-answer metric, the judge's reason."""
    units = data.units
    if units is None or not len(units):
        return ""
    mine = units[(units["case_id"] == case) & (units["metric"] == metric)]
    bad = mine[mine["verdict"] != "supported"]
    if not len(bad):
        return ""
    parts = []
    for _, u in bad.head(limit).iterrows():
        text = " ".join(str(u["text"]).split())
        reason = " ".join(str(u["reason"] or "").split())
        verdict = "" if u["verdict"] == "unsupported" else f"{u['verdict']} "
        parts.append(f"{verdict}{text[:80]!r}" + (f" ({reason[:100]})" if reason else ""))
    more = f"; {len(bad) - limit} more" if len(bad) > limit else ""
    return f"; not supported ({len(bad)} of {len(mine)} unit(s)): " + "; ".join(parts) + more


SETUP = "--allow-setup-change"
"""The switch that compares against a baseline run made with another judge, metric or vendor version."""


def setup_changes(data, baseline) -> list[str]:
    """What differs between the two runs' setups, for the metrics they share: the judge (kind, URL, model, the
    reference judge's version), each metric's version and arguments (a threshold), its vendor packages'
    versions, and injected faults. A score change under any of them is not a regression of the system."""
    a, b = baseline.spec, data.spec
    out = []
    ja, jb = a.get("judge") or {}, b.get("judge") or {}
    for key in ("kind", "url", "model", "reference_version"):
        if ja.get(key) != jb.get(key):
            out.append(f"judge {key}: {ja.get(key)} -> {jb.get(key)}")
    shared = [m for m in data.metrics if m in baseline.metrics]
    va = {m["name"]: m for m in a.get("metrics") or []}
    vb = {m["name"]: m for m in b.get("metrics") or []}
    pa, pb = a.get("packages") or {}, b.get("packages") or {}
    seen = set()
    for m in shared:
        if va.get(m, {}).get("version") != vb.get(m, {}).get("version"):
            out.append(f"{m} version: {va.get(m, {}).get('version')} -> {vb.get(m, {}).get('version')}")
        args_a, args_b = (a.get("metric_args") or {}).get(m, {}), (b.get("metric_args") or {}).get(m, {})
        if args_a != args_b:
            out.append(f"{m} arguments: {args_a or 'defaults'} -> {args_b or 'defaults'}")
        for p in vb.get(m, {}).get("packages") or va.get(m, {}).get("packages") or ():
            if p not in seen and pa.get(p) != pb.get(p):
                seen.add(p)
                out.append(f"{p}: {pa.get(p)} -> {pb.get(p)}")
    for name, spec in (("baseline", a), ("this run", b)):
        if spec.get("faults"):
            out.append(f"{name} ran with injected judge faults ({spec['faults']})")
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
        lo, hi, higher = data.info[d.metric].scale
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
