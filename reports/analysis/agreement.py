"""Agreement of every metric with the human labels of a run's cases (``harness agree``, the report
section "Agreement with human labels", the metric cards).

Human targets, per answer, from the claims the labels give (``Case.judged_claims``: the
annotated claims, or one claim per answer sentence for RAGTruth-style span labels):

- ``hallucinated``: some claim is not_found or contradicted (RAGTruth's notion);
- ``not_attributable``: also inference: some claim has no span that states it.

An answer with no claims (an abstention, an empty answer) is neither. A case without annotation is
unlabelled and left out, counted. Answer level: the metric calls an answer ungrounded when its score
is below a threshold; the figures are given at the default threshold (the top of the score range: the
metric finds something ungrounded; a score where lower is better, Opik's, is first turned round on its
range: :mod:`harness.reports.analysis.orient`, so its thresholds read as 1 - score), over a sweep of every distinct
threshold with the best marked
(chosen on the same answers, so optimistic), and AUROC from the continuous score. Claim level, for
metrics whose units are located in the answer: a human claim is flagged by the metric when a unit
overlapping it is unsupported (ambiguous and excluded units do not flag it); claims no unit overlaps
are counted as not covered. Cells that are not scores (unscored, NaN, error, n/a, missing) are
counted by status beside every figure, never silently dropped.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.core.spans import overlaps
from harness.reports.analysis import agreement_stats as A
from harness.reports.analysis import matrix
from harness.reports.analysis.alignment import located_units
from harness.reports.analysis.intervals import honest, honest_auroc
from harness.reports.analysis.orient import oriented

TARGETS = {"hallucinated": ("not_found", "contradicted"),
           "not_attributable": ("not_found", "contradicted", "inference")}
"""Human target -> the claim labels that make an answer (or a claim) ungrounded under it."""
RULE_N, RULE_AGREEMENT = 50, 0.80
"""The seeds' rule: under about 0.8 agreement on at least 50 labelled answers, absolute scores are unusable."""
WHOLE = ("answer", "judge")


@dataclass
class Figures:
    """Binary agreement on one level (answers or claims), one target, with intervals."""

    n: int
    positives: int
    """Items the humans call ungrounded."""
    point: A.Point | None
    """At the default threshold."""
    ci: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    """statistic -> 95% interval: the bootstrap's, widened to the Wilson-based one of the counts
    (:mod:`harness.reports.analysis.intervals`), so it stays honest at 0% and 100%."""
    auroc: float | None = None
    auroc_ci: tuple[float | None, float | None] = (None, None)
    sweep: list[A.Point] = field(default_factory=list)
    best: A.Point | None = None
    not_covered: int = 0
    """Claim level: human claims that no located unit of the metric overlaps."""


@dataclass
class MetricAgreement:
    """Everything the agreement section says about one metric."""

    metric: str
    labelled: int
    """Labelled answers in the run."""
    excluded: dict[str, int]
    """status -> labelled answers whose cell is not a score."""
    answers: dict[str, Figures]
    """target -> answer-level figures."""
    claims: dict[str, Figures]
    """target -> claim-level figures (empty when the metric's units are not located in the answer)."""

    @property
    def rule(self) -> str:
        """The seeds' rule applied to the answer-level raw agreement under the ``hallucinated`` target."""
        f = self.answers.get("hallucinated")
        acc = f.point.accuracy if f and f.point else None
        if f is None or f.n < RULE_N:
            return f"too few labelled answers to apply the rule (n = {f.n if f else 0} < {RULE_N})"
        if acc is None or acc < RULE_AGREEMENT:
            return f"agreement under {RULE_AGREEMENT:.2f} on {f.n} answers: treat absolute scores as unusable"
        return f"agreement {acc:.2f} on {f.n} answers: meets the rule"


def is_labelled(case) -> bool:
    """Does the case carry human labels (a claim list, spans, or an explicit empty claim list)?"""
    return getattr(case, "annotation", None) is not None


