"""The words of ``harness calibrate``, laid out from a finished
:class:`~harness.reports.model.cascade_card.CascadeCard`: the per-stage report (terminal) and the calibrated
cascade's card (Markdown, written beside the cascade file). It computes nothing."""
from __future__ import annotations

from harness.reports.model.cascade_card import CascadeCard


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100.0 * a / b:.0f}%)" if b else "0/0"


def _ci(lo, hi) -> str:
    return "" if lo is None else f" [{lo:.2f}, {hi:.2f}]"


def _saved(spent: int, full: int) -> str:
    if not full:
        return f"{full - spent:+d}"
    return f"{full - spent} of {full} ({100.0 * (full - spent) / full:.0f}%)"


def report_lines(c: CascadeCard) -> list[str]:
    """Per stage: its threshold, coverage, held-out agreement with its exact 95% interval, calls and tokens;
    then the whole cascade against the strongest stage on every answer, and the share sent to a person."""
    cas = c.cascade
    n = c.held_out
    out = [f"calibrated: target agreement {cas.target:.2f} with probability >= {1 - cas.delta:.2f} "
           f"(labels: {cas.label_target}); {c.labelled} labelled answers: {c.calibration} to calibrate, "
           f"{n} held out"]
    for k, s in enumerate(cas.stages):
        lam = "decides nothing" if s.confidence is None else f"confidence >= {s.confidence:.2f}"
        out.append(f"  stage {k + 1} {s.metric} (verdict: grounded at score >= {s.verdict_threshold:g}; {lam})")
    if c.missing:
        out.append("  labelled answers a stage has no score for (it never decides them): " +
                   ", ".join(f"{m} {v}" for m, v in c.missing.items()))
    if not n:
        out.append("no answers held out (--holdout 0): no held-out figures")
        return out
    out.append(f"held out, n = {n} answers (agreement: decided answers whose verdict equals the label; "
               "95% exact Clopper-Pearson interval):")
    for r in c.stages:
        lo, hi = r.interval
        agree = f"{_pct(r.agree, r.decided)}{_ci(lo, hi)}" if r.decided else "-"
        out.append(f"  {r.metric}: ran on {r.ran}, coverage {_pct(r.decided, n)}, agreement {agree}, "
                   f"calls {r.calls}, tokens {r.tokens}")
    lo, hi = c.interval
    out.append(f"  cascade: coverage {_pct(c.decided, n)}, realised agreement "
               f"{_pct(c.agree, c.decided) if c.decided else '-'}{_ci(lo, hi)}; to a person {_pct(c.escalated, n)}")
    strongest = cas.stages[-1].metric
    out.append(f"  cost against {strongest} on all {n}: calls {c.calls} vs {c.strongest_calls}, saved "
               f"{_saved(c.calls, c.strongest_calls)}; tokens {c.tokens} vs {c.strongest_tokens}, saved "
               f"{_saved(c.tokens, c.strongest_tokens)}" + (f" (the {c.escalated} sent to a person cost a reviewer's "
                                                            "time instead)" if c.escalated else ""))
    na, nd = c.naive_agreement
    out.append(f"  naive thresholds (no allowance for chance) on the same answers: coverage {_pct(nd, n)}, "
               f"agreement {_pct(na, nd) if nd else '-'}")
    return out


def card(c: CascadeCard, path: str) -> str:
    """The cascade's card: what it promises, how, under which assumptions, and what it did on held-out labels."""
    cas = c.cascade
    stages = ", then ".join(f"`{s.metric}`" for s in cas.stages)
    return "\n".join([
        f"# Calibrated cascade (`{path}`)", "",
        "## Guarantee", "",
        f"Stages in order: {stages}; an answer no stage is confident on goes to a person. With probability at "
        f"least {1 - cas.delta:.2f} over the draw of the labelled calibration answers, the verdicts the stages keep "
        f"agree with the human labels (target `{cas.label_target}`: the answer is ungrounded when a claim is "
        + ("not_found or contradicted" if cas.label_target == "hallucinated" else "not_found, contradicted or an "
           "inference") + f") on at least {cas.target:.0%} of the answers they decide.", "",
        f"Method: {cas.method}. Each stage's confidence comes from its own output: the distance of its score from "
        "its verdict threshold, the support probability where the units carry one (MiniCheck), and the agreement "
        "across repeats where the run has them.", "",
        "## Assumptions", "",
        "- The labelled answers and the answers the cascade will judge are exchangeable: the labelled sample is "
        "drawn like the data (same source, same kinds of question and answer, same judge and metric versions).",
        "- The labels are the truth the agreement is measured against; label noise is inherited.",
        "- The guarantee is on average over the answers a stage keeps, not for any single answer; it says nothing "
        "about the answers sent to a person.",
        f"- With few labels no level can be certified (at target {cas.target:.2f}, a level needs at least "
        f"{c.min_n} kept calibration answers, all right), and the "
        "stage decides nothing.", "",
        "## Held-out figures", "",
        "```", *report_lines(c), "```", ""])
