"""What the report leads with: which metric for which need, and the divergences grouped by reason.

Each need is a set of requirements over the metric cards' behaviour facts (:mod:`reports.model.behaviours`:
a property answered by one canonical case). A fact is read from this run when the run holds that
case and scored it, otherwise from the committed card (``reports/cards/<metric>.md``, generated from
a reference run of the canonical set). Where the run's cases carry human labels and the agreement
module is installed, each recommended metric's agreement with the labels is shown beside it.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from reports.model.behaviours import PROBES, answer

CARDS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cards")
PER_CLAIM_UNITS = ("claim", "statement")


@dataclass(frozen=True)
class Need:
    """One row of the decision table."""

    need: str
    """The situation, e.g. "cheap monitoring of production traffic"."""
    recommended: list[str]
    """Metric names, best first (empty: none of this run's metrics fits)."""
    why: str
    """The requirements, and what the facts say."""
    agreement: str = ""
    """The recommended metrics' agreement with human labels, when known."""


@dataclass
class Group:
    """Divergent cases that share one reason."""

    reason: str
    divergences: list = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.divergences)


def card_facts(metric: str, cards_dir: str = CARDS_DIR) -> dict[str, str]:
    """case id -> answer (yes / no / partly / ...) from a committed card's behaviour table.

    >>> card_facts("inhouse.span")["cookie-yield"]
    'no'
    >>> card_facts("no.such.metric")
    {}
    """
    path = os.path.join(cards_dir, f"{metric}.md")
    if not os.path.isfile(path):
        return {}
    out = {}
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^\| [^|]+ \| \*\*(?P<answer>[^*]+)\*\* \| (?P<case>[a-z0-9-]+) \| [^|]+ \|$", line.strip())
        if m:
            out[m["case"]] = m["answer"]
    return out


def facts(data, cells) -> dict[str, dict[str, tuple[str, str]]]:
    """metric -> case id -> (answer, source), source "run" or "card"."""

    out = {}
    for m in data.metrics:
        card = card_facts(m)
        mine = {}
        for p in PROBES:
            cell = cells.get((p.case_id, m))
            if cell is not None and cell.status != "missing":
                mine[p.case_id] = (answer(p, cell).answer, "run")
            elif p.case_id in card:
                mine[p.case_id] = (card[p.case_id], "card")
        out[m] = mine
    return out


def agreement(rep) -> dict[str, float]:
    """metric -> balanced accuracy against the human labels ("not attributable" target, default
    threshold); empty when no case is labelled or the agreement module is not installed.

    The hook for :mod:`reports.model.agreement` (``compute(data)`` -> per-metric figures): the report's own
    figures are used when it computed them (``rep.agreement``)."""
    results = getattr(rep, "agreement", None)
    if results is None:
        try:
            from reports.model import agreement as ag  # noqa: PLC0415 - lazy: optional import, its absence is handled here
        except ImportError:
            return {}
        try:
            results = ag.compute(rep.data, resamples=200)
        except Exception:  # noqa: BLE001 - a report without agreement is still a report
            return {}
    out = {}
    for r in results or []:
        fig = (getattr(r, "answers", None) or {}).get("not_attributable")
        point = getattr(fig, "point", None)
        if point is not None and point.balanced_accuracy is not None and getattr(r, "labelled", 0):
            out[r.metric] = point.balanced_accuracy
    return out


def needs(rep) -> list[Need]:
    """The decision table for one report."""
    d = rep.data
    f = facts(d, rep.cells)
    costs = {c.metric: c for c in rep.costs if c.answers}
    short = rep.shorts

    def said(m: str, case_id: str) -> str | None:
        return f.get(m, {}).get(case_id, (None, None))[0]

    def names(ms) -> str:
        return ", ".join(short[m] for m in ms) or "none"

    strict = [m for m in d.metrics if said(m, "cookie-yield") == "no" and said(m, "release-date-contradicted") == "yes"]
    span = [m for m in strict if said(m, "product-age") == "no" and d.info[m].unit in PER_CLAIM_UNITS]
    citation = [m for m in d.metrics if said(m, "citation-misattributed") == "yes"]
    cheap = sorted([m for m in strict if m in costs], key=lambda m: (costs[m].calls, costs[m].tokens))
    abstain = [m for m in d.metrics if said(m, "abstain-unanswerable") == "yes" and said(m, "abstain-answerable") == "no"]
    german = [m for m in strict if said(m, "non-english") == "yes"]
    lenient = [m for m in d.metrics if said(m, "cookie-yield") == "yes"]
    out = [
        Need("a citation promised per claim", span[:1] + citation[:1],
             "fails a claim no passage states (cookie-yield) and one only inferred from them (product-age), "
             f"lowers the score for a contradiction, judges claim by claim; {names(citation)} "
             f"{'notices' if len(citation) == 1 else 'notice'} a [N] marker that points at the wrong passage "
             "(citation-misattributed)"
             + (f". Also qualify: {names(span[1:])}" if span[1:] else "")),
        Need("cheap monitoring of production traffic", cheap[:1],
             f"fails unstated and contradicted claims ({names(strict)}), then the fewest judge calls per answer"
             + (f": {costs[cheap[0]].calls:.1f} calls, {costs[cheap[0]].tokens:,.0f} tokens" if cheap else "")
             + (f". Avoid {names(lenient)}: it stays at 1.0 on an answer whose only fault is an unstated claim"
                if lenient else "")),
        Need("answers that may abstain", abstain,
             "scores a justified refusal as grounded (abstain-unanswerable) and an over-cautious one as not "
             "grounded (abstain-answerable)"),
        Need("non-English answers", german[:2],
             "scores a German answer with a supported, a contradicted and an unstated claim below 1 (non-english), "
             "and fails unstated and contradicted claims; the reference judge reads labels, so check a real "
             "judge's reading of your language against labelled cases"),
    ]
    agree = agreement(rep)
    if agree:
        out = [Need(n.need, n.recommended, n.why,
                    ", ".join(f"{short[m]} {agree[m]:.2f}" for m in n.recommended if m in agree)) for n in out]
    return out


def sources(rep) -> str:
    """Where the facts came from, in one sentence."""
    f = facts(rep.data, rep.cells)
    n_run = sum(src == "run" for m in f.values() for _, src in m.values())
    n_card = sum(src == "card" for m in f.values() for _, src in m.values())
    if not n_card:
        return f"Every fact ({n_run}) is read from this run's cells on the canonical probe cases."
    return (f"{n_run} fact(s) are read from this run's cells and {n_card} from the metric cards "
            "(a reference run of the canonical set), where this run does not score the probe case.")


def groups(divergences) -> list[Group]:
    """Divergences grouped by reason, largest group first (then first appearance).

    >>> from types import SimpleNamespace as N
    >>> [(g.reason, g.count) for g in groups([N(reason="a"), N(reason="b"), N(reason="a")])]
    [('a', 2), ('b', 1)]
    """
    by: dict[str, Group] = {}
    for dv in divergences:   # the reason's mechanism, without the case's own text, when it has one
        key = getattr(dv, "summary", "") or dv.reason
        by.setdefault(key, Group(key)).divergences.append(dv)
    order = list(by)
    return sorted(by.values(), key=lambda g: (-g.count, order.index(g.reason)))