def answer_truth(case, target: str) -> bool:
    """Is the answer ungrounded under the target?"""
    return any(c.label in TARGETS[target] for c in case.judged_claims())


def figures(truth: list[bool], scores: list[float], top: float, resamples: int = A.RESAMPLES) -> Figures:
    """Answer-level figures at threshold ``top`` (the top of the score range), with sweep and AUROC."""
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    t, s = np.asarray(truth, dtype=bool), np.asarray(scores, dtype=float)
    point = A.at_threshold(t, s, top) if len(t) else None
    pred = s < top
    f = Figures(len(t), int(t.sum()), point)
    f.ci = honest(A.binary_intervals(t, pred, resamples), t, pred)
    f.auroc = A.auroc(t, s) if len(t) else None
    f.auroc_ci = honest_auroc(A.auroc_interval(t, s, resamples), t, f.auroc)
    f.sweep = A.sweep(t, s) if len(t) else []
    f.best = A.best(f.sweep)
    return f


def binary_figures(truth: list[bool], pred: list[bool], not_covered: int = 0,
                   resamples: int = A.RESAMPLES) -> Figures:
    """Figures of a binary verdict (claim level: no threshold, no AUROC)."""
    import numpy as np  # noqa: PLC0415 - lazy: numpy costs ~0.1 s to import

    t, p = np.asarray(truth, dtype=bool), np.asarray(pred, dtype=bool)
    c = A.confusion(t, p)
    point = A.Point(float("nan"), c, A.accuracy(c), A.balanced_accuracy(c), A.precision(c), A.recall(c),
                    A.cohen_kappa(c)) if len(t) else None
    f = Figures(len(t), int(t.sum()), point, not_covered=not_covered)
    f.ci = honest(A.binary_intervals(t, p, resamples), t, p)
    return f


def compute(data, resamples: int = A.RESAMPLES) -> list[MetricAgreement]:
    """Agreement of every metric of the run with the labels of its cases (labelled cases only)."""
    labelled = [cid for cid in data.case_ids if cid in data.cases and is_labelled(data.cases[cid])]
    claims = {cid: data.cases[cid].judged_claims() for cid in labelled}   # read once for every metric and target
    truth = {t: {cid: any(c.label in labels for c in claims[cid]) for cid in labelled} for t, labels in TARGETS.items()}
    cells, located = matrix.build(data), located_units(data)   # every case and metric, missing cells included
    out = []
    for m in data.metrics:
        excluded: dict[str, int] = {}
        ids, scores = [], []
        for cid in labelled:
            cell = cells[(cid, m)]
            status = cell.status
            if status != "scored":
                excluded[status] = excluded.get(status, 0) + 1
                continue
            ids.append(cid)
            scores.append(oriented(data.info[m].scale, cell.score))   # lower-is-better scores turned round
        top = _top(data, m)
        answers = {t: figures([truth[t][c] for c in ids], scores, top, resamples) for t in TARGETS}
        out.append(MetricAgreement(m, len(labelled), excluded, answers,
                                   _claim_level(data, m, ids, resamples, claims, located.get(m, {}))))
    return out


def _top(data, metric: str) -> float:
    """The top of the metric's score range: an answer below it is called ungrounded."""
    return data.info[metric].scale[1]


def _claim_level(data, metric: str, ids: list[str], resamples: int, claims: dict | None = None,
                 by_case: dict | None = None) -> dict[str, Figures]:
    """Claim-level figures of a metric on cases ``ids``; ``claims``: case id -> its judged claims, when the caller
    has them; ``by_case``: the metric's :func:`located_units`, when the caller has them."""

    if by_case is None:
        by_case = located_units(data).get(metric, {})
    if not by_case:
        return {}
    judged, missing = [], 0   # (the claim's label, a unit on it is unsupported), in case and claim order
    for cid in ids:
        units = by_case.get(cid, [])
        for claim in (claims[cid] if claims is not None else data.cases[cid].judged_claims()):
            hits = [v for s, e, v in units if overlaps((s, e), claim.answer_span)]
            if not hits:
                missing += 1
                continue
            judged.append((claim.label, "unsupported" in hits))
    out = {}
    for target, labels in TARGETS.items():
        out[target] = binary_figures([lab in labels for lab, _ in judged], [p for _, p in judged], missing,
                                     resamples)
    return out


