"""The metric card as data: one :class:`MetricCard` per metric, built once from a reference-judge run of the
canonical set and the metric's installed class, holding every number and every fact a card's sentences state.
:mod:`harness.reports.render.card` lays a card out as Markdown and computes nothing;
:mod:`harness.reports.cards.generate` only orchestrates (load the run, build the cards, lay them out, write).

Text fields are plain text (the renderer escapes them) unless their docstring says *prose*: prose is Markdown
written by a person or by an adapter, carried as it is and laid out unescaped. That covers the hand-written
``card_text/<metric>.md`` sections and the lines an adapter's ``card_sections`` hook returns (e.g. the
cascade's costs): those hooks hand back finished Markdown, so the card carries their lines as prose rather
than as data.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from harness.core import vocab
from harness.core.records import LABELS
from harness.judge.accounting import parse_prices
from harness.judge.reference import REFERENCE_VERSION
from harness.reports.analysis import agreement, cost, facts, frontier, stability
from harness.reports.analysis import card_facts as F
from harness.reports.analysis import robustness as R
from harness.reports.analysis.agreement import TARGETS, reading
from harness.reports.analysis.behaviours import answers
from harness.reports.analysis.data import load_run
from harness.reports.analysis.matrix import build as build_matrix
from harness.reports.model.agreement_section import TARGET_WORDS, excluded_text, rule_text, with_ci

DEFAULT_INPUTS = ("A case: the question, the retrieved passages (contexts) and the answer. The annotation "
                  "is read only by the reference judge, never by the metric.")
"""Prose: the Inputs section when the metric's card text has none."""


@dataclass
class Verdicts:
    """The reference judge's reading of each annotation label, and the verdicts seen per label."""

    what: str
    """What the reference judge's answer is for this metric."""
    rows: list[tuple[str, str | None, list[tuple[str, str, str]]]]
    """(annotation label, the reference judge's reading or None for a label it does not know, [(raw verdict,
    normalised verdict, first case)] seen in the run)."""
    observed: bool
    """Whether any unit's verdict belongs to a single claim."""


@dataclass
class AgreementLine:
    """One target's answer-level (and claim-level) agreement, figures already put in words."""

    target_words: str
    n: int | None
    """None: no scored answer."""
    kappa: str = ""
    balanced_accuracy: str = ""
    auroc: str = ""
    best: tuple[float, float] | None = None
    """(threshold, balanced accuracy) of the best threshold."""
    claims: tuple[int, int, str, str] | None = None
    """(n, not covered, kappa, balanced accuracy) at claim level."""


@dataclass
class Agreement:
    reading: str
    labelled: int
    excluded: str
    lines: list[AgreementLine]
    rule_text: str
    rule: str


@dataclass
class FrontierPoint:
    agreement: float | None
    low: float | None
    high: float | None
    calls: float
    tokens: float
    on_front: bool


@dataclass
class Stability:
    repeats: int
    trivial: bool
    sampling: str | None = None
    deterministic_no_movement: bool = False
    sd_mean: float | None = None
    sd_max: float | None = None
    flip_rate: float | None = None
    answers: int = 0


@dataclass
class RobustnessLine:
    """One judge's robustness figures from ``robustness.json``, each rate in words (k/n = % [interval])."""

    reference: bool
    judge: str
    flips: str
    detected: str
    floor: object
    """The detected rate's floor (falsy: none)."""
    cite_move: str


@dataclass
class MetricCard:
    """Everything one metric's card says (see the module docstring for which fields are prose)."""

    metric: str
    display_name: str
    card_text_path: str
    text: dict[str, str]
    """Prose: the hand-written sections of the metric's card text, by title."""
    definition: str
    """Prose: the class's definition (the Description when the card text has none)."""
    # the facts table
    version: str
    vendor: str
    unit: str
    score_range: str
    higher_is_better: bool
    calls: list[tuple[int, list[str]]]
    """[(judge calls, case ids)], most common first."""
    reference_version: str
    # How to Use
    output_values: str
    """Prose: the Output Values section (card text, or generated from the status vocabulary)."""
    n_cases: int
    status_counts: list[tuple[str, int]]
    """(status name, cells), in status-key order."""
    mean: float | None
    flagged: list[tuple[str, str, str]]
    """(case, value, flags joined) of every flagged scored cell."""
    declared_flags: list[tuple[str, str]]
    # Examples
    behaviours: list[tuple[str, str, str, str]]
    """(probe, answer, case, value)."""
    every_case: list[tuple[str, str, str, str]]
    """(case, claim labels, value, note)."""
    # Unit of Judgement and Verdicts
    verdicts: Verdicts | None
    # Degenerate Inputs
    degenerate: list[tuple[str, str, str, str, str]]
    """(probe, answer, case, value, reason or flag)."""
    has_empty_context: bool
    # Judge Calls per Answer
    tokens: tuple[float, float] | None
    prices: list[tuple[str, float, float, float]] | None
    """(model, input price, output price, cost per answer); None when no price table was given."""
    # Agreement, and the lines other metrics' card_sections add
    agreement: Agreement
    added: list[str]
    """Prose: lines the run's metrics' ``card_sections`` hooks return for this card (finished Markdown)."""
    # Cost and Quality
    frontier_title: str
    frontier_note: str
    point: FrontierPoint | None
    stability: Stability
    robustness: list[RobustnessLine]
    # Shims
    shims: list[tuple[str, str]]
    adapter_notes: str | None


