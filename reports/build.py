"""Build a run's report: one self-contained HTML file and the same content as Markdown.

``build("reports/out/<run>")`` reads the store (never re-scores), computes the sections, and writes
``index.html``, ``report.md`` and the two PNGs the Markdown links to, into the run directory unless
another directory is given.
"""
from __future__ import annotations

import contextlib
import gc
import os
from dataclasses import dataclass, field

from harness.core.redact import register_judge_key, scrub
from harness.core.terminal import printable
from harness.reports.model import (
    agreement,
    agreement_section,
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
    team_section,
)
from harness.reports.model.data import load_run
from harness.reports.model.divergence import DEFAULT_THRESHOLD
from harness.reports.model.header import judge_lines, versions  # noqa: F401 - re-exported
from harness.reports.render import html, markdown, plots
from harness.reports.render.svgplot import files


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
    cost_png: bytes = field(repr=False)
    extra: list = field(default_factory=list)
    """More sections as ``harness.reports.model.blocks.Block`` (agreement with human labels, the similarity cascade),
    rendered by both the HTML and the Markdown report."""
    agreement: list | None = None
    """Per-metric agreement with the human labels (``harness.reports.model.agreement.compute``)."""
    decision: object = None
    """The decision table (``harness.reports.model.decision.compute``)."""
    stability: object = None
    """Judge stability across repeats (``harness.reports.model.stability.compute``)."""
    frontier: object = None
    """The cost-quality frontier (``harness.reports.model.frontier.compute``)."""
    labels: object = None
    """Where the team's labels came from (``harness.reports.review.team.Provenance``), when ``--labels`` gave them."""
    card_notes: dict = field(default_factory=dict)
    """metric -> the line its card carries in this report (agreement with the team's labels)."""
    estimates: dict | None = None
    """metric -> ``harness.reports.model.decision.Standing`` from another estimator, read by the decision table and the
    frontier instead of the plain agreement (the hook ``decision.standings`` documents); None: the plain one."""

    @property
    def names(self) -> dict[str, str]:
        return {m: self.data.info[m].display_name for m in self.data.metrics}

    @property
    def shorts(self) -> dict[str, str]:
        return {m: self.data.info[m].short_name for m in self.data.metrics}


@dataclass
class Built:
    """Where a report went."""

    html_path: str
    md_path: str
    report: Report = field(repr=False)

    def top_lines(self, n: int = 3) -> list[str]:
        """One line per largest divergence (for the terminal)."""
        return [d.line(self.report.shorts) for d in self.report.divergences[:n]]


def compute(data, threshold: float = DEFAULT_THRESHOLD, labels=None) -> Report:
    """All sections of the report for one run; ``labels`` (``harness.reports.review.team.TeamLabels``, already on
    ``data``'s cases: ``harness.reports.review.team.apply``) adds where they came from; a review's design weights
    (``data.label_weights``, set by :func:`build`) add the estimates block."""

    cells = matrix.build(data)
    shorts = {m: data.info[m].short_name for m in data.metrics}
    costs = cost.per_metric(data)
    rep = Report(data, threshold, cells, divergence.find(data, threshold), stats.summarise(data), costs,
                 evidence.shares(data), cost.totals(data), plots.cost_chart(costs, shorts))

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
    more = [stability.section(rep.stability, rep.names), robustness.section(robustness.compute(data), rep.names),
            frontier.section(rep.frontier, rep.names)]
    rep.extra = ([facts.section(facts.merged(data, cells), data.metrics, rep.names)] + rep.extra
                 + [b for b in more if b is not None])
    return rep


def extra_sections(data, names: dict[str, str], agreement_results: list) -> list:
    """The agreement section, then each metric's own sections (the ``report_sections`` handler the run recorded, in
    display order), as ``harness.reports.model.blocks.Block``."""
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
    from harness.reports.model import label_estimates  # noqa: PLC0415 - only with a review's labels

    if getattr(data, "_label_results", None) is None:
        data._label_results = label_estimates.compute(data, weights)
    return data._label_results


