"""The words of the agreement figures: the report section and the terminal table of ``harness agree``
(the lines on every metric card: :mod:`harness.reports.model.card`)."""
from __future__ import annotations

from harness.core.vocab import status
from harness.reports.analysis.agreement import (
    RULE_AGREEMENT,
    RULE_N,
    TARGETS,
    Figures,
    MetricAgreement,
    reading,
    title,
)
from harness.reports.model.blocks import Section, Table

TARGET_WORDS = {"hallucinated": "hallucinated (some claim not found or contradicted)",
                "not_attributable": "not attributable (also inference: no span states some claim)"}


def num(v) -> str:
    """A figure with two decimals, or an en dash when undefined.

    >>> num(0.8073), num(None)
    ('0.81', '\u2013')
    """
    return "\u2013" if v is None else f"{v:.2f}"


def with_ci(v, ci) -> str:
    """A figure and its interval.

    >>> with_ci(0.81, (0.53, 1.0)), with_ci(None, (None, None))
    ('0.81 [0.53, 1.00]', '\u2013')
    """
    if v is None:
        return "\u2013"
    lo, hi = ci or (None, None)
    return f"{v:.2f} [{num(lo)}, {num(hi)}]" if lo is not None else f"{v:.2f}"


def excluded_text(a: MetricAgreement) -> str:
    """The labelled answers left out of the figures, by status ("none" when none)."""

    def word(k):
        t = status(k)
        return t.short if t.short.strip("-\u2013 ") else t.label

    return ", ".join(f"{n} {word(k)}" for k, n in sorted(a.excluded.items())) or "none"


def row(a: MetricAgreement, f: Figures, name: str) -> list[str]:
    p = f.point
    if p is None:
        return [name, str(f.n), "\u2013", excluded_text(a)] + ["\u2013"] * 7
    best = f"{f.best.threshold:.2f} (BA {f.best.balanced_accuracy:.2f})" if f.best else "\u2013"
    return [name, str(f.n), f"{f.positives / f.n:.0%}" if f.n else "\u2013", excluded_text(a),
            with_ci(p.kappa, f.ci.get("kappa")),
            with_ci(p.balanced_accuracy, f.ci.get("balanced_accuracy")),
            with_ci(p.precision, f.ci.get("precision")), with_ci(p.recall, f.ci.get("recall")),
            with_ci(f.auroc, f.auroc_ci), with_ci(p.accuracy, f.ci.get("accuracy")), best]


HEADS = ["metric", "n", "base rate (ungrounded)", "left out", "kappa", "balanced accuracy", "precision (ungrounded)",
         "recall (ungrounded)", "AUROC", "raw agreement", "best threshold"]
CLAIM_HEADS = ["metric", "claims", "not covered", "kappa", "balanced accuracy", "precision (ungrounded)",
               "recall (ungrounded)", "raw agreement"]


def rule_text() -> str:
    return (f"The seeds' rule: under about {RULE_AGREEMENT:.2f} raw agreement on at least {RULE_N} labelled "
            "answers, treat a metric's absolute scores as unusable (comparisons between configurations may "
            "still hold). n is shown beside every figure.")


def section(data, results: list[MetricAgreement], names: dict[str, str]) -> Section:
    """The report section."""
    labelled = results[0].labelled if results else 0
    b = Section("agreement", title(data.is_reference), [reading(data), rule_text()])
    if not labelled:
        b.parts.append("No case of this run carries human labels: there is nothing to agree with.")
        return b
    b.parts.append(f"{labelled} labelled answers. Answer level: a metric calls an answer ungrounded when its score "
                   "is below the top of its range (figures at that threshold, 95% bootstrap intervals in brackets); "
                   "AUROC ranks by the continuous score; the best threshold of a sweep over every distinct score "
                   "is chosen on the same answers, so it is optimistic. Cells that are not scores are left out and "
                   "counted.")
    for target in TARGETS:
        b.parts.append(Table(HEADS, [row(a, a.answers[target], names.get(a.metric, a.metric)) for a in results],
                             caption=f"Answers, target: {TARGET_WORDS[target]}"))
    b.parts.append(Table(["metric", "balanced accuracy at each threshold (an answer is ungrounded below it; \u2605 best)"],
                         [[names.get(a.metric, a.metric), sweep_text(a.answers["hallucinated"])] for a in results],
                         caption="Threshold sweep, target: hallucinated"))
    claim_rows = {t: [claim_row(a.claims[t], names.get(a.metric, a.metric)) for a in results if a.claims]
                  for t in TARGETS}
    if any(claim_rows.values()):
        b.parts.append("Claim level, for metrics whose units are located in the answer: a labelled claim is flagged "
                       "when a unit overlapping it is unsupported; claims no unit overlaps are counted as not covered.")
        for target, rows in claim_rows.items():
            b.parts.append(Table(CLAIM_HEADS, rows, caption=f"Claims, target: {TARGET_WORDS[target]}"))
    b.parts.append([f"{names.get(a.metric, a.metric)}: {a.rule}" for a in results])
    return b


