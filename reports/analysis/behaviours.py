"""Behaviour probes for the metric cards and the decision table: each a property, the case tags that
select the cases showing it, and a rule turning such a case's cell into an answer.

A probe finds its cases by what they probe (their ``tags``), never by a case id, so a team's own
cases tagged the same way (or a renamed copy of the canonical set) answer the same probes. Every
behavioural statement on a card is one of these, answered from a reference-judge run of the canonical
set, never written by hand; :mod:`harness.reports.analysis.facts` keeps the answers as data.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from harness.core import vocab
from harness.reports.analysis.orient import unit

EPS = 1e-9


def _full(s: float) -> str:
    return "yes" if s >= 1 - EPS else "no"


def _penalised(s: float) -> str:
    return "yes" if s < 1 - EPS else "no"


def _credit(s: float) -> str:
    return "yes" if s >= 1 - EPS else ("partly" if s > 0.5 + EPS else "no")


def _any(s: float) -> str:
    return "yes" if s > EPS else "no"


def _between(s: float) -> str:
    """Partial credit: strictly between the bottom and the top of the range (0.50 for one of two claims is partial).

    >>> _between(0.5), _between(0.67), _between(1.0), _between(0.0)
    ('yes', 'yes', 'no', 'no')
    """
    return "yes" if EPS < s < 1 - EPS else "no"


@dataclass(frozen=True)
class Probe:
    """One property a card answers."""

    key: str
    """Stable name of the fact (the facts files and the decision table use it)."""
    text: str
    """The property, phrased so that the answer reads after it."""
    tags: frozenset
    """A case shows the property when it carries every one of these tags."""
    answer: Callable[[float], str]
    """Score -> yes | no | partly."""
    group: str = "behaviour"
    """behaviour | degenerate (shown under "Degenerate inputs")."""
    by_units: bool = False
    """Answered from the metric's own claim-level units where it has them (a score can fall for another reason than
    the one the property names: the similarity baseline fails a correctly cited sentence and passes the misattributed
    one); from the score where its units judge the whole answer."""

    def matches(self, case) -> bool:
        """Does ``case`` (anything with ``tags``) show this property?"""
        return self.tags <= set(getattr(case, "tags", ()) or ())


def _p(key, text, tags, rule, group="behaviour", by_units=False) -> Probe:
    return Probe(key, text, frozenset(tags.split()), rule, group, by_units)


PROBES: tuple[Probe, ...] = (
    _p("passes-unstated", "passes a plausible claim that no passage states and none contradicts",
       "lenient-vs-strict", _full),
    _p("passes-true-unstated", "passes an answer that is true but stated nowhere in the passages",
       "ungrounded-but-correct", _any),
    _p("credits-inference", "credits a claim inferred from the passages (date arithmetic) that no span states",
       "inference date-arithmetic", _credit),
    _p("credits-conversion", "credits a unit conversion that no span states", "inference unit-conversion", _credit),
    _p("penalises-contradiction", "lowers the score for a contradicted claim", "contradicted control", _penalised),
    _p("penalises-number", "lowers the score for a one-number change (40 for 39 weeks)", "contradicted numeric",
       _penalised),
    _p("penalises-hedge", "lowers the score for an unsupported claim softened with 'may'", "hedge", _penalised),
    _p("partial-sentence", "gives partial credit to a sentence mixing a supported and an unsupported claim",
       "shared-sentence", _between),
    _p("checks-citation", "notices a citation marker that points at the wrong passage", "citation misattributed",
       _penalised, by_units=True),
    _p("multi-hop", "supports a claim only two passages together state (multi-hop)", "multi-hop", _full),
    _p("ignores-pleasantry", "ignores a claim-free pleasantry ('Great question!')", "trivial-sentence", _full),
    _p("notices-stale", "notices an answer faithful to a stale passage", "stale-context", _penalised),
    _p("penalises-off-topic", "penalises a supported but off-topic claim", "off-topic", _penalised),
    _p("non-english", "scores a German answer with a supported, a contradicted and an unstated claim below 1",
       "non-english", _penalised),
    _p("scores-empty", "scores an empty answer", "empty", lambda s: "yes", "degenerate"),
    _p("passes-over-refusal", "scores as grounded an abstention although the passages hold the answer",
       "abstention answerable", _full, "degenerate"),
    _p("passes-correct-refusal", "scores as grounded a correct refusal (the passages cannot answer)",
       "abstention unanswerable", _full, "degenerate"),
)
"""The probes, in card order."""

BY_KEY = {p.key: p for p in PROBES}


def no_score(status: str) -> str:
    """How a probe reads a cell without a score: its status's label in the vocabulary.

    >>> no_score("vendor_nan"), no_score("not_applicable")
    ('unscored by the vendor', 'not applicable')
    """
    return vocab.status(status).label


@dataclass(frozen=True)
class Answer:
    """A probe answered for one metric."""

    probe: Probe
    answer: str
    """yes | no | partly | :func:`no_score` of the cell's status; ``mixed`` when its cases disagree."""
    value: str
    """The cell as the matrix shows it, e.g. ``1.00``, ``1.00*``, ``NaN`` (cells joined when several)."""
    reason: str | None = None
    """The cell's reason when it has no score."""
    flags: tuple[str, ...] = ()
    case_ids: tuple[str, ...] = ()
    """The cases that showed it, in run order."""

    @property
    def case_id(self) -> str:
        return ", ".join(self.case_ids)