def label_estimates_block(data, names: dict[str, str]):
    """The design-weighted estimates over the whole run, when the run's labels come from a review sample: the
    caller that puts a labels file into the run sets ``data.label_weights`` (case id -> 1 / inclusion
    probability, :func:`harness.reports.review.waves.design_weights`) and ``data.label_source`` (where the labels came
    from); None otherwise (a fully annotated run's agreement section already covers every answer)."""
    from harness.reports.model import estimates_section, label_estimates  # noqa: PLC0415 - only with a review's labels

    weights = getattr(data, "label_weights", None)
    if not weights:
        return None
    results = _label_results(data, weights)
    return estimates_section.section(results, label_estimates.plan(data, weights, results), names,
                                     getattr(data, "label_source", "a review sample"),
                                     getattr(data, "label_human", None), getattr(data, "label_alt", None))


def build(run: str, out_dir: str | None = None, threshold: float = DEFAULT_THRESHOLD,
          cases_path: str | None = None, runs_dir: str = "reports/out", prices: dict | None = None,
          labels: str | None = None, reviewers: list[str] | None = None) -> Built:
    """Build and write the report of RUN (a run directory, a store path, or a run id under ``runs_dir``);
    ``prices`` (``harness.judge.accounting.prices_from_args``) replaces the price table the run recorded;
    ``labels`` (a labels file of harness review, or annotated cases) puts a team's labels on the run's
    stored cells (:mod:`harness.reports.review.team`; ValueError naming the file for bad labels)."""

    with _no_cycle_collection():
        return _build(run, out_dir, threshold, cases_path, runs_dir, prices, labels, reviewers)


@contextlib.contextmanager
def _no_cycle_collection():
    """Python's cycle collector paused for the build (it runs again as usual after it). A large run's build holds
    millions of live objects (cells, units, alignment rows), and each full collection walks them all: about a
    sixth of a 10,000-case build's CPU went there, and the build makes few cycles to collect. On the way out the
    objects the build made join the oldest generation (``gc.freeze`` then ``gc.unfreeze``, when nothing else is
    frozen) instead of the youngest, whose first collection would otherwise walk every one of them at once."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def _build(run, out_dir, threshold, cases_path, runs_dir, prices, labels, reviewers) -> Built:
    data = load_run(run, runs_dir, cases_path)
    if prices is not None:
        data.spec["prices"] = prices
    register_judge_key(data.spec)
    team = None
    if labels is not None:
        from harness.reports.review import team as team_labels  # noqa: PLC0415 - lazy: only with --labels

        data, team = team_labels.apply(data, team_labels.load(labels, data.cases, data.run_id, reviewers))
        if team.weights:   # a review's sample: the design-weighted estimates block (label_estimates_block)
            from harness.reports.review.estimates import human_and_alt  # noqa: PLC0415 - lazy: only with a labels file

            p = team.provenance
            data.label_weights = team.weights
            data.label_source = f"{p.path}, {p.labelled} labelled answers of {p.drawn} drawn"
            data.label_human, data.label_alt = human_and_alt(data, labels, reviewers)
    rep = compute(data, threshold, team)
    out = out_dir or data.run_dir
    os.makedirs(out, exist_ok=True)
    html_path, md_path = os.path.join(out, "index.html"), os.path.join(out, "report.md")
    with open(html_path, "w", encoding="utf-8") as fh:
        fh.write(printable(scrub(html.render(rep))))   # control characters of case ids and replies: escaped
    with open(os.path.join(out, "cost.png"), "wb") as fh:   # the Markdown links it relatively
        fh.write(rep.cost_png)
    for name, text in files(rep.extra).items():   # the plots the Markdown links, beside it
        with open(os.path.join(out, name), "w", encoding="utf-8") as fh:
            fh.write(text)
    with open(md_path, "w", encoding="utf-8") as fh:
        fh.write(printable(scrub(markdown.render(rep, images={"cost": "cost.png"}))))
    return Built(html_path, md_path, rep)


def report_for_run(run_dir: str, threshold: float | None = None) -> str:
    """Build RUN_DIR's report in place; the HTML path (the ``report`` entry point ``harness.evaluate`` uses)."""
    return build(run_dir, run_dir, DEFAULT_THRESHOLD if threshold is None else threshold).html_path