def reading(data) -> str:
    """What the figures mean under this run's judge."""
    if data.is_reference:
        unjudged = [m for m in data.metrics if not data.info[m].uses_judge]
        model = (f" The verdicts of {', '.join(unjudged)} come from no judge (e.g. an embedding model's "
                 "similarity), not from the labels, so their figures are that method's own." if unjudged else "")
        return ("Judge: reference (annotation-driven). These figures are each definition's ceiling: the agreement "
                "a judge that reads the labels perfectly reaches under that metric's definition (a real judge "
                "reads each prompt its own way)." + model)
    return ("Judge: a model. These figures are the judge-and-definition agreement: how far this judge, under "
            "each metric's definition, agrees with the people who labelled the answers.")


def as_json(data, results: list[MetricAgreement]) -> dict:
    """The ``harness agree --json`` document."""
    def r(v):
        return None if v is None else round(float(v), 6)

    def fig(f: Figures | None) -> dict | None:
        if f is None or f.point is None:
            return None
        p = f.point
        d = {"n": f.n, "ungrounded": f.positives, "accuracy": r(p.accuracy),
             "balanced_accuracy": r(p.balanced_accuracy), "precision": r(p.precision), "recall": r(p.recall),
             "kappa": r(p.kappa), **{f"{k}_ci": [r(lo), r(hi)] for k, (lo, hi) in f.ci.items()},
             "confusion": {"tp": p.confusion.tp, "fp": p.confusion.fp, "fn": p.confusion.fn, "tn": p.confusion.tn}}
        if f.sweep:
            d.update(threshold=r(p.threshold), auroc=r(f.auroc), auroc_ci=[r(x) for x in f.auroc_ci],
                     best_threshold=r(f.best.threshold) if f.best else None,
                     best_balanced_accuracy=r(f.best.balanced_accuracy) if f.best else None,
                     sweep=[{"threshold": r(q.threshold), "balanced_accuracy": r(q.balanced_accuracy),
                             "kappa": r(q.kappa), "precision": r(q.precision), "recall": r(q.recall)} for q in f.sweep])
        else:
            d["not_covered"] = f.not_covered
        return d

    metrics = {}
    for a in results:
        main = fig(a.answers["hallucinated"]) or {"n": 0}
        main.setdefault("kappa", None)
        main.setdefault("kappa_ci", [None, None])
        for k in ("balanced_accuracy", "auroc", "best_threshold"):
            main.setdefault(k, None)
        metrics[a.metric] = {**main, "labelled": a.labelled, "excluded": a.excluded, "rule": a.rule,
                             "targets": {t: fig(f) for t, f in a.answers.items()},
                             "claims": {t: fig(f) for t, f in a.claims.items()} or None}
    return {"run": data.run_id, "judge": "reference" if data.is_reference else "model", "reading": reading(data),
            "rule": f"under about {RULE_AGREEMENT:.2f} agreement on at least {RULE_N} labelled answers, treat "
                    "absolute scores as unusable", "metrics": metrics}


TITLE = "Agreement with human labels"


def title(is_reference: bool) -> str:
    """The section's heading by judge kind: under the reference judge the figures are a ceiling.

    >>> title(True), title(False)
    ('Agreement with human labels: definition ceiling (reference judge)', 'Agreement with human labels: judge + definition agreement')
    """
    return f"{TITLE}: " + ("definition ceiling (reference judge)" if is_reference else "judge + definition agreement")
