"""The words of the design-weighted estimates (:mod:`harness.reports.analysis.label_estimates`): the terminal lines of
``harness agree --labels`` and the report block beside the agreement section."""
from __future__ import annotations

from harness.reports.analysis import design_estimates as D
from harness.reports.analysis.label_estimates import MetricEstimates, Plan
from harness.reports.model.blocks import Section, Table

HEADS = ["metric", "n", "base rate", "raw agreement", "TPR", "FPR", "kappa", "AC1", "MCC",
         "ungrounded share: raw", "corrected (PPI++)", "Rogan-Gladen", "fitted threshold (out of fold)", "left out"]


def _rate(r) -> tuple[str, str, str]:
    def ci(v, c):
        return "\u2013" if v is None else (f"{v:.2f} [{c[0]:.2f}, {c[1]:.2f}]" if c[0] is not None else f"{v:.2f}")
    return ci(r.raw, r.raw_ci) + f" of {r.scored}", ci(r.ppi, r.ppi_ci), ci(r.rogan_gladen, r.rg_ci)


def _fitted(m: MetricEstimates) -> str:
    f = m.fitted
    if f is None:
        return "\u2013"
    return (f"< {f.threshold:.2f}: BA {D.figure(f.out_of_fold, 'balanced_accuracy')}, kappa "
            f"{D.figure(f.out_of_fold, 'kappa')} ({f.folds}-fold); default < {f.default_threshold:.2f}: BA "
            f"{D.figure(f.default, 'balanced_accuracy')}")


def rows(results: list[MetricEstimates], names: dict[str, str]) -> list[list[str]]:
    out = []
    for m in results:
        e = m.answers
        out.append([names.get(m.metric, m.metric), str(e.n), *(D.figure(e, s) for s in
                    ("base_rate", "accuracy", "tpr", "fpr", "kappa", "ac1", "mcc")), *_rate(m.rate), _fitted(m),
                    ", ".join(f"{n} {k}" for k, n in sorted(m.excluded.items())) or "none"])
    return out


def human_text(human, alt: dict[str, object]) -> list[str]:
    """The reviewers' agreement (the human ceiling) and each metric's alternative-annotator test."""
    if human is None or len(human.reviewers) < 2:
        return ["human ceiling: needs two reviewers on the same sample (harness review --labels FILE --reviewer NAME); "
                "it also gives the alternative-annotator test"]
    f = (lambda v: "\u2013" if v is None else f"{v:.2f}")  # noqa: E731
    lines = [f"human ceiling: {', '.join(human.reviewers)} agree with each other on {human.answers} answers: "
             f"raw agreement {f(human.answer_agreement)}, {human.statistic}'s kappa {f(human.answer_kappa)} "
             f"(ungrounded yes/no; adjudicators are not raters)"]
    for m, a in alt.items():
        if a is None or not a.raters:
            continue
        verdict = "as good as a second reviewer" if a.passed else "not shown to be as good as a second reviewer"
        lines.append(f"  {m}: {verdict} (alternative-annotator test, epsilon {a.epsilon}: wins against {a.wins} of "
                     f"{a.raters} raters on {a.answers} answers)")
    return lines


def terminal(results: list[MetricEstimates], plan: Plan | None, names: dict[str, str], human=None,
             alt: dict | None = None) -> str:
    """The block ``harness agree --labels`` prints after the plain figures."""
    lines = ["estimates over every answer of the run, weighted by 1 / inclusion probability (target hallucinated; "
             "95% intervals from a bootstrap over answers; unbiased when labelling stopped partway):"]
    w = max([len(n) for n in names.values()] + [6])
    for m in results:
        e = m.answers
        lines.append(f"  {names.get(m.metric, m.metric):{w}}  n {e.n:>3} (effective {e.n_eff:.0f})  base rate "
                     f"{D.figure(e, 'base_rate')}  raw agreement {D.figure(e, 'accuracy')}  kappa {D.figure(e, 'kappa')}")
        lines.append(f"  {'':{w}}  TPR {D.figure(e, 'tpr')}  FPR {D.figure(e, 'fpr')}  AC1 {D.figure(e, 'ac1')}  "
                     f"MCC {D.figure(e, 'mcc')}")
        raw, ppi, rg = _rate(m.rate)
        lines.append(f"  {'':{w}}  ungrounded share of the run: raw {raw}; corrected {ppi} (PPI++), "
                     f"{rg} (Rogan-Gladen)")
        if m.claims is not None and m.claims.n:
            c = m.claims
            lines.append(f"  {'':{w}}  claims: {c.items} on {c.n} answers, raw agreement {D.figure(c, 'accuracy')}, "
                         f"kappa {D.figure(c, 'kappa')} (clustered by answer)")
        if m.fitted is not None:
            lines.append(f"  {'':{w}}  threshold fitted on the labels {_fitted(m)}")
        if m.excluded:
            lines.append(f"  {'':{w}}  left out: " + ", ".join(f"{n} {k}" for k, n in sorted(m.excluded.items())))
    lines.append("")
    lines += human_text(human, {names.get(k, k): v for k, v in (alt or {}).items()})
    lines.append(plan.text(names) if plan else "planner: needs labelled answers on which two metrics have a kappa "
                 "(label more: harness review --labels FILE --reviewer NAME)")
    return "\n".join(lines)


def section(results: list[MetricEstimates], plan: Plan | None, names: dict[str, str], source: str,
            human=None, alt: dict | None = None) -> Section:
    """The report block: the estimates table, the human ceiling, the planner."""
    b = Section("estimates", "Estimates over the whole run from the labelled sample",
              [f"Labels: {source}. Each labelled answer is weighted by 1 / its inclusion probability, so the figures "
               "estimate every answer of the run even when the sample leans toward disagreement or labelling stopped "
               "partway; 95% intervals from a bootstrap over answers. The corrected share removes each metric's own "
               "errors from its raw share (docs/statistics.md)."])
    b.parts.append(Table(HEADS, rows(results, names), caption="Target: hallucinated (some claim not found or "
                                                                "contradicted)"))
    b.parts.append(human_text(human, {names.get(k, k): v for k, v in (alt or {}).items()}))
    b.parts.append(plan.text(names) if plan else "Planner: needs two metrics with a kappa on the labelled answers.")
    return b