@dataclass
class CardSet:
    """The cards of a run, its facts files' text and the frontier all cards link."""

    cards: list[MetricCard]
    facts_files: dict[str, str]
    """file name -> the text of a metric's facts file (JSON, as :func:`harness.reports.analysis.facts.dumps`
    writes it: data, not layout)."""
    frontier: object
    """The :class:`harness.reports.analysis.frontier.Frontier` of the run (drawn once as the cards' SVG)."""


def score_range(cls) -> str:
    """The ``score_range`` in words (of a metric's recorded facts, or its class).

    >>> class A: score_range = (1, 5)
    >>> score_range(A)
    '1 to 5'
    """
    lo, hi = cls.score_range
    return f"{lo:g} to {hi:g}"


def build_all(run: str, runs_dir: str, prices: dict | None, classes, shown_path, kept: list[dict]) -> CardSet:
    """Every card of the run. ``classes``: a function, metric name -> the installed class the card documents;
    ``shown_path``: class -> its card-text path as the card names it; ``kept``: the robustness figures."""

    data = load_run(run, runs_dir)
    if prices is not None:
        data.spec["prices"] = prices
    if not data.is_reference:
        raise ValueError("metric cards come from a reference-judge run; this run used another judge")
    cells = build_matrix(data)
    agreements = {a.metric: a for a in agreement.compute(data)}
    shorts = {x: data.info[x].short_name for x in data.metrics}
    fr = frontier.compute(SimpleNamespace(data=data, costs=cost.per_metric(data), shorts=shorts,
                                          agreement=list(agreements.values())), latency=False)
    st = stability.compute(data)
    cards = [build(data, cells, x, classes, shown_path(classes(x)), agreements[x], fr, st, kept)
             for x in data.metrics]
    run_facts = facts.from_run(data, cells)
    return CardSet(cards, {x + facts.SUFFIX: facts.dumps(x, run_facts[x]) for x in data.metrics}, fr)


