"""What the report leads with: which metric for which need, and the divergences grouped by reason.

Each need is a set of requirements over behaviour facts (:mod:`harness.reports.analysis.facts`: data, found by
the behaviour a case is tagged for, never by case id), then a ranking by measured agreement with human
labels and by stability across repeats where the run has them, and only then by cost. A metric is
never recommended for being cheaper when its agreement lies below another candidate's interval,
nor when its decisions flip across repeats more than a steadier candidate's. A metric whose agreement
interval reaches chance (balanced accuracy 0.50: flagging every answer, or none, scores exactly that) is never
recommended, and before any answer of the run is labelled nothing is: the table says how many answers to label
and the ``harness review`` command that draws them. Each recommendation names the figures it rests on (n,
agreement with its interval, cost per answer), and each row the sections that hold its evidence.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from harness.reports.analysis.agreement import title as agreement_heading
from harness.reports.analysis.facts import FACTS_TITLE, merged, said, sources
from harness.reports.analysis.stability import TITLE as STABILITY

PER_CLAIM_UNITS = ("claim", "statement")
TARGET = "hallucinated"
"""The human target the table's agreement uses (some claim not found or contradicted)."""
FRONTIER_TITLE = "Cost and quality: the frontier"
"""The frontier section's title (:mod:`harness.reports.analysis.frontier`, which imports this module)."""
FLIP_LIMIT = 0.05
"""A metric whose grounded/ungrounded decision flips between repeats on more than this share of answers
is passed over when a candidate at or under it exists."""
CHANCE = 0.5
"""Balanced accuracy of a verdict that ignores the answer (flag all, flag none, or a coin): a metric whose
interval reaches it is not shown to agree with people at all."""
LABEL_FIRST = 50
"""Answers to label before the table recommends anything (the seeds' figure; the run's size when smaller)."""


@dataclass(frozen=True)
class Standing:
    """One metric's agreement with the labels, as the decision table shows it."""

    value: float
    """Balanced accuracy at the default threshold."""
    low: float | None
    high: float | None
    n: int
    positives: int

    def text(self) -> str:
        """e.g. ``0.92 [0.78, 0.99] n=24, 42% ungrounded``."""
        ci = f" [{self.low:.2f}, {self.high:.2f}]" if self.low is not None else ""
        return f"{self.value:.2f}{ci} n={self.n}, {self.positives / self.n:.0%} ungrounded"

    @property
    def at_chance(self) -> bool:
        """Does the interval reach chance (or is there none)?

        >>> Standing(0.5, 0.5, 0.5, 10, 4).at_chance, Standing(0.9, 0.62, 1.0, 21, 11).at_chance
        (True, False)
        """
        return self.low is None or self.low <= CHANCE


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
    """The recommended metrics' agreement with human labels, when measured."""
    evidence: tuple[tuple[str, str], ...] = ()
    """(section anchor, section title) for every section this row rests on."""
    candidates: tuple[str, ...] = ()
    """Metrics that meet the row's requirements on behaviour facts, before agreement is asked."""
    held: str = ""
    """Why nothing is recommended, when nothing is (no labels yet; every candidate at chance)."""


@dataclass
class Decision:
    """The decision table, computed once (the renderers lay it out)."""

    needs: list[Need]
    sources: str
    agreement_title: str = ""
    """The agreement column's heading ("" when nothing was measured)."""
    note: str = ""


@dataclass
class Group:
    """Divergent cases that share one reason."""

    reason: str
    divergences: list = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.divergences)


def agreement_title(is_reference: bool) -> str:
    """The agreement column's heading by judge kind.

    >>> agreement_title(True).split(":")[0], agreement_title(False).split(":")[0]
    ('definition ceiling (reference judge)', 'judge + definition agreement')
    """
    kind = "definition ceiling (reference judge)" if is_reference else "judge + definition agreement"
    return f"{kind}: balanced accuracy [95% CI], target {TARGET}"


def standings(rep) -> dict[str, Standing]:
    """metric -> its agreement on the target (answers with a score; none when no case is labelled).

    The hook for other estimators: a report that carries ``estimates`` (metric -> :class:`Standing`, e.g.
    inclusion-weighted figures of a review sample) is read from them instead of the plain agreement over the
    labelled answers. The table, the frontier and the chance rule read only this function."""
    est = getattr(rep, "estimates", None)
    if est:
        return dict(est)
    out = {}
    for r in getattr(rep, "agreement", None) or []:
        f = (r.answers or {}).get(TARGET)
        p = getattr(f, "point", None)
        if p is None or p.balanced_accuracy is None or not r.labelled:
            continue
        lo, hi = f.ci.get("balanced_accuracy", (None, None))
        out[r.metric] = Standing(p.balanced_accuracy, lo, hi, f.n, f.positives)
    return out


