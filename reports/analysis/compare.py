"""``harness compare RUN_A RUN_B``: what changed between two runs of the same cases.

The two runs may differ by judge, by metric version, by the systems' answers (same case ids, other
answers) or by anything else: the comparison names what differs in the specs and case digests, then,
for every metric both runs have, pairs the cases both scored and reports the mean difference
(B - A) with a paired bootstrap 95% interval (cases resampled together, so the interval is about the
difference, not about two independent means), the cells whose status changed, and the biggest
movers. Reads the two stores only; never re-scores.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.reports.analysis.drift import drift
from harness.reports.analysis.matrix import build
from harness.reports.analysis.stats import bootstrap_ci

AGREE = "nothing in the specs or the case digests: the runs should agree"
"""The one line of "what differs" when nothing does."""
MOVERS = 5
"""Biggest movers shown per metric."""


@dataclass
class MetricDiff:
    """One metric, paired over the cases both runs scored."""

    metric: str
    n_pairs: int
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    """Mean of (B - A) over the pairs."""
    low: float | None
    high: float | None
    """Paired bootstrap 95% interval of ``diff``."""
    movers: list[tuple[str, float, float]] = field(default_factory=list)
    """(case id, score A, score B), largest |B - A| first, changed pairs only."""
    version_a: str = "?"
    version_b: str = "?"

    @property
    def significant(self) -> bool:
        """The interval excludes 0."""
        return self.low is not None and (self.low > 0 or self.high < 0)


@dataclass(frozen=True)
class StatusChange:
    """A cell whose status differs between the runs."""

    case_id: str
    metric: str
    status_a: str
    status_b: str
    label_a: str
    label_b: str


@dataclass
class Comparison:
    """Everything the compare page shows."""

    a: object
    b: object
    """The two runs (:class:`harness.reports.analysis.data.RunData`)."""
    differences: list[str]
    """What differs between the runs, one line each."""
    shared_cases: list[str]
    only_a: list[str]
    only_b: list[str]
    metrics: list[MetricDiff]
    changes: list[StatusChange]
    only_metrics_a: list[str] = field(default_factory=list)
    only_metrics_b: list[str] = field(default_factory=list)
    drift: object = None
    """The drift sentinel's comparison (:class:`harness.reports.analysis.drift.Drift`): vendor versions, prompt
    templates, judge fingerprints, and the cells that changed outcome with them."""

    @property
    def label_a(self) -> str:
        return f"A ({self.a.run_id})"

    @property
    def label_b(self) -> str:
        return f"B ({self.b.run_id})"


def paired(a: dict[str, float], b: dict[str, float]):
    """(case ids scored in both, A's scores, B's scores), in A's order.

    >>> paired({"x": 0.5, "y": 1.0}, {"y": 0.0, "z": 1.0})
    (['y'], [1.0], [0.0])
    """
    ids = [c for c in a if c in b]
    return ids, [a[c] for c in ids], [b[c] for c in ids]


def movers(ids, xa, xb, n: int = MOVERS) -> list[tuple[str, float, float]]:
    """The ``n`` pairs that moved most (ties in case order); unchanged pairs are left out.

    >>> movers(["p", "q", "r"], [0.5, 1.0, 0.2], [0.5, 0.0, 0.4])
    [('q', 1.0, 0.0), ('r', 0.2, 0.4)]
    """
    moved = [(c, x, y) for c, x, y in zip(ids, xa, xb) if abs(y - x) > 1e-12]
    return sorted(moved, key=lambda t: -abs(t[2] - t[1]))[:n]


def _scores(data, metric: str) -> dict[str, float]:

    cells = build(data)
    return {c: cells[(c, metric)].score for c in data.case_ids if cells[(c, metric)].status == "scored"}


def differences(a, b) -> list[str]:
    """What differs between two runs' specs and cases, one line each."""
    out = []
    ja, jb = (a.spec.get("judge") or {}), (b.spec.get("judge") or {})
    da, db = ja.get("description") or ja.get("model"), jb.get("description") or jb.get("model")
    if (ja.get("kind"), ja.get("url"), ja.get("model")) != (jb.get("kind"), jb.get("url"), jb.get("model")):
        out.append(f"judge: {da} -> {db}")
    for m in a.metrics:
        if m in b.info and a.info[m].version != b.info[m].version:
            out.append(f"metric version: {m} v{a.info[m].version} -> v{b.info[m].version}")
    out += _option_differences(a.spec, b.spec)
    if a.case_ids and b.case_ids and not set(a.case_ids) & set(b.case_ids):
        out.append(f"cases: no case in common (A has {len(a.case_ids)}, B has {len(b.case_ids)}): "
                   "the scores cannot be paired")
    dig_a = dict(zip(a.cells["case_id"], a.cells["case_digest"]))
    dig_b = dict(zip(b.cells["case_id"], b.cells["case_digest"]))
    changed = [c for c in dig_a if c in dig_b and dig_a[c] != dig_b[c]]
    if changed:
        answers = [c for c in changed if c in a.cases and c in b.cases and a.cases[c].answer != b.cases[c].answer]
        what = f"{len(answers)} with another answer" if answers else "answers unchanged"
        out.append(f"cases: {len(changed)} shared case(s) differ in content ({what}): "
                   f"{', '.join(changed[:5])}{', ...' if len(changed) > 5 else ''}")
    pa, pb = a.spec.get("packages") or {}, b.spec.get("packages") or {}
    for p in sorted(set(pa) & set(pb)):
        if pa[p] != pb[p]:
            out.append(f"package: {p} {pa[p]} -> {pb[p]}")
    return out or [AGREE]


