"""Build a run's report: one self-contained HTML file and the same content as Markdown.

``build("reports/out/<run>")`` reads the store (never re-scores), computes the sections, and writes
``index.html``, ``report.md`` and the two PNGs the Markdown links to, into the run directory unless
another directory is given.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from reports.divergence import DEFAULT_THRESHOLD

VENDOR_PACKAGES = ("ragas", "deepeval", "trulens-core", "trulens-feedback", "trulens-providers-openai",
                   "openai", "langchain-core", "langchain-openai", "instructor", "nltk")
"""Packages named in the header; the rest of ``spec.packages`` goes in a details list."""


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


def judge_lines(spec: dict) -> tuple[str, str]:
    """(the judge in one line, what that means for reading the report).

    >>> judge_lines({"judge": {"kind": "reference"}})[0]
    'judge: reference (annotation-driven)'
    >>> judge_lines({"judge": {"kind": "http", "model": "m", "url": "http://x/v1"}})[0]
    'judge: m at http://x/v1'
    """
    j = spec.get("judge") or {}
    if j.get("kind", "reference") == "reference":
        return ("judge: reference (annotation-driven)",
                "The reference judge answers every metric's prompts from the human claim labels, offline "
                "and deterministically (label table v" + str(j.get("reference_version") or "?") + "). "
                "The judge is held constant, so every difference between metrics below comes only from "
                "their definitions.")
    return (f"judge: {j.get('model')} at {j.get('url')}",
            "A model judged this run. Differences between metrics mix their definitions with the "
            "judge's own reading of each metric's prompts.")


def versions(spec: dict) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(vendor packages, other packages) as (name, version) pairs."""
    pk = spec.get("packages") or {}
    main = [(p, str(pk.get(p) or "not installed")) for p in VENDOR_PACKAGES if p in pk]
    rest = [(p, str(v or "not installed")) for p, v in sorted(pk.items()) if p not in VENDOR_PACKAGES]
    return main, rest


def compute(data, threshold: float = DEFAULT_THRESHOLD) -> Report:
    """All sections of the report for one run."""
    from reports import cost, divergence, evidence, matrix, plots, stats

    cells = matrix.build(data)
    shorts = {m: data.info[m].short_name for m in data.metrics}
    costs = cost.per_metric(data)
    return Report(data, threshold, cells, divergence.find(data, threshold), stats.summarise(data), costs,
                  evidence.shares(data), cost.totals(data), plots.cost_chart(costs, shorts))


def build(run: str, out_dir: str | None = None, threshold: float = DEFAULT_THRESHOLD,
          cases_path: str | None = None, runs_dir: str = "reports/out") -> Built:
    """Build and write the report of RUN (a run directory, a store path, or a run id under ``runs_dir``)."""
    from reports import html, markdown
    from reports.data import load_run

    data = load_run(run, runs_dir, cases_path)
    rep = compute(data, threshold)
    out = out_dir or data.run_dir
    os.makedirs(out, exist_ok=True)
    html_path, md_path = os.path.join(out, "index.html"), os.path.join(out, "report.md")
    with open(html_path, "w", encoding="utf-8") as fh:
        fh.write(html.render(rep))
    with open(os.path.join(out, "cost.png"), "wb") as fh:   # the Markdown links it relatively
        fh.write(rep.cost_png)
    with open(md_path, "w", encoding="utf-8") as fh:
        fh.write(markdown.render(rep, images={"cost": "cost.png"}))
    return Built(html_path, md_path, rep)


def report_for_run(run_dir: str, threshold: float | None = None) -> str:
    """Build RUN_DIR's report in place; the HTML path (the ``report`` entry point ``harness.evaluate`` uses)."""
    return build(run_dir, run_dir, DEFAULT_THRESHOLD if threshold is None else threshold).html_path