def build(data, cells, metric, classes, shown, agree, fr, st, kept) -> MetricCard:
    """One metric's card from the run."""
    info, cls = data.info[metric], classes(metric)
    text = F.card_text(cls)
    pk = (data.spec.get("packages") or {})
    vendor = (f"{info.vendor} ({info.vendor_package} {pk.get(info.vendor_package)})" if info.vendor_package
              else f"{info.vendor} (this repository)")
    ids = data.case_ids
    counts = F.status_counts(cells, metric, ids)
    scored = [cells[(c, metric)].score for c in ids if cells[(c, metric)].status == "scored"]
    cases = [data.cases[c] for c in ids if c in data.cases]
    probed = answers(cells, metric, cases, data.units, span=info.scale)
    every = []
    for cid in ids:
        case, cell = data.cases.get(cid), cells[(cid, metric)]
        note = cell.reason if cell.status != "scored" else ", ".join(cell.flags)
        every.append((cid, F.label_counts(case) if case else "?", cell.label, note or ""))
    tok = F.tokens_per_answer(data, metric)
    table = (data.spec.get("prices") or {}).get("models") or {}
    p = next((x for x in fr.points if x.metric == metric), None)
    added = []
    for other in map(classes, data.metrics):
        if other.card_sections is not None:
            added += other.card_sections(data, metric)
    return MetricCard(
        metric=metric, display_name=info.display_name, card_text_path=shown, text=text,
        definition=cls.definition, version=info.version, vendor=vendor, unit=info.unit,
        score_range=score_range(info), higher_is_better=info.higher_is_better,
        calls=F.calls_per_answer(data, metric), reference_version=REFERENCE_VERSION,
        output_values=text.get("Output Values", _output_values(info)), n_cases=len(ids),
        status_counts=[(vocab.status(k).named, v) for k, v in sorted(counts.items())],
        mean=sum(scored) / len(scored) if scored else None,
        flagged=[(c, cells[(c, metric)].label, ", ".join(cells[(c, metric)].flags)) for c in ids
                 if cells[(c, metric)].status == "scored" and cells[(c, metric)].flags],
        declared_flags=[(f.key, f.explain) for f in cls.flags],
        behaviours=[(a.probe.text, a.answer, a.case_id, a.value) for a in probed if a.probe.group == "behaviour"],
        every_case=every, verdicts=_verdicts(data, metric, cls),
        degenerate=[(a.probe.text, a.answer, a.case_id, a.value, a.reason or ", ".join(a.flags) or "")
                    for a in probed if a.probe.group == "degenerate"],
        has_empty_context=any(not c.contexts for c in data.cases.values()),
        tokens=tok,
        prices=None if not table else [(model, pr.input, pr.output, pr.cost(round(tok[0]), round(tok[1])))
                                       for model, pr in sorted(parse_prices(table).items())] if tok else None,
        agreement=_agreement(data, agree), added=added,
        frontier_title=fr.title, frontier_note=fr.note,
        point=None if p is None else FrontierPoint(p.agreement, p.low, p.high, p.calls, p.tokens,
                                                   metric in fr.front_cost),
        stability=_stability(st, metric), robustness=robustness_lines(kept, metric),
        shims=F.documented_shims(cls), adapter_notes=F.adapter_notes(cls))


def _output_values(info) -> str:
    return (f"A score from {score_range(info)} per answer, or a cell that is not a score: "
            + "; ".join(f"{t.named}: {t.explain}" for k, t in vocab.STATUSES.items() if k not in ("scored", "missing"))
            + f". {vocab.DEGENERATE.explain.capitalize()} ({vocab.DEGENERATE.short}).")


def _verdicts(data, metric, cls) -> Verdicts | None:
    ref = F.reference_row(cls)
    if ref is None:
        return None
    mapping, what = ref
    observed = F.observed_verdicts(data, metric)
    rows = [(label, mapping[label], observed.get(label, [])) for label in LABELS]
    rows += [(k, None, observed[k]) for k in observed if k not in LABELS]
    return Verdicts(what, rows, bool(observed))


def _agreement(data, a) -> Agreement:
    lines = []
    for target in TARGETS:
        f = a.answers[target]
        if f.point is None:
            lines.append(AgreementLine(TARGET_WORDS[target], None))
            continue
        c = a.claims.get(target)
        claims = None if c is None or c.point is None else (
            c.n, c.not_covered, with_ci(c.point.kappa, c.ci["kappa"]),
            with_ci(c.point.balanced_accuracy, c.ci["balanced_accuracy"]))
        lines.append(AgreementLine(
            TARGET_WORDS[target], f.n, with_ci(f.point.kappa, f.ci["kappa"]),
            with_ci(f.point.balanced_accuracy, f.ci["balanced_accuracy"]), with_ci(f.auroc, f.auroc_ci),
            (f.best.threshold, f.best.balanced_accuracy) if f.best else None, claims))
    return Agreement(reading(data), a.labelled, excluded_text(a), lines, rule_text(), a.rule)


def _stability(st, metric) -> Stability:
    if st.repeats < 2 or st.trivial:
        return Stability(st.repeats, st.trivial)
    s = next(x for x in st.metrics if x.metric == metric)
    return Stability(st.repeats, False, s.sampling, bool(s.deterministic and not s.flip_rate and not s.sd_max),
                     s.sd_mean, s.sd_max, s.flip_rate, s.answers)


def _show(d) -> str:
    return R.show(None if d is None else R.Rate(d["hits"], d["n"], d["low"], d["high"]))


def robustness_lines(kept: list[dict], metric: str) -> list[RobustnessLine]:
    """One line per judge the kept figures (``robustness.json``) were measured under."""
    return [RobustnessLine(f["reference"], f["judge"], _show(x["flips"]), _show(x["detected"]),
                           x["detected"]["floor"] if x["detected"] else None, _show(x["cite_move"]))
            for f in kept if metric in f["metrics"] for x in [f["metrics"][metric]]]

