"""Build a run's report: one self-contained HTML file and the same content as Markdown.

``build("reports/out/<run>")`` reads the store (never re-scores), builds the report model once
(:func:`harness.reports.model.report.compute`), lays it out with the renderers and writes ``index.html``,
``report.md`` and the plots the Markdown links to (and, past 200 cases, ``cases.csv``: every case's cells, which
the Markdown names), into the run directory unless another directory is given.
"""
from __future__ import annotations

import contextlib
import gc
import os
from dataclasses import dataclass, field

from harness.core.redact import register_judge_key, scrub
from harness.core.terminal import printable
from harness.judge.accounting import DEFAULT_BATCH_FACTOR, batch_prices
from harness.reports.analysis.data import load_run
from harness.reports.analysis.divergence import DEFAULT_THRESHOLD
from harness.reports.model.header import judge_lines, versions  # noqa: F401 - re-exported
from harness.reports.model.report import Report, compute  # noqa: F401 - re-exported (harness.reports.build.compute)
from harness.reports.render import html, markdown, plots
from harness.reports.render.svgplot import files


@dataclass
class Built:
    """Where a report went."""

    html_path: str
    md_path: str
    report: Report = field(repr=False)

    def top_lines(self, n: int = 3) -> list[str]:
        """One line per largest divergence (for the terminal)."""
        return [d.line(self.report.shorts) for d in self.report.divergences[:n]]


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
    if prices is not None:   # a batch run's calls were billed at the batch price: the new table is read at it too
        batch = (data.spec or {}).get("judge_batch")
        data.spec["prices"] = prices if not batch else batch_prices(prices, batch.get("price_factor",
                                                                                     DEFAULT_BATCH_FACTOR))
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
    cost_png = plots.cost_chart(rep.costs, rep.shorts)   # drawn once: inlined in the HTML, linked by the Markdown
    with open(html_path, "w", encoding="utf-8") as fh:
        fh.write(printable(scrub(html.render(rep, cost_png))))   # control characters of case ids and replies: escaped
    with open(os.path.join(out, "cost.png"), "wb") as fh:   # the Markdown links it relatively
        fh.write(cost_png)
    for name, text in files(rep.extra).items():   # the plots the Markdown links, beside it
        with open(os.path.join(out, name), "w", encoding="utf-8") as fh:
            fh.write(text)
    with open(md_path, "w", encoding="utf-8") as fh:
        fh.write(printable(scrub(markdown.render(rep, images={"cost": "cost.png"}))))
    every = markdown.cases_csv(rep)   # a large run: the Markdown lists the first cases and names this file
    if every is not None:
        with open(os.path.join(out, markdown.CASES_CSV), "w", encoding="utf-8", newline="") as fh:
            fh.write(printable(scrub(every)))
    return Built(html_path, md_path, rep)


def report_for_run(run_dir: str, threshold: float | None = None) -> str:
    """Build RUN_DIR's report in place; the HTML path (the ``report`` entry point ``harness.evaluate`` uses)."""
    return build(run_dir, run_dir, DEFAULT_THRESHOLD if threshold is None else threshold).html_path
