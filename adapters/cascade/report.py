"""What the similarity shortcut costs: the cascade beside the full in-house scorer, sentence by sentence.

For every case that ``cascade.similarity_span`` scored, each answer sentence is either approved by the
similarity check (accepted with no verifier call) or flagged (sent to the in-house verifier). The full
check's verdict on a sentence comes from the ``inhouse.span`` cell of the same case: the sentence is
rejected when any in-house unit overlapping it in the answer is ungrounded, accepted when every one
is grounded, and has no full verdict when none overlaps (a greeting, an abstention the in-house
scorer declines) or the in-house cell is not scored.

- work saved: approved sentences / sentences (the share the verifier never saw);
- residual errors: approved sentences the full check rejects (the shortcut's misses, which the cascade
  cannot catch, and the honest cost of the shortcut);
- false rejects: flagged sentences the full check accepts (verifier work spent on sentences that were fine);
- the similarity check's agreement with the full check: sentences where approved == accepted.

Reads the run store only (units and their spans), never re-scores.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from harness.core.spans import overlaps
from harness.reports.model.blocks import Section, Table
from harness.reports.render.markup import m

CASCADE, FULL = "cascade.similarity_span", "inhouse.span"


@dataclass
class Sentence:
    """One cascade sentence and the full check's verdict on it."""

    case_id: str
    text: str
    similarity: float
    approved: bool
    full: bool | None
    """True: the full in-house check accepts it; False: rejects it; None: no full verdict."""
    final: bool
    """The cascade's own verdict (approved, or the verifier's)."""


@dataclass
class CascadeSummary:
    """The cascade's costs over one run."""

    threshold: float | None
    sentences: list[Sentence] = field(default_factory=list)
    answers: int = 0
    verify_calls: int = 0
    """Cascade cells that needed a verifier call."""
    compared: int = 0
    """Answers both the cascade and the full in-house scorer scored."""
    full_calls: int = 0
    """Judge calls of the full in-house scorer on the compared answers."""
    cascade_calls: int = 0
    """Every call of the cascade (embeddings included) on the compared answers."""

    @property
    def approved(self) -> list[Sentence]:
        return [s for s in self.sentences if s.approved]

    @property
    def flagged(self) -> list[Sentence]:
        return [s for s in self.sentences if not s.approved]

    @property
    def work_saved(self) -> float | None:
        return len(self.approved) / len(self.sentences) if self.sentences else None

    @property
    def residual(self) -> list[Sentence]:
        return [s for s in self.approved if s.full is False]

    @property
    def false_rejects(self) -> list[Sentence]:
        return [s for s in self.flagged if s.full is True]

    @property
    def judged(self) -> list[Sentence]:
        """Sentences with a full-check verdict."""
        return [s for s in self.sentences if s.full is not None]

    @property
    def agree(self) -> int:
        """Judged sentences where the similarity check's call equals the full check's."""
        return sum(s.approved == s.full for s in self.judged)

    @property
    def final_agree(self) -> int:
        """Judged sentences where the cascade's final verdict equals the full check's."""
        return sum(s.final == s.full for s in self.judged)


def _units(data, metric: str, case_id: str):
    u = data.units
    return u[(u["metric"] == metric) & (u["case_id"] == case_id)]


def _span(r):
    try:
        return int(r.span_start), int(r.span_end)
    except (TypeError, ValueError):
        return None


def summarise(data) -> CascadeSummary | None:
    """The cascade's costs in this run; None when the run has no cascade cell."""

    if CASCADE not in data.metrics:
        return None
    out = CascadeSummary(None)
    for cid in data.case_ids:
        cell = data.cell(cid, CASCADE)
        if cell is None or cell.status != "scored":
            continue
        detail = json.loads(cell.detail) if isinstance(cell.detail, str) else {}
        out.threshold = detail.get("threshold", out.threshold)
        full_cell = data.cell(cid, FULL) if FULL in data.metrics else None
        full_units = []
        if full_cell is not None and full_cell.status == "scored":
            full_units = [(_span(r), r.verdict == "supported") for r in _units(data, FULL, cid).itertuples()]
            out.compared += 1
            out.full_calls += int(full_cell.calls)
            out.cascade_calls += int(cell.calls)
        out.answers += 1
        out.verify_calls += int(detail.get("verified", 0) > 0)
        for r in _units(data, CASCADE, cid).itertuples():
            d = json.loads(r.detail) if isinstance(r.detail, str) else {}
            span = _span(r)
            hits = [ok for sp, ok in full_units if sp is not None and span is not None and overlaps(sp, span)]
            out.sentences.append(Sentence(cid, str(r.text), float(d.get("similarity", float("nan"))),
                                          d.get("route") == "similarity", all(hits) if hits else None,
                                          r.verdict == "supported"))
    return out


TITLE = "Similarity cascade"


def _pct(a: int, b: int) -> str:
    return f"{a} of {b} ({100.0 * a / b:.0f}%)" if b else "0 of 0"