def answer(probe: Probe, cell, case_id: str = "", span: tuple[float, float, bool] = (0.0, 1.0, True)) -> Answer:
    """Answer one probe from one matrix cell. The rules read a score on 0-1, 1 = grounded: a metric whose
    range is another (``span``: bottom, top, higher is better; e.g. Azure's 1-5) is placed on it first (1-5:
    5 is 1.0, 3 is 0.5), and a score where lower is better (Opik's) is turned round.

    >>> from harness.reports.analysis.matrix import Cell
    >>> answer(PROBES[0], Cell("scored", 1.0)).answer, answer(PROBES[0], Cell("scored", 0.75)).answer
    ('yes', 'no')
    >>> answer(PROBES[0], Cell("vendor_nan", None, reason="r")).answer
    'unscored by the vendor'
    >>> answer(PROBES[0], Cell("scored", 2.0), span=(1.0, 5.0, True)).answer
    'no'
    >>> answer(PROBES[0], Cell("scored", 0.0), span=(0.0, 1.0, False)).answer
    'yes'
    """
    ids = (case_id,) if case_id else ()
    if cell is None or cell.status != "scored":
        status = cell.status if cell is not None else "missing"
        return Answer(probe, no_score(status), cell.label if cell else "-", cell.reason if cell else None,
                      case_ids=ids)
    return Answer(probe, probe.answer(unit(span, cell.score)), cell.label, None, tuple(cell.flags), ids)


WHOLE_UNITS = ("answer", "judge")
"""Unit kinds that judge the whole answer (no verdict belongs to one claim)."""
_MARKER = re.compile(r"\s*\[([^\]\s]+)\]")


def misattributed(case) -> list[tuple[int, int]]:
    """Answer spans of the claims whose citation marker names another passage than the one holding their evidence
    (the marker from the annotation, else the ``[N]`` right after the claim in the answer).

    >>> from harness.core.records import Annotation, Case, Claim, Context, Evidence
    >>> a = "Refunds take 30 days [2]. Paid to the card [2]."
    >>> cl = (Claim("Refunds take 30 days.", (0, 20), "supported", (Evidence("1", 0, 5),)),
    ...       Claim("Paid to the card.", (26, 42), "supported", (Evidence("2", 0, 5),)))
    >>> misattributed(Case("c", "q", (Context("1", "x"), Context("2", "y")), a, Annotation(cl, True, False)))
    [(0, 20)]
    """
    ann = getattr(case, "annotation", None)
    out = []
    for c in getattr(ann, "claims", ()) or ():
        where = {e.context_id for e in c.evidence}
        m = _MARKER.match(case.answer, c.answer_span[1])
        cited = c.cited_context_id or (m.group(1) if m else None)
        if cited and where and cited not in where:
            out.append(tuple(c.answer_span))
    return out


def claim_units(units, metric: str) -> dict[str, list[tuple]]:
    """case id -> (span start, span end, verdict) of the metric's units that are not about the whole answer, in
    the units table's order: read once per metric, so that :func:`by_units` looks a case up instead of filtering
    the run's whole table for each case."""
    out: dict[str, list[tuple]] = {}
    if units is None or not len(units):
        return out
    mine = units[(units["metric"] == metric) & ~units["kind"].isin(WHOLE_UNITS)]
    for cid, a, b, v in zip(mine["case_id"].tolist(), mine["span_start"].tolist(), mine["span_end"].tolist(),
                            mine["verdict"].tolist()):
        out.setdefault(cid, []).append((a, b, v))
    return out