def agreement(rep) -> dict[str, float]:
    """metric -> balanced accuracy on the target (kept for callers that want the point only)."""
    return {m: s.value for m, s in standings(rep).items()}


def flips(rep) -> dict[str, float]:
    """metric -> share of answers whose decision flips across repeats (only when the run has repeats)."""
    st = getattr(rep, "stability", None)
    if st is None or not st.repeats or st.repeats < 2:
        return {}
    return {s.metric: s.flip_rate for s in st.metrics if s.flip_rate is not None}


def below(m: str, others, agree: dict[str, Standing]) -> bool:
    """Does ``m``'s agreement lie below some other candidate's interval (its point estimate under the other's
    lower bound: the other very likely agrees better)?

    >>> a = {"x": Standing(0.70, 0.44, 0.87, 23, 11), "y": Standing(1.0, 0.73, 1.0, 21, 11)}
    >>> below("x", ["x", "y"], a), below("y", ["x", "y"], a)
    (True, False)
    """
    mine = agree.get(m)
    if mine is None:
        return False
    return any(o != m and o in agree and agree[o].low is not None and mine.value < agree[o].low for o in others)


def rank(cands: list[str], rep, key) -> tuple[list[str], list[str]]:
    """(kept in order of ``key``, passed over): the candidates whose agreement lies below another's
    interval, or whose decisions flip more than :data:`FLIP_LIMIT` while another's do not, are passed over."""
    agree, flip = standings(rep), flips(rep)
    steady = [m for m in cands if flip.get(m, 0.0) <= FLIP_LIMIT]
    out = [m for m in cands if not below(m, cands, agree) and (m in steady or not steady)]
    return sorted(out, key=key), [m for m in cands if m not in out]


def needs(rep) -> list[Need]:
    """The decision table for one report."""
    d = rep.data
    f = merged(d, rep.cells)
    costs = {c.metric: c for c in rep.costs if c.answers}
    short = rep.shorts
    agree = standings(rep)

    def names(ms) -> str:
        return ", ".join(short[m] for m in ms) or "none"

    def yes(m, key):
        return said(f, m, key) == "yes"

    def no(m, key):
        return said(f, m, key) == "no"

    def fit(ms):   # measured, and its interval clear of chance
        return [m for m in ms if m in agree and not agree[m].at_chance]

    order = {m: i for i, m in enumerate(d.metrics)}
    by_agreement = (lambda m: (-(agree[m].value if m in agree else -1), order[m]))
    strict = [m for m in d.metrics if no(m, "passes-unstated") and yes(m, "penalises-contradiction")]
    span = [m for m in strict if no(m, "credits-inference") and d.info[m].unit in PER_CLAIM_UNITS]
    citation = [m for m in d.metrics if yes(m, "checks-citation")]
    priced = [m for m in strict if m in costs]
    cheap, passed = rank(priced, rep, lambda m: (costs[m].calls, costs[m].tokens, order[m]))
    cheap = fit(cheap)
    abstain = [m for m in d.metrics if yes(m, "passes-correct-refusal") and no(m, "passes-over-refusal")]
    german_all = [m for m in strict if yes(m, "non-english")]
    german = fit(rank(german_all, rep, by_agreement)[0])
    lenient = [m for m in d.metrics if yes(m, "passes-unstated")]
    span_kept = fit(rank(span, rep, by_agreement)[0])
    facts_ev = ("facts", FACTS_TITLE)
    agree_ev = ("agreement", agreement_heading(d.is_reference)) if agree else None
    cost_ev = ("frontier", FRONTIER_TITLE)
    stab_ev = ("stability", STABILITY) if flips(rep) else None

    def ev(*parts):
        return tuple(p for p in parts if p)

    out = [
        Need("a citation promised per claim", span_kept[:1] + fit(citation)[:1],
             "fails a claim no passage states and one only inferred from them, lowers the score for a "
             f"contradiction, judges claim by claim; {names(citation)} "
             f"{'notices' if len(citation) == 1 else 'notice'} a [N] marker that points at the wrong passage"
             + (f". Also qualify: {names(span_kept[1:])}" if span_kept[1:] else ""),
             evidence=ev(facts_ev, agree_ev, stab_ev), candidates=tuple(span + citation)),
        Need("cheap monitoring of production traffic", cheap[:1],
             f"fails unstated and contradicted claims ({names(strict)}), then the fewest judge calls per answer"
             + (f": {costs[cheap[0]].calls:.1f} calls, {costs[cheap[0]].tokens:,.0f} tokens" if cheap else "")
             + (f". Not picked, whatever their cost: {names(passed)} (agreement below another candidate's "
                "interval, or decisions that flip across repeats)" if passed else "")
             + (f". Avoid {names(lenient)}: it stays at 1.0 on an answer whose only fault is an unstated claim"
                if lenient else ""),
             evidence=ev(facts_ev, cost_ev, agree_ev, stab_ev), candidates=tuple(priced)),
        Need("answers that may abstain", fit(abstain),
             "scores a justified refusal as grounded and an over-cautious one (the passages hold the answer) "
             "as not grounded", evidence=ev(facts_ev, agree_ev), candidates=tuple(abstain)),
        Need("non-English answers", german[:2],
             "scores a German answer with a supported, a contradicted and an unstated claim below 1, and fails "
             "unstated and contradicted claims; the reference judge reads labels, so check a real judge's "
             "reading of your language against labelled cases", evidence=ev(facts_ev, agree_ev),
             candidates=tuple(german_all)),
    ]
    return [_settled(n, agree, short, costs) for n in out]


