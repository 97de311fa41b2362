"""Agreement between reviewers of one sample: inter-annotator kappa and the disagreements to adjudicate.

Two reviewers: Cohen's kappa; three or more: Fleiss' kappa. Over the answers every reviewer has finished:

- claim level: the claims every reviewer drew with the same span, on the four labels;
- answer level: "ungrounded" (some claim not_found or contradicted), yes or no.

A disagreement is an answer where the reviewers' labels differ on a claim, where they split the answer into
different claims, or where they differ on abstention or answerability. An adjudicator (named in the labels file,
``harness review --adjudicator NAME``) is not a rater: their labels never enter the kappa, and a disagreement
they have finished is settled (counted, no longer listed to adjudicate).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.core.records import LABELS
from harness.reports.review.answers import answer_done, skipped

UNGROUNDED = ("not_found", "contradicted")


@dataclass(frozen=True)
class Disagreement:
    """One answer the reviewers labelled differently."""

    case_id: str
    position: int
    """Where the answer is in the sample (0-based)."""
    what: tuple[str, ...]
    """One line per difference, e.g. "claim [0, 28] 'Bake at 350 F.': alice supported, bob inference"."""


@dataclass
class Kappa:
    """Inter-annotator agreement of a sample."""

    reviewers: list[str]
    answers: int
    """Answers every reviewer has finished."""
    claims: int
    """Claims every reviewer drew with the same span, on those answers."""
    claim_kappa: float | None
    answer_kappa: float | None
    claim_agreement: float | None
    """Raw share of those claims with the same label from everyone."""
    statistic: str
    """"Cohen" or "Fleiss"."""
    disagreements: list[Disagreement] = field(default_factory=list)
    """Disagreements still to adjudicate."""
    settled: list[Disagreement] = field(default_factory=list)
    """Disagreements an adjudicator has finished."""
    adjudicators: list[str] = field(default_factory=list)
    answer_agreement: float | None = None
    """Raw share of the answers on which every reviewer says the same ungrounded yes/no."""
    base_rate: float | None = None
    """Share of the reviewers' answer ratings that say ungrounded."""
    skipped: int = 0
    """Answers of the sample some reviewer skipped: left out of the kappa (not finished by everyone)."""


def cohen(a: list[str], b: list[str], categories) -> float | None:
    """Cohen's kappa of two raters; None when chance agreement is 1.

    >>> cohen(["s", "s", "n", "n"], ["s", "n", "n", "n"], "sn")
    0.5
    """
    n = len(a)
    if not n:
        return None
    po = sum(x == y for x, y in zip(a, b)) / n
    pe = sum((a.count(k) / n) * (b.count(k) / n) for k in categories)
    return None if pe >= 1 else (po - pe) / (1 - pe)


def fleiss(items: list[list[str]], categories) -> float | None:
    """Fleiss' kappa: each item rated by the same number of raters.

    >>> round(fleiss([["s", "s", "s"], ["n", "n", "s"], ["n", "n", "n"]], "sn"), 4)
    0.55
    """
    if not items:
        return None
    r, n = len(items[0]), len(items)
    counts = [[it.count(k) for k in categories] for it in items]
    p_i = [(sum(c * c for c in row) - r) / (r * (r - 1)) for row in counts]
    p_k = [sum(row[j] for row in counts) / (n * r) for j in range(len(categories))]
    pe = sum(p * p for p in p_k)
    return None if pe >= 1 else (sum(p_i) / n - pe) / (1 - pe)


def _kappa(ratings: list[list[str]], categories) -> float | None:
    if not ratings:
        return None
    if len(ratings[0]) == 2:
        return cohen([x[0] for x in ratings], [x[1] for x in ratings], categories)
    return fleiss(ratings, categories)


