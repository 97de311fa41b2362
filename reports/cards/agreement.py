"""The agreement paragraph of every metric card, in the words of :mod:`harness.reports.model.agreement_section`."""
from __future__ import annotations

from harness.reports.analysis.agreement import TARGETS, MetricAgreement, reading
from harness.reports.model.agreement_section import TARGET_WORDS, excluded_text, rule_text, with_ci
from harness.reports.render.markup import m


def card_lines(data, a: MetricAgreement) -> list[str]:
    """The agreement paragraph of one metric's card (Markdown), from the canonical reference run."""

    out = ["## Agreement with Human Labels", "",
           m(reading(data)) + f" Canonical set: {a.labelled} labelled answers; left out: {m(excluded_text(a))}.", ""]
    for target in TARGETS:
        f = a.answers[target]
        p = f.point
        if p is None:
            out.append(f"- answers, {m(TARGET_WORDS[target])}: no scored answer")
            continue
        best = f"; best threshold {f.best.threshold:.2f} (balanced accuracy {f.best.balanced_accuracy:.2f})" if f.best else ""
        out.append(f"- answers, {m(TARGET_WORDS[target])}: n = {f.n}, kappa {with_ci(p.kappa, f.ci['kappa'])}, "
                   f"balanced accuracy {with_ci(p.balanced_accuracy, f.ci['balanced_accuracy'])}, "
                   f"AUROC {with_ci(f.auroc, f.auroc_ci)}{best}")
        c = a.claims.get(target)
        if c is not None and c.point is not None:
            out.append(f"- claims, {m(TARGET_WORDS[target])}: n = {c.n} ({c.not_covered} not covered), kappa "
                       f"{with_ci(c.point.kappa, c.ci['kappa'])}, balanced accuracy "
                       f"{with_ci(c.point.balanced_accuracy, c.ci['balanced_accuracy'])}")
    out += ["", m(rule_text()) + f" Here: {m(a.rule)}.", ""]
    return out