def _settled(n: Need, agree: dict[str, Standing], short: dict[str, str], costs: dict) -> Need:
    """The row with the figures each recommendation rests on, the candidates left out at chance, and why
    nothing is recommended when nothing is."""
    cands = list(dict.fromkeys(n.candidates))
    chance = [m for m in cands if m in agree and agree[m].at_chance]
    why = n.why + ("; not recommended, agreement interval reaching chance (balanced accuracy "
                   f"{CHANCE:.2f}): " + "; ".join(f"{short[m]} {agree[m].text()}" for m in chance) if chance else "")
    held = ""
    if not n.recommended and cands:
        held = ("none yet: no answer of this run is labelled" if not agree else
                "none: no candidate's agreement is clear of chance" if chance else
                "none: no candidate's agreement is measured")
    figures = "; ".join(f"{short[m]} {agree[m].text()}" + _cost(costs.get(m)) for m in n.recommended if m in agree)
    return Need(n.need, n.recommended, why, figures, n.evidence, tuple(cands), held)


def _cost(c) -> str:
    """The cost a recommendation rests on, e.g. ``, at 2.0 judge calls and 1,234 tokens per answer``."""
    if c is None:
        return ""
    money = f" ({c.money_per_answer:.3g} money)" if c.money_per_answer is not None else ""
    return f", at {c.calls:.1f} judge calls and {c.tokens:,.0f} tokens{money} per answer"


def label_first(data) -> str:
    """What to do before the table can recommend anything: how many answers to label, and the commands.

    >>> from types import SimpleNamespace as N
    >>> print(label_first(N(run_dir="/runs/my run", case_ids=["a"] * 120)))
    No answer of this run is labelled, so nothing is recommended: a metric is chosen on its agreement with people, never on its definition or cost alone. Label 50 answers first: harness review '/runs/my run' --labels '/runs/my run/labels.sqlite' --sample 50 --reviewer YOUR_NAME (a browser app; a second reviewer runs the same command with their name), then harness report '/runs/my run' --labels '/runs/my run/labels.sqlite'.
    """
    n = min(LABEL_FIRST, len(data.case_ids)) or LABEL_FIRST
    run = shlex.quote(data.run_dir)
    labels = shlex.quote(f"{data.run_dir.rstrip('/')}/labels.sqlite")
    return ("No answer of this run is labelled, so nothing is recommended: a metric is chosen on its agreement "
            f"with people, never on its definition or cost alone. Label {n} answers first: harness review {run} "
            f"--labels {labels} --sample {n} --reviewer YOUR_NAME (a browser app; a second reviewer runs the same "
            f"command with their name), then harness report {run} --labels {labels}.")


CEILING = ("Under the reference judge these figures are each definition's ceiling (a judge that reads the "
           "labels perfectly), not agreement a real judge reaches.")


def compute(rep) -> Decision:
    """The decision table of one report, with where its facts came from and how to read its figures."""
    rows = needs(rep)
    measured = bool(standings(rep))
    reference = rep.data.is_reference
    note = (CEILING if reference else "") if measured else label_first(rep.data)
    return Decision(rows, sources(merged(rep.data, rep.cells)),
                    agreement_title(reference) if measured else "", note)


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
