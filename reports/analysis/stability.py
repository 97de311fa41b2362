"""Judge stability across repeats (``harness run --repeats K``): how much a metric's score moves when the
same judge scores the same answer again.

Per metric: the spread of each answer's score over its repeats (standard deviation, mean and largest),
the share of answers whose grounded/ungrounded decision flips at the metric's threshold (ungrounded below
the top of its score range, as the agreement figures read it), what share of cells is unscored, NaN,
errored or held a reply that did not fit the asked format in each repeat, and how far repeats agree
with each other (Cohen's kappa of the decisions, mean over pairs of repeats; the share of answers
whose score is the same in every repeat). Under the reference judge every figure is zero by
construction (it reads labels), so the section says that instead of showing zeros as a finding.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import combinations

from harness.reports.analysis import agreement_stats as A
from harness.reports.analysis.orient import oriented
from harness.store.runstore import RunStore


@dataclass(frozen=True)
class RepeatRates:
    """One repeat's share of cells that are not scores."""

    repeat: int
    cells: int
    unscored: float
    nan: float
    error: float
    misfit: float
    """Cells with at least one judge reply that did not fit the requested format (a parse risk)."""


@dataclass(frozen=True)
class MetricStability:
    """One metric's stability figures."""

    metric: str
    answers: int
    """Answers scored in at least two repeats."""
    sd_mean: float | None
    sd_max: float | None
    flip_rate: float | None
    """Share of those answers whose decision differs between repeats."""
    kappa: float | None
    """Mean Cohen's kappa of the decisions over pairs of repeats (None: undefined, e.g. a constant metric)."""
    same_score: float | None
    """Share of answers with the same score in every repeat."""
    rates: tuple[RepeatRates, ...] = ()
    sampling: str = ""
    """The sampling settings the metric's judge requests asked for (``temperature=0``; ``temperature=default``
    where the vendor sent none), as the run recorded them ("" where it did not)."""

    @property
    def deterministic(self) -> bool:
        """Every request of the metric asked for temperature 0: a judge that honours it answers a repeat the same,
        so no flip is what such a judge shows whatever the metric; it says nothing about the metric's stability."""
        parts = [p.strip() for p in self.sampling.split(";") if p.strip()]
        return bool(parts) and all(p.startswith("temperature=0") and not p.startswith("temperature=0.") for p in parts)


@dataclass
class Stability:
    """The stability section's model."""

    repeats: int
    trivial: bool
    """The reference judge: stable by construction."""
    metrics: list[MetricStability] = field(default_factory=list)


def repeats_of(data) -> int:
    """How many repeats the run holds (1 without ``--repeats``)."""
    df = getattr(data, "repeats", None)
    if df is None or not len(df):
        return 1
    return int(df["repeat"].max()) + 1


def _sd(xs: list[float]) -> float:
    """Sample standard deviation.

    >>> _sd([0.5, 1.0]), _sd([1.0, 1.0, 1.0])
    (0.3535533905932738, 0.0)
    """
    m = sum(xs) / len(xs)
    return (sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5


def _rates(df, k: int) -> tuple[RepeatRates, ...]:
    out = []
    for r in range(k):
        d = df[df["repeat"] == r]
        n = len(d)
        if not n:
            continue
        mis = int((d["format_misfits"] > 0).sum()) if "format_misfits" in d else 0
        out.append(RepeatRates(r, n, float((d["status"] == "unscored").mean()), float((d["status"] == "vendor_nan").mean()),
                               float((d["status"] == "error").mean()), mis / n))
    return tuple(out)


def metric_stability(df, metric: str, k: int, span: tuple[float, float, bool]) -> MetricStability:
    """The figures of one metric from its cells of every repeat (a DataFrame with ``repeat``); ``span``: its
    recorded (bottom, top, higher_is_better)."""
    top = span[1]
    d = df[df["metric"] == metric]
    scored = d[d["status"] == "scored"]
    by_case: dict[str, dict[int, float]] = {}
    for cid, r, s in zip(scored["case_id"], scored["repeat"], scored["score"]):
        by_case.setdefault(cid, {})[int(r)] = oriented(span, float(s))   # the decision read as agreement reads it
    multi = {c: v for c, v in by_case.items() if len(v) >= 2}
    if not multi:
        return MetricStability(metric, 0, None, None, None, None, None, _rates(d, k))
    sds = [_sd(list(v.values())) for v in multi.values()]
    flipped = [len({s < top for s in v.values()}) > 1 for v in multi.values()]
    same = [len(set(v.values())) == 1 for v in multi.values()]
    kappas = []
    for a, b in combinations(range(k), 2):
        both = [(v[a] < top, v[b] < top) for v in multi.values() if a in v and b in v]
        if both:
            kap = A.cohen_kappa(A.confusion([x for x, _ in both], [y for _, y in both]))
            if kap is not None:
                kappas.append(kap)
    return MetricStability(metric, len(multi), sum(sds) / len(sds), max(sds), sum(flipped) / len(flipped),
                           sum(kappas) / len(kappas) if kappas else None, sum(same) / len(same), _rates(d, k))


def compute(data) -> Stability:
    """Stability of every metric of the run (``repeats`` 1: nothing measured)."""
    k = repeats_of(data)
    st = Stability(k, data.is_reference)
    if k < 2:
        return st
    settings = sampling_of(data)
    st.metrics = [replace(metric_stability(data.repeats, m, k, data.info[m].scale), sampling=settings.get(m, ""))
                  for m in data.metrics]
    return st


def sampling_of(data) -> dict[str, str]:
    """metric -> the distinct sampling settings its cells' requests asked for, from the run's drift record
    (``cell_drift.sampling``; {} for a store written before it)."""
    try:
        store = RunStore.open(data.run_dir)
    except Exception:  # noqa: BLE001 - a run directory without a readable store: nothing recorded
        return {}
    try:
        facts = store.drift()
    finally:
        store.close()
    out: dict[str, set] = {}
    for (_, metric), f in facts.items():
        out.setdefault(metric, set()).update(p.strip() for p in (f.get("sampling") or "").split(";") if p.strip())
    return {m: "; ".join(sorted(v)) for m, v in out.items()}


TITLE = "Judge stability across repeats"