def _option_differences(sa: dict, sb: dict) -> list[str]:
    """The run options in two specs that can change a score: metric options (a similarity threshold),
    injected faults, the embedding model.

    >>> _option_differences({"metric_args": {"m": {"threshold": 0.8}}, "faults": None},
    ...                     {"metric_args": {"m": {"threshold": 0.9}}, "faults": {"spec": "500=0.1", "seed": 3}})
    ['metric option: m threshold 0.8 -> 0.9', 'faults: none -> 500=0.1 (seed 3)']
    """
    out = []
    ma, mb = sa.get("metric_args") or {}, sb.get("metric_args") or {}
    for m in sorted(set(ma) & set(mb)):
        for k in sorted(set(ma[m]) | set(mb[m])):
            if ma[m].get(k) != mb[m].get(k):
                out.append(f"metric option: {m} {k} {ma[m].get(k)} -> {mb[m].get(k)}")

    def faults(f) -> str:
        return f"{f.get('spec')} (seed {f.get('seed')})" if f else "none"

    if faults(sa.get("faults")) != faults(sb.get("faults")):
        out.append(f"faults: {faults(sa.get('faults'))} -> {faults(sb.get('faults'))}")
    ea, eb = sa.get("embeddings") or {}, sb.get("embeddings") or {}
    if ea and eb and (ea.get("kind"), ea.get("model"), ea.get("url")) != (eb.get("kind"), eb.get("model"), eb.get("url")):
        out.append(f"embeddings: {ea.get('model')} ({ea.get('kind')}) -> {eb.get('model')} ({eb.get('kind')})")
    return out


def compare(a, b) -> Comparison:
    """Compare two loaded runs."""

    shared = [c for c in a.case_ids if c in set(b.case_ids)]
    metrics = [m for m in a.metrics if m in b.metrics]
    diffs = []
    for m in metrics:
        ids, xa, xb = paired(_scores(a, m), _scores(b, m))   # scored in both: a subset of the shared cases
        ci = bootstrap_ci([y - x for x, y in zip(xa, xb)])
        mean_a = sum(xa) / len(xa) if xa else None
        mean_b = sum(xb) / len(xb) if xb else None
        diffs.append(MetricDiff(m, len(ids), mean_a, mean_b, *(ci or (None, None, None)), movers(ids, xa, xb),
                                a.info[m].version, b.info[m].version))
    ca, cb = build(a), build(b)
    changes = [StatusChange(c, m, ca[(c, m)].status, cb[(c, m)].status, ca[(c, m)].label, cb[(c, m)].label)
               for m in metrics for c in shared if ca[(c, m)].status != cb[(c, m)].status]
    sentinel = drift(a, b, metrics, shared)
    named = differences(a, b)
    if sentinel.lines():   # what the sentinel saw change, per metric, beside the specs' differences
        named = [x for x in named if x != AGREE] + sentinel.lines()
    return Comparison(a, b, named, shared, [c for c in a.case_ids if c not in set(b.case_ids)],
                      [c for c in b.case_ids if c not in set(a.case_ids)], diffs, changes,
                      [m for m in a.metrics if m not in b.metrics], [m for m in b.metrics if m not in a.metrics],
                      sentinel)
