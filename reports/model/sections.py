"""The section model both renderers read: titles, intros, verdict marks, and sections built once as
plain text (tables of strings and note lines) that the HTML and Markdown renderers only escape and
lay out. Neither renderer imports the other or the builder."""
from __future__ import annotations

from harness.core import vocab
from harness.reports.analysis.cost import money
from harness.reports.model.blocks import Note, Notes, Section, Table

TITLES = {
    "decision": "Which metric for which need",
    "glance": "At a glance",
    "matrix": "Score matrix",
    "divergences": "Where they diverge",
    "metrics": "Per metric",
    "cost": "Cost per metric",
    "evidence": "Evidence check",
}

INTRO = {
    "matrix": "Each cell is one metric's score on one case, exactly as the metric computes it. A cell that "
              "is not a score is never shown as a number: it carries its own label, colour and hatching.",
    "divergences": "Cases on which the scored metrics are at least {threshold:.2f} apart (unscored and NaN "
                   "cells do not count; the similarity baseline and its cascade neither: their own sections say "
                   "what they cost). For each, the rows are the answer's annotated claims, or its "
                   "sentences when the case has no annotation; each metric's units are located in the "
                   "answer by the aligner (exact, normalised, then fuzzy) and placed on the rows they "
                   "overlap. Each reason is derived from the metrics' own unit verdicts and scoring rules, "
                   "and names its kind: definition, judgement, decomposition or coverage (reports/analysis/reasons.py).",
    "metrics": "Mean over the cases each metric scored, with a 95% bootstrap interval ({resamples} "
               "resamples, fixed seed). Cells that are not scores are counted beside it, never averaged in. "
               "Silent fallbacks: cells the vendor still scored after swallowing a failed judge call (Ragas "
               "ResponseGroundedness scoring from one judge; TruLens keeping every sentence, reading a failed "
               "abstention check as not an abstention, or dropping a sentence it could not parse); each says "
               "so in its reason.",
    "cost": "Judge traffic per answer from the gateway's ledger (not-applicable cells excluded). Tokens "
            "billed are what the judge served live (as its usage said); cache hits are counted apart and cost "
            "nothing again. Money is billed tokens at the price table you supplied (--prices FILE or "
            "--price-in/--price-out; the harness ships no prices). Latency is the median per answer of the "
            "time in the judge of the metric's own calls (sent to answered: the run's queue and the pace's "
            "waits left out; cache hits not timed); a metric that calls no judge shows its own compute time, "
            "and a store written before judge time was kept shows the gateway's time, queue included.",
    "evidence": "For each metric whose judge quotes evidence, the share of its quotes that occur verbatim "
                "in the context (whitespace and quote marks normalised).",
}

SIGNIFICANT = "\u25cf"
"""The mark of a difference whose paired interval excludes 0, in the terminal and on the pages alike
(``harness compare``)."""

VERDICT_MARK = {"supported": "\u2713", "unsupported": "\u2717", "ambiguous": "?", "excluded": "\u2013"}
"""Normalised verdict -> a short mark shown before it."""

ROW_KIND = {
    "claim": "claim",
    "abstention": "abstention",
    "sentence": "answer sentence",
    "other": "not an annotated claim",
    "answer": "whole answer",
    "unaligned": "not located",
}

STATUS_NAMES = {k: t.named for k, t in vocab.STATUSES.items()}
"""status -> its name in prose (from :mod:`harness.core.vocab`)."""
STATUS_ORDER = vocab.NOT_SCORES
"""The statuses of cells without a score, in the vocabulary's order."""


def metrics_section(rep, resamples: int) -> Section:
    """Per metric: mean, interval, the count of cells of every status and of silent fallbacks (cells
    flagged ``vendor_fallback``), plus the cells that are not scores (by reason) and the flagged
    values (flags named from the vocabulary)."""
    keys = ("scored",) + tuple(k for k in STATUS_ORDER if k != "missing")
    rows, notes = [], []
    shorts = rep.shorts   # a dict built on every read: read once
    for s in rep.summaries:
        c = s.counts
        ci = f"[{fmt(s.low)}, {fmt(s.high)}]" if s.mean is not None else ""   # no interval: each renderer's dash
        rows.append([rep.names[s.metric], fmt(s.mean), ci] + [str(c.get(k, 0)) for k in keys]
                    + [str(getattr(s, "fallbacks", 0))])
        for status, reasons in s.reasons.items():
            notes += [Note(shorts[s.metric], f"{STATUS_NAMES[status]} ({len(ids)}): {reason}", tuple(ids))
                      for reason, ids in reasons]
        notes += [Note(shorts[s.metric], f"flagged value on {cid}: {flags}") for cid, flags in s.flagged]
    heads = (["metric", "mean", "95% interval"] + [vocab.status(k).short if k != "scored" else k for k in keys]
             + ["silent fallbacks"])
    return Section("metrics", TITLES["metrics"], [INTRO["metrics"].format(resamples=resamples), Table(heads, rows),
                                                  Notes("Cells that are not scores, and flagged values", notes)])


def fmt(v: float | None, digits: int = 2) -> str:
    """A number, or an en dash for none.

    >>> fmt(0.756), fmt(None)
    ('0.76', '\u2013')
    """
    return "\u2013" if v is None else f"{v:.{digits}f}"


def mark_text(mark) -> str:
    """How one unit's verdict reads in an alignment cell.

    >>> from harness.reports.analysis.alignment import Mark, Unit
    >>> mark_text(Mark(Unit("m", 0, "x", "ambiguous", "borderline")))
    '? ambiguous (borderline)'
    """
    u = mark.unit
    raw = f" ({u.raw_verdict})" if u.raw_verdict and u.raw_verdict != u.verdict else ""
    return f"{VERDICT_MARK.get(u.verdict, '')} {u.verdict}{raw}{' [shared]' if mark.shared else ''}".strip()


def cost_section(rep) -> Section:
    """Judge calls, tokens, latency and cache hits per answer, tokens billed and money per answer at
    the user's prices, by metric (from the ledgers)."""

    heads = ["metric", "answers", "calls / answer", "calls min-max", "prompt tokens / answer",
             "completion tokens / answer", "latency / answer (ms)", "cache hits", "tokens billed", "money / answer"]
    rows = [[rep.names[c.metric], str(c.answers), f"{c.calls:.2f}", f"{c.min_calls}-{c.max_calls}",
             f"{c.prompt_tokens:,.0f}", f"{c.completion_tokens:,.0f}", f"{c.latency_ms:,.1f}", str(c.cache_hits),
             f"{c.billed_tokens:,}", money(c.money_per_answer)]
            for c in rep.costs]
    return Section("cost", TITLES["cost"], [INTRO["cost"], Table(heads, rows)])


def evidence_section(rep) -> Section:
    """How many quoted spans really occur in the context, by metric; the last cell of a row is the
    list of quotes not found (up to 3), one string each."""
    heads = ["metric", "quotes checked", "verbatim", "share", "quotes not found (up to 3)"]
    rows = [[rep.names[x.metric], str(x.checked), str(x.verbatim), f"{fmt(100 * x.share, 1)}%",
             [f"{c}: \u201c{q}\u201d" for c, q in x.examples]] for x in rep.evidence]
    if not rows:
        return Section("evidence", TITLES["evidence"], [INTRO["evidence"], "No metric in this run quoted evidence."])
    return Section("evidence", TITLES["evidence"], [INTRO["evidence"], Table(heads, rows)])