def section(s: CascadeSummary | None):
    """The report section (None when the run has no cascade)."""

    if s is None:
        return None
    thr = f"{s.threshold:.2f}" if s.threshold is not None else "?"
    b = Section("cascade", TITLE, [
        f"cascade.similarity_span accepts every sentence whose best embedding similarity to a passage sentence "
        f"reaches {thr} and sends the rest to the in-house verifier. Beside it, the full in-house scorer "
        "(inhouse.span) on the same answers decides what each sentence really is."])
    if not s.sentences:
        b.parts.append("No cascade cell was scored.")
        return b
    rows = [["sentences", str(len(s.sentences))],
            ["approved by similarity (verifier work saved)", _pct(len(s.approved), len(s.sentences))],
            ["sent to the verifier", _pct(len(s.flagged), len(s.sentences))],
            ["answers needing a verifier call", _pct(s.verify_calls, s.answers)],
            [f"calls on the {s.compared} answers both scored: cascade (embeddings included) vs full in-house",
             f"{s.cascade_calls} vs {s.full_calls}"],
            ["sentences with a full-check verdict", str(len(s.judged))],
            ["residual errors (approved, the full check rejects)", _pct(len(s.residual), len(s.approved))],
            ["false rejects (flagged, the full check accepts)", _pct(len(s.false_rejects), len(s.flagged))],
            ["similarity check agrees with the full check", _pct(s.agree, len(s.judged))],
            ["cascade's final verdict agrees with the full check", _pct(s.final_agree, len(s.judged))]]
    b.parts.append(Table(["", ""], rows))
    if not s.judged:
        b.parts.append(f"No {FULL} unit overlaps a cascade sentence: run {FULL} beside the cascade to measure "
                       "its residual.")
    if s.residual:
        b.parts.append(Table(["case", "approved sentence the full check rejects", "similarity"],
                             [[x.case_id, x.text, f"{x.similarity:.4f}"] for x in s.residual],
                             caption="Residual errors: what the shortcut lets through"))
    if s.false_rejects:
        b.parts.append(Table(["case", "flagged sentence the full check accepts", "similarity"],
                             [[x.case_id, x.text, f"{x.similarity:.4f}"] for x in s.false_rejects],
                             caption="False rejects: verifier work spent on sentences that were fine"))
    return b


def summary(data) -> CascadeSummary | None:
    """:func:`summarise` once per loaded run (the report and every card read the same summary)."""
    if not hasattr(data, "_cascade_summary"):
        data._cascade_summary = summarise(data)
    return data._cascade_summary


def sections(data) -> list:
    """The cascade metric's own report section (``CascadeSimilaritySpan.report_sections``)."""
    b = section(summary(data))
    return [b] if b is not None else []


def card_sections(data, card: str) -> list[str]:
    """The cascade's lines on the card of ``card`` (``CascadeSimilaritySpan.card_sections``)."""
    return card_lines(summary(data), card)


def card_lines(s: CascadeSummary | None, metric: str) -> list[str]:
    """The cascade paragraph of the card of ``metric`` (the cascade or the similarity baseline)."""

    if s is None or not s.sentences or metric not in (CASCADE, "baseline.similarity"):
        return []
    lead = ("The similarity check inside this cascade" if metric == CASCADE else
            "The same similarity check, used as the cascade's filter (`cascade.similarity_span`)")
    res = "; ".join(f"{m(x.case_id)}: \u201c{m(x.text)}\u201d ({x.similarity:.2f})" for x in s.residual) or "none"
    return ["## Cascade Costs", "",
            f"{lead}, at threshold {s.threshold:.2f} on the canonical set with the reference judge and the embedded "
            f"model, against the full in-house scorer on the same answers: it approves {_pct(len(s.approved), len(s.sentences))} "
            f"sentences, so the verifier's work saved is {100.0 * (s.work_saved or 0):.0f}%; residual errors (approved "
            f"sentences the full check rejects): {_pct(len(s.residual), len(s.approved))}; false rejects (flagged "
            f"sentences the full check accepts): {_pct(len(s.false_rejects), len(s.flagged))}; the check agrees with "
            f"the full check on {_pct(s.agree, len(s.judged))} sentences that have a full verdict.", "",
            f"Residual errors: {res}.", ""] + _refund(s)


def _refund(s: CascadeSummary) -> list[str]:
    """What the real model measures on the seeds' refund example (canonical case ``refund-similarity``)."""

    rows = [x for x in s.sentences if x.case_id == "refund-similarity"]
    if not rows or any(x.full is None for x in rows):
        return []
    wrong = [x for x in rows if x.approved != x.full]
    said = "; ".join(f"“{m(x.text)}” ({x.similarity:.2f}, {'approved' if x.approved else 'flagged'}, "
                     f"full check: {'accepts' if x.full else 'rejects'})" for x in wrong) or "none"
    return [f"The seeds' refund example (`refund-similarity`, five one-claim sentences): at {s.threshold:.2f} the "
            f"similarity check agrees with the full check on {len(rows) - len(wrong)} of {len(rows)}; it gets wrong: "
            f"{said}. (In the seed's toy vectors it agreed on 4 of 5 and wrongly approved the invented processing "
            "time; the real model measures this instead.)", ""]
