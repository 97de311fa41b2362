"""The report model: everything a report shows, built once from the analysis of a run
(:mod:`harness.reports.analysis`), as plain data and :class:`~harness.reports.model.blocks.Section` s that the
HTML and Markdown renderers (:mod:`harness.reports.render`) only lay out."""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.reports.analysis import (
    agreement,
    cost,
    decision,
    divergence,
    evidence,
    facts,
    frontier,
    matrix,
    robustness,
    stability,
    stats,
)
from harness.reports.analysis.divergence import DEFAULT_THRESHOLD
from harness.reports.model import (
    agreement_section,
    case_index,
    facts_section,
    frontier_section,
    robustness_section,
    stability_section,
    team_section,
)
from harness.reports.model import sections as S
from harness.reports.model.divergence_view import divergence_section
from harness.reports.model.header import judge_lines, versions


@dataclass(frozen=True)
class Header:
    """The report's header in words (:mod:`harness.reports.model.header`, :mod:`harness.reports.analysis.cost`)."""

    judge: str
    """The judge in one line."""
    meaning: str
    """What that judge means for reading the report."""
    versions: list
    """(package, version) of the metrics' vendor packages."""
    other_versions: list
    """(package, version) of everything else the run recorded."""
    money: str
    """Money at the user's prices (or what the report says instead)."""
    traffic: str
    """The one line on judge traffic (billed, cached, retried)."""


@dataclass
class Report:
    """Everything the renderers show, computed once."""

    data: object
    threshold: float
    cells: dict
    divergences: list
    summaries: list
    costs: list
    evidence: list
    totals: tuple[int, int, int]
    extra: list = field(default_factory=list)
    """More sections as :class:`harness.reports.model.blocks.Section` (behaviour facts, agreement with human labels,
    the similarity cascade, stability, robustness, the frontier), rendered by both the HTML and the Markdown report."""
    agreement: list | None = None
    """Per-metric agreement with the human labels (``harness.reports.analysis.agreement.compute``)."""
    decision: object = None
    """The decision table (``harness.reports.analysis.decision.compute``)."""
    stability: object = None
    """Judge stability across repeats (``harness.reports.analysis.stability.compute``)."""
    frontier: object = None
    """The cost-quality frontier (``harness.reports.analysis.frontier.compute``)."""
    labels: object = None
    """Where the team's labels came from (``harness.reports.review.team.Provenance``), when ``--labels`` gave them."""
    card_notes: dict = field(default_factory=dict)
    """metric -> the line its card carries in this report (agreement with the team's labels)."""
    estimates: dict | None = None
    """metric -> ``harness.reports.analysis.decision.Standing`` from another estimator, read by the decision table and the
    frontier instead of the plain agreement (the hook ``decision.standings`` documents); None: the plain one."""

    header: Header | None = None
    """The judge line, the package versions and the header's figures in words."""
    glance: list = field(default_factory=list)
    """The divergences grouped by reason, largest group first (``harness.reports.analysis.decision.Group``)."""
    legend: list = field(default_factory=list)
    """(label, meaning, status) of the score matrix's legend."""
    cards: dict = field(default_factory=dict)
    """metric -> its generated card (Markdown), for the metrics that have one."""
    sections: dict = field(default_factory=dict)
    """The fixed sections by key (``metrics``, ``cost``, ``evidence``, ``divergences``), each a
    :class:`harness.reports.model.blocks.Section`."""
    cases: dict | None = None
    """Every case as plain data for the case browser (:func:`harness.reports.model.case_index.build`)."""

    @property
    def names(self) -> dict[str, str]:
        return {m: self.data.info[m].display_name for m in self.data.metrics}

    @property
    def shorts(self) -> dict[str, str]:
        return {m: self.data.info[m].short_name for m in self.data.metrics}