def compare(order: list[str], answers: dict[str, dict], latest: dict[str, dict[str, dict]],
            reviewers: list[str] | None = None, adjudicators: list[str] | tuple = ()) -> Kappa:
    """Kappa and disagreements of ``reviewers`` (default: everyone who saved a label but the adjudicators)
    over the sample ``order`` (case ids); ``answers`` maps case id -> answer text, ``latest`` is
    ``LabelStore.latest()``."""
    who = reviewers or sorted(r for r in latest if r not in adjudicators)
    both = [cid for cid in order if who and all(answer_done(latest.get(r, {}).get(cid)) for r in who)]
    claim_ratings, answer_ratings, out = [], [], []
    for cid in both:
        states = [latest[r][cid] for r in who]
        answer_ratings.append(["yes" if any(c["label"] in UNGROUNDED for c in s["claims"]) else "no" for s in states])
        spans = [{(c["start"], c["end"]): c["label"] for c in s["claims"]} for s in states]
        common = set.intersection(*(set(s) for s in spans)) if spans else set()
        lines = []
        for sp in sorted(common):
            labels = [s[sp] for s in spans]
            claim_ratings.append(labels)
            if len(set(labels)) > 1:
                text = answers.get(cid, "")[sp[0]:sp[1]]
                lines.append(f"claim [{sp[0]}, {sp[1]}] {text[:80]!r}: "
                             + ", ".join(f"{r} {lab}" for r, lab in zip(who, labels)))
        if any(set(s) != common for s in spans):
            lines.append("split into different claims: " + "; ".join(
                f"{r} {sorted(s)}" for r, s in zip(who, spans)))
        for key in ("abstention", "answerable"):
            vals = [s[key] for s in states]
            if len(set(vals)) > 1:
                lines.append(f"{key}: " + ", ".join(f"{r} {str(v).lower()}" for r, v in zip(who, vals)))
        if lines:
            out.append(Disagreement(cid, order.index(cid), tuple(lines)))
    agree = (sum(len(set(x)) == 1 for x in claim_ratings) / len(claim_ratings)) if claim_ratings else None
    adj = [a for a in adjudicators if a not in who]
    settled = [d for d in out if any(answer_done(latest.get(a, {}).get(d.case_id)) for a in adj)]
    flat = [x for r in answer_ratings for x in r]
    return Kappa(who, len(both), len(claim_ratings), _kappa(claim_ratings, LABELS) if len(who) > 1 else None,
                 _kappa(answer_ratings, ("yes", "no")) if len(who) > 1 else None, agree,
                 "Cohen" if len(who) == 2 else "Fleiss", [d for d in out if d not in settled], settled, adj,
                 (sum(len(set(r)) == 1 for r in answer_ratings) / len(answer_ratings)) if answer_ratings else None,
                 flat.count("yes") / len(flat) if flat else None,
                 sum(any(skipped(latest.get(r, {}).get(cid)) for r in who) for cid in order))


def text(k: Kappa) -> str:
    """The terminal lines of ``harness review --kappa``."""
    def f(v):
        return "\u2013" if v is None else f"{v:.3f}"

    if len(k.reviewers) < 2:
        return (f"reviewers: {', '.join(k.reviewers) or '(none yet)'}: inter-annotator kappa needs two reviewers "
                "or more on the same sample (harness review --labels FILE --reviewer NAME)")
    lines = [f"reviewers: {', '.join(k.reviewers)}; answers every reviewer finished: {k.answers}"
             + (f" (skipped by some reviewer, left out: {k.skipped})" if k.skipped else ""),
             f"claims ({k.statistic}'s kappa over {k.claims} claims with the same span): kappa {f(k.claim_kappa)}, "
             f"raw agreement {f(k.claim_agreement)}",
             f"answers ungrounded yes/no ({k.statistic}'s kappa over {k.answers} answers): kappa {f(k.answer_kappa)}, "
             f"raw agreement {f(k.answer_agreement)}, base rate {f(k.base_rate)}",
             f"disagreements to adjudicate: {len(k.disagreements)}"
             + (f" (settled by {', '.join(k.adjudicators)}: {len(k.settled)} of {len(k.settled) + len(k.disagreements)})"
                if k.adjudicators else "")]
    for d in k.disagreements:
        lines.append(f"  #{d.position + 1} {d.case_id}")
        lines += [f"    {w}" for w in d.what]
    return "\n".join(lines)