def by_units(probe: Probe, case, metric: str, units) -> str | None:
    """The probe's answer from the metric's claim-level units on the claims the probe is about (None: the metric has
    no such unit there, so the score answers). Only the citation probe reads units: yes when a unit overlapping a
    misattributed claim is not supported. ``units``: :func:`claim_units` of the metric (or the run's units table)."""
    if units is None or not len(units) or not probe.by_units:
        return None
    if not isinstance(units, dict):
        units = claim_units(units, metric)
    spans = misattributed(case)
    hits = [v for a, b, v in units.get(case.id, ())
            if a is not None and b is not None and a == a and any(a < e and s < b for s, e in spans)]
    if not hits:
        return None
    return "yes" if any(v != "supported" for v in hits) else "no"


def combine(answers: list[Answer]) -> Answer:
    """One answer from the answers of several cases showing the same probe: their common answer, else
    ``mixed`` (the values say which case gave what)."""
    if len(answers) == 1:
        return answers[0]
    return _joined([(a.answer, a) for a in answers], tuple(c for a in answers for c in a.case_ids))


def _joined(said: list[tuple[str, Answer]], ids: tuple[str, ...]) -> Answer:
    """One answer from the (word, answer) of each case showing a probe, in case order: their common word, else
    ``mixed``; their values joined (one case: its own); the first's reason and flags; ``ids``: the cases."""
    word, first = said[0]
    common = all(w == word for w, _ in said)
    value = first.value if len(said) == 1 else " / ".join(a.value for _, a in said)
    return Answer(first.probe, word if common else "mixed", value, first.reason, first.flags, ids)


def showing(cases) -> dict[str, list]:
    """probe key -> the cases of ``cases`` (in their order) that show it; the tags of each distinct tag list are
    matched once (a large run repeats a few).

    >>> from types import SimpleNamespace as C
    >>> got = showing([C(id="a", tags=("hedge",)), C(id="b", tags=()), C(id="c", tags=["hedge", "x"])])
    >>> [c.id for c in got["penalises-hedge"]], got["multi-hop"]
    (['a', 'c'], [])
    """
    out: dict[str, list] = {p.key: [] for p in PROBES}
    seen: dict = {}
    for c in cases:
        raw = getattr(c, "tags", ()) or ()
        try:
            keys = seen.get(raw)
        except TypeError:   # an unhashable tag list: matched on its own
            raw, keys = tuple(raw), seen.get(tuple(raw))
        if keys is None:
            tags = frozenset(raw)
            keys = seen[raw] = [p.key for p in PROBES if p.tags <= tags]
        for k in keys:
            out[k].append(c)
    return out


def answers(cells: dict, metric: str, cases, units=None, shown: dict | None = None, *,
            span: tuple[float, float, bool], claims: dict | None = None) -> list[Answer]:
    """Every probe some case of ``cases`` (Case objects, in run order) shows, answered for ``metric``; ``units`` (the
    run's units table) lets a probe about one claim read the metric's own verdict on it (:attr:`Probe.by_units`);
    ``shown``: :func:`showing` of ``cases``, when the caller has it already; ``span``: the metric's recorded
    (bottom, top, higher_is_better); ``claims``: :func:`claim_units` of the metric (or the metric's located units
    by case, which give the same answers), when the caller has them (``units`` is then not read)."""
    shown = showing(cases) if shown is None else shown
    out = []
    for p in PROBES:   # as combine() of each case's answer() (by_units() where it says), one cell's answer reused
        group = shown[p.key]
        if not group:
            continue
        memo: dict = {}   # cell -> answer() of it without a case (a large run has a few distinct cells per metric)
        said, ids = [], []   # (word, answer) of each case, in order; the case ids
        for c in group:
            cell = cells.get((c.id, metric))
            try:
                a = memo.get(cell)
                if a is None:
                    a = memo[cell] = answer(p, cell, "", span)
            except TypeError:   # an unhashable stand-in for a cell
                a = answer(p, cell, "", span)
            word = a.answer
            if p.by_units and word in ("yes", "no"):
                if claims is None:   # the metric's claim-level units by case, read on the first probe needing them
                    claims = claim_units(units, metric)
                word = by_units(p, c, metric, claims) or word
            said.append((word, a))
            if c.id:
                ids.append(c.id)
        out.append(_joined(said, tuple(ids)))
    return out