def compute(data, threshold: float = DEFAULT_THRESHOLD, labels=None) -> Report:
    """All sections of the report for one run; ``labels`` (``harness.reports.review.team.TeamLabels``, already on
    ``data``'s cases: ``harness.reports.review.team.apply``) adds where they came from; a review's design weights
    (``data.label_weights``, set by :func:`build`) add the estimates block."""

    cells = matrix.build(data)
    costs = cost.per_metric(data)
    rep = Report(data, threshold, cells, divergence.find(data, threshold), stats.summarise(data), costs,
                 evidence.shares(data), cost.totals(data))

    rep.agreement = agreement.compute(data)
    rep.extra = extra_sections(data, rep.names, rep.agreement)
    if labels is not None:
        rep.labels = labels.provenance
        team_section.add_to(rep.extra, rep.labels, None, rep.names)   # the weighted figures: the estimates block
        rep.card_notes = team_section.card_notes(rep.labels, rep.agreement)
    rep.stability = stability.compute(data)
    rep.estimates = design_standings(data)
    rep.decision = decision.compute(rep)
    if rep.labels is not None:   # the table's figures rest on the team's labels: say whose
        p = rep.labels
        weighted = (" (balanced accuracy weighted by each answer's inclusion probability: the design-weighted "
                    "estimate over every answer of the run)") if rep.estimates else ""
        rep.decision.note = (f"{rep.decision.note} Agreement on the team's labels: {p.path}, {p.labelled} labelled "
                             f"answers, {p.unlabelled} drawn but not labelled{weighted}.").strip()
    rep.frontier = frontier.compute(rep)
    more = [stability_section.section(rep.stability, rep.names),
            robustness_section.section(robustness.compute(data), rep.names),
            frontier_section.section(rep.frontier, rep.names)]
    rep.extra = ([facts_section.section(facts.merged(data, cells), data.metrics, rep.names)] + rep.extra
                 + [b for b in more if b is not None])
    words(rep)
    return rep


def words(rep) -> None:
    """The sections and words both renderers lay out, built here once: the header, the divergences by reason,
    the matrix legend, the metric cards, the per-metric, cost, evidence and divergence sections, the case
    browser's data. A renderer reads these and computes nothing."""
    spec = rep.data.spec
    judge, meaning = judge_lines(spec)
    main, other = versions(spec)
    rep.header = Header(judge, meaning, main, other, cost.money(rep.totals.money), cost.traffic_line(rep.totals))
    rep.glance = decision.groups(rep.divergences) if rep.divergences else []
    rep.legend = matrix.legend()
    rep.cards = {m: text for m in rep.data.metrics if (text := case_index.card_text(m)) is not None}
    rep.sections = {"metrics": S.metrics_section(rep, stats.RESAMPLES), "cost": S.cost_section(rep),
                    "evidence": S.evidence_section(rep), "divergences": divergence_section(rep)}
    rep.cases = case_index.build(rep)


def extra_sections(data, names: dict[str, str], agreement_results: list) -> list:
    """The agreement section, then each metric's own sections (the ``report_sections`` handler the run recorded, in
    display order), as ``harness.reports.model.blocks.Section``."""
    blocks = [agreement_section.section(data, agreement_results, names), label_estimates_block(data, names)]
    for m in data.metrics:
        blocks += data.info[m].sections(data)
    return [b for b in blocks if b is not None]


def design_standings(data) -> dict | None:
    """metric -> ``decision.Standing`` from the design-weighted estimates (balanced accuracy, its interval, n and
    the estimated share ungrounded), when the run's labels come from a review sample: a sample that leans toward
    disagreement, or labelling that stopped partway, then moves no recommendation. None otherwise."""
    weights = getattr(data, "label_weights", None)
    if not weights:
        return None
    out = {}
    for r in _label_results(data, weights):
        e = r.answers
        ba, base = e.point.get("balanced_accuracy"), e.point.get("base_rate")
        if e.n and ba is not None and base is not None:
            lo, hi = e.ci.get("balanced_accuracy", (None, None))
            out[r.metric] = decision.Standing(ba, lo, hi, e.n, round(base * e.n))
    return out


def _label_results(data, weights):
    """The design-weighted estimates of the run, computed once per report."""
    from harness.reports.analysis import label_estimates  # noqa: PLC0415 - only with a review's labels

    if getattr(data, "_label_results", None) is None:
        data._label_results = label_estimates.compute(data, weights)
    return data._label_results


def label_estimates_block(data, names: dict[str, str]):
    """The design-weighted estimates over the whole run, when the run's labels come from a review sample: the
    caller that puts a labels file into the run sets ``data.label_weights`` (case id -> 1 / inclusion
    probability, :func:`harness.reports.review.waves.design_weights`) and ``data.label_source`` (where the labels came
    from); None otherwise (a fully annotated run's agreement section already covers every answer)."""
    from harness.reports.analysis import label_estimates  # noqa: PLC0415 - only with a review's labels
    from harness.reports.model import estimates_section  # noqa: PLC0415 - only with a review's labels

    weights = getattr(data, "label_weights", None)
    if not weights:
        return None
    results = _label_results(data, weights)
    return estimates_section.section(results, label_estimates.plan(data, weights, results), names,
                                     getattr(data, "label_source", "a review sample"),
                                     getattr(data, "label_human", None), getattr(data, "label_alt", None))