def sweep_text(f: Figures) -> str:
    """Every cut of the sweep with its balanced accuracy, the best one starred.

    >>> from harness.reports.analysis import agreement_stats as A
    >>> pts = A.sweep([True, False], [0.5, 1.0])
    >>> sweep_text(Figures(2, 1, pts[1], sweep=pts, best=A.best(pts)))
    '0.50: 0.50 \u00b7 1.00: 1.00 \u2605 \u00b7 1.00+: 0.50'
    """
    if not f.sweep:
        return "\u2013"
    top = max(q.threshold for q in f.sweep)
    parts = []
    for q in f.sweep:
        cut = f"{q.threshold:.2f}+" if q.threshold == top and len(f.sweep) > 1 else f"{q.threshold:.2f}"
        parts.append(f"{cut}: {num(q.balanced_accuracy)}" + (" \u2605" if f.best is q else ""))
    return " \u00b7 ".join(parts)


def claim_row(f: Figures, name: str) -> list[str]:
    p = f.point
    if p is None:
        return [name, "0", str(f.not_covered)] + ["\u2013"] * 5
    return [name, str(f.n), str(f.not_covered), with_ci(p.kappa, f.ci.get("kappa")),
            with_ci(p.balanced_accuracy, f.ci.get("balanced_accuracy")), with_ci(p.precision, f.ci.get("precision")),
            with_ci(p.recall, f.ci.get("recall")), with_ci(p.accuracy, f.ci.get("accuracy"))]


def terminal(data, results: list[MetricAgreement], names: dict[str, str]) -> str:
    """``harness agree`` without --json: the reading, then one line per metric and target."""
    lines = [reading(data), rule_text(), ""]
    if not results or not results[0].labelled:
        return "\n".join(lines + ["No case of this run carries human labels: there is nothing to agree with "
                                   "(import labelled data, e.g. harness import ragtruth, or annotate the cases)."])
    w = max([len(n) for n in names.values()] + [6])
    for target in TARGETS:
        lines.append(f"answers, target {TARGET_WORDS[target]}:")
        lines.append(f"  {'metric':{w}}  {'n':>4}  {'base':>4}  {'raw agreement [95% CI]':22}  {'kappa [95% CI]':22}  "
                     f"{'bal.acc [95% CI]':22}  {'AUROC [95% CI]':22}  best thr  left out")
        for a in results:
            f = a.answers[target]
            p = f.point
            k = with_ci(p.kappa, f.ci["kappa"]) if p else "\u2013"
            ba = with_ci(p.balanced_accuracy, f.ci["balanced_accuracy"]) if p else "\u2013"
            best = f"{f.best.threshold:8.2f}" if f.best else "       \u2013"
            base = f"{f.positives / f.n:.0%}" if f.n else "\u2013"
            acc = with_ci(p.accuracy, f.ci["accuracy"]) if p else "\u2013"
            lines.append(f"  {names.get(a.metric, a.metric):{w}}  {f.n:>4}  {base:>4}  {acc:22}  {k:22}  {ba:22}  "
                         f"{with_ci(f.auroc, f.auroc_ci):22}  {best}  {excluded_text(a)}")
        lines.append("")
    lines += [f"{names.get(a.metric, a.metric)}: {a.rule}" for a in results]
    return "\n".join(lines)
